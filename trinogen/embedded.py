"""The embedded database (`mongomock://`): seed documents held once, as BSON, read-only (issue 22).

Each seed document is encoded once (`bson.encode`, in C) and kept as those bytes; a query hands
them out as raw BSON, so `bsonread.read` takes the path a real server's documents take (size
check, digest of the bytes as stored, decoding in C), and what a sync reads is what MongoDB
would send: key order kept (`_id` first, as BSON stores it), datetimes UTC with millisecond
precision (naive, as mongomock gave them), integers beyond 32 bits as `Int64`. `add` refuses
what MongoDB (and mongomock before this module) would refuse on insert, with mongomock's
messages: a duplicate `_id` (equal as Python values, as mongomock compared them), an `_id` that
is a list, a regex, a Decimal128 or code, a key with a NUL character, a top-level key starting
with `$`, and whatever `bson.encode` cannot encode. One difference: an empty `Timestamp(0, 0)`
is kept as written (mongomock put the current time there, so the document changed every run).

Memory: the bytes (1.6 kB per bench document) are about a fourth of a decoded document (5 kB,
its keys and string values shared by `bsonread.shared_keys`; 7 kB with the keys alone shared, as
the JSON parser shares them; 10.7 kB with a string per key of each document; issue 22's report);
a read builds one only for a document whose body is asked for, and ~0.9 kB (its head, digest and
names) for one the render cache serves.

It answers only the queries `trinogen.source` makes: every document, `_id` `$in` or equality,
`clusterId` `$in`, the `$or` of the two, with a projection of top-level fields. Writes are not served: the
embedded database lives as long as the process, so trinogen writes nothing to it. mongomock is
imported only if some other collection is asked for (the tests' watch lease).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from trinogen import bsonread
from trinogen.errors import ConfigError
from trinogen.model import RawDocument
from trinogen.seed import load_seed, refused_document
from trinogen.settings import MongoSettings

log = logging.getLogger(__name__)


class Collection(Protocol):
    """What `trinogen.source` asks of a collection when reading documents (pymongo's, or ours)."""

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any] | None = None,
             **options: Any) -> Iterable[Any]: ...


