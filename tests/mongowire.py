"""A change stream over the real MongoDB wire protocol, for tests: mockupdb playing a primary.

mongomock has no `watch()`, and no registry ships a mongod. `ChangeStreamServer` answers the
handshake as the primary of replica set `rs0` (maxWireVersion 21; mockupdb's own auto-handshake
says 6, which pymongo 4 rejects), keeps an in-memory "oplog" of change events for one collection
and serves `aggregate` with `$changeStream` and `getMore` from it, so pymongo's real change-stream
code runs, including its own resume logic (it sends `resumeAfter` with the last token it saw).

Every other command (killCursors, endSessions, ...) gets `{ok: 1}`: an unanswered command
makes the client hang. Faults are injected per command: a hang-up (network error),
CursorNotFound (43), ChangeStreamHistoryLost (286), or any error code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import bson
import pymongo
from bson import ObjectId, Timestamp
from mockupdb import MockupDB

FAULTS = {
    "hangup": None,
    "cursor_not_found": (43, "CursorNotFound", "cursor id not found"),
    "history_lost": (286, "ChangeStreamHistoryLost",
                     ("Resume of change stream was not possible, as the resume point may no "
                      "longer be in the oplog")),
    "fatal": (280, "ChangeStreamFatalError", "cannot resume stream"),
    "unauthorized": (13, "Unauthorized", "not authorized on trino to execute command"),
    # A standalone mongod, and FerretDB: no change streams at all.
    "no_replica_set": (40573, "Location40573",
                       "The $changeStream stage is only supported on replica sets"),
    "not_implemented": (238, "NotImplemented", "$changeStream stage is not implemented"),
    # FerretDB v1 on a database-level aggregate (`aggregate: 1`): it cannot even parse it.
    "failed_to_parse": (9, "FailedToParse",
                        "Invalid command format: 'aggregate' must specify a collection name or 1"),
}


MAX_BSON = 16 * 1024 * 1024  # what MongoDB allows any document it returns, an event included


def _project(event: dict[str, Any], projection: dict[str, Any] | None) -> dict[str, Any]:
    """A top-level inclusion $project, as the server applies it ("_id" kept unless excluded)."""
    if not projection:
        return event
    keep = {k for k, v in projection.items() if v} | ({"_id"} if projection.get("_id", 1) else set())
    return {k: v for k, v in event.items() if k in keep}


def token(seq: int) -> dict[str, str]:
    """The resume token after event `seq` (opaque to clients; ordered here by its hex number)."""
    return {"_data": f"82{seq:016X}"}


def token_seq(tok: Mapping[str, Any]) -> int | None:
    data = tok.get("_data") if isinstance(tok, Mapping) else None
    if not isinstance(data, str) or not data.startswith("82"):
        return None
    try:
        return int(data[2:], 16)
    except ValueError:
        return None


class ChangeStreamServer:
    """One collection's change stream served by mockupdb over TCP."""

    def __init__(self, database: str = "trino", collection: str = "trino_clusters") -> None:
        self.database = database
        self.collection = collection
        self._mock = MockupDB(auto_ismaster=False, request_timeout=int(1e6))
        self._cond = threading.Condition()
        self._events: list[dict[str, Any]] = []  # event seq n is self._events[n - 1]
        self._oldest = 1  # events before this seq have left the "oplog"
        self._cursors: dict[int, int] = {}  # cursor id -> next seq to return
        self._projections: dict[int, dict[str, Any] | None] = {}  # cursor id -> its $project
        self._next_cursor = 1000
        self._faults: list[tuple[str, str, int]] = []  # (command, kind, remaining)
        self.aggregates: list[dict[str, Any]] = []  # the $changeStream stage of each aggregate
        self.aggregate_namespaces: list[str] = []
        self.pipelines: list[list[dict[str, Any]]] = []
        self.getmores = 0
        self.getmore_max_time_ms: list[int] = []
        self.delivered = 0  # events handed to clients (counting re-deliveries after a resume)
        self.commands: list[str] = []
        self._reject_resume: tuple[int, str] | None = None  # (code, codeName)

    # --- lifecycle ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every event, cursor, fault and record (one server can serve many tests)."""
        with self._cond:
            self._events.clear()
            self._oldest = 1
            self._cursors.clear()
            self._projections.clear()
            self._faults.clear()
            self.aggregates.clear()
            self.aggregate_namespaces.clear()
            self.pipelines.clear()
            self.getmore_max_time_ms.clear()
            self.getmores = 0
            self.delivered = 0
            self.commands.clear()
            self._reject_resume = None

    def start(self) -> ChangeStreamServer:
        self._mock.autoresponds(self._handle)
        self._mock.run()
        return self

    def stop(self) -> None:
        with self._cond:
            self._cond.notify_all()
        self._mock.stop()

    @property
    def address(self) -> str:
        return str(self._mock.address_string)

    @property
    def uri(self) -> str:
        return f"mongodb://{self.address}/?replicaSet=rs0"

    def client(self, **kwargs: Any) -> pymongo.MongoClient[dict[str, Any]]:
        """A real pymongo client for this server (short timeouts: a test never waits long)."""
        options: dict[str, Any] = {"serverSelectionTimeoutMS": 3000, "connectTimeoutMS": 3000,
                                   "socketTimeoutMS": 5000, "heartbeatFrequencyMS": 500,
                                   "tz_aware": True, **kwargs}
        return pymongo.MongoClient(self.uri, **options)

    def watched(self, client: pymongo.MongoClient[dict[str, Any]]) -> Any:
        return client[self.database][self.collection]

    # --- the "oplog" ------------------------------------------------------------------------

    def emit(self, op: str, _id: Any = None, full_document: Mapping[str, Any] | None = None,
             *, wall_time: datetime | None = None, coll: str | None = None) -> dict[str, str]:
        """Append one change event (of `coll`, by default the served collection) and wake
        waiting getMores; returns its resume token."""
        with self._cond:
            seq = len(self._events) + 1
            now = wall_time or datetime.now(UTC)
            event: dict[str, Any] = {
                "_id": token(seq),
                "operationType": op,
                "clusterTime": Timestamp(int(now.timestamp()), seq),
                "wallTime": now,
            }
            if op != "invalidate":
                event["ns"] = {"db": self.database, "coll": coll or self.collection}
            if op in ("insert", "update", "replace", "delete"):
                event["documentKey"] = {"_id": _id}
            if op == "update":
                event["updateDescription"] = {"updatedFields": {}, "removedFields": []}
            if op in ("insert", "update", "replace"):
                event["fullDocument"] = dict(full_document) if full_document is not None else None
            self._events.append(event)
            self._cond.notify_all()
            return token(seq)

    @property
    def last_token(self) -> dict[str, str]:
        with self._cond:
            return token(len(self._events))

    def truncate(self) -> None:
        """Every event so far leaves the oplog: resuming before now fails with code 286."""
        with self._cond:
            self._oldest = len(self._events) + 1

    def fail(self, command: str, kind: str, times: int = 1) -> None:
        """The next `times` `command`s (aggregate or getMore) fail with fault `kind`."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")
        with self._cond:
            self._faults.append((command, kind, times))
            self._cond.notify_all()

    def reject_resume(self, code: int, code_name: str) -> None:
        """From now on, every aggregate that resumes after a token fails with this error.

        (A server refusing a saved token with a code other than 260, 280 and 286.)
        """
        with self._cond:
            self._reject_resume = (code, code_name)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
            time.sleep(0.01)

    # --- wire protocol -----------------------------------------------------------------------

    def _handle(self, request: Any) -> bool:
        name = request.command_name or ""
        self.commands.append(name)
        lname = name.lower()
        if lname in ("ismaster", "hello"):
            return bool(request.replies(self._hello()))
        if lname == "aggregate":
            return self._aggregate(request)
        if lname == "getmore":
            return self._getmore(request)
        if lname == "killcursors":
            with self._cond:
                for cid in request.doc.get("cursors", []):
                    self._cursors.pop(cid, None)
            return bool(request.ok(cursorsKilled=request.doc.get("cursors", [])))
        return bool(request.ok())  # endSessions and anything else: never leave a client hanging

    def _hello(self) -> dict[str, Any]:
        return {
            "ismaster": True, "isWritablePrimary": True, "helloOk": True,
            "setName": "rs0", "setVersion": 1, "hosts": [self.address], "primary": self.address,
            "me": self.address, "minWireVersion": 0, "maxWireVersion": 21,
            "maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48_000_000,
            "maxWriteBatchSize": 100_000, "localTime": datetime.now(UTC),
            "logicalSessionTimeoutMinutes": 30, "connectionId": 1,
            "electionId": ObjectId("7fffffff0000000000000001"),
        }

    def _take_fault(self, command: str) -> str | None:
        with self._cond:
            for i, (cmd, kind, remaining) in enumerate(self._faults):
                if cmd.lower() == command.lower():
                    if remaining <= 1:
                        del self._faults[i]
                    else:
                        self._faults[i] = (cmd, kind, remaining - 1)
                    return kind
        return None

    def _fault_reply(self, request: Any, kind: str) -> bool:
        if FAULTS[kind] is None:
            return bool(request.hangup())
        code, code_name, msg = FAULTS[kind]  # type: ignore[misc]
        return bool(request.command_err(code=code, errmsg=msg, codeName=code_name))

    def _aggregate(self, request: Any) -> bool:
        doc = request.doc
        pipeline = list(doc.get("pipeline", []))
        stage = pipeline[0].get("$changeStream") if pipeline else None
        if stage is None:
            return bool(request.command_err(code=40324, errmsg="only $changeStream is served"))
        with self._cond:
            self.aggregates.append(dict(stage))
            self.aggregate_namespaces.append(f"{request.namespace}.{doc['aggregate']}")
            self.pipelines.append(pipeline[1:])
        fault = self._take_fault("aggregate")
        if fault:
            return self._fault_reply(request, fault)
        with self._cond:
            resume = stage.get("resumeAfter") or stage.get("startAfter")
            if resume is not None and self._reject_resume is not None:
                code, code_name = self._reject_resume
                return bool(request.command_err(code=code, errmsg="cannot resume after this "
                                                "token", codeName=code_name))
            if resume is not None:
                seq = token_seq(resume)
                if seq is None or seq > len(self._events):
                    return bool(request.command_err(code=260, errmsg="invalid resume token",
                                                    codeName="InvalidResumeToken"))
                if seq + 1 < self._oldest:
                    _, code_name, msg = FAULTS["history_lost"]  # type: ignore[misc]
                    return bool(request.command_err(code=286, errmsg=msg, codeName=code_name))
                position = seq + 1
            else:
                position = len(self._events) + 1
            cid = self._next_cursor
            self._next_cursor += 1
            self._cursors[cid] = position
            self._projections[cid] = next((dict(st["$project"]) for st in pipeline[1:]
                                           if "$project" in st), None)
            pbrt = token(position - 1)
        return bool(request.ok(cursor={"id": cid, "ns": f"{self.database}.{self.collection}",
                                       "firstBatch": [], "postBatchResumeToken": pbrt},
                               operationTime=Timestamp(int(time.time()), 1)))

    def _getmore(self, request: Any) -> bool:
        doc = request.doc
        cid = doc["getMore"]
        with self._cond:
            self.getmores += 1
            self.getmore_max_time_ms.append(int(doc.get("maxTimeMS", -1)))
        fault = self._take_fault("getMore")
        if fault:
            return self._fault_reply(request, fault)
        wait = min(float(doc.get("maxTimeMS", 1000)), 1000.0) / 1000.0
        deadline = time.monotonic() + wait
        with self._unlocked(), self._cond:
            while True:
                if cid not in self._cursors:
                    fault_args = FAULTS["cursor_not_found"]
                    code, code_name, msg = fault_args  # type: ignore[misc]
                    return bool(request.command_err(code=code, errmsg=msg, codeName=code_name))
                position = self._cursors[cid]
                if position <= len(self._events):
                    break
                left = deadline - time.monotonic()
                if left <= 0 or self._faults:
                    break
                self._cond.wait(left)
            batch = [_project(e, self._projections.get(cid)) for e in self._events[position - 1:]]
            if any(len(bson.encode(e)) > MAX_BSON for e in batch):
                # MongoDB fails the getMore at an event over its own limit, again on every resume
                return bool(request.command_err(code=10334, errmsg="BSONObj size is invalid",
                                                codeName="BSONObjectTooLarge"))
            self._cursors[cid] = len(self._events) + 1
            self.delivered += len(batch)
            pbrt = token(len(self._events))
            closed = any(e["operationType"] == "invalidate" for e in batch)
            if closed:  # the server ends the cursor after an invalidate event
                cut = next(i for i, e in enumerate(batch) if e["operationType"] == "invalidate")
                batch = batch[:cut + 1]
                pbrt = batch[-1]["_id"]
                self._cursors.pop(cid, None)
        return bool(request.ok(cursor={"id": 0 if closed else cid,
                                       "ns": f"{self.database}.{self.collection}",
                                       "nextBatch": batch, "postBatchResumeToken": pbrt}))

    @contextmanager
    def _unlocked(self) -> Iterator[None]:
        """Let mockupdb serve other connections (the monitor's hello) while a getMore waits.

        mockupdb runs each connection's handler under one server-wide lock; a getMore waiting
        for events (as a real server does for maxAwaitTimeMS) would otherwise stall them all.
        """
        unlock = getattr(self._mock, "_unlock", None)
        if unlock is None:
            yield
            return
        with unlock():
            yield
