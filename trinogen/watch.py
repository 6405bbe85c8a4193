"""`trinogen watch`: follow the cluster collection's change stream; sync changed clusters in batches.

One loop, run by exactly one replica at a time (the holder of a lease document in MongoDB):

    hold the lease -> open the stream (after the saved resume token, or from now + a full sync)
      -> collect events into a Batch until it is due (quiet for debounce_seconds, max_batch
         documents, or max_wait_seconds after its first event)
      -> one targeted sync of the batch's documents (one commit; the lease is confirmed right
         before the push)
      -> save the batch's resume token (a write conditional on still holding the lease)
      -> every reconcile_seconds: a full sync repairs drift.

A batch is pushed whole or not at all, and its token is saved only after its push: a crash
replays at most the last batch, and a replayed batch plans no change, so nothing is committed
twice and nothing is lost. A token the server no longer accepts (ChangeStreamHistoryLost 286,
an invalidate event) means: open a new stream from now FIRST, then a full sync, so no change can
fall between the two.

The stream's collection and the document source are separate objects: in production both come
from one pymongo client; tests watch a mockupdb server (real pymongo change-stream code over
TCP) while documents, lease and token live in mongomock (which has no watch()).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from trinogen import pipeline
from trinogen.errors import ConfigError, Interrupted, LeaseLost, SourceUnavailable, TrinogenError
from trinogen.pipeline import Report, SyncOptions
from trinogen.render import Renderer
from trinogen.settings import Settings, WatchSettings
from trinogen.source import doc_key

log = logging.getLogger(__name__)

# Document changes that start a targeted sync.
DOCUMENT_EVENTS = ("insert", "update", "replace", "delete")
# Events after which the stream cannot go on (or the collection is gone): full sync, new stream.
STREAM_END_EVENTS = ("invalidate", "drop", "rename", "dropDatabase")
PIPELINE: list[dict[str, Any]] = [
    {"$match": {"operationType": {"$in": [*DOCUMENT_EVENTS, *STREAM_END_EVENTS]}}}
]
# Server errors meaning "this resume token is no longer usable": resuming cannot work.
TOKEN_LOST_CODES = {
    286: "ChangeStreamHistoryLost",
    280: "ChangeStreamFatalError",
    260: "InvalidResumeToken",
}
LIVENESS_TOUCH_SECONDS = 1.0

Clock = Callable[[], float]
WallClock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


# --- lease and resume token (one document in the state collection) ----------------------------


class Lease:
    """Leadership among watch replicas, and the resume token, in one state document.

    `{_id: "watch:<db>.<collection>", owner, acquiredAt, heartbeatAt, expiresAt, resumeToken,
    tokenSavedAt}`. Ownership is `owner == me`: only an acquisition changes `owner`, and it
    succeeds only once `expiresAt` has passed, so a replica that still finds itself the owner may
    keep going (and renew) even after a pause. The token lives in the same document, so "save the
    token if I still hold the lease" is a single atomic conditional update.

    Expiry compares the replicas' wall clocks: keep their skew well below lease_seconds.
    """

    def __init__(self, state: Any, key: str, seconds: float, *, owner: str | None = None,
                 wall: WallClock = _utcnow) -> None:
        self.state = state
        self.key = key
        self.seconds = seconds
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.wall = wall
        self.held = False

    def acquire(self) -> bool:
        """Become (or stay) the owner if the lease is free, expired or already ours."""
        from pymongo import ReturnDocument
        from pymongo.errors import DuplicateKeyError

        now = self.wall()
        fields: dict[str, Any] = {"owner": self.owner, "heartbeatAt": now,
                                  "expiresAt": now + timedelta(seconds=self.seconds)}
        if not self.held:
            fields["acquiredAt"] = now
        try:
            doc = self.state.find_one_and_update(
                {"_id": self.key, "$or": [{"owner": self.owner}, {"owner": None},
                                          {"expiresAt": {"$lte": now}}]},
                {"$set": fields}, upsert=True, return_document=ReturnDocument.AFTER,
            )
        except DuplicateKeyError:  # the document exists and someone else holds it
            doc = None
        self.held = bool(doc and doc.get("owner") == self.owner)
        return self.held

    def renew(self) -> bool:
        """Extend the lease if it is still ours; False (and no longer held) if it is not."""
        now = self.wall()
        result = self.state.update_one(
            {"_id": self.key, "owner": self.owner},
            {"$set": {"heartbeatAt": now, "expiresAt": now + timedelta(seconds=self.seconds)}},
        )
        self.held = result.matched_count == 1
        return self.held

    def confirm(self) -> None:
        """Right before a push: renew, or raise LeaseLost (also when MongoDB cannot tell)."""
        from pymongo.errors import PyMongoError

        try:
            ok = self.renew()
        except PyMongoError as e:
            raise LeaseLost(f"cannot confirm the watch lease ({type(e).__name__}: {e}); not "
                            "pushing") from e
        if not ok:
            raise LeaseLost(f"the watch lease {self.key} is held by {self.holder() or 'nobody'} "
                            "now; not pushing")

    def holder(self) -> str | None:
        doc = self.state.find_one({"_id": self.key}, {"owner": 1})
        return doc.get("owner") if doc else None

    def token(self) -> Mapping[str, Any] | None:
        doc = self.state.find_one({"_id": self.key}, {"resumeToken": 1})
        tok = doc.get("resumeToken") if doc else None
        return tok if isinstance(tok, Mapping) and tok else None

    def save_token(self, token: Mapping[str, Any]) -> None:
        """Persist the resume token only while still the owner (one atomic update)."""
        result = self.state.update_one(
            {"_id": self.key, "owner": self.owner},
            {"$set": {"resumeToken": dict(token), "tokenSavedAt": self.wall()}},
        )
        if result.matched_count != 1:
            self.held = False
            raise LeaseLost(f"the watch lease {self.key} was taken over; resume token not saved")

    def release(self) -> None:
        """On a clean stop: let a standby take over now instead of after expiry."""
        now = self.wall()
        self.state.update_one({"_id": self.key, "owner": self.owner},
                              {"$set": {"expiresAt": now, "heartbeatAt": now}})
        self.held = False


# --- batching (pure) ----------------------------------------------------------------------------


@dataclass
class Batch:
    """Documents changed since the last sync, and when their events happened."""

    started: float  # monotonic time of the first event
    last: float  # monotonic time of the latest event
    doc_ids: set[str] = field(default_factory=set)
    events: int = 0
    operations: Counter[str] = field(default_factory=Counter)
    oldest_event_at: datetime | None = None  # server time of the first event
    newest_event_at: datetime | None = None

    def add(self, doc_id: str, operation: str, now: float, event_at: datetime | None) -> None:
        self.doc_ids.add(doc_id)
        self.events += 1
        self.operations[operation] += 1
        self.last = now
        if event_at is not None:
            if self.oldest_event_at is None or event_at < self.oldest_event_at:
                self.oldest_event_at = event_at
            if self.newest_event_at is None or event_at > self.newest_event_at:
                self.newest_event_at = event_at

    def due(self, now: float, w: WatchSettings) -> str | None:
        """Why the batch should be synced now, or None to keep collecting."""
        if len(self.doc_ids) >= w.max_batch:
            return "max_batch"
        if now - self.started >= w.max_wait_seconds:
            return "max_wait"
        if now - self.last >= w.debounce_seconds:
            return "quiet"
        return None


@dataclass
class Work:
    """A sync to run (and retry until it succeeds); `token` is saved after its push."""

    kind: str  # "batch" or "full"
    reason: str
    token: Mapping[str, Any] | None
    batch: Batch | None = None
    attempts: int = 0

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self.batch.doc_ids)) if self.batch else ()


def backoff(attempt: int, cap: float) -> float:
    """0.5 s, 1 s, 2 s, ... up to `cap` (attempt counts from 1)."""
    return float(min(cap, 0.5 * 2 ** max(0, attempt - 1)))


def event_time(event: Mapping[str, Any]) -> datetime | None:
    """When the change happened on the server: wallTime (MongoDB 6+) or clusterTime."""
    wall = event.get("wallTime")
    if isinstance(wall, datetime):
        return wall if wall.tzinfo else wall.replace(tzinfo=UTC)
    cluster_time = event.get("clusterTime")
    if cluster_time is not None and hasattr(cluster_time, "as_datetime"):
        return cluster_time.as_datetime()  # type: ignore[no-any-return]
    return None


# --- metrics ------------------------------------------------------------------------------------


class Metrics:
    """Counters kept always (for logs and tests), exported through prometheus_client if present."""

    LAG_BUCKETS = (0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600)

    def __init__(self, enabled: bool = True) -> None:
        self.counts: Counter[str] = Counter()
        # The most recent event-to-push lags; bounded, since a watcher runs for weeks.
        self.lags: deque[float] = deque(maxlen=1024)
        self.registry: Any = None
        if not enabled:
            return
        try:
            import prometheus_client as prom
        except ImportError:
            return
        self._prom = prom
        self.registry = prom.CollectorRegistry()
        r = self.registry
        self._events = prom.Counter("trinogen_watch_events", "Change events received",
                                    ["operation"], registry=r)
        self._batches = prom.Counter("trinogen_watch_batches", "Batches of events synced",
                                     registry=r)
        self._syncs = prom.Counter("trinogen_watch_syncs", "Syncs run by the watcher",
                                   ["kind", "result"], registry=r)
        self._failures = prom.Counter("trinogen_watch_failures", "Failures, by stage",
                                      ["stage"], registry=r)
        self._reconnects = prom.Counter("trinogen_watch_reconnects",
                                        "Change stream reconnects beyond pymongo's own resume",
                                        registry=r)
        self._lag = prom.Histogram("trinogen_watch_event_to_push_seconds",
                                   "From a batch's oldest change event (server time) to its push",
                                   buckets=self.LAG_BUCKETS, registry=r)
        self._leader = prom.Gauge("trinogen_watch_leader", "1 while this replica holds the lease",
                                  registry=r)
        self._last_push = prom.Gauge("trinogen_watch_last_push_timestamp_seconds",
                                     "Unix time of the last push", registry=r)

    @property
    def available(self) -> bool:
        return self.registry is not None

    def event(self, operation: str) -> None:
        self.counts["events"] += 1
        if self.registry is not None:
            self._events.labels(operation).inc()

    def batch(self) -> None:
        self.counts["batches"] += 1
        if self.registry is not None:
            self._batches.inc()

    def sync(self, kind: str, result: str) -> None:
        self.counts["syncs"] += 1
        self.counts[f"syncs_{kind}_{result}"] += 1
        if result == "pushed":
            self.counts["commits"] += 1
        if self.registry is not None:
            self._syncs.labels(kind, result).inc()
            if result == "pushed":
                self._last_push.set_to_current_time()

    def failure(self, stage: str) -> None:
        self.counts["failures"] += 1
        self.counts[f"failures_{stage}"] += 1
        if self.registry is not None:
            self._failures.labels(stage).inc()

    def reconnect(self) -> None:
        self.counts["reconnects"] += 1
        if self.registry is not None:
            self._reconnects.inc()

    def lag(self, seconds: float) -> None:
        self.lags.append(seconds)
        if self.registry is not None:
            self._lag.observe(max(0.0, seconds))

    def leader(self, held: bool) -> None:
        if self.registry is not None:
            self._leader.set(1 if held else 0)

    def exposition(self) -> tuple[bytes, str] | None:
        if self.registry is None:
            return None
        return self._prom.generate_latest(self.registry), self._prom.CONTENT_TYPE_LATEST


# --- the loop -----------------------------------------------------------------------------------


class Watcher:
    """The watch loop. `step()` does one small thing; `run()` steps until asked to stop."""

    def __init__(
        self,
        settings: Settings,
        source: Any,
        stream_collection: Any,
        repo: Any,
        *,
        reader_factory: pipeline.ReaderFactory | None = None,
        lease: Lease | None = None,
        clock: Clock = time.monotonic,
        wall: WallClock = _utcnow,
        sleep: Callable[[float], None] | None = None,
        metrics: Metrics | None = None,
        poll_seconds: float | None = None,
    ) -> None:
        self.settings = settings
        self.w = settings.watch
        self.source = source
        self.stream_collection = stream_collection
        self.repo = repo
        self.reader_factory = reader_factory
        self.renderer = Renderer(settings)  # templates compiled once for every sync
        self.clock = clock
        self.wall = wall
        self._sleep_fn = sleep
        self.metrics = metrics or Metrics()
        key = f"watch:{settings.mongodb.database}.{settings.mongodb.collection}"
        self.lease = lease or Lease(source.state, key, self.w.lease_seconds, wall=wall)
        # Followers poll, the leader renews, at a third of the lease: two misses still hold it.
        self.poll_seconds = poll_seconds if poll_seconds is not None else max(
            0.05, min(5.0, self.w.lease_seconds / 3))
        self.backoff_cap = max(1.0, self.w.lease_seconds / 3)
        # settings keep it within 1..1000 ms: a getMore must return often (signals, heartbeats,
        # debounce precision)
        self.max_await_ms = self.w.max_await_ms
        # A loop that has not come round for this long is reported unhealthy (a sync may be slow).
        self.stale_after = max(60.0, 2 * self.w.lease_seconds, settings.git.timeout)
        self.stream: Any = None
        self.batch: Batch | None = None
        self.work: Work | None = None
        self.last_report: Report | None = None
        self._resume_from: Mapping[str, Any] | None = None
        self._need_full = False
        self._reconnects = 0
        self._renewed_at = float("-inf")
        self._next_acquire = float("-inf")
        self._next_reconcile = float("inf")
        self._saved_token: Mapping[str, Any] | None = None
        self._saved_at = float("-inf")
        self._stop = False
        self._abort = False
        self._running = False
        self._last_beat: float | None = None
        self._touched_at = float("-inf")
        self._servers: list[ThreadingHTTPServer] = []

    # --- control ---------------------------------------------------------------------------

    @property
    def role(self) -> str:
        return "leader" if self.lease.held else "follower"

    @property
    def stopping(self) -> bool:
        return self._stop

    def request_stop(self, why: str = "stop requested") -> None:
        """First call: finish the sync in flight, then stop. Second: abandon it before its push.

        Safe to call from a signal handler: it only sets flags.
        """
        if self._stop:
            self._abort = True
            log.warning("%s again: abandoning the batch in flight before its push", why)
        else:
            self._stop = True
            log.info("%s: stopping after the sync in flight (events not yet synced are "
                     "replayed by the next leader)", why)

    def run(self) -> int:
        """Step until stopped; 0 on a clean stop. Unrecoverable errors raise TrinogenError."""
        self._running = True
        try:
            while not self._stop:
                self.step()
                if not self.lease.held and not self._stop:
                    self._sleep(max(0.0, min(self.poll_seconds, self._next_acquire - self.clock())))
        finally:
            self._running = False
            self.close()
        log.info("watch stopped", extra={"watch": "stopped"})
        return 0

    def close(self) -> None:
        """Close the stream and hand the lease over (keeping the saved resume token)."""
        self._close_stream()
        if self.lease.held:
            try:
                self.lease.release()
            except Exception as e:  # noqa: BLE001 - best effort on the way out; expiry covers it
                log.warning("could not release the watch lease (%s); it expires by itself", e)
            self.metrics.leader(False)

    # --- one step --------------------------------------------------------------------------

    def step(self) -> None:
        now = self.clock()
        self._alive(now)
        if not self._lead(now):
            return
        if self.work is not None:
            self._execute(self.work)
            return
        if self.stream is None:
            self._open()
            return
        if self.batch is not None:
            reason = self.batch.due(now, self.w)
            if reason:
                self._flush(reason)
                return
        elif now >= self._next_reconcile:
            self._execute(Work("full", "periodic reconcile", token=self.stream.resume_token))
            return
        self._read()

    def _lead(self, now: float) -> bool:
        """Hold the lease: renew it as the leader, try to take it as a follower."""
        from pymongo.errors import PyMongoError

        if self.lease.held:
            if now - self._renewed_at < self.poll_seconds:
                return True
            try:
                if self.lease.renew():
                    self._renewed_at = now
                    return True
                self._demote(f"the lease was taken over by {self.lease.holder() or 'nobody'}")
            except PyMongoError as e:
                self.metrics.failure("lease")
                if now - self._renewed_at < self.w.lease_seconds:
                    log.warning("cannot renew the watch lease (%s: %s); retrying",
                                type(e).__name__, e)
                    return True
                self._demote(f"the lease could not be renewed for {self.w.lease_seconds:.0f}s")
            return False
        if now < self._next_acquire or self._stop:
            return False
        self._next_acquire = now + self.poll_seconds
        try:
            acquired = self.lease.acquire()
        except PyMongoError as e:
            self.metrics.failure("lease")
            log.warning("cannot reach the watch lease (%s: %s); retrying in %.1fs",
                        type(e).__name__, e, self.poll_seconds)
            return False
        if not acquired:
            return False
        self._renewed_at = now
        self._elected(now)
        return True

    def _elected(self, now: float) -> None:
        self.metrics.leader(True)
        self._resume_from = self.lease.token()
        self._saved_token = self._resume_from
        self._need_full = self._resume_from is None
        self._next_reconcile = now + self.w.reconcile_seconds
        self._reconnects = 0
        log.info("this replica (%s) leads the watch; %s", self.lease.owner,
                 "resuming after the saved token" if self._resume_from
                 else "no saved token: a full sync follows the new stream",
                 extra={"watch": "elected", "owner": self.lease.owner})

    def _demote(self, why: str) -> None:
        log.warning("no longer the watch leader (%s); dropping the batch in flight, a leader "
                    "replays it", why, extra={"watch": "demoted"})
        self.lease.held = False
        self.metrics.leader(False)
        self._close_stream()
        self.batch = None
        self.work = None
        self._resume_from = None
        self._need_full = False
        self._next_acquire = self.clock() + self.poll_seconds

    # --- the stream ------------------------------------------------------------------------

    def _watch(self, token: Mapping[str, Any] | None) -> Any:
        return self.stream_collection.watch(
            PIPELINE, full_document="updateLookup", resume_after=token,
            max_await_time_ms=self.max_await_ms,
        )

    def _open(self) -> None:
        """Open the stream after the last position; if the token is unusable, from now + full sync.

        The new stream is opened BEFORE the full sync: a change made while the full sync runs
        is then on the stream too, never between the two.
        """
        from pymongo.errors import OperationFailure, PyMongoError

        token = self._resume_from
        try:
            try:
                stream = self._watch(token)
            except OperationFailure as e:
                if token is None or e.code not in TOKEN_LOST_CODES:
                    raise
                self._token_lost(f"{TOKEN_LOST_CODES[e.code]} ({e.code}) resuming the stream")
                stream = self._watch(None)
        except PyMongoError as e:
            self._stream_failed(e)
            return
        self.stream = stream
        log.info("change stream open on %s.%s (%s)", self.settings.mongodb.database,
                 self.settings.mongodb.collection,
                 "resumed after the saved token" if token is not None and not self._need_full
                 else "from now", extra={"watch": "stream_open"})
        if self._need_full:
            self._need_full = False
            self.work = Work("full", "no usable resume token", token=stream.resume_token)

    def _read(self) -> None:
        from pymongo.errors import OperationFailure, PyMongoError

        try:
            event = self.stream.try_next()  # at most one getMore of <= max_await_ms
        except OperationFailure as e:
            if e.code in TOKEN_LOST_CODES:
                self._token_lost(f"{TOKEN_LOST_CODES[e.code]} ({e.code}) from the stream")
                return
            self._stream_failed(e)
            return
        except PyMongoError as e:
            self._stream_failed(e)
            return
        self._reconnects = 0
        now = self.clock()
        if event is None:
            if not self.stream.alive:  # the server ended the cursor: resume from its position
                self._resume_from = self.stream.resume_token
                self._close_stream()
            elif self.batch is None:
                self._save_idle_token(now)
            return
        operation = str(event.get("operationType"))
        if operation in STREAM_END_EVENTS:
            self.metrics.event(operation)
            self._token_lost(f"{operation} event")
            return
        key = event.get("documentKey") or {}
        if operation not in DOCUMENT_EVENTS or "_id" not in key:
            log.warning("ignoring a change event of type %s without a document key", operation)
            return
        self.metrics.event(operation)
        if self.batch is None:
            self.batch = Batch(started=now, last=now)
        self.batch.add(doc_key(key["_id"]), operation, now, event_time(event) or self.wall())

    def _token_lost(self, why: str) -> None:
        """History lost or stream invalidated: new stream from now, then a full sync."""
        log.warning("%s: the change stream cannot resume; opening a new one and running a full "
                    "sync", why, extra={"watch": "resync"})
        self.metrics.failure("history")
        self._close_stream()
        self.batch = None  # the full sync covers it
        self._resume_from = None
        self._need_full = True

    def _stream_failed(self, e: Exception) -> None:
        """Beyond pymongo's own resume: back off and reconnect, a bounded number of times."""
        self._reconnects += 1
        self.metrics.failure("stream")
        self.metrics.reconnect()
        if self.stream is not None:
            self._resume_from = self.stream.resume_token or self._resume_from
        self._close_stream()
        if self._reconnects > self.w.max_reconnects:
            raise SourceUnavailable(
                f"the change stream on {self.settings.mongodb.database}."
                f"{self.settings.mongodb.collection} failed {self._reconnects} times in a row "
                f"(last: {type(e).__name__}: {str(e)[:300]}); check MongoDB (a replica set is "
                "needed for change streams)"
            ) from e
        delay = backoff(self._reconnects, self.backoff_cap)
        log.warning("change stream error (%s: %s); reconnecting in %.1fs (attempt %d of %d)",
                    type(e).__name__, str(e)[:300], delay, self._reconnects,
                    self.w.max_reconnects, extra={"watch": "reconnect"})
        self._sleep(delay)

    def _close_stream(self) -> None:
        if self.stream is not None:
            with suppress(Exception):
                self.stream.close()
            self.stream = None

    def _position(self) -> Mapping[str, Any] | None:
        if self.stream is not None:
            token = self.stream.resume_token
            if token is not None:
                return token  # type: ignore[no-any-return]
        return self._resume_from

    def _save_idle_token(self, now: float) -> None:
        """While idle, keep the saved token recent (an old one may leave the oplog)."""
        from pymongo.errors import PyMongoError

        token = self._position()
        if token is None or token == self._saved_token or now - self._saved_at < self.poll_seconds * 3:
            return
        try:
            self.lease.save_token(token)
        except LeaseLost as e:
            self._demote(str(e))
            return
        except PyMongoError as e:
            log.warning("cannot save the resume token (%s); will retry", e)
            self.metrics.failure("token")
            return
        self._saved_token, self._saved_at = token, now

    # --- syncing ---------------------------------------------------------------------------

    def _flush(self, reason: str) -> None:
        batch = self.batch
        assert batch is not None
        self.batch = None
        self.metrics.batch()
        self._execute(Work("batch", reason, token=self._position(), batch=batch))

    def _before_push(self) -> None:
        if self._abort:
            raise Interrupted("stopping: the batch was abandoned before its push")
        self.lease.confirm()

    def _execute(self, work: Work) -> None:
        """Run one sync; keep it for a retry if it fails; save its token after its push."""
        from pymongo.errors import PyMongoError

        self.work = work
        work.attempts += 1
        started = self.clock()
        options = SyncOptions(doc_ids=work.doc_ids, before_push=self._before_push)
        try:
            report = pipeline.sync(self.settings, self.source, self.repo, options=options,
                                   reader_factory=self.reader_factory, renderer=self.renderer)
        except LeaseLost as e:
            self.metrics.sync(work.kind, "abandoned")
            self._demote(str(e))
            return
        except Interrupted as e:
            self.metrics.sync(work.kind, "abandoned")
            log.warning("%s", e, extra={"watch": "abandoned"})
            self.work = None
            return
        except ConfigError:
            raise  # the settings are wrong: retrying cannot help
        except TrinogenError as e:
            self.metrics.sync(work.kind, "failed")
            self.metrics.failure("sync")
            delay = backoff(work.attempts, self.backoff_cap)
            log.error("%s sync failed (attempt %d): %s; retrying in %.1fs", work.kind,
                      work.attempts, e, delay,
                      extra={"watch": "sync_failed", "kind": work.kind, "attempt": work.attempts})
            self._sleep(delay)
            return
        self.work = None
        self.last_report = report
        pushed_at, done = self.wall(), self.clock()
        self.metrics.sync(work.kind, "pushed" if report.pushed else "unchanged")
        if work.token is not None:
            try:
                self.lease.save_token(work.token)
                self._saved_token, self._saved_at = work.token, done
            except LeaseLost as e:
                self._demote(str(e))
            except PyMongoError as e:
                # The push is done; a later token supersedes this one, and a replay after a
                # crash plans no change.
                self.metrics.failure("token")
                log.warning("pushed, but cannot save the resume token (%s: %s)",
                            type(e).__name__, e)
        if work.kind == "full":
            self._next_reconcile = done + self.w.reconcile_seconds
        self._log_sync(work, report, pushed_at, done - started, done)

    def _log_sync(self, work: Work, report: Report, pushed_at: datetime, seconds: float,
                  done: float) -> None:
        counts = report.plan.counts() if report.plan else {}
        extra: dict[str, Any] = {
            "watch": "sync", "kind": work.kind, "reason": work.reason, "commit": report.commit,
            "pushed": report.pushed, "syncSeconds": round(seconds, 3),
            "failedClusters": len(report.failed),
            **{f"clusters{k.capitalize()}": v for k, v in counts.items()},
        }
        lag_text = ""
        b = work.batch
        if b is not None:
            local = done - b.started
            extra.update({"documents": len(b.doc_ids), "events": b.events,
                          "operations": dict(b.operations),
                          "receiveToPushSeconds": round(local, 3)})
            if b.oldest_event_at is not None:
                lag = (pushed_at - b.oldest_event_at).total_seconds()
                extra["eventToPushSeconds"] = round(lag, 3)
                if b.newest_event_at is not None:
                    extra["newestEventToPushSeconds"] = round(
                        (pushed_at - b.newest_event_at).total_seconds(), 3)
                if report.pushed:
                    self.metrics.lag(lag)
                lag_text = f"; event-to-push {lag:.3f}s (receive-to-push {local:.3f}s)"
        what = (f"{len(b.doc_ids)} document(s) from {b.events} event(s)" if b
                else f"full sync ({work.reason})")
        result = f"commit {report.commit[:12]} pushed" if report.pushed and report.commit \
            else "nothing to commit"
        log.info("%s: %s in %.3fs%s", what, result, seconds, lag_text, extra=extra)

    # --- liveness, health, metrics ---------------------------------------------------------

    def _alive(self, now: float) -> None:
        self._last_beat = now
        path = self.w.liveness_file
        if path and now - self._touched_at >= LIVENESS_TOUCH_SECONDS:
            try:
                p = Path(path)
                p.touch()
                os.utime(p)
                self._touched_at = now
            except OSError as e:
                log.warning("cannot touch the liveness file %s: %s", path, e.strerror)

    def health(self) -> tuple[int, dict[str, Any]]:
        """200 while the loop runs and came round recently, else 503."""
        age = None if self._last_beat is None else self.clock() - self._last_beat
        ok = self._running and not self._stop and age is not None and age <= self.stale_after
        body = {"status": "ok" if ok else "unavailable", "role": self.role,
                "running": self._running, "stopping": self._stop,
                "lastLoopSecondsAgo": None if age is None else round(age, 3),
                "events": self.metrics.counts["events"], "commits": self.metrics.counts["commits"]}
        return (200 if ok else 503), body

    def start_servers(self) -> None:
        """Serve /healthz and /metrics on watch.health_port / watch.metrics_port (0 = any)."""
        ports = {p for p in (self.w.health_port, self.w.metrics_port) if p is not None}
        if self.w.metrics_port is not None and not self.metrics.available:
            log.warning("watch.metrics_port is set but prometheus_client is not installed "
                        "(install trinogen[metrics]); /metrics is not served")
        for port in sorted(ports):
            server = ThreadingHTTPServer(("", port), _Handler)
            server.daemon_threads = True
            server.watcher = self  # type: ignore[attr-defined]
            threading.Thread(target=server.serve_forever, name=f"trinogen-http-{port}",
                             daemon=True).start()
            self._servers.append(server)
            log.info("serving /healthz and /metrics on port %d", server.server_address[1])

    @property
    def server_ports(self) -> list[int]:
        return [int(s.server_address[1]) for s in self._servers]

    def stop_servers(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    @contextmanager
    def serving(self) -> Iterator[Watcher]:
        self.start_servers()
        try:
            yield self
        finally:
            self.stop_servers()

    def _sleep(self, seconds: float) -> None:
        """Wait, but wake within 0.2 s of a stop request (a signal handler only sets a flag)."""
        if seconds <= 0:
            return
        if self._sleep_fn is not None:
            self._sleep_fn(seconds)
            return
        end = time.monotonic() + seconds
        while not self._stop:
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(0.2, left))


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:
        watcher: Watcher = self.server.watcher
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/livez"):
            code, body = watcher.health()
            self._send(code, json.dumps(body).encode() + b"\n", "application/json")
        elif path == "/metrics" and watcher.metrics.available:
            data, content_type = watcher.metrics.exposition()  # type: ignore[misc]
            self._send(200, data, content_type)
        else:
            self._send(404, b"not found\n", "text/plain")

    def _send(self, code: int, data: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)