class Refused(Exception):
    """A document MongoDB would refuse; `kind` is the name of the error mongomock raised."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class SeedCollection:
    """Documents as BSON bytes in insertion order, keyed by `_id`, read-only once seeded."""

    def __init__(self) -> None:
        from bson.codec_options import CodecOptions

        self._docs: dict[Any, bytes] = {}
        self._clusters: dict[str, list[Any]] = {}
        self._keys: dict[str, Any] | None = None  # canonical Extended JSON of each _id
        # Decoded as mongomock handed documents out: datetimes naive (UTC), dicts plain.
        self.codec_options: Any = CodecOptions()

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, doc: dict[str, Any]) -> None:
        """Keep one document, or raise Refused; checked in the order mongomock checked."""
        import bson

        try:
            raw = bson.encode(doc)
        except Exception as e:  # whatever bson cannot encode is refused
            _check_keys(doc)  # mongomock's own key checks came first: their message wins
            raise Refused(type(e).__name__, str(e)) from e
        _check_top_level(doc)
        try:
            key = _hashable(doc["_id"])
        except TypeError as e:  # unhashable type: 'list', 'Regex', 'Decimal128', 'Code'
            raise Refused("TypeError", str(e)) from e
        if key in self._docs:
            raise Refused("DuplicateKeyError", "E11000 Duplicate Key Error")
        self._docs[key] = raw
        self._keys = None
        cid = doc.get("clusterId")
        for name in cid if isinstance(cid, list) else [cid]:
            if type(name) is str:  # `$in` with strings matches a string or an array's element
                self._clusters.setdefault(name, []).append(key)

    def drop_after(self, count: int) -> None:
        """Forget the documents added after the first `count` (a seed file that turned out
        malformed halfway, to be read again item by item)."""
        dropped: set[Any] = set()
        while len(self._docs) > count:
            dropped.add(self._docs.popitem()[0])  # the last added first
        for name, keys in list(self._clusters.items()):
            while keys and keys[-1] in dropped:  # a file's documents were appended last
                keys.pop()
            if not keys:
                del self._clusters[name]
        self._keys = None

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any] | None = None,
             **_options: Any) -> list[Any]:
        """The raw documents the query matches, in insertion order (batching is moot here)."""
        from bson.raw_bson import RawBSONDocument

        keys = self._match(query)
        raws = self._docs.values() if keys is None else [self._docs[k] for k in keys]
        if projection:
            raws = [project(raw, projection) for raw in raws]
        return [RawBSONDocument(raw) for raw in raws]

    def _match(self, query: Mapping[str, Any]) -> list[Any] | None:
        """The keys of the matching documents, in insertion order; None for every document."""
        if not query:
            return None
        found: set[Any] = set()
        for clause in query["$or"] if set(query) == {"$or"} else [query]:
            found.update(self._clause(clause))
        return [k for k in self._docs if k in found]

    def _clause(self, clause: Mapping[str, Any]) -> list[Any]:
        (name, condition), = clause.items()
        values = _values(condition)
        if name == "clusterId":
            return [k for v in values if isinstance(v, str) for k in self._clusters.get(v, ())]
        if name != "_id":
            raise ValueError(f"the embedded database answers only _id and clusterId, not {name}")
        keys = self._id_keys()
        return [keys[k] for k in map(bsonread.doc_key, values) if k in keys]

    def _id_keys(self) -> dict[str, Any]:
        """_id as written in file headers -> key, built when a targeted read first needs it."""
        if self._keys is None:
            self._keys = {bsonread.doc_key(bsonread.first_id(raw, self.codec_options)): k
                          for k, raw in self._docs.items()}
        return self._keys


class Embedded:
    """The client: `client[database][collection]`. The seeded collections are SeedCollections;
    any other (status records, the watch lease) is mongomock's, imported on first use only:
    trinogen writes nothing to the embedded database, but tests drive `watch` over it."""

    def __init__(self) -> None:
        self._collections: dict[tuple[str, str], SeedCollection] = {}
        self._mongomock: Any = None

    def __getitem__(self, database: str) -> _Database:
        return _Database(self, database)

    def seed(self, database: str, name: str) -> SeedCollection:
        """The read-only collection `name`, created empty on first call."""
        return self._collections.setdefault((database, name), SeedCollection())

    def other(self, database: str, name: str) -> Any:
        seeded = self._collections.get((database, name))
        if seeded is not None:
            return seeded
        if self._mongomock is None:
            try:
                import mongomock
            except ImportError as e:
                raise ConfigError(f"{database}.{name} in the embedded database needs mongomock; "
                                  "install trinogen[embedded]") from e
            self._mongomock = mongomock.MongoClient()
        return self._mongomock[database][name]

    def close(self) -> None:
        """Nothing to release (pymongo's clients have this)."""


class _Database:
    def __init__(self, client: Embedded, name: str) -> None:
        self._client, self._name = client, name

    def __getitem__(self, collection: str) -> Any:
        return self._client.other(self._name, collection)


@dataclass
class Seeded:
    """The embedded database as `mongodb.seed_dir` seeds it, and what it could not hold."""

    client: Embedded
    refused: list[RawDocument] = field(default_factory=list)
    complete: bool = True  # False when a seed file could not be read: prune nothing
    refused_catalogs: list[RawDocument] = field(default_factory=list)


def seeded(settings: MongoSettings) -> Seeded:
    """The cluster documents from `seed_dir`, the catalog library from `seed_dir/catalogs/`
    (same file forms and rules); each document MongoDB would refuse is reported, not kept."""
    db = Seeded(Embedded())
    documents = db.client.seed(settings.database, settings.collection)
    library = db.client.seed(settings.database, settings.catalog_collection)
    if not settings.seed_dir:
        return db
    db.refused, db.complete = _load(documents, Path(settings.seed_dir))
    catalogs = Path(settings.seed_dir) / "catalogs"
    if catalogs.is_dir():
        db.refused_catalogs, _ = _load(library, catalogs)
    return db


def _load(coll: SeedCollection, directory: Path) -> tuple[list[RawDocument], bool]:
    """Seed `coll` from `directory`, each document kept as BSON as soon as it is decoded: the
    documents refused (the loader's, then MongoDB's, each in file order) and whether every file
    could be read."""
    loader = _Loader(coll)
    refused, complete = load_seed(directory, loader)
    for where, kind, doc in loader.refusals:
        log.error("%s: MongoDB would refuse this document (%s)", where, kind)
        refused.append(doc)
    return refused, complete


class _Loader:
    """The seed loader's sink: each document into the collection, or (when MongoDB would refuse
    it) aside; `undo` forgets both since the file began."""

    def __init__(self, coll: SeedCollection) -> None:
        self._coll = coll
        self.refusals: list[tuple[str, str, RawDocument]] = []  # (where, error kind, document)
        self._mark = (0, 0)

    def keep(self, where: str, doc: dict[str, Any]) -> None:
        try:
            self._coll.add(doc)
        except Refused as e:
            self.refusals.append((where, e.kind, refused_document(
                where, doc, f"MongoDB would refuse this document ({e.kind}: {str(e)[:200]})")))

    def begin(self) -> None:
        self._mark = (len(self._coll), len(self.refusals))

    def undo(self) -> None:
        self._coll.drop_after(self._mark[0])
        del self.refusals[self._mark[1]:]


def project(raw: bytes, projection: Mapping[str, Any]) -> bytes:
    """The document with only the top-level fields a projection keeps, as a server sends it:
    inclusion (`{"a": 1}`, `_id` kept unless `{"_id": 0}`) or exclusion (`{"a": 0}`)."""
    including = any(v for k, v in projection.items() if k != "_id")

    def kept(key: str) -> bool:
        if key in projection:
            return bool(projection[key])
        return key == "_id" or not including

    body = b"".join(raw[start:end] for key, start, end in bsonread.elements(raw) if kept(key))
    return (len(body) + 5).to_bytes(4, "little") + body + b"\x00"


def _values(condition: Any) -> list[Any]:
    """The values a clause matches: `{"$in": [...]}`, or one value compared for equality."""
    if not isinstance(condition, Mapping):
        return [condition]
    if set(condition) != {"$in"}:
        raise ValueError(f"the embedded database answers only $in or equality, not {condition!r}")
    return list(condition["$in"])


def _hashable(_id: Any) -> Any:
    """The _id as mongomock keyed its store: a document by its items (in any order, as Python
    compares dicts), a list inside it by its elements; a list or a regex _id raises TypeError."""
    if not isinstance(_id, dict):
        hash(_id)  # TypeError as mongomock's store raised it
        return _id
    return frozenset((k, _hashable(v) if isinstance(v, dict) else tuple(v) if isinstance(v, list)
                      else v) for k, v in _id.items())


def _check_keys(doc: Mapping[str, Any]) -> None:
    """mongomock's key checks: no NUL in a key of a (nested) document, no top-level `$` key."""
    _check_nul(doc)
    _check_top_level(doc)


def _check_nul(doc: Mapping[str, Any]) -> None:
    for key, value in doc.items():
        if "\0" in key:
            raise Refused("InvalidDocument",
                          f"Field names cannot contain the null character (found: {key})")
        if isinstance(value, Mapping):
            _check_nul(value)


def _check_top_level(doc: Mapping[str, Any]) -> None:
    for key in doc:
        if key.startswith("$"):
            raise Refused("InvalidDocument", 'Top-level field names cannot start with the "$" '
                          f"sign (found: {key})")
