"""MongoDB: read cluster documents, write status records. pymongo only.

`TRINOGEN_MONGODB_URI=mongomock://` serves documents from the embedded database
(`trinogen.embedded`, read-only, no mongomock) seeded from every *.json / *.jsonl file (Extended
JSON: one document, an array, or one document per line) in `mongodb.seed_dir`. Its data lives as
long as the process. The tests hand `Source` a mongomock client instead (reads and writes).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from trinogen import bsonread, embedded
from trinogen.bsonread import doc_key
from trinogen.embedded import Collection as Readable
from trinogen.embedded import SeedCollection
from trinogen.errors import ConfigError, SourceUnavailable
from trinogen.model import METADATA_FIELDS, RawDocument, claimed_cluster_id
from trinogen.redact import redact_text, redact_url
from trinogen.settings import MongoSettings

__all__ = ["PROJECTION", "Source", "connect", "doc_key", "parse_doc_key"]

log = logging.getLogger(__name__)

# Fields trinogen never reads; the server leaves them out. Everything else is returned, so
# unknown top-level fields are still reported by validation.
PROJECTION = {name: 0 for name in sorted(METADATA_FIELDS - {"_id"})}


# A read of at most this many _ids (and no clusterId) asks one equality query per _id: FerretDB
# v1/SQLite pushes `_id` equality down into SQL (~0.2 s at 10,000 documents under load) but
# answers `$in` by decoding every document (~4 s); more use one `$in`. Equality only for _id
# types that cannot read as an operator or a pattern.
EQUALITY_IDS = 8


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
        # their files).
        self.refused = list(refused)
        # Every seed file could be read (always True on a real server); when not, no read is
        # complete.
        self.seed_complete = complete
        # The last read of every document named every document: no cluster may be pruned as
        # "document deleted" otherwise (an unreadable seed file, an unidentified document; a
        # watcher's next full read without it may prune again).
        self.complete = complete
        self.refused_catalogs = list(refused_catalogs)
        db = client[settings.database]
        self.db = db
        self.collection = db[settings.collection]
        self.catalogs = db[settings.catalog_collection]
        self.queries = 0

    @property
    def status(self) -> Any:
        """Status records (looked up when used: the embedded database has none to read)."""
        return self.db[self.settings.status_collection]

    @property
    def state(self) -> Any:
        """The watch lease and resume token."""
        return self.db[self.settings.state_collection]

    # --- documents ---------------------------------------------------------------------------

    def read_all(self) -> list[RawDocument]:
        """Every document, in one query (a cursor dying mid-read fails the whole read)."""
        self.complete = self.seed_complete  # this read decides again (`_document`)
        return self._find({}) + self.refused

    def read_claims(self) -> list[RawDocument]:
        """Every document with its _id and clusterId only, in one query: who claims what, for
        the watcher's index of claimants (trinogen.watch.claimants) when it read no document
        yet (a watcher resumed from a saved token runs no full sync at start)."""
        return self._find({}, fields={"clusterId": 1}) + self.refused

    def read_targeted(self, doc_ids: Iterable[str], cluster_ids: Iterable[str]) -> list[RawDocument]:
        """The documents with these _ids, plus every document claiming these clusterIds, each
        once; a cursor dying mid-read fails the whole read. With clusterIds: one query, the `$or`
        of both branches (MongoDB serves it from two indexes once `clusterId` is indexed, and
        FerretDB scans once either way). _ids alone: one equality query per _id for a small
        batch (FerretDB answers `_id` equality in SQL, `$in` by decoding every document)."""
        keys = set(doc_ids)
        ids = [parse_doc_key(k) for k in sorted(keys)]
        cids = sorted(set(cluster_ids))
        found = [d for q in self._targeted_queries(ids, cids) for d in self._find(q)]
        claimed = set(cids)
        refused = [r for r in self.refused if r.doc_id in keys or claimed_cluster_id(r) in claimed]
        unique: dict[str, RawDocument] = {}
        for r in found + refused:  # a document matched twice is returned once
            unique.setdefault(r.doc_id, r)
        return list(unique.values())

    def _targeted_queries(self, ids: list[Any], cids: list[str]) -> list[dict[str, Any]]:
        from bson import ObjectId  # imported when used: start-up cost

        if cids:
            by_cid = {"clusterId": {"$in": cids}}
            return [{"$or": [{"_id": {"$in": ids}}, by_cid]} if ids else by_cid]
        if len(ids) <= EQUALITY_IDS and all(isinstance(i, (str, int, ObjectId)) for i in ids):
            return [{"_id": i} for i in ids]
        return [{"_id": {"$in": ids}}] if ids else []

    def read_catalogs(self) -> list[RawDocument]:
        """Every document of the catalog library, in one query."""
        return self._find({}, self.catalogs) + self.refused_catalogs

    def _find(self, query: Mapping[str, Any], collection: Any = None,
              fields: Mapping[str, Any] | None = None) -> list[RawDocument]:
        self.queries += 1
        coll = self.collection if collection is None else collection
        options = getattr(coll, "codec_options", None)
        # Cluster documents are left undecoded but for what the render cache reads (issue 22);
        # catalog documents are all parsed on every read of the library.
        lazy = collection is None
        if isinstance(coll, SeedCollection):  # raw BSON already, and no server to fail (nor
            return self._read(coll, query, None, options, lazy)  # pymongo to import: start-up)
        from pymongo.errors import PyMongoError

        try:
            # The projection saves a real server's bandwidth; in-process it would only cost copying.
            projection = fields or (None if self.ephemeral else PROJECTION)
            if bsonread.speaks_bson(coll):  # documents arrive as raw BSON, measured before decoding
                coll = coll.with_options(codec_options=bsonread.raw_options(options))
            return self._read(coll, query, projection, options, lazy)
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e

    def _read(self, coll: Readable, query: Mapping[str, Any],
              projection: Mapping[str, Any] | None, options: Any, lazy: bool
              ) -> list[RawDocument]:
        cursor = coll.find(query, projection, batch_size=self.settings.batch_size)
        keys: dict[str, str] = {}  # the documents of one read share their keys (issue 22)
        limit = self.settings.max_document_bytes
        reads = [bsonread.read(d, limit, options, keys, lazy=lazy) for d in cursor]
        identities = self._identities(reads, coll)
        return [self._document(r, identities) for r in reads]

    def _identities(self, reads: list[bsonread.Read], coll: Readable
                    ) -> dict[str, Mapping[str, Any]]:
        """clusterId and enabled of the documents read as too large (one more small query)."""
        ids = [r.id for r in reads if r.refused is not None and r.identified]
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
        if r.undecoded is not None:
            return RawDocument(doc_key(r.id), digest=r.digest, undecoded=r.undecoded)
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
        """Every status row, or only these keys' (a watch batch reads its own; issue 22)."""
        if self.ephemeral:  # nothing is written there (write_status)
            return {}
        from pymongo.errors import PyMongoError

        queries = [{}] if keys is None else _by_ids(sorted(keys))
        try:
            return {d["_id"]: d for q in queries for d in self.status.find(q)}
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e

    def write_status(self, records: Mapping[str, Mapping[str, Any]], removed: Iterable[str] = ()) -> int:
        """Replace the status of the given clusters: delete_many (one per key for a few keys,
        as `_by_ids`) + insert_many; returns writes (mongomock's bulk_write is broken with
        pymongo >= 4.11)."""
        ids = sorted(set(records) | set(removed))
        if not ids or self.ephemeral:
            return 0
        from pymongo.errors import PyMongoError

        try:
            for query in _by_ids(ids):
                self.status.delete_many(query)
            docs = [{"_id": cid, **rec} for cid, rec in sorted(records.items())]
            if docs:
                self.status.insert_many(docs, ordered=False)
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e
        return len(ids)


    def write_observed(self, fields: Mapping[str, Mapping[str, Any]]) -> int:
        """Set the `argocd` field only (a sync rewriting a record meanwhile keeps its commit)."""
        if self.ephemeral or not fields:
            return 0
        import pymongo
        from pymongo.errors import PyMongoError

        ops = [pymongo.UpdateOne({"_id": k}, {"$set": {"argocd": {**v}}}) for k, v in fields.items()]
        try:
            return int(self.status.bulk_write(ops, ordered=False).matched_count)
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e


