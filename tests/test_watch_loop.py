"""The watch loop with fakes: a dict-backed lease, a scripted change feed, a recording syncer.

No MongoDB, no git, no threads: the clock is moved by the test (and by the loop's back-off
sleeps), so every timing rule is exact.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from trinogen import watch
from trinogen.errors import (
    GitUnavailable,
    LeaseLost,
    SafetyRefusal,
    SourceUnavailable,
    UnavailableError,
)
from trinogen.settings import WatchSettings
from trinogen.watch import Changed, Quiet, StreamPosition, SyncOutcome

W = WatchSettings(debounce_seconds=1.0, max_wait_seconds=5.0, max_batch=100,
                  lease_seconds=3.0, reconcile_seconds=600.0, max_reconnects=3)


def pos(n: int) -> StreamPosition:
    p = StreamPosition.of({"_data": f"{n:04d}"})
    assert p is not None
    return p


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeLease:
    """The lease document as attributes; `down` makes every call fail like an unreachable MongoDB."""

    def __init__(self, saved: StreamPosition | None = None) -> None:
        self.owner = "me"
        self.held = False
        self.saved = saved
        self.saves: list[StreamPosition] = []
        self.down = False
        self.other = False  # another replica holds the lease
        self.calls = 0

    def _call(self) -> None:
        self.calls += 1
        if self.down:
            raise watch.LeaseUnavailable("cannot take the watch lease (ServerSelectionTimeoutError)")

    def acquire(self) -> bool:
        self._call()
        self.held = not self.other
        return self.held

    def renew(self) -> bool:
        self._call()
        self.held = self.held and not self.other
        return self.held

    def confirm(self) -> None:
        self._call()
        if not self.held:
            raise LeaseLost("lost")

    def holder(self) -> str | None:
        return self.owner

    def position(self) -> StreamPosition | None:
        self._call()
        return self.saved

    def save(self, position: StreamPosition) -> None:
        self._call()
        self.saved = position
        self.saves.append(position)

    def release(self) -> None:
        self.held = False


class FakeStream:
    def __init__(self, feed: FakeFeed, position: StreamPosition | None) -> None:
        self.feed = feed
        self.position = position
        self.closed = False

    def next(self) -> watch.Event:
        if not self.feed.script:
            return Quiet()
        item = self.feed.script.popleft()
        if isinstance(item, Exception):
            raise item
        event, self.position = item
        return event

    def close(self) -> None:
        self.closed = True


class FakeFeed:
    """Opens FakeStreams; `script` holds (event, position after it) pairs or errors to raise."""

    def __init__(self) -> None:
        self.now_position = pos(100)  # where a stream opened from now starts
        self.script: deque[Any] = deque()
        self.opens: list[StreamPosition | None] = []
        self.reject: Exception | None = None  # raised when opening after a position
        self.fail: Exception | None = None  # raised by every open

    def open(self, after: StreamPosition | None) -> FakeStream:
        self.opens.append(after)
        if self.fail is not None:
            raise self.fail
        if after is not None and self.reject is not None:
            raise self.reject
        return FakeStream(self, after or self.now_position)

    def emit(self, doc_id: str, position: StreamPosition, op: str = "update") -> None:
        self.script.append((Changed(doc_id, op, datetime.now(UTC)), position))


class FakeSyncer:
    """Records each sync's documents; raises the next scripted error, if any."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.errors: deque[Exception] = deque()
        self.always: Exception | None = None
        self.recheck: float | None = None  # a rollout left waiting (SyncOutcome.recheck_seconds)

    def __call__(self, doc_ids: tuple[str, ...], before_push: Callable[[], None]) -> SyncOutcome:
        self.calls.append(doc_ids)
        if self.always is not None:
            raise self.always
        if self.errors:
            raise self.errors.popleft()
        before_push()
        return SyncOutcome(pushed=True, commit="c0ffee" * 6, recheck_seconds=self.recheck)


