"""The change feed: pymongo's change stream as typed events and typed failures.

The only module of the watcher that speaks pymongo's change-stream API. pymongo resumes by
itself after a network error, CursorNotFound or a resumable error label; what reaches the loop
is what it cannot handle: a position the server no longer accepts, or a failure to retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trinogen.errors import SourceUnavailable
from trinogen.source import doc_key
from trinogen.watch.position import StreamPosition

# Document changes that start a targeted sync.
DOCUMENT_EVENTS = ("insert", "update", "replace", "delete")
# Events after which the stream cannot go on (or the collection is gone): full sync, new stream.
STREAM_END_EVENTS = ("invalidate", "drop", "rename", "dropDatabase")
# What the loop reads of an event (`to_event`); the server leaves out the rest, fullDocument and
# updateDescription above all: an event carrying a 16 MiB document would be over MongoDB's own
# limit, and the server would fail every getMore at it, the stream stuck on it forever (issue 19).
EVENT_FIELDS = ("operationType", "documentKey", "ns", "wallTime", "clusterTime")
PROJECT: dict[str, Any] = {"$project": dict.fromkeys(EVENT_FIELDS, 1)}  # _id (the token) stays
PIPELINE: list[dict[str, Any]] = [
    {"$match": {"operationType": {"$in": [*DOCUMENT_EVENTS, *STREAM_END_EVENTS]}}}, PROJECT,
]
# Events of a whole database that carry no collection, yet end a database's stream.
DATABASE_END_EVENTS = ("invalidate", "dropDatabase")


def watched_pipeline(collections: Iterable[str]) -> list[dict[str, Any]]:
    """PIPELINE for a stream on the database, filtered by the server to `collections`: the
    status and state collections next to them never wake the watcher (no feedback loop)."""
    match = dict(PIPELINE[0]["$match"])
    match["$or"] = [{"ns.coll": {"$in": sorted(set(collections))}},
                    {"operationType": {"$in": list(DATABASE_END_EVENTS)}}]
    return [{"$match": match}, PROJECT]
# Server errors meaning "this resume token is no longer usable": resuming cannot work.
TOKEN_LOST_CODES = {
    286: "ChangeStreamHistoryLost",
    280: "ChangeStreamFatalError",
    260: "InvalidResumeToken",
}
# Server errors meaning "this server has no change streams at all" (a standalone mongod answers
# 40573 "only supported on replica sets"; FerretDB answers 238 NotImplemented): retrying never helps.
NO_CHANGE_STREAM_CODES = {40573: "Location40573", 238: "NotImplemented"}


# --- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Changed:
    """A document was inserted, updated, replaced or deleted."""

    doc_id: str  # canonical Extended JSON of the _id (trinogen.source.doc_key)
    operation: str
    at: datetime | None  # server time of the change
    library: bool = False  # a document of the catalog library, not a cluster document


@dataclass(frozen=True)
class Ended:
    """The stream cannot go on (invalidate, drop, rename, dropDatabase)."""

    operation: str


@dataclass(frozen=True)
class Ignored:
    """An event the watcher does not act on (an unknown type, or no document key)."""

    operation: str


@dataclass(frozen=True)
class Quiet:
    """No event within max_await_ms; `open` is False when the server ended the cursor."""

    open: bool = True


Event = Changed | Ended | Ignored | Quiet


# --- failures (in the one error tree: MongoDB could not be used) --------------------------------


class FeedFailed(SourceUnavailable):
    """The change stream failed beyond what pymongo resumes by itself."""


class PositionLost(FeedFailed):
    """The server says the stream's position is no longer usable (history lost, fatal)."""


class PositionRejected(FeedFailed):
    """The server refused to open a stream after the given position."""


class ChangeStreamsUnsupported(SourceUnavailable):
    """The server has no change streams (not a replica set): the watcher cannot work there.

    Not a FeedFailed: the loop does not retry it, the command exits 4 at once.
    """


def unsupported(code: object, message: str) -> bool:
    """Whether a server error says change streams are not available on this server."""
    return code in NO_CHANGE_STREAM_CODES or "only supported on replica sets" in message


def _describe(e: Exception) -> str:
    code = getattr(e, "code", None)
    name = TOKEN_LOST_CODES.get(code) if isinstance(code, int) else None
    details = getattr(e, "details", None)
    name = name or (details.get("codeName") if isinstance(details, Mapping) else None)
    label = f" {name} ({code})" if code is not None else ""
    return f"{type(e).__name__}{label}: {str(e)[:300]}"


def event_time(event: Mapping[str, Any]) -> datetime | None:
    """When the change happened on the server: wallTime (MongoDB 6+) or clusterTime."""
    wall = event.get("wallTime")
    if isinstance(wall, datetime):
        return wall if wall.tzinfo else wall.replace(tzinfo=UTC)
    cluster_time = event.get("clusterTime")
    if cluster_time is not None and hasattr(cluster_time, "as_datetime"):
        return cluster_time.as_datetime()  # type: ignore[no-any-return]
    return None