@contextmanager
def signal_handlers(watcher: Watcher) -> Iterator[None]:
    """SIGTERM/SIGINT ask the watcher to stop (a second one abandons the sync in flight)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: Any) -> None:
        watcher.request_stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(
    settings: Settings,
    vault_factory: pipeline.ReaderFactory | None = None,
    working_copy: Any = None,
    *,
    source: Any = None,
    stream_collection: Any = None,
) -> int:
    """`trinogen watch`: build the clients, serve health/metrics, loop until SIGTERM/SIGINT.

    `source` and `stream_collection` default to `trinogen.source.connect(settings.mongodb)` and
    its cluster collection (one client); tests pass their own.
    """
    if source is None:
        if settings.mongodb.uri.startswith("mongomock://"):
            raise ConfigError("trinogen watch needs MongoDB change streams (a replica set); the "
                              "embedded mongomock:// database has none: use `trinogen sync`")
        from trinogen.source import connect

        source = connect(settings.mongodb)
    if working_copy is None:
        raise ConfigError("set the GitOps repository: git.remote, TRINOGEN_GIT_REMOTE or --remote")
    pipeline.require_repo_url(settings)
    watcher = Watcher(settings, source, stream_collection if stream_collection is not None
                      else source.collection, working_copy, reader_factory=vault_factory)
    w = settings.watch
    log.info("watching %s.%s (debounce %.2fs, max batch %d, max wait %.1fs, reconcile every "
             "%.0fs, lease %.0fs) as %s", settings.mongodb.database, settings.mongodb.collection,
             w.debounce_seconds, w.max_batch, w.max_wait_seconds, w.reconcile_seconds,
             w.lease_seconds, watcher.lease.owner, extra={"watch": "start"})
    with watcher.serving(), signal_handlers(watcher):
        return watcher.run()