class Loop:
    """A Watcher over fakes, and the fakes."""

    def __init__(self, saved: StreamPosition | None = None, w: WatchSettings = W) -> None:
        self.clock = Clock()
        self.lease = FakeLease(saved)
        self.feed = FakeFeed()
        self.syncer = FakeSyncer()
        self.sleeps: list[float] = []

        def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            self.clock.advance(seconds)

        self.w = watch.Watcher(w, lease=self.lease, feed=self.feed, syncer=self.syncer,
                               clock=self.clock, sleep=sleep, poll_seconds=1.0)
        self.w._running = True  # as inside run(): health judges a running loop

    def steps(self, n: int, every: float = 0.1) -> None:
        for _ in range(n):
            self.w.step()
            self.clock.advance(every)

    def health(self) -> tuple[int, str]:
        code, body = self.w.health()
        return code, str(body["status"])


def started(saved: StreamPosition | None = None) -> Loop:
    """A leader with its stream open and its first full sync (if any) done."""
    loop = Loop(saved)
    loop.steps(3)
    assert loop.lease.held and loop.w.stream is not None and loop.w.work is None
    return loop


# --- the idle save ------------------------------------------------------------------------------


def test_idle_leader_saves_the_moving_stream_position() -> None:
    """With no batch pending, the stream's newer position is saved once 3 polls have passed."""
    loop = started(saved=pos(1))
    assert loop.lease.saves == []  # resumed after pos(1): nothing to save yet
    assert isinstance(loop.w.stream, FakeStream)
    loop.w.stream.position = pos(7)  # the server's clock moved the idle stream on
    loop.steps(5, every=0.1)  # 0.5 s: too soon
    assert loop.lease.saves == []
    loop.steps(30, every=0.1)  # 3.5 s in all, beyond 3 x poll_seconds
    assert loop.lease.saves == [pos(7)] and loop.lease.saved == pos(7)


def test_idle_save_waits_while_a_batch_is_pending() -> None:
    """A pending batch's position is saved after its push, never by the idle save before it."""
    loop = started(saved=pos(1))
    loop.feed.emit("doc-a", pos(2))
    loop.steps(1)
    assert loop.w.batch is not None
    loop.clock.advance(0.5)
    loop.steps(1)
    assert loop.lease.saves == []  # still collecting (debounce 1 s)
    loop.steps(10, every=0.2)
    assert loop.syncer.calls == [('doc-a',)] and loop.lease.saves == [pos(2)]


# --- a refused batch ----------------------------------------------------------------------------


def test_refused_batch_is_not_retried_and_later_changes_go_through() -> None:
    """A guard's refusal is recorded once, health says degraded, and the next batch is synced."""
    loop = started(saved=pos(1))
    loop.syncer.errors.append(SafetyRefusal("the run would prune 7 of 10 clusters"))
    for i in range(7):
        loop.feed.emit(f"doc-{i}", pos(2 + i), op="delete")
    loop.steps(20, every=0.2)
    assert len(loop.syncer.calls) == 1  # refused once, not retried
    assert loop.w.metrics.counts["syncs_batch_refused"] == 1
    assert loop.health() == (200, "degraded")
    assert loop.w.health()[1]["refused"]["documents"] == 7
    assert loop.lease.saved == pos(8)  # handled: a restart does not replay it
    loop.feed.emit("doc-other", pos(9))
    loop.steps(20, every=0.2)
    assert loop.syncer.calls[-1] == ("doc-other",)
    assert loop.health() == (200, "degraded")  # a batch does not cover the refused clusters


def test_a_sync_failing_on_a_bug_is_set_aside_not_replayed(caplog: pytest.LogCaptureFixture
                                                             ) -> None:
    """A batch whose sync raises what no expected failure is (a bug one document triggers) is
    logged with its traceback and set aside like a refusal: its position is saved, so neither
    the loop nor a restart replays it, and later changes go through (issue 19)."""
    loop = started(saved=pos(1))
    loop.syncer.errors.append(RecursionError("maximum recursion depth exceeded"))
    loop.feed.emit("doc-hostile", pos(2))
    loop.steps(20, every=0.2)
    assert loop.syncer.calls == [("doc-hostile",)]  # once: a bug gives the same result again
    assert loop.lease.saved == pos(2)
    assert loop.health() == (200, "degraded")
    assert "a bug: RecursionError" in loop.w.health()[1]["refused"]["message"]
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.exc_info is not None and "please report it" in record.getMessage()
    loop.feed.emit("doc-other", pos(3))
    loop.steps(20, every=0.2)
    assert loop.syncer.calls[-1] == ("doc-other",) and loop.lease.saved == pos(3)