def _by_ids(keys: list[str]) -> list[dict[str, Any]]:
    """The queries for the status rows of these keys (text): one `_id` equality each for a few
    (a watch batch's; FerretDB v1 answers only that from its index, `$in` by decoding every
    row: 0.5-0.8 s per batch at 10,000 clusters), else one `$in`; none for no key."""
    if len(keys) <= EQUALITY_IDS:
        return [{"_id": k} for k in keys]
    return [{"_id": {"$in": keys}}]


def connect(settings: MongoSettings) -> Source:
    """Build the client (no I/O until the first query, as pymongo does)."""
    uri = settings.uri
    if uri.startswith("mongomock://"):
        db = embedded.seeded(settings)
        return Source(db.client, settings, ephemeral=True, refused=db.refused,
                      complete=db.complete, refused_catalogs=db.refused_catalogs)

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


def _explain(e: Exception, s: MongoSettings) -> str:
    from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

    where = f"MongoDB ({redact_url(s.uri)}, {s.database}.{s.collection})"
    if isinstance(e, OperationFailure) and e.code in (13, 18):
        detail = e.details.get("errmsg", e) if e.details else e
        return f"{where}: authentication or authorization failed: {redact_text(str(detail))}"
    if isinstance(e, ServerSelectionTimeoutError):
        return f"{where} is unreachable after {s.timeout_ms} ms; check mongodb.uri and the network"
    return f"{where}: {type(e).__name__}: {redact_text(str(e))[:300]}"
