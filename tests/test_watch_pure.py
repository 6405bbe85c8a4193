"""The watcher's pure decisions, as tables: when to sync, back-off, positions, health, events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from bson import ObjectId, Timestamp

from trinogen import watch
from trinogen.settings import WatchSettings
from trinogen.watch import (
    Batch,
    Changed,
    Ended,
    Failures,
    Ignored,
    Quiet,
    Refusal,
    Snapshot,
    StreamPosition,
    Sync,
    Work,
    backoff,
    decide,
    idle_save_due,
    verdict,
)
from trinogen.watch.feed import to_event
from trinogen.watch.syncing import describe

W = WatchSettings(debounce_seconds=0.2, max_wait_seconds=5.0, max_batch=3,
                  reconcile_seconds=600.0)


# --- batching -----------------------------------------------------------------------------------


@pytest.mark.parametrize("events, now, expected", [
    ([0.0], 0.1, None),  # still inside the debounce window
    ([0.0], 0.2, "quiet"),  # quiet for debounce_seconds
    ([0.0, 0.15, 0.3, 0.45], 0.5, None),  # events keep coming: keep collecting
    ([i * 0.15 for i in range(40)], 6.0, "max_wait"),  # ...but never longer than max_wait
    ([0.0, 0.01, 0.02], 0.03, "max_batch"),  # max_batch distinct documents
])
def test_batch_is_due_when_quiet_full_or_old(events: list[float], now: float,
                                             expected: str | None) -> None:
    """A batch is synced after debounce_seconds of quiet, at max_batch documents or max_wait."""
    batch = Batch(started=events[0], last=events[0])
    for i, t in enumerate(events):
        batch.add(f"doc-{i % 3 if len(events) == 3 else i % 2}", "update", t, None)
    assert batch.due(now, W) == expected


def test_batch_counts_documents_once_and_keeps_the_event_time_range() -> None:
    """Two events on one document are one document; the oldest and newest server times are kept."""
    t1, t2 = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC), datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC)
    batch = Batch(started=0.0, last=0.0)
    batch.add("a", "update", 0.1, t1)
    batch.add("a", "replace", 0.2, t2)
    assert batch.doc_ids == {"a"} and batch.events == 2
    assert (batch.oldest_event_at, batch.newest_event_at) == (t2, t1)
    assert batch.operations == {"update": 1, "replace": 1}


# --- the sync decision --------------------------------------------------------------------------


def _batch(started: float, last: float, docs: int = 1) -> Batch:
    b = Batch(started=started, last=last)
    for i in range(docs):
        b.add(f"d{i}", "update", last, None)
    return b


@pytest.mark.parametrize("pending, need_full, batch, next_reconcile, now, expected", [
    # nothing to do: read on
    (None, False, None, 700.0, 100.0, None),
    # the reconcile period has passed, nothing is pending
    (None, False, None, 100.0, 100.0, Sync("full", "periodic reconcile")),
    # no usable position: a full sync first, even with a due batch and a due reconcile
    (None, True, _batch(0, 0), 0.0, 100.0, Sync("full", "no usable resume token")),
    # a failed sync is retried before anything else
    (Work("batch", "quiet", None), True, _batch(0, 0), 0.0, 100.0,
     Sync("batch", "quiet", retry=True)),
    # a batch still collecting: read on, and the reconcile waits for it
    (None, False, _batch(99.9, 99.9), 0.0, 100.0, None),
    # a batch quiet for debounce_seconds
    (None, False, _batch(99.0, 99.7), 0.0, 100.0, Sync("batch", "quiet")),
    # a batch at max_batch documents
    (None, False, _batch(100.0, 100.0, docs=3), 700.0, 100.0, Sync("batch", "max_batch")),
])
def test_decide(pending: Work | None, need_full: bool, batch: Batch | None,
                next_reconcile: float, now: float, expected: Sync | None) -> None:
    """The leader retries, resyncs, flushes a due batch, reconciles, or reads on: in that order."""
    assert decide(now, W, pending=pending, need_full=need_full, batch=batch,
                  next_reconcile=next_reconcile) == expected


# --- back-off and failures in a row -------------------------------------------------------------


@pytest.mark.parametrize("attempt, cap, expected", [
    (1, 10.0, 0.5), (2, 10.0, 1.0), (3, 10.0, 2.0), (5, 10.0, 8.0), (6, 10.0, 10.0),
    (3, 1.0, 1.0), (0, 10.0, 0.5), (5000, 10.0, 10.0),  # no overflow after weeks of failures
])
def test_backoff(attempt: int, cap: float, expected: float) -> None:
    """Back-off doubles from 0.5 s and stops at its cap."""
    assert backoff(attempt, cap) == expected


def test_failures_count_in_a_row_per_stage() -> None:
    """A stage gives up only beyond the limit in a row; a success of that stage resets it."""
    f = Failures(limit=2)
    assert [f.record("stream") for _ in range(2)] == [1, 2] and not f.exhausted("stream")
    f.record("lease")
    f.clear("lease")
    assert f.snapshot() == {"stream": 2}
    assert f.record("stream") == 3 and f.exhausted("stream")
    f.clear("stream")
    assert f.snapshot() == {} and not f.exhausted("stream")


# --- the stream position ------------------------------------------------------------------------


@pytest.mark.parametrize("token, usable", [
    ({"_data": "8200000001"}, True),
    ({"_data": "82", "_typeBits": b"\x01"}, True),
    ({}, False),  # an empty document resumes nothing
    (None, False),
    ("8200000001", False),  # a token is a document, never a bare string
    (["_data"], False),
])
def test_position_of(token: Any, usable: bool) -> None:
    """Only a non-empty document is a usable position."""
    position = StreamPosition.of(token)
    assert (position is not None) == usable
    if position is not None:
        assert position.document() == token


def test_position_is_a_value() -> None:
    """Positions with equal tokens are equal (and hash alike); the stored token is a copy."""
    raw = {"_data": "01"}
    a, b = StreamPosition.of(raw), StreamPosition.of({"_data": "01"})
    raw["_data"] = "02"  # a later change to the source document does not move the position
    assert a == b and hash(a) == hash(b) and a != StreamPosition.of(raw)
    assert a is not None and a.document() == {"_data": "01"}
    assert StreamPosition.of(a) is a


P1, P2 = StreamPosition.of({"_data": "01"}), StreamPosition.of({"_data": "02"})


@pytest.mark.parametrize("position, saved, since, expected", [
    (P2, P1, 3.0, True),  # moved, interval passed
    (P2, P1, 2.9, False),  # moved, too soon
    (P1, P1, 100.0, False),  # not moved
    (None, P1, 100.0, False),  # nothing to save
    (P2, None, 3.0, True),  # nothing saved yet
])
def test_idle_save_due(position: StreamPosition | None, saved: StreamPosition | None,
                       since: float, expected: bool) -> None:
    """An idle leader saves its position when it moved and 3 s (the interval) have passed."""
    assert idle_save_due(position, saved, since, 3.0) is expected


# --- health -------------------------------------------------------------------------------------

REFUSAL = Refusal("batch", "the run would prune 7 of 10 clusters", 7, "2026-01-01T00:00:00+00:00")


@pytest.mark.parametrize("snapshot, code, status", [
    (Snapshot(True, False, "leader", 0.1, 60.0), 200, "ok"),
    (Snapshot(True, False, "follower", 0.1, 60.0), 200, "ok"),  # a standby is healthy
    (Snapshot(False, False, "follower", None, 60.0), 503, "unavailable"),  # not running yet
    (Snapshot(True, True, "leader", 0.1, 60.0), 503, "unavailable"),  # stopping
    (Snapshot(True, False, "leader", 61.0, 60.0), 503, "unavailable"),  # loop stalled
    (Snapshot(True, False, "leader", 0.1, 60.0, failing={"lease": 1}), 503, "unavailable"),
    (Snapshot(True, False, "leader", 0.1, 60.0, failing={"sync": 0}), 200, "ok"),
    (Snapshot(True, False, "leader", 0.1, 60.0, refused=REFUSAL), 200, "degraded"),
    (Snapshot(True, False, "leader", 0.1, 60.0, failing={"stream": 2}, refused=REFUSAL),
     503, "unavailable"),  # stuck wins over degraded
])
def test_verdict(snapshot: Snapshot, code: int, status: str) -> None:
    """/healthz: 200 ok or degraded (a refused sync), 503 when not running, stalled or failing."""
    got_code, body = verdict(snapshot)
    assert (got_code, body["status"]) == (code, status)
    assert body["refused"] == (None if snapshot.refused is None else {
        "kind": "batch", "message": REFUSAL.message, "documents": 7, "at": REFUSAL.at})


# --- typed events -------------------------------------------------------------------------------

OID = ObjectId("64b7f3c2a1b2c3d4e5f60718")
WHEN = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("raw, expected", [
    (None, Quiet()),
    ({"operationType": "update", "documentKey": {"_id": OID}, "wallTime": WHEN},
     Changed('{"$oid": "64b7f3c2a1b2c3d4e5f60718"}', "update", WHEN)),
    ({"operationType": "delete", "documentKey": {"_id": "plain"},
      "clusterTime": Timestamp(int(WHEN.timestamp()), 1)},
     Changed('"plain"', "delete", WHEN)),
    ({"operationType": "insert", "documentKey": {"_id": 7}, "wallTime": WHEN.replace(tzinfo=None)},
     Changed('{"$numberInt": "7"}', "insert", WHEN)),  # a naive wallTime is UTC
    ({"operationType": "invalidate"}, Ended("invalidate")),
    ({"operationType": "dropDatabase"}, Ended("dropDatabase")),
    ({"operationType": "update"}, Ignored("update")),  # no document key
    ({"operationType": "createIndexes"}, Ignored("createIndexes")),
])
def test_to_event(raw: dict[str, Any] | None, expected: watch.Event) -> None:
    """Raw change documents become typed events keyed by the canonical Extended JSON _id."""
    assert to_event(raw) == expected


def test_ended_cursor_is_a_quiet_closed_event() -> None:
    """No event and a cursor the server ended: Quiet with open=False (resume from the position)."""
    assert to_event(None, alive=False) == Quiet(open=False)


# --- the log line of a finished sync ------------------------------------------------------------


def _batch(*, catalogs: int) -> Batch:
    batch = Batch(started=0.0, last=0.0)
    batch.add("doc-a", "update", 0.0, datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC))
    for i in range(catalogs):
        batch.add(f"cat-{i}", "update", 0.1, None, library=True)
    return batch


@pytest.mark.parametrize("work, start, documents, catalogs", [
    (Work("batch", "quiet", None, _batch(catalogs=0)), "1 document(s) from 1 event(s)", 1, 0),
    (Work("full", "shared catalog changed (quiet)", None, _batch(catalogs=2)),
     "full sync (shared catalog changed (quiet)) from 3 event(s)", 0, 2),
])
def test_describe_names_a_catalog_batch_a_full_sync(work: Work, start: str, documents: int,
                                                    catalogs: int) -> None:
    """A batch with a shared-catalog change is logged as the full sync it ran, with its lag."""
    pushed_at = datetime(2026, 1, 1, 12, 0, 2, tzinfo=UTC)
    message, extra, lag = describe(work, watch.SyncOutcome(pushed=True, commit="c" * 40),
                                         pushed_at, 0.5, 1.0)
    assert message.startswith(start) and extra["kind"] == work.kind
    assert (extra["documents"], extra["catalogs"]) == (documents, catalogs)
    assert lag == 2.0
