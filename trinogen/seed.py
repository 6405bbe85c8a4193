"""Seed files of the embedded database (`mongomock://`): Extended JSON files -> documents.

Every *.json / *.jsonl file of a directory: one document, an array, or one document per line (as
mongoexport writes by default). A document without `_id`, with malformed Extended JSON anywhere,
or a file that cannot be parsed, is refused (a failed document naming the file and item or
line), never the run.

Fast (issue 22): a file is parsed by the C JSON decoder; bson.json_util's object hook runs only
on the objects it would change, those with a key that can be an Extended JSON wrapper (`$oid`,
`$date`, ...), and a `{"$date": "<UTC ISO 8601>"}` in the form mongoexport writes is read
without strptime. The result is json_util.loads's, value for value (tests/test_seed.py).

Memory (issue 22): an array's documents are decoded one at a time, each handed to the sink
(the embedded database keeps it as BSON) before the next is decoded, so a load holds the file's
text, what the sink keeps and one decoded document, never every document of a file decoded at
once. A file that turns out malformed halfway is undone in the sink and read item by item.
At 10,000 bench documents the embedded database's seeding peaks at 54 MiB instead of 111 MiB
(59 instead of 128 with the kitchen sink's options); a no-op sync's own peak 136 -> 118 MiB.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from trinogen.bsonread import doc_key
from trinogen.errors import ConfigError
from trinogen.model import RawDocument

log = logging.getLogger(__name__)

def refused_document(where: str, doc: Any, reason: str) -> RawDocument:
    try:
        key = doc_key(doc["_id"]) if isinstance(doc, dict) and "_id" in doc else None
    except Exception:  # noqa: BLE001 - an _id that cannot even be written down
        key = None
    body = doc if isinstance(doc, dict) else {}
    return RawDocument(key or json.dumps(where), body, unreadable=f"{where}: {reason}")


class SeedSink(Protocol):
    """Where the loaded documents go, one at a time (the embedded database's collection)."""

    def keep(self, where: str, doc: dict[str, Any]) -> None:
        """Take one document, decoded."""

    def begin(self) -> None:
        """A file starts: what `undo` returns to."""

    def undo(self) -> None:
        """Forget every document kept since `begin` (the file turned out malformed)."""


Keep = Callable[[str, dict[str, Any]], None]

# The keys bson.json_util's object hook decodes an object by (its _PARSERS): an object with none
# of them is returned unchanged. tests/test_seed.py checks this against bson's own table.
WRAPPERS = frozenset((
    "$oid", "$ref", "$date", "$regex", "$minKey", "$maxKey", "$binary", "$code", "$uuid",
    "$undefined", "$numberLong", "$timestamp", "$numberDecimal", "$dbPointer",
    "$regularExpression", "$symbol", "$numberInt", "$numberDouble"))



def _ejson_errors() -> tuple[type[Exception], ...]:
    """What bson's Extended JSON decoding raises for a malformed value: {"$oid": "zzz"} is a
    BSONError, {"$numberDecimal": "abc"} an ArithmeticError, an out-of-range $date a ValueError."""
    from bson.errors import BSONError

    return (BSONError, ValueError, TypeError, OverflowError, ArithmeticError, RecursionError,
            KeyError)


# mongoexport's relaxed form of a date, ASCII digits only: {"$date": "2024-01-02T03:04:05.678Z"}.
_UTC_DATE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?Z")


def ejson_loads(text: str) -> Any:
    """bson.json_util.loads(text) with its default options: the same values and errors, faster.

    json_util calls its object hook on every object; here C's isdisjoint skips the objects the
    hook would return unchanged (a document's own), so only the wrappers cost a Python call.
    """
    return json.loads(text, object_hook=_ejson_hook())


def _ejson_hook() -> Callable[[dict[str, Any]], Any]:
    """json_util's object hook with its default options, called only where it changes a value."""
    from bson import json_util
    from bson.codec_options import DatetimeConversion

    options = json_util.DEFAULT_JSON_OPTIONS
    naive = not options.tz_aware and options.datetime_conversion == DatetimeConversion.DATETIME

    def hook(d: dict[str, Any]) -> Any:
        if WRAPPERS.isdisjoint(d):
            return d
        if naive and len(d) == 1 and type(value := d.get("$date")) is str:
            match = _UTC_DATE.fullmatch(value)
            if match:
                try:
                    return _utc_date(match)
                except ValueError:  # out of range: json_util says so in its own words
                    pass
        return json_util.object_hook(d, options)

    return hook


_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as json.loads skips it


def ejson_items(text: str, name: str) -> Iterator[tuple[str, Any]]:
    """The items of `ejson_loads(text)` (an array's elements, or the one value), each with where
    it is, decoded one at a time; raises, at the item where it fails, whatever `ejson_loads`
    raises for the text (a malformed value, or JSON that is not one value)."""
    start = _SPACE.match(text).end()  # type: ignore[union-attr]  # matches the empty string
    if not text.startswith("[", start):
        yield f"seed file {name}", ejson_loads(text)
        return
    decode = json.JSONDecoder(object_hook=_ejson_hook()).raw_decode
    pos = _space(text, start + 1)
    index = 0
    while not (index == 0 and text.startswith("]", pos)):  # "[]" has no item
        item, pos = decode(text, pos)
        yield f"seed file {name} item {index}", item
        del item  # decoded documents are not held two at a time
        index += 1
        pos = _space(text, pos)
        if not text.startswith(",", pos):
            break
        pos = _space(text, pos + 1)
    if not text.startswith("]", pos) or _space(text, pos + 1) != len(text):
        raise json.JSONDecodeError("Expecting ',' delimiter or the array's end", text, pos)


def _space(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # matches the empty string


def _utc_date(match: re.Match[str]) -> datetime.datetime:
    """What json_util's strptime makes of a matched date: naive UTC, its fraction truncated to
    microseconds the way json_util does it."""
    year, month, day, hour, minute, second, fraction = match.groups()
    micro = int(float(fraction) * 1000000) if fraction else 0
    return datetime.datetime(int(year), int(month), int(day), int(hour), int(minute),
                             int(second), micro)


def load_seed(directory: Path, sink: SeedSink) -> tuple[list[RawDocument], bool]:
    """Every document of every *.json / *.jsonl file in `directory` (Extended JSON: one document,
    an array, or one document per line as mongoexport writes by default) handed to `sink` with
    where it is, in order; the refused ones, and whether every file could be read."""
    if not directory.is_dir():
        raise ConfigError(f"mongodb.seed_dir {directory} is not a directory")
    refused: list[RawDocument] = []
    complete = True
    for path in sorted([*directory.glob("*.json"), *directory.glob("*.jsonl")]):
        sink.begin()
        count = len(refused)
        if _stream_file(path, sink.keep, refused):
            continue
        # Malformed somewhere: from a clean state, item by item, naming the bad item.
        sink.undo()
        del refused[count:]
        items = _seed_items(path)
        if isinstance(items, str):
            # Its documents are unknown: report the file, and prune nothing as "deleted".
            log.error("seed file %s cannot be read: %s", path, items)
            refused.append(refused_document(f"seed file {path.name}", None, items))
            complete = False
            continue
        for where, item in items:
            complete = _seed_item(where, item, sink.keep, refused) and complete
    return refused, complete


def _stream_file(path: Path, keep: Keep, refused: list[RawDocument]) -> bool:
    """The common case, one document at a time: the whole file as well-formed Extended JSON (one
    document or an array), each item kept or refused as it is decoded. False (some items may have
    been kept or refused) sends the file down the item-by-item path, which names a malformed item."""
    failures: tuple[type[Exception], ...] = (OSError, UnicodeDecodeError, *_ejson_errors())
    try:
        items = ejson_items(path.read_text(encoding="utf-8"), path.name)
    except failures:
        return False
    while True:
        try:
            where, item = next(items)
        except StopIteration:
            return True
        except failures:
            return False
        _seed_item(where, item, keep, refused, decoded=True)  # never names an unknown document
        del item  # decoded documents are not held two at a time


def _seed_items(path: Path) -> list[tuple[str, Any]] | str:
    """The file's items as plain JSON, each with where it is; or why the file cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return f"cannot be read ({e}); no cluster is pruned as deleted until it can"
    try:
        data = json.loads(text)
    except RecursionError:
        return "cannot be read: it nests too deeply; no cluster is pruned as deleted until it can"
    except ValueError as e:
        lines = _json_lines(text)
        if lines is None:
            return (f"cannot be read as Extended JSON ({str(e)[:200]}): write one document, an "
                    "array of documents, or one document per line (mongoexport's default); no "
                    "cluster is pruned as deleted until it can")
        return [(f"seed file {path.name} line {n}", item) for n, item in lines]
    if isinstance(data, list):
        return [(f"seed file {path.name} item {i}", item) for i, item in enumerate(data)]
    return [(f"seed file {path.name}", data)]


def _json_lines(text: str) -> list[tuple[int, Any]] | None:
    """JSON Lines (one document per line), or None when some line is not JSON."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except (ValueError, RecursionError):
            return None
    return out or None


def _seed_item(where: str, item: Any, keep: Keep, refused: list[RawDocument], *,
               decoded: bool = False) -> bool:
    """Decode one item's Extended JSON (unless `decoded`) and keep or refuse it; False when it
    names no known document (then nothing may be pruned as deleted)."""
    from bson import json_util

    if not isinstance(item, dict):
        refused.append(refused_document(where, item, "is not a document"))
        return True
    if "_id" not in item:
        # The database would invent a new ObjectId on every run (the seed is loaded afresh each
        # time), changing the cluster's files on every sync; one derived from clusterId would turn
        # a rename into delete + add and could collide with a real _id: refuse (README's table).
        refused.append(refused_document(where, item, 'has no "_id"; give it a fixed one, e.g. '
                                '"_id": {"$oid": "<24 hex digits>"} or "_id": "<a name>"'))
        return True
    if decoded:
        keep(where, item)
        return True
    try:
        doc = json_util.loads(json.dumps(item))
    except _ejson_errors() as e:
        # A malformed value anywhere (an ignored field too) fails this document only; its
        # plain _id still names it when that is well-formed, so its cluster keeps its files.
        known = _identity(item)
        refused.append(refused_document(where, known, "has malformed Extended JSON "
                                f"({type(e).__name__}: {str(e)[:200]})"))
        return "_id" in known
    keep(where, doc)
    return True


def _identity(item: dict[str, Any]) -> dict[str, Any]:
    """The item's _id (when it decodes) and clusterId (when it is text): enough to name it."""
    from bson import json_util

    known: dict[str, Any] = {}
    if isinstance(item.get("clusterId"), str):
        known["clusterId"] = item["clusterId"]
    try:
        known["_id"] = json_util.loads(json.dumps({"_id": item["_id"]}))["_id"]
    except _ejson_errors():
        pass
    return known


