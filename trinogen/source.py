"""MongoDB: read cluster documents, write status records. pymongo (or mongomock) only.

`TRINOGEN_MONGODB_URI=mongomock://` serves documents from an in-process mongomock database seeded
from every *.json / *.jsonl file (Extended JSON: one document, an array, or one document per line)
in `mongodb.seed_dir`. Its data lives as long as the process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from trinogen import bsonread
from trinogen.errors import ConfigError, SourceUnavailable
from trinogen.model import METADATA_FIELDS, RawDocument, claimed_cluster_id
from trinogen.redact import redact_text, redact_url
from trinogen.settings import MongoSettings

log = logging.getLogger(__name__)

# Fields trinogen never reads; the server leaves them out. Everything else is returned, so
# unknown top-level fields are still reported by validation.
PROJECTION = {name: 0 for name in sorted(METADATA_FIELDS - {"_id"})}


def doc_key(_id: Any) -> str:
    """The canonical Extended JSON of an _id: the form recorded in file headers and status."""
    from bson import json_util

    return str(json_util.dumps(_id, json_options=json_util.CANONICAL_JSON_OPTIONS))


def parse_doc_key(key: str) -> Any:
    from bson import json_util

    return json_util.loads(key)


class Source:
    """The cluster collection and trinogen's own collections next to it."""

    def __init__(self, client: Any, settings: MongoSettings, *, ephemeral: bool = False,
                 refused: Iterable[RawDocument] = (), complete: bool = True,
                 refused_catalogs: Iterable[RawDocument] = ()) -> None:
        self.client = client
        self.settings = settings
        # The embedded database lives as long as the process: status records written there
        # could never be read, so they are not written.
        self.ephemeral = ephemeral
        # Seed documents the embedded database refused: reported as failed (their clusters keep
        # their files). `complete` is False when a whole seed file could not be read: then no
        # cluster may be pruned as "document deleted" in this run.
        self.refused = list(refused)
        self.complete = complete
        self.refused_catalogs = list(refused_catalogs)
        db = client[settings.database]
        self.db = db
        self.collection = db[settings.collection]
        self.catalogs = db[settings.catalog_collection]
        self.status = db[settings.status_collection]
        self.state = db[settings.state_collection]
        self.queries = 0

    # --- documents ---------------------------------------------------------------------------

    def read_all(self) -> list[RawDocument]:
        """Every document, in one query (a cursor dying mid-read fails the whole read)."""
        return self._find({}) + self.refused

    def read_targeted(self, doc_ids: Iterable[str], cluster_ids: Iterable[str]) -> list[RawDocument]:
        """The documents with these _ids, plus every document claiming these clusterIds."""
        ids = [parse_doc_key(k) for k in sorted(set(doc_ids))]
        cids = sorted(set(cluster_ids))
        ors: list[dict[str, Any]] = []
        if ids:
            ors.append({"_id": {"$in": ids}})
        if cids:
            ors.append({"clusterId": {"$in": cids}})
        if not ors:
            return []
        refused = [r for r in self.refused
                   if r.doc_id in set(doc_ids) or claimed_cluster_id(r) in set(cids)]
        return self._find({"$or": ors} if len(ors) > 1 else ors[0]) + refused

    def read_catalogs(self) -> list[RawDocument]:
        """Every document of the catalog library, in one query."""
        return self._find({}, self.catalogs) + self.refused_catalogs

    def _find(self, query: Mapping[str, Any], collection: Any = None) -> list[RawDocument]:
        from pymongo.errors import PyMongoError

        self.queries += 1
        coll = self.collection if collection is None else collection
        options = getattr(coll, "codec_options", None)
        try:
            # The projection saves a real server's bandwidth; in-process it would only cost copying.
            projection = None if self.ephemeral else PROJECTION
            if bsonread.speaks_bson(coll):  # documents arrive as raw BSON, measured before decoding
                coll = coll.with_options(codec_options=bsonread.raw_options(options))
            cursor = coll.find(query, projection, batch_size=self.settings.batch_size)
            reads = [bsonread.read(d, self.settings.max_document_bytes, options) for d in cursor]
            identities = self._identities(reads, coll)
            return [self._document(r, identities) for r in reads]
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e

    def _identities(self, reads: list[bsonread.Read], coll: Any) -> dict[str, Mapping[str, Any]]:
        """clusterId and enabled of the documents read as too large (one more small query)."""
        ids = [r.id for r in reads if r.body is None and r.identified]
        if not ids:
            return {}
        self.queries += 1
        found = coll.find({"_id": {"$in": ids}}, {"clusterId": 1, "enabled": 1})
        out = {}
        for item in found:
            small = bsonread.read(item, bsonread.IDENTITY_BYTES, getattr(coll, "codec_options", None))
            if small.body is not None:
                out[doc_key(small.id)] = small.body
        return out

    def _document(self, r: bsonread.Read, identities: Mapping[str, Mapping[str, Any]]
                  ) -> RawDocument:
        if r.body is not None:
            return RawDocument(doc_key(r.body.get("_id")), r.body, digest=r.digest)
        if not r.identified:
            # No _id to name it by: its cluster cannot be told, so none is pruned this run.
            self.complete = False
            return RawDocument(json.dumps(f"unidentified document {self.queries}"), {},
                               unreadable=f"a document without a readable _id {r.refused}")
        key = doc_key(r.id)
        body = bsonread.identity(r.id, identities.get(key, {}))
        return RawDocument(key, body, unreadable=f"the document {r.refused}")

    # --- status records (a separate collection: writes never wake a change-stream watcher) ----

    def read_status(self, keys: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
        from pymongo.errors import PyMongoError  # keys: only these rows (a watch batch; issue 22)

        query = {} if keys is None else {"_id": {"$in": sorted(keys)}}
        try:
            return {d["_id"]: d for d in self.status.find(query)} if keys is None or keys else {}
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e

    def write_status(self, records: Mapping[str, Mapping[str, Any]], removed: Iterable[str] = ()) -> int:
        """Replace the status of the given clusters in two batched round trips; returns writes
        (delete_many + insert_many: mongomock's bulk_write is broken with pymongo >= 4.11)."""
        from pymongo.errors import PyMongoError

        ids = sorted(set(records) | set(removed))
        if not ids or self.ephemeral:
            return 0
        try:
            self.status.delete_many({"_id": {"$in": ids}})
            docs = [{"_id": cid, **rec} for cid, rec in sorted(records.items())]
            if docs:
                self.status.insert_many(docs, ordered=False)
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e
        return len(ids)


    def write_observed(self, fields: Mapping[str, Mapping[str, Any]]) -> int:
        """Set the `argocd` field only (a sync rewriting a record meanwhile keeps its commit)."""
        import pymongo
        from pymongo.errors import PyMongoError

        ops = [pymongo.UpdateOne({"_id": k}, {"$set": {"argocd": {**v}}}) for k, v in fields.items()]
        try:
            return 0 if self.ephemeral or not ops else int(
                self.status.bulk_write(ops, ordered=False).matched_count)
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e


def connect(settings: MongoSettings) -> Source:
    """Build the client (no I/O until the first query, as pymongo does)."""
    uri = settings.uri
    if uri.startswith("mongomock://"):
        embedded, refused, complete = _embedded(settings)
        catalogs = _embedded_catalogs(embedded, settings)
        return Source(embedded, settings, ephemeral=True, refused=refused, complete=complete,
                      refused_catalogs=catalogs)
    import pymongo
    from pymongo.errors import ConfigurationError, InvalidURI

    try:
        client: Any = pymongo.MongoClient(
            uri, serverSelectionTimeoutMS=settings.timeout_ms,
            connectTimeoutMS=settings.timeout_ms, appname="trinogen", tz_aware=True)
    except (ConfigurationError, InvalidURI, ValueError) as e:
        # pymongo's message may quote the URI (its query string included): redact it
        raise ConfigError(f"mongodb.uri ({redact_url(uri)}) is not usable: "
                          f"{redact_text(str(e))}") from e
    return Source(client, settings)


def _embedded(settings: MongoSettings) -> tuple[Any, list[RawDocument], bool]:
    """An in-process database seeded from `seed_dir`; returns it, the refused documents, and
    whether every seed file could be read."""
    try:
        import mongomock
    except ImportError as e:
        raise ConfigError("mongodb.uri is mongomock:// but mongomock is not installed; "
                          "install trinogen[embedded]") from e
    client: Any = mongomock.MongoClient()
    if not settings.seed_dir:
        return client, [], True
    coll = client[settings.database][settings.collection]
    seeds, refused, complete = load_seed(Path(settings.seed_dir))
    _insert(coll, seeds, refused)
    return client, refused, complete


def _embedded_catalogs(client: Any, settings: MongoSettings) -> list[RawDocument]:
    """Seed the catalog library from `<seed_dir>/catalogs/` (same file forms as the cluster
    documents); returns the catalog documents it refused."""
    directory = Path(settings.seed_dir) / "catalogs" if settings.seed_dir else None
    if directory is None or not directory.is_dir():
        return []
    seeds, refused, _ = load_seed(directory)
    _insert(client[settings.database][settings.catalog_collection], seeds, refused)
    return refused


def _insert(coll: Any, seeds: Seeds, refused: list[RawDocument]) -> None:
    """Insert the seed documents; each one the database refuses is added to `refused`."""
    if not seeds:
        return
    try:
        coll.insert_many([doc for _, doc in seeds])
    except Exception:  # noqa: BLE001 - a document MongoDB would refuse: find it below
        coll.drop()
        for where, doc in seeds:
            try:
                coll.insert_one(doc)
            except Exception as e:  # noqa: BLE001 - mongomock raises many kinds
                log.error("%s: MongoDB would refuse this document (%s)", where, type(e).__name__)
                refused.append(_refused(where, doc, f"MongoDB would refuse this document "
                                        f"({type(e).__name__}: {str(e)[:200]})"))


def _refused(where: str, doc: Any, reason: str) -> RawDocument:
    try:
        key = doc_key(doc["_id"]) if isinstance(doc, dict) and "_id" in doc else None
    except Exception:  # noqa: BLE001 - an _id that cannot even be written down
        key = None
    body = doc if isinstance(doc, dict) else {}
    return RawDocument(key or json.dumps(where), body, unreadable=f"{where}: {reason}")


Seeds = list[tuple[str, dict[str, Any]]]



def _ejson_errors() -> tuple[type[Exception], ...]:
    """What bson's Extended JSON decoding raises for a malformed value: {"$oid": "zzz"} is a
    BSONError, {"$numberDecimal": "abc"} an ArithmeticError, an out-of-range $date a ValueError."""
    from bson.errors import BSONError

    return (BSONError, ValueError, TypeError, OverflowError, ArithmeticError, RecursionError,
            KeyError)


def load_seed(directory: Path) -> tuple[Seeds, list[RawDocument], bool]:
    """(where, document) for every document of every *.json / *.jsonl file in `directory`
    (Extended JSON: one document, an array, or one document per line as mongoexport writes by
    default), the refused ones, and whether every file could be read."""
    if not directory.is_dir():
        raise ConfigError(f"mongodb.seed_dir {directory} is not a directory")
    docs: Seeds = []
    refused: list[RawDocument] = []
    complete = True
    for path in sorted([*directory.glob("*.json"), *directory.glob("*.jsonl")]):
        fast = _decoded_items(path)
        if fast is not None:
            for where, doc in fast:
                complete = _seed_item(where, doc, docs, refused, decoded=True) and complete
            continue
        items = _seed_items(path)
        if isinstance(items, str):
            # Its documents are unknown: report the file, and prune nothing as "deleted".
            log.error("seed file %s cannot be read: %s", path, items)
            refused.append(_refused(f"seed file {path.name}", None, items))
            complete = False
            continue
        for where, item in items:
            complete = _seed_item(where, item, docs, refused) and complete
    return docs, refused, complete


def _decoded_items(path: Path) -> list[tuple[str, Any]] | None:
    """The common case in one pass: the whole file as well-formed Extended JSON (one document or
    an array). None sends the file down the item-by-item path, which names a malformed item."""
    from bson import json_util

    failures: tuple[type[Exception], ...] = (OSError, UnicodeDecodeError, *_ejson_errors())
    try:
        data = json_util.loads(path.read_text(encoding="utf-8"))
    except failures:
        return None
    if isinstance(data, list):
        return [(f"seed file {path.name} item {i}", item) for i, item in enumerate(data)]
    return [(f"seed file {path.name}", data)]


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


def _seed_item(where: str, item: Any, docs: Seeds, refused: list[RawDocument], *,
               decoded: bool = False) -> bool:
    """Decode one item's Extended JSON (unless `decoded`) and keep or refuse it; False when it
    names no known document (then nothing may be pruned as deleted)."""
    from bson import json_util

    if not isinstance(item, dict):
        refused.append(_refused(where, item, "is not a document"))
        return True
    if "_id" not in item:
        # The database would invent a new ObjectId on every run (the seed is loaded afresh each
        # time), changing the cluster's files on every sync; one derived from clusterId would turn
        # a rename into delete + add and could collide with a real _id: refuse (README's table).
        refused.append(_refused(where, item, 'has no "_id"; give it a fixed one, e.g. '
                                '"_id": {"$oid": "<24 hex digits>"} or "_id": "<a name>"'))
        return True
    if decoded:
        docs.append((where, item))
        return True
    try:
        doc = json_util.loads(json.dumps(item))
    except _ejson_errors() as e:
        # A malformed value anywhere (an ignored field too) fails this document only; its
        # plain _id still names it when that is well-formed, so its cluster keeps its files.
        known = _identity(item)
        refused.append(_refused(where, known, "has malformed Extended JSON "
                                f"({type(e).__name__}: {str(e)[:200]})"))
        return "_id" in known
    docs.append((where, doc))
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


def _explain(e: Exception, s: MongoSettings) -> str:
    from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

    where = f"MongoDB ({redact_url(s.uri)}, {s.database}.{s.collection})"
    if isinstance(e, OperationFailure) and e.code in (13, 18):
        detail = e.details.get("errmsg", e) if e.details else e
        return f"{where}: authentication or authorization failed: {redact_text(str(detail))}"
    if isinstance(e, ServerSelectionTimeoutError):
        return f"{where} is unreachable after {s.timeout_ms} ms; check mongodb.uri and the network"
    return f"{where}: {type(e).__name__}: {redact_text(str(e))[:300]}"
