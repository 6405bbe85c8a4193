"""Documents as MongoDB sends them, measured before they are decoded (issue 19).

A document larger than `mongodb.max_document_bytes` must cost its bytes and no more: pymongo
hands it over as a `RawBSONDocument` (the bytes, undecoded), and only its `_id` is decoded, from
the first element, where MongoDB always stores it. Every other document is decoded one by one,
so a value Python cannot hold (a date past the year 9999) fails that document, not the read;
a cluster document is decoded only when its body is asked for (`Undecoded`, issue 22), and
fails then the same way. mongomock gives decoded dicts: they are measured by encoding them
again. The embedded database (`trinogen.embedded`) hands out raw BSON, as a server does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.model import HEAD_FIELDS

# Fixed value sizes by BSON type byte; with _COUNTED, every type an _id may have (arrays and
# regexes may not be one).
_FIXED = {0x01: 8, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8, 0x13: 16,
          0x7F: 0, 0xFF: 0}
# The types whose value starts with an int32 length: the value's size is that length plus this
# (a string's int32 itself; a binary's int32 and subtype byte; a document's length counts all).
_COUNTED = {0x02: 4, 0x0D: 4, 0x0E: 4, 0x05: 5, 0x03: 0}
_NO_ID = object()
# A too-large document is named by its _id and clusterId, read again alone; no more than this.
IDENTITY_BYTES = 4096


@dataclass(frozen=True)
class Read:
    """One document of a cursor: decoded (`body`), or why not (`refused`), with its size."""

    body: Mapping[str, Any] | None
    size: int | None  # BSON bytes; None when it could not be measured (mongomock, odd values)
    refused: str | None = None
    _id: Any = _NO_ID
    digest: bytes | None = None  # sha256 of the BSON bytes of a decoded document
    undecoded: Undecoded | None = None  # read with `lazy`: the bytes, decoded when asked

    @property
    def identified(self) -> bool:
        return self.body is not None or self.undecoded is not None or self._id is not _NO_ID

    @property
    def id(self) -> Any:
        if self.undecoded is not None:
            return self.undecoded.head().get("_id")
        return self.body.get("_id") if self.body is not None else self._id


def doc_key(_id: Any) -> str:
    """The canonical Extended JSON of an _id: the form recorded in file headers and status."""
    from bson import ObjectId, json_util

    if type(_id) is ObjectId:  # the common _id, written as json_util writes it, 10x faster
        return f'{{"$oid": "{_id}"}}'
    if type(_id) is str:
        return json.dumps(_id)
    return str(json_util.dumps(_id, json_options=json_util.CANONICAL_JSON_OPTIONS))


def speaks_bson(collection: Any) -> bool:
    """A pymongo collection (mongomock's decode in-process: there is nothing to spare)."""
    import pymongo.collection

    return isinstance(collection, pymongo.collection.Collection)


def identity(_id: Any, known: Mapping[str, Any]) -> dict[str, Any]:
    """What names a refused document: its _id, and its clusterId when that is text."""
    cid = known.get("clusterId")
    return {"_id": _id, "clusterId": cid} if isinstance(cid, str) else {"_id": _id}


def raw_options(options: Any) -> Any:
    """The collection's codec options, documents left as raw BSON."""
    from bson.raw_bson import RawBSONDocument

    return options.with_options(document_class=RawBSONDocument)


def read(item: Any, limit: int, options: Any, keys: dict[str, str] | None = None, *,
         lazy: bool = False) -> Read:
    """Decode one document of a cursor, unless it is over `limit` bytes or cannot be decoded.
    With `keys` (one dict for all the documents of a read), their keys are shared. `lazy`:
    raw BSON is kept undecoded (`Undecoded`) but for its HEAD_FIELDS, when they decode."""
    raw = getattr(item, "raw", None)
    if not isinstance(raw, bytes):  # mongomock: already decoded
        return _decoded(item, limit)
    size = len(raw)
    if size > limit:
        return Read(None, size, _too_large(size, limit), first_id(raw, options))
    undecoded = Undecoded.of(raw, options, keys) if lazy else None
    if undecoded is not None:
        return Read(None, size, digest=hashlib.sha256(raw).digest(), undecoded=undecoded)
    return _decode(raw, options, keys)


def _decode(raw: bytes, options: Any, keys: dict[str, str] | None) -> Read:
    import bson

    try:
        body = bson.decode(raw, options)
    except _decode_errors() as e:
        return Read(None, len(raw), f"cannot be decoded ({type(e).__name__}: {str(e)[:200]}); "
                    "correct the value in MongoDB", first_id(raw, options))
    if keys is not None:
        body = shared_keys(body, keys)
    return Read(body, len(raw), digest=hashlib.sha256(raw).digest())


# `connectors` is read of a served document only for the shared catalogs its entries name
# (`model.library.references`: an entry's text `shared`); without this string element in its
# bytes it names none, and the head leaves it out (most of a document's bytes, not decoded).
_SHARED = b"\x02shared\x00"
_HEAD = frozenset(k.encode() for k in HEAD_FIELDS)


class Undecoded:
    """A document's BSON bytes (well-formed as far as its top level goes, its `_id` first and
    once), with its HEAD_FIELDS decoded from their elements alone: what `RawDocument` decodes
    only when its body is asked for (issue 22). The head holds exactly what `bson.decode` of
    the whole document holds for those keys (`connectors` only when it may name a shared
    catalog: `_SHARED`); the body is decoded whole, keys shared as an
    eager read shares them, and a value that cannot be decoded refuses the document as an
    eager read would (the message, the _id and clusterId naming it)."""

    __slots__ = ("_head", "keys", "options", "raw")

    def __init__(self, raw: bytes, options: Any, keys: dict[str, str] | None,
                 head: Mapping[str, Any]) -> None:
        self.raw, self.options, self.keys, self._head = raw, options, keys, head

    @classmethod
    def of(cls, raw: bytes, options: Any, keys: dict[str, str] | None) -> Undecoded | None:
        """None when the document is better decoded now: its top level does not split, its
        `_id` is not its first element alone, or a head field cannot be decoded (the eager
        read then names what is wrong, as ever)."""
        import bson

        try:
            parts = _head_parts(raw)
            if parts is None:
                return None
            return cls(raw, options, keys, bson.decode(_joined(raw, parts), options))
        except _decode_errors():
            return None

    def head(self) -> Mapping[str, Any]:
        return self._head

    def decode(self) -> tuple[Mapping[str, Any], str | None]:
        read = _decode(self.raw, self.options, self.keys)
        if read.body is not None:
            return read.body, None
        return identity(self._head["_id"], self._identity()), f"the document {read.refused}"

    def _identity(self) -> Mapping[str, Any]:
        """clusterId and enabled, as the query for a refused document's identity reads them
        (`Source._identities`: a projection, read at most IDENTITY_BYTES), from the bytes."""
        import bson

        small = _joined(self.raw, [(k, s, e) for k, s, e in _split(self.raw)
                                   if k in (b"_id", b"clusterId", b"enabled")])
        if len(small) > IDENTITY_BYTES:
            return {}
        try:
            found: Mapping[str, Any] = bson.decode(small, self.options)
        except _decode_errors():
            return {}
        return found


def _head_parts(raw: bytes) -> list[tuple[bytes, int, int]] | None:
    """The head's elements, or None unless the top level splits to its last byte and `_id` is
    its first element and is there once."""
    split = _split(raw)
    parts = [(k, s, e) for k, s, e in split if k in _HEAD and (
        k != b"connectors" or raw.find(_SHARED, s, e) >= 0)]
    if not split or split[-1][2] != len(raw) - 1 or split[0][0] != b"_id" or [
            k for k, _, _ in parts].count(b"_id") != 1:
        return None
    return parts


def _joined(raw: bytes, parts: list[tuple[Any, int, int]]) -> bytes:
    """A BSON document of these elements of `raw`, in their order."""
    body = b"".join(raw[start:end] for _, start, end in parts)
    return (len(body) + 5).to_bytes(4, "little") + body + b"\x00"


def shared_keys(body: Any, keys: dict[str, str]) -> Any:
    """The document with each key of its (nested) dicts, and each string value, replaced by
    the first equal string seen in `keys`: bson.decode makes a new string for each of each
    document, a third of a decoded fleet's memory for the keys; shared, 10,000 documents take
    ~40 MiB less at the peak of a sync, for about as much CPU again as decoding them, and the
    string values (versions, sizes, connector settings: 23 MiB, 4.7 MiB of them distinct in
    the bench's fleet) ~18 MiB less (issue 22). Not sys.intern: Python 3.12 keeps interned
    strings forever, and `watch` reads documents whose keys and values anyone chooses; `keys`
    lives as long as the read. Values, types and key order are unchanged (a string is
    immutable: which equal copy a document holds cannot be told); a document nested too deep
    stays as decoded."""
    if type(body) is not dict:  # a document class of the caller's (not trinogen's): as it is
        return body
    try:
        return _shared(body, keys.setdefault)
    except RecursionError:
        return body


def _shared(value: Any, key: Callable[[str, str], str], kind: type = type) -> Any:
    if kind(value) is dict:
        return {key(k, k): key(v, v) if kind(v) is str else _shared(v, key)
                if kind(v) in _NESTED else v for k, v in value.items()}
    return [key(v, v) if kind(v) is str else _shared(v, key) if kind(v) in _NESTED else v
            for v in value]


_NESTED = (dict, list)


def _decoded(body: Mapping[str, Any], limit: int) -> Read:
    import bson

    try:
        encoded = bson.encode(body)
    except Exception:  # noqa: BLE001 - what bson cannot encode is not measured (nor cached)
        return Read(body, None)
    if len(encoded) > limit:
        return Read(None, len(encoded), _too_large(len(encoded), limit), body.get("_id", _NO_ID))
    return Read(body, len(encoded), digest=hashlib.sha256(encoded).digest())


def _too_large(size: int, limit: int) -> str:
    return (f"is {size:,} bytes as BSON; at most {limit:,} are read "
            "(mongodb.max_document_bytes): no document needs that much, since every part "
            "of a cluster becomes a Kubernetes object of at most 1 MiB; make it smaller")


def first_id(raw: bytes, options: Any) -> Any:
    """The `_id` from the first element of a BSON document, or _NO_ID when it is not there."""
    import bson

    if raw[5:9] != b"_id\x00":
        return _NO_ID
    kind, start = raw[4], 9
    if kind in _FIXED:
        end = start + _FIXED[kind]
    elif kind in _COUNTED:
        length = int.from_bytes(raw[start:start + 4], "little", signed=True)
        end = start + length + _COUNTED[kind]
    else:
        return _NO_ID
    if not 9 <= end <= len(raw) - 1:
        return _NO_ID
    element = raw[4:end]
    try:
        return bson.decode((len(element) + 5).to_bytes(4, "little") + element + b"\x00",
                           options)["_id"]
    except _decode_errors():
        return _NO_ID


# Every BSON type's value size, for splitting a document into its top-level elements: fixed,
# counted (an int32 first; a document, an array and code with scope count themselves), or two
# C strings (a regex), or a string and 12 bytes (a DBPointer).
_SIZED = {**_COUNTED, 0x04: 0, 0x0F: 0}


def elements(raw: bytes) -> Iterator[tuple[str, int, int]]:
    """(key, start, end) of each top-level element of a well-formed BSON document."""
    for key, start, end in _split(raw):
        yield key.decode(), start, end


def _split(raw: bytes) -> list[tuple[bytes, int, int]]:
    """`elements` with each key as its bytes, in a list: a lazy read splits every document."""
    out, at, last = [], 4, len(raw) - 1
    fixed, sized, index, size = _FIXED, _SIZED, raw.index, int.from_bytes
    while at < last:
        kind = raw[at]
        key_end = index(b"\x00", at + 1)
        start = key_end + 1
        if kind in fixed or kind == 0x06:
            end = start + fixed.get(kind, 0)
        elif kind in sized:
            end = start + size(raw[start:start + 4], "little") + sized[kind]
        elif kind == 0x0B:
            end = index(b"\x00", index(b"\x00", start) + 1) + 1
        elif kind == 0x0C:
            end = start + 4 + size(raw[start:start + 4], "little") + 12
        else:
            raise ValueError(f"BSON type {kind:#x} is unknown")
        out.append((raw[at + 1:key_end], at, end))
        at = end
    return out


def _decode_errors() -> tuple[type[Exception], ...]:
    from bson.errors import BSONError

    return (BSONError, ValueError, OverflowError, TypeError, KeyError, IndexError)
