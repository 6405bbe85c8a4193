"""MongoDB: read cluster documents, write status records. pymongo (or mongomock) only.

`TRINOGEN_MONGODB_URI=mongomock://` serves documents from an in-process mongomock database seeded
from every *.json file (Extended JSON: one document or an array) in `mongodb.seed_dir`. Its data
lives as long as the process.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trinogen.errors import ConfigError, SourceUnavailable
from trinogen.model import METADATA_FIELDS, RawDocument
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

    def __init__(self, client: Any, settings: MongoSettings, *, ephemeral: bool = False) -> None:
        self.client = client
        self.settings = settings
        # The embedded database lives as long as the process: status records written there
        # could never be read, so they are not written.
        self.ephemeral = ephemeral
        db = client[settings.database]
        self.db = db
        self.collection = db[settings.collection]
        self.status = db[settings.status_collection]
        self.state = db[settings.state_collection]
        self.queries = 0

    # --- documents ---------------------------------------------------------------------------

    def read_all(self) -> list[RawDocument]:
        """Every document, in one query (a cursor dying mid-read fails the whole read)."""
        return self._find({})

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
        return self._find({"$or": ors} if len(ors) > 1 else ors[0])

    def _find(self, query: Mapping[str, Any]) -> list[RawDocument]:
        from pymongo.errors import PyMongoError

        self.queries += 1
        try:
            cursor = self.collection.find(query, PROJECTION, batch_size=self.settings.batch_size)
            return [RawDocument(doc_key(d.get("_id")), d) for d in cursor]
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e

    # --- status records (a separate collection: writes never wake a change-stream watcher) ----

    def read_status(self) -> dict[str, dict[str, Any]]:
        from pymongo.errors import PyMongoError

        try:
            return {d["_id"]: d for d in self.status.find({})}
        except PyMongoError as e:
            raise SourceUnavailable(_explain(e, self.settings)) from e

    def write_status(self, records: Mapping[str, Mapping[str, Any]], removed: Iterable[str] = ()) -> int:
        """Replace the status of the given clusters in two batched round trips; returns writes.

        (delete_many + insert_many rather than bulk_write: it batches the same way and also runs
        on mongomock, whose bulk_write is broken with pymongo >= 4.11.)
        """
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


def connect(settings: MongoSettings) -> Source:
    """Build the client (no I/O until the first query, as pymongo does)."""
    uri = settings.uri
    if uri.startswith("mongomock://"):
        return Source(_embedded(settings), settings, ephemeral=True)
    import pymongo
    from pymongo.errors import ConfigurationError, InvalidURI

    try:
        client: Any = pymongo.MongoClient(
            uri,
            serverSelectionTimeoutMS=settings.timeout_ms,
            connectTimeoutMS=settings.timeout_ms,
            appname="trinogen",
            tz_aware=True,
        )
    except (ConfigurationError, InvalidURI, ValueError) as e:
        raise ConfigError(f"mongodb.uri is not usable: {e}") from e
    return Source(client, settings)


def _embedded(settings: MongoSettings) -> Any:
    try:
        import mongomock
    except ImportError as e:
        raise ConfigError(
            "mongodb.uri is mongomock:// but mongomock is not installed; "
            "install trinogen[embedded]"
        ) from e
    client: Any = mongomock.MongoClient()
    if settings.seed_dir:
        coll = client[settings.database][settings.collection]
        docs = load_seed(Path(settings.seed_dir))
        if docs:
            coll.insert_many(docs)
    return client


def load_seed(directory: Path) -> list[dict[str, Any]]:
    """Every document of every *.json file in `directory` (Extended JSON, object or array)."""
    from bson import json_util

    if not directory.is_dir():
        raise ConfigError(f"mongodb.seed_dir {directory} is not a directory")
    docs: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.json")):
        try:
            data = json_util.loads(path.read_text(encoding="utf-8"))
        except (ValueError, TypeError, OSError) as e:
            raise ConfigError(f"seed file {path} is not valid Extended JSON: {e}") from e
        items = data if isinstance(data, list) else [data]
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ConfigError(f"seed file {path}: item {i} is not a document")
            docs.append(item)
    return docs


def _explain(e: Exception, s: MongoSettings) -> str:
    from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

    where = f"MongoDB ({_redact(s.uri)}, {s.database}.{s.collection})"
    if isinstance(e, OperationFailure) and e.code in (13, 18):
        return f"{where}: authentication or authorization failed: {e.details.get('errmsg', e) if e.details else e}"
    if isinstance(e, ServerSelectionTimeoutError):
        return f"{where} is unreachable after {s.timeout_ms} ms; check mongodb.uri and the network"
    return f"{where}: {type(e).__name__}: {str(e)[:300]}"


def _redact(uri: str) -> str:
    """The URI without its password."""
    if "@" not in uri or "://" not in uri:
        return uri
    scheme, rest = uri.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"