def to_event(raw: Mapping[str, Any] | None, alive: bool = True,
             library: str | None = None) -> Event:
    """A typed event from one raw change document (None: nothing within max_await_ms);
    `library` names the catalog collection, whose changes are marked as such."""
    if raw is None:
        return Quiet(open=alive)
    operation = str(raw.get("operationType"))
    if operation in STREAM_END_EVENTS:
        return Ended(operation)
    key = raw.get("documentKey")
    if operation not in DOCUMENT_EVENTS or not isinstance(key, Mapping) or "_id" not in key:
        return Ignored(operation)
    ns = raw.get("ns")
    coll = ns.get("coll") if isinstance(ns, Mapping) else None
    return Changed(doc_key(key["_id"]), operation, event_time(raw),
                   library=library is not None and coll == library)


# --- the adapter --------------------------------------------------------------------------------


class ChangeStream:
    """One open pymongo change stream; `next()` makes at most one getMore."""

    def __init__(self, stream: Any, library: str | None = None) -> None:
        self._stream = stream
        self._library = library

    @property
    def position(self) -> StreamPosition | None:
        return StreamPosition.of(self._stream.resume_token)

    def next(self) -> Event:
        from pymongo.errors import OperationFailure, PyMongoError

        try:
            raw = self._stream.try_next()
        except OperationFailure as e:
            if e.code in TOKEN_LOST_CODES:
                raise PositionLost(_describe(e)) from e
            raise FeedFailed(_describe(e)) from e
        except PyMongoError as e:
            raise FeedFailed(_describe(e)) from e
        return to_event(raw, alive=bool(self._stream.alive), library=self._library)

    def close(self) -> None:
        with suppress(Exception):  # closing a broken stream may fail again: nothing to do
            self._stream.close()


class ChangeFeed:
    """Opens change streams on one collection, or on its database filtered to the cluster and
    catalog collections (`watched_pipeline`). Events never carry the document: a sync reads
    what it needs, measured before it is decoded (trinogen.bsonread)."""

    def __init__(self, collection: Any, max_await_ms: int, *,
                 pipeline: list[dict[str, Any]] | None = None,
                 library: str | None = None, probe: Any = None) -> None:
        self.collection = collection  # anything with pymongo's watch(): a collection, a database
        self.max_await_ms = max_await_ms  # settings keep it within 1..1000 ms
        self.pipeline = pipeline if pipeline is not None else PIPELINE
        self.library = library  # the catalog collection's name
        # With a stream on the database: the cluster collection, to tell why a refusal happened
        self.probe = probe

    def open(self, after: StreamPosition | None) -> ChangeStream:
        """A stream from `after`, or from now; PositionRejected when the server refuses `after`."""
        from pymongo.errors import OperationFailure, PyMongoError

        try:
            stream = self.collection.watch(
                self.pipeline,
                resume_after=after.document() if after is not None else None,
                max_await_time_ms=self.max_await_ms,
            )
        except OperationFailure as e:
            why = _describe(e) if unsupported(e.code, str(e)) else None
            if why is None and after is None:
                why, works = self._probe()
                if works:
                    raise FeedFailed(
                        f"{_describe(e)}; a change stream on the cluster collection opens, one "
                        "on its database does not: the watcher follows the cluster and catalog "
                        "collections with one stream on the database, so its MongoDB user needs "
                        "find and changeStream on the database") from e
            if why is not None:
                raise ChangeStreamsUnsupported(
                    f"trinogen watch needs MongoDB change streams, which need a replica set (or "
                    f"a sharded cluster); this server has none ({why}). Run trinogen "
                    "sync on a schedule instead, or convert the server to a replica set"
                ) from e
            # The server answered, and refused: with a position, the position may be the cause
            # (the loop finds out by opening from now).
            raise (PositionRejected if after is not None else FeedFailed)(_describe(e)) from e
        except PyMongoError as e:
            raise FeedFailed(_describe(e)) from e
        return ChangeStream(stream, self.library)

    def _probe(self) -> tuple[str | None, bool]:
        """After the database refused a stream: open one on the cluster collection alone.

        Returns why the server has no change streams at all (FerretDB cannot even parse a
        database-level aggregate, answering FailedToParse, but answers NotImplemented here), and
        whether that stream opened (then the database stream is what is refused).
        """
        from pymongo.errors import OperationFailure, PyMongoError

        if self.probe is None:
            return None, False
        try:
            self.probe.watch(PIPELINE, max_await_time_ms=self.max_await_ms).close()
        except OperationFailure as e:
            return (_describe(e) if unsupported(e.code, str(e)) else None), False
        except PyMongoError:
            return None, False
        return None, True
