"""The watch loop: one small step at a time, with its collaborators passed in. `step()` holds
the lease, opens the stream, asks `decide()` whether to sync now, and otherwise reads one event.
Nothing here speaks pymongo or git: the lease, the change feed and the syncer are Protocols, so
tests drive the loop with fakes as well as with the real adapters."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from trinogen.errors import (
    ConfigError,
    Interrupted,
    LeaseLost,
    SafetyRefusal,
    TrinogenError,
)
from trinogen.settings import WatchSettings
from trinogen.watch.batching import Batch
from trinogen.watch.decision import Sync, Work, batch_work, decide
from trinogen.watch.feed import (
    Changed,
    Ended,
    Event,
    FeedFailed,
    Ignored,
    PositionLost,
    PositionRejected,
    Quiet,
)
from trinogen.watch.health import Liveness, Refusal, Snapshot, verdict
from trinogen.watch.leadership import Deposed, Elected, Leadership
from trinogen.watch.lease import LeaseUnavailable, WallClock, utcnow
from trinogen.watch.metrics import Metrics
from trinogen.watch.ports import Feed, LeaseLike, Stream
from trinogen.watch.position import StreamPosition, idle_save_due
from trinogen.watch.retry import GIVE_UP, Failures, backoff
from trinogen.watch.signals import StopRequest
from trinogen.watch.syncing import Syncer, SyncOutcome, describe, log_stats, set_aside

log = logging.getLogger("trinogen.watch")

Clock = Callable[[], float]


@dataclass
class _Schedule:
    """When the loop last did, or next does, its timed chores (monotonic seconds)."""

    next_reconcile: float = float("inf")
    saved_at: float = float("-inf")
    last_beat: float | None = None


class Watcher:
    """The watch loop. `step()` does one small thing; `run()` steps until asked to stop."""

    def __init__(self, w: WatchSettings, *, lease: LeaseLike, feed: Feed, syncer: Syncer,
                 where: str = "the cluster collection", metrics: Metrics | None = None,
                 clock: Clock = time.monotonic, wall: WallClock = utcnow,
                 sleep: Callable[[float], None] | None = None, poll_seconds: float | None = None,
                 stale_after: float = 60.0, on_elected: Callable[[], None] = lambda: None) -> None:
        self.w, self.lease, self.feed, self.syncer = w, lease, feed, syncer
        self.where, self.on_elected = where, on_elected
        self.metrics = metrics or Metrics()
        self.clock, self.wall = clock, wall
        self.liveness = Liveness(w.liveness_file)
        # Followers poll, the leader renews, at a third of the lease: two misses still hold it.
        self.poll_seconds = poll_seconds if poll_seconds is not None else max(
            0.05, min(5.0, w.lease_seconds / 3))
        self.backoff_cap = max(1.0, w.lease_seconds / 3)
        # A loop that has not come round for this long is reported unhealthy (a sync may be slow).
        self.stale_after = stale_after
        self.stream: Stream | None = None
        self.position: StreamPosition | None = None  # where the stream stands, or resumes from
        self.saved: StreamPosition | None = None  # the position last saved in the lease document
        self.batch: Batch | None = None
        self.work: Work | None = None  # a sync that failed and is retried
        self.refusal: Refusal | None = None
        self.failures = Failures(w.max_reconnects)
        self.at = _Schedule()
        self.leadership = Leadership(lease, poll_seconds=self.poll_seconds,
                                     lease_seconds=w.lease_seconds,
                                     failed=lambda e: self._failed("lease", e),
                                     recovered=lambda: self._recovered("lease"))
        self._need_full = False
        self.stop = StopRequest(sleep)
        self._running = False

    # --- control ---------------------------------------------------------------------------

    @property
    def role(self) -> str:
        return "leader" if self.lease.held else "follower"

    def request_stop(self, why: str = "stop requested") -> None:
        """See StopRequest: finish the sync in flight, or (twice) abandon it before its push."""
        self.stop(why)

    def run(self) -> int:
        """Step until stopped; 0 on a clean stop. Giving up raises an UnavailableError (exit 4)."""
        self._running = True
        try:
            while not self.stop.requested:
                self.step()
                if not self.lease.held and not self.stop.requested:
                    wait = self.leadership.next_acquire - self.clock()
                    self.stop.sleep(max(0.0, min(self.poll_seconds, wait)))
        finally:
            self._running = False
            self.close()
        log.info("watch stopped", extra={"watch": "stopped"})
        return 0

    def close(self) -> None:
        """Close the stream and hand the lease over (keeping the saved position)."""
        self._close_stream()
        if self.lease.held:
            try:
                self.lease.release()
            except TrinogenError as e:  # best effort on the way out; expiry covers it
                log.warning("could not release the watch lease (%s); it expires by itself", e)
            self.metrics.leader(False)

    def health(self) -> tuple[int, dict[str, object]]:
        """The /healthz verdict now (see trinogen.watch.health)."""
        beat = self.at.last_beat
        return verdict(Snapshot(
            running=self._running, stopping=self.stop.requested, role=self.role,
            loop_age=None if beat is None else self.clock() - beat,
            stale_after=self.stale_after, failing=self.failures.snapshot(),
            refused=self.refusal, events=self.metrics.counts["events"],
            commits=self.metrics.counts["commits"]))

    # --- one step --------------------------------------------------------------------------

    def step(self) -> None:
        now = self.clock()
        self.at.last_beat = now
        if not self.failures.snapshot():  # the file says what /healthz says: not while stuck
            self.liveness.beat(now)
        if not self._lead(now):
            return
        if self.stream is None:
            self._open()
            return
        action = decide(now, self.w, pending=self.work, need_full=self._need_full,
                        batch=self.batch, next_reconcile=self.at.next_reconcile)
        if action is None:
            self._read(now)
        else:
            self._execute(self._work_for(action))

    def _work_for(self, action: Sync) -> Work:
        if action.retry and self.work is not None:
            return self.work
        if action.kind == "full":
            self._need_full = False
            return Work("full", action.reason, self.position)
        batch, self.batch = self.batch, None
        self.metrics.batch()
        return batch_work(batch, action.reason, self.position)

    # --- the lease -------------------------------------------------------------------------

    def _lead(self, now: float) -> bool:
        """Hold the lease (trinogen.watch.leadership); react when leadership changes."""
        state = self.leadership.check(now, self.stop.requested)
        if isinstance(state, Elected):
            self._elected(now, state.position)
            return True
        if isinstance(state, Deposed):
            self._demote(state.why)
            return False
        return state

    def _elected(self, now: float, position: StreamPosition | None) -> None:
        self.on_elected()  # each time it leads (the claims index forgets: another led meanwhile)
        self.metrics.leader(True)
        self.at.next_reconcile, self.at.saved_at = now + self.w.reconcile_seconds, now
        self.position = self.saved = position
        self._need_full = position is None
        self._recovered("stream")
        log.info("this replica (%s) leads the watch; %s", self.lease.owner,
                 "resuming after the saved token" if position is not None
                 else "no saved token: a full sync follows the new stream",
                 extra={"watch": "elected", "owner": self.lease.owner})

    def _demote(self, why: str) -> None:
        log.warning("no longer the watch leader (%s); dropping the batch in flight, a leader "
                    "replays it", why, extra={"watch": "demoted"})
        self.leadership.stepped_down(self.clock())
        self.metrics.leader(False)
        self._close_stream()
        self.batch = self.work = None
        self.position = None
        self._need_full = False
        self._resolved()  # a standby runs no full sync: the next leader judges the refusal anew

    # --- the stream ------------------------------------------------------------------------

    def _open(self) -> None:
        """Open the stream after the position; if the server refuses it, from now + full sync.

        The new stream is opened BEFORE the full sync: a change made while the full sync runs
        is then on the stream too, never between the two.
        """
        after = self.position
        try:
            try:
                stream = self.feed.open(after)
            except PositionRejected as e:
                # Opening from now tells whether the position was the cause: if this fails
                # too, MongoDB refuses the stream itself and the position is kept.
                stream = self.feed.open(None)
                self._position_lost(f"the server rejected the saved resume token ({e}); "
                                    "discarding it")
        except FeedFailed as e:
            self._stream_failed(e)
            return
        self.stream = stream
        self.position = stream.position or self.position
        log.info("change stream open on %s (%s)", self.where,
                 "resumed after the saved token" if after is not None and not self._need_full
                 else "from now", extra={"watch": "stream_open"})

    def _read(self, now: float) -> None:
        assert self.stream is not None
        try:
            event = self.stream.next()  # at most one getMore of <= max_await_ms
        except PositionLost as e:
            self._position_lost(f"{e} from the stream")
            return
        except FeedFailed as e:
            self._stream_failed(e)
            return
        self._recovered("stream")
        self.position = self.stream.position or self.position
        self._on_event(event, now)

    def _on_event(self, event: Event, now: float) -> None:
        if isinstance(event, Quiet):
            if not event.open:  # the server ended the cursor: resume from its position
                self._close_stream()
            elif self.batch is None:
                self._save_idle(now)
        elif isinstance(event, Ended):
            self.metrics.event(event.operation)
            self._position_lost(f"{event.operation} event")
        elif isinstance(event, Ignored):
            log.warning("ignoring a change event of type %s (not a document change with a key)",
                        event.operation)
        elif isinstance(event, Changed):
            self.metrics.event(event.operation)
            if self.batch is None:
                self.batch = Batch(started=now, last=now)
            self.batch.add(event.doc_id, event.operation, now, event.at or self.wall(), library=event.library)

    def _position_lost(self, why: str) -> None:
        """History lost, token rejected or stream invalidated: new stream from now, full sync."""
        log.warning("%s: the change stream cannot resume; opening a new one and running a full "
                    "sync", why, extra={"watch": "resync"})
        self.metrics.failure("history")
        self._close_stream()
        self.batch = self.work = None  # the full sync covers them
        self.position = None
        self._need_full = True

    def _stream_failed(self, e: FeedFailed) -> None:
        """Beyond pymongo's own resume: back off and reconnect from the last position."""
        self.metrics.reconnect()
        self._close_stream()
        self._failed("stream", e, wait=True)

    def _close_stream(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None

    def _save_idle(self, now: float) -> None:
        """While idle, keep the saved position recent (an old one may leave the oplog)."""
        if idle_save_due(self.position, self.saved, now - self.at.saved_at,
                         self.poll_seconds * 3):
            assert self.position is not None
            self._save(self.position, now)

    def _save(self, position: StreamPosition, now: float) -> None:
        try:
            self.lease.save(position)
        except LeaseLost as e:
            self._demote(str(e))
            return
        except LeaseUnavailable as e:
            # A later position supersedes this one, and a replay after a crash plans no change.
            log.warning("%s; will retry", e)
            self.metrics.failure("token")
            return
        self.saved, self.at.saved_at = position, now

    # --- failures --------------------------------------------------------------------------

    def _recovered(self, stage: str) -> None:
        self.failures.clear(stage)
        self.metrics.failing(stage, 0)

    def _failed(self, stage: str, e: TrinogenError, *, wait: bool = False) -> None:
        """Count a failure in a row; give up beyond watch.max_reconnects; else back off."""
        n = self.failures.record(stage)
        self.metrics.failure(stage)
        self.metrics.failing(stage, n)
        what, error, hint = GIVE_UP[stage]
        if self.failures.exhausted(stage):
            raise error(f"{what} on {self.where} failed {n} times in a row (last: {e}); "
                        f"{hint}") from e
        delay = backoff(n, self.backoff_cap) if wait else self.poll_seconds
        log.warning("%s failed (%s); retrying in %.1fs (attempt %d of %d)", what, e, delay, n,
                    self.w.max_reconnects, extra={"watch": f"{stage}_failed", "attempt": n})
        if wait:
            self.stop.sleep(delay)

    # --- syncing ---------------------------------------------------------------------------

    def _before_push(self) -> None:
        if self.stop.abandon:
            raise Interrupted("stopping: the batch was abandoned before its push")
        self.lease.confirm()

    def _execute(self, work: Work) -> None:
        """Run one sync; keep it for a retry if it fails; save its position after its push."""
        self.work = work
        work.attempts += 1
        started = self.clock()
        try:
            outcome = self.syncer(work.doc_ids, self._before_push)
        except LeaseLost as e:
            self.metrics.sync(work.kind, "abandoned")
            self._demote(str(e))
        except Interrupted as e:
            self.metrics.sync(work.kind, "abandoned")
            log.warning("%s", e, extra={"watch": "abandoned"})
            self.work = None
        except SafetyRefusal as e:
            self._refused(work, e)
        except ConfigError:
            raise  # the settings are wrong: retrying cannot help
        except TrinogenError as e:
            self.metrics.sync(work.kind, "failed")
            self._failed("sync", e, wait=True)
        except Exception as e:  # noqa: BLE001 - a bug: logged with its traceback, set aside
            self._refused(work, e)
        else:
            self._synced(work, outcome, started)

    def _refused(self, work: Work, e: Exception) -> None:
        """A guard refused the sync, or it failed on a bug: report it, keep it visible, and go on.

        Retrying cannot help (the same documents give the same plan, or the same bug) and would
        block every later change; exiting would replay the same event after each restart. The
        clusters keep their files; each full sync tries again.
        """
        now = self.clock()
        self.work = None
        self._recovered("sync")
        bug = not isinstance(e, SafetyRefusal)
        self.metrics.sync(work.kind, "failed" if bug else "refused")
        self.metrics.refused(work.kind)
        self.metrics.degraded(True)
        self.refusal = Refusal(work.kind, set_aside(e), len(work.doc_ids), self.wall().isoformat())
        log.error("%s %s", work.what, set_aside(e, hint=True), exc_info=e if bug else None,
                  extra={"watch": "refused", "kind": work.kind, "documents": len(work.doc_ids)})
        if work.kind == "full":
            self.at.next_reconcile = now + self.w.reconcile_seconds
        if work.position is not None:  # handled: a restart must not replay it
            self._save(work.position, now)

    def _resolved(self) -> None:
        self.refusal = None
        self.metrics.degraded(False)

    def _synced(self, work: Work, outcome: SyncOutcome, started: float) -> None:
        self.work = None
        self._recovered("sync")
        pushed_at, done = self.wall(), self.clock()
        self.metrics.sync(work.kind, "pushed" if outcome.pushed else "unchanged")
        if work.position is not None:
            self._save(work.position, done)
        if work.kind == "full":
            self.at.next_reconcile = done + self.w.reconcile_seconds
            if self.refusal is not None:
                log.info("a full sync succeeded: the refused sync is resolved")
                self._resolved()
        if outcome.recheck_seconds is not None:  # a rollout waits on health: look again soon
            self.at.next_reconcile = min(self.at.next_reconcile, done + outcome.recheck_seconds)
        message, extra, lag = describe(work, outcome, pushed_at, done - started, done)
        if lag is not None and outcome.pushed:
            self.metrics.lag(lag)
        log.info("%s", message, extra=extra)
        log_stats(outcome)