def test_refused_reconcile_waits_a_period_and_a_full_sync_clears_degraded() -> None:
    """A refused full sync is retried at the next reconcile, not at once; its success clears it."""
    loop = started(saved=pos(1))
    loop.syncer.errors.append(SafetyRefusal("mass prune"))
    loop.clock.advance(W.reconcile_seconds)
    loop.steps(3)
    assert loop.syncer.calls == [()] and loop.health() == (200, "degraded")
    loop.steps(50, every=1.0)  # well within the next period
    assert loop.syncer.calls == [()]
    loop.clock.advance(W.reconcile_seconds)
    loop.steps(2)
    assert loop.syncer.calls == [(), ()] and loop.health() == (200, "ok")


# --- a shared-catalog change -------------------------------------------------------------------


def test_shared_catalog_change_runs_and_counts_as_a_full_sync() -> None:
    """A catalog change syncs every cluster: it is a full sync, and its success resolves a refusal
    and pushes the next reconcile back a whole period."""
    loop = started(saved=pos(1))
    loop.syncer.errors.append(SafetyRefusal("mass prune"))
    loop.feed.emit("doc-a", pos(2), op="delete")
    loop.steps(20, every=0.2)
    assert loop.health() == (200, "degraded")
    loop.clock.advance(W.reconcile_seconds / 2)
    loop.feed.script.append((Changed('{"$oid": "cat"}', "update", datetime.now(UTC),
                                     library=True), pos(3)))
    loop.steps(20, every=0.2)
    assert loop.syncer.calls[-1] == ()  # every cluster: a full sync
    assert loop.w.metrics.counts["syncs_full_pushed"] == 1
    assert loop.w.metrics.counts["syncs_batch_pushed"] == 0
    assert loop.health() == (200, "ok") and loop.w.refusal is None
    assert loop.w.at.next_reconcile > loop.clock.now + W.reconcile_seconds - 10
    assert loop.lease.saved == pos(3)


def test_refused_shared_catalog_change_is_reported_as_a_full_sync() -> None:
    """A refused catalog change is a refused full sync (0 documents), retried at the reconcile."""
    loop = started(saved=pos(1))
    loop.syncer.errors.append(SafetyRefusal("mass prune"))
    loop.feed.script.append((Changed('{"$oid": "cat"}', "delete", datetime.now(UTC),
                                     library=True), pos(2)))
    loop.steps(20, every=0.2)
    assert loop.w.metrics.counts["syncs_full_refused"] == 1
    assert loop.w.refusal is not None and loop.w.refusal.kind == "full"
    assert loop.w.refusal.documents == 0


# --- a stuck watcher is visible, then gives up --------------------------------------------------


def test_unreachable_lease_is_unhealthy_then_exits_4() -> None:
    """MongoDB down for the lease: 503 while retrying, then UnavailableError after max_reconnects."""
    loop = Loop()
    loop.lease.down = True
    codes = []
    with pytest.raises(SourceUnavailable, match="watch lease .* failed 4 times in a row") as e:
        for _ in range(100):
            loop.w.step()
            codes.append(loop.health()[0])
            loop.clock.advance(0.5)
    assert int(e.value.exit_code) == 4
    assert codes and set(codes) == {503}
    assert loop.lease.calls == 4  # one attempt per poll, not one per step


def test_lease_recovering_resets_the_count_and_health() -> None:
    """Failures must be in a row: a lease reached again is healthy and starts the count afresh."""
    loop = Loop()
    loop.lease.down = True
    loop.steps(25, every=0.1)  # 3 attempts, one a second
    assert loop.health()[0] == 503
    loop.lease.down = False
    loop.steps(20, every=0.1)
    assert loop.lease.held and loop.health() == (200, "ok")
    assert loop.w.failures.snapshot() == {}


def test_stream_that_cannot_open_is_unhealthy_then_exits_4() -> None:
    """A change stream MongoDB refuses to open: back-off, 503 meanwhile, exit 4 after the limit."""
    loop = Loop(saved=pos(1))
    loop.feed.fail = watch.FeedFailed("OperationFailure Unauthorized (13): not authorized")
    codes = []
    with pytest.raises(SourceUnavailable, match="change stream .* failed 4 times"):
        for _ in range(20):
            loop.w.step()
            codes.append(loop.health()[0])
    assert loop.sleeps == [0.5, 1.0, 1.0]  # capped at lease_seconds / 3
    assert set(codes) == {503}
    assert loop.feed.opens == [pos(1)] * 4  # the position is kept: it was not the cause


def test_sync_that_keeps_failing_exits_4() -> None:
    """A sync failing on an unavailable dependency is retried with back-off, then gives up."""
    loop = started(saved=pos(1))
    loop.syncer.always = GitUnavailable("cannot reach the git remote")
    loop.feed.emit("doc-a", pos(2))
    with pytest.raises(UnavailableError, match="sync .* failed 4 times in a row"):
        loop.steps(60, every=0.5)
    assert loop.sleeps == [0.5, 1.0, 1.0]
    assert loop.syncer.calls == [("doc-a",)] * 4
    assert loop.lease.saved == pos(1)  # never moved past an unpushed batch


# --- a rejected saved position ------------------------------------------------------------------


def test_rejected_saved_position_is_discarded_for_a_new_stream_and_full_sync() -> None:
    """A position the server refuses (any code): stream from now first, then a full sync."""
    loop = Loop(saved=pos(1))
    loop.feed.reject = watch.PositionRejected("OperationFailure BadValue (2): bad resume token")
    loop.steps(4)
    assert loop.feed.opens == [pos(1), None]
    assert loop.syncer.calls == [()]  # the full sync, after the new stream was opened
    assert loop.lease.saved == pos(100)  # the new stream's position replaces the rejected one
    assert loop.health() == (200, "ok")


def test_liveness_file_is_not_touched_while_a_stage_fails(tmp_path: Path) -> None:
    """The liveness file agrees with /healthz: fresh while healthy, left to age while stuck."""
    alive = tmp_path / "alive"
    loop = Loop(w=dataclasses.replace(W, liveness_file=str(alive)))
    loop.lease.down = True
    loop.steps(2, every=0.1)  # the first step beats, then the lease fails
    assert loop.health()[0] == 503
    alive.unlink()
    loop.steps(20, every=0.1)  # two more failures, a second apart
    assert not alive.exists()
    loop.lease.down = False
    loop.steps(20, every=0.1)
    assert alive.exists() and loop.health() == (200, "ok")


def test_losing_the_lease_clears_degraded() -> None:
    """A standby runs no full sync, so it does not keep reporting the refusal it saw as leader."""
    loop = started(saved=pos(1))
    loop.syncer.errors.append(SafetyRefusal("mass prune"))
    loop.feed.emit("doc-a", pos(2), op="delete")
    loop.steps(20, every=0.2)
    assert loop.health() == (200, "degraded")
    loop.lease.other = True  # another replica took the lease over
    loop.steps(15, every=0.1)
    assert loop.w.role == "follower" and loop.w.stream is None
    assert loop.health() == (200, "ok") and loop.w.refusal is None


def test_each_election_is_told() -> None:
    """Every time this replica becomes the leader (the first time, and again after another
    replica held the lease) `on_elected` is called once: the claims index forgets then."""
    loop = Loop(saved=pos(1))
    elections: list[float] = []
    loop.w.on_elected = lambda: elections.append(loop.clock())
    loop.steps(3)
    assert loop.lease.held and len(elections) == 1
    loop.lease.other = True  # another replica took the lease over
    loop.steps(15, every=0.1)
    assert loop.w.role == "follower" and len(elections) == 1
    loop.lease.other = False
    loop.steps(15, every=0.2)
    assert loop.w.role == "leader" and len(elections) == 2


def test_a_waiting_rollout_brings_the_next_full_sync_forward() -> None:
    """A sync that leaves a rollout waiting on health makes the watcher look again after the
    rollout's check interval, not a whole reconcile period later (issue 20)."""
    loop = started(saved=pos(1))
    loop.syncer.recheck = 30.0
    loop.feed.emit("doc-a", pos(2))
    loop.steps(20, every=0.2)
    assert loop.syncer.calls[-1] == ('doc-a',)
    assert loop.w.at.next_reconcile <= loop.clock.now + 30
    calls = len(loop.syncer.calls)
    loop.clock.advance(31)
    loop.steps(3)
    assert len(loop.syncer.calls) == calls + 1 and loop.syncer.calls[-1] == ()
