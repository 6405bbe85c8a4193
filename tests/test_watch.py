"""watch: a real pymongo change stream (mockupdb over TCP), mongomock documents, real git.

The change stream comes from `tests.mongowire.ChangeStreamServer`, so pymongo's own
change-stream and resume code runs; documents, the lease and the resume token live in mongomock.
Tests drive `Watcher.step()` themselves (no long sleeps: debounce 0.2 s, getMore waits 50 ms).
"""

from __future__ import annotations

import copy
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bson import ObjectId
from pymongo.errors import ServerSelectionTimeoutError

from tests.conftest import (
    ROOT,
    commit_count,
    example_docs,
    git,
)
from tests.mongowire import ChangeStreamServer
from tests.watchrig import ManualClock, Rig, Running, drive, get, in_remote, started, synced
from trinogen import watch
from trinogen.errors import ConfigError, SourceUnavailable, UnavailableError
from trinogen.report import JsonLogFormatter
from trinogen.source import doc_key


@pytest.fixture
def rig(tmp_path: Path, wire: ChangeStreamServer) -> Iterator[Rig]:
    r = Rig(tmp_path, wire)
    yield r
    r.close()


# --- the loop -----------------------------------------------------------------------------------


def test_events_make_one_commit_per_batch(rig: Rig) -> None:
    """Changes arriving together become one targeted sync and one commit; the next batch another."""
    w = rig.watcher()
    started(rig, w)
    assert rig.commits() == 1  # the initial full sync (no saved token)
    stage = rig.wire.aggregates[0]
    assert stage == {}  # from now (no token yet), and no fullDocument: a sync reads documents
    assert rig.wire.pipelines[0][1] == {"$project": {"operationType": 1, "documentKey": 1,
                                                     "ns": 1, "wallTime": 1, "clusterTime": 1}}
    # One stream on the database (aggregate: 1), which the server filters to the cluster and
    # catalog collections: never the status or state collection next to them.
    assert rig.wire.aggregate_namespaces == ["trino.1"]
    match = rig.wire.pipelines[0][0]["$match"]
    assert {"insert", "update", "replace", "delete"} <= set(match["operationType"]["$in"])
    assert match["$or"][0] == {"ns.coll": {"$in": ["trino_catalogs", "trino_clusters"]}}

    rig.change("analytics-prod", "clusterConfig.worker.replicas", 7)
    rig.change("etl-batch", "owner", "etl_team_2")
    drive(w, until=synced(w, 1))
    assert rig.commits() == 2
    message = git("--git-dir", str(rig.remote), "log", "-1", "--format=%B")
    assert "updated: analytics-prod" in message and "updated: etl-batch" in message
    assert b"workers: 7" in rig.tree()["trino-clusters/analytics-prod/values.yaml"]

    rig.change("adhoc-dev", "owner", "growth_2")
    drive(w, until=synced(w, 2))
    assert rig.commits() == 3
    assert rig.state()["resumeToken"] == rig.wire.last_token  # saved after the push
    assert rig.mongo.source.status.count_documents({}) == 3  # status went to its own collection
    assert set(rig.wire.getmore_max_time_ms) == {50}  # max_await_ms: a getMore returns quickly


def test_an_event_for_a_16_mib_document_is_synced_not_replayed(rig: Rig) -> None:
    """An insert of a document near MongoDB's 16 MiB limit: the server leaves the document out
    of the event (else the event is over the limit and every getMore fails at it, forever); the
    sync reads it, refuses it by its size, and the watch goes on (issue 19)."""
    w = rig.watcher()
    started(rig, w)
    big = {"_id": "huge", "clusterId": "huge", "owner": "x", "enabled": True,
           "pad": "x" * (16 * 1024 * 1024 - 100)}
    rig.mongo.coll.insert_one(big)
    rig.wire.emit("insert", "huge", big)
    rig.change("adhoc-dev", "owner", "growth_2")
    drive(w, until=synced(w, 1))
    assert w.failures.snapshot() == {} and rig.commits() == 2
    assert rig.state()["resumeToken"] == rig.wire.last_token  # handled: a restart goes on
    status = rig.mongo.source.status.find_one({"_id": "huge"})
    assert status["state"] == "failed" and "bytes as BSON; at most 4,194,304" in status["lastError"]


def test_burst_of_100_events_makes_one_commit(rig: Rig) -> None:
    """A burst of 100 events (20 new clusters, each inserted then updated 4 times) is one commit."""
    w = rig.watcher()
    started(rig, w)
    template = rig.doc("adhoc-dev")
    docs = [{**copy.deepcopy(template), "_id": ObjectId(), "clusterId": f"burst-{i:02d}"}
            for i in range(20)]

    def emit() -> None:
        for doc in docs:
            rig.mongo.coll.insert_one(copy.deepcopy(doc))
            rig.wire.emit("insert", doc["_id"], doc)
        for n in range(1, 5):
            for doc in docs:
                rig.change(doc["clusterId"], "clusterConfig.worker.replicas", n)
            time.sleep(0.02)  # well inside the 0.2 s debounce window

    thread = threading.Thread(target=emit)
    thread.start()
    drive(w, until=lambda: w.metrics.counts["events"] == 100 and synced(w, 1)(), timeout=30)
    thread.join()
    assert rig.commits() == 2 and w.metrics.counts["batches"] == 1
    names = git("--git-dir", str(rig.remote), "ls-tree", "-r", "--name-only", "main").split()
    assert len([n for n in names if n.startswith("trino-applications/burst-")]) == 20
    values = git("--git-dir", str(rig.remote), "show", "main:trino-clusters/burst-07/values.yaml")
    assert "workers: 4" in values  # the last of the burst's values


@pytest.mark.parametrize("fault", ["hangup", "cursor_not_found"])
def test_transient_stream_error_resumes_with_the_last_token(tmp_path: Path,
                                                            wire: ChangeStreamServer,
                                                            fault: str) -> None:
    """A network error or CursorNotFound mid-stream: pymongo resumes after the last token seen."""
    rig = Rig(tmp_path, wire, debounce_seconds=2.0)
    try:
        w = rig.watcher()
        started(rig, w)
        rig.change("analytics-prod", "owner", "team_a")
        drive(w, until=lambda: w.batch is not None)
        first = rig.wire.last_token
        rig.wire.fail("getMore", fault)
        rig.change("adhoc-dev", "owner", "team_b")
        drive(w, until=synced(w, 1), timeout=20)
        assert rig.wire.aggregates[-1]["resumeAfter"] == first
        assert len(rig.wire.aggregates) == 2  # opened once, resumed once
        assert w.metrics.counts["events"] == 2  # nothing delivered twice
        assert w.metrics.counts["reconnects"] == 0  # pymongo handled it by itself
        assert rig.commits() == 2  # initial + one batch with both changes
        message = git("--git-dir", str(rig.remote), "log", "-1", "--format=%B")
        assert "analytics-prod" in message and "adhoc-dev" in message
    finally:
        rig.close()


@pytest.mark.parametrize("trigger", ["history_lost_on_getmore", "invalidate"])
def test_unusable_stream_means_new_stream_then_full_sync(rig: Rig, trigger: str) -> None:
    """ChangeStreamHistoryLost or invalidate: a new stream from now is opened, then a full sync."""
    w = rig.watcher()
    started(rig, w)
    rig.change("analytics-prod", "owner", "changed_while_lost", event=False)  # history lost
    if trigger == "invalidate":
        rig.wire.emit("invalidate")
    else:
        rig.wire.fail("getMore", "history_lost")
    drive(w, until=lambda: w.metrics.counts["syncs_full_pushed"] >= 2 and w.work is None)
    assert len(rig.wire.aggregates) == 2
    assert "resumeAfter" not in rig.wire.aggregates[1]  # from now, not from the lost token
    assert rig.source.full_reads[-1] == 2  # the new stream was open before the full read
    assert in_remote(rig, "changed_while_lost")
    assert rig.state()["resumeToken"] is not None


def test_stale_saved_token_on_restart_means_full_sync(rig: Rig) -> None:
    """A saved token that left the oplog (286 on resume): new stream from now, then full sync."""
    w1 = rig.watcher()
    started(rig, w1)
    rig.change("adhoc-dev", "owner", "before_restart")
    drive(w1, until=synced(w1, 1))
    w1.close()
    rig.change("analytics-prod", "owner", "lost_while_down")  # an event that then ages out
    rig.wire.truncate()
    w2 = rig.watcher()
    drive(w2, until=lambda: w2.metrics.counts["syncs_full_pushed"] == 1 and w2.work is None)
    assert "resumeAfter" in rig.wire.aggregates[-2]  # tried the saved token first
    assert "resumeAfter" not in rig.wire.aggregates[-1]
    assert rig.source.full_reads[-1] == len(rig.wire.aggregates)
    assert in_remote(rig, "lost_while_down")


def test_restart_resumes_after_the_persisted_token(rig: Rig) -> None:
    """After a restart the stream resumes after the saved token: nothing missed, nothing doubled."""
    w1 = rig.watcher()
    started(rig, w1)
    rig.change("analytics-prod", "owner", "one")
    drive(w1, until=synced(w1, 1))
    saved = rig.state()["resumeToken"]
    assert saved == rig.wire.last_token
    w1.close()
    assert rig.commits() == 2

    rig.change("adhoc-dev", "owner", "two")  # while no watcher runs
    rig.change("etl-batch", "owner", "three")
    w2 = rig.watcher()
    drive(w2, until=synced(w2, 1))
    assert rig.wire.aggregates[-1]["resumeAfter"] == saved
    assert w2.metrics.counts["events"] == 2 and w2.metrics.counts["syncs_full_pushed"] == 0
    assert rig.commits() == 3
    w2.close()

    # A leader that pushed but died before saving its token: the replay commits nothing.
    rig.mongo.source.state.update_one({"_id": "watch:trino.trino_clusters"},
                                      {"$set": {"resumeToken": saved}})
    w3 = rig.watcher()
    drive(w3, until=synced(w3, 1))
    assert w3.metrics.counts["events"] == 2
    assert w3.metrics.counts["syncs_batch_unchanged"] == 1
    assert rig.commits() == 3


def test_transient_open_failure_reconnects_with_backoff(rig: Rig) -> None:
    """A stream that cannot be reopened is retried with logged, growing, bounded back-off."""
    sleeps: list[float] = []
    w = rig.watcher(sleep=sleeps.append)
    started(rig, w)
    rig.wire.fail("getMore", "unauthorized")  # not resumable: pymongo gives up, the watcher retries
    drive(w, until=lambda: w.metrics.counts["reconnects"] == 1 and w.stream is not None)
    assert rig.wire.aggregates[-1]["resumeAfter"] == rig.wire.last_token
    assert sleeps == [0.5]
    w.step()  # a good read resets the count: only failures in a row count
    rig.wire.fail("getMore", "unauthorized", times=10)
    rig.wire.fail("aggregate", "unauthorized", times=10)
    with pytest.raises(SourceUnavailable, match="failed 4 times in a row"):
        drive(w, until=lambda: False)
    assert sleeps == [0.5, 0.5, 1.0, 1.0]  # capped at lease_seconds / 3


def test_periodic_reconcile_repairs_drift(tmp_path: Path, wire: ChangeStreamServer) -> None:
    """Every reconcile_seconds a full sync runs: a change no event announced still lands in git."""
    rig = Rig(tmp_path, wire, reconcile_seconds=0.5)
    try:
        w = rig.watcher()
        started(rig, w)
        rig.change("etl-batch", "owner", "drifted", event=False)
        drive(w, until=lambda: w.metrics.counts["syncs_full_pushed"] == 2)
        assert in_remote(rig, "drifted") and rig.commits() == 2
        assert w.metrics.counts["batches"] == 0
    finally:
        rig.close()


@pytest.mark.parametrize("how", ["delete", "disable"])
def test_delete_or_disable_prunes_the_cluster(rig: Rig, how: str) -> None:
    """A delete event or `enabled: false` prunes that cluster's files in one commit."""
    w = rig.watcher()
    started(rig, w)
    assert any("adhoc-dev" in p for p in rig.tree())
    doc = rig.doc("adhoc-dev")
    if how == "delete":
        rig.mongo.coll.delete_one({"_id": doc["_id"]})
        rig.wire.emit("delete", doc["_id"])
    else:
        rig.change("adhoc-dev", "enabled", False)
    drive(w, until=synced(w, 1))
    assert rig.commits() == 2
    assert not any("adhoc-dev" in p for p in rig.tree())
    assert any("analytics-prod" in p for p in rig.tree())
    assert "pruned: adhoc-dev" in git("--git-dir", str(rig.remote), "log", "-1", "--format=%B")


# --- stopping -----------------------------------------------------------------------------------


def test_stop_while_collecting_abandons_the_batch(rig: Rig) -> None:
    """A stop during the debounce window commits nothing; the next leader replays the events."""
    w = rig.watcher()
    started(rig, w)
    before = rig.state().get("resumeToken")
    rig.change("analytics-prod", "owner", "pending")
    drive(w, until=lambda: w.batch is not None)
    w.request_stop("SIGTERM")
    assert w.run() == 0
    assert rig.commits() == 1 and rig.state().get("resumeToken") == before
    assert rig.state()["expiresAt"] <= rig.wall().replace(tzinfo=None)  # lease handed over

    w2 = rig.watcher()
    drive(w2, until=synced(w2, 1))
    assert rig.commits() == 2
    assert in_remote(rig, "pending")


def test_stop_during_a_sync_finishes_that_batch(rig: Rig) -> None:
    """A stop arriving while a batch syncs lets it finish: one whole commit, token saved, exit 0."""
    w = rig.watcher()
    started(rig, w)
    rig.change("analytics-prod", "owner", "a")
    rig.change("adhoc-dev", "owner", "b")
    drive(w, until=lambda: w.batch is not None and w.metrics.counts["events"] == 2)
    rig.source.on_targeted = lambda: w.request_stop("SIGTERM")
    assert w.run() == 0
    assert rig.commits() == 2
    message = git("--git-dir", str(rig.remote), "log", "-1", "--format=%B")
    assert "analytics-prod" in message and "adhoc-dev" in message
    assert rig.state()["resumeToken"] == rig.wire.last_token


def test_second_stop_abandons_the_sync_before_its_push(rig: Rig) -> None:
    """A second SIGTERM during a sync abandons it before the push: no partial commit, exit 0."""
    w = rig.watcher()
    started(rig, w)
    before = rig.state().get("resumeToken")
    rig.change("analytics-prod", "owner", "a")
    drive(w, until=lambda: w.batch is not None)

    def twice() -> None:
        w.request_stop("SIGTERM")
        w.request_stop("SIGTERM")

    rig.source.on_targeted = twice
    assert w.run() == 0
    assert rig.commits() == 1 and rig.state().get("resumeToken") == before
    assert w.metrics.counts["syncs_batch_abandoned"] == 1


_CHILD = r"""
import json, logging, sys
from pymongo import MongoClient
from trinogen import watch
from trinogen.gitops import WorkingCopy
from trinogen.report import JsonLogFormatter
from trinogen.settings import load_settings
from trinogen.source import connect

root, uri, overrides = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
settings = load_settings(root + "/config/demo.yaml", environ={}, overrides=overrides)
source = connect(settings.mongodb)  # mongomock://, seeded with the examples
client = MongoClient(uri, serverSelectionTimeoutMS=3000, tz_aware=True)
repo = WorkingCopy(settings.git, settings.git.remote, __import__("pathlib").Path(settings.git.workdir))
code = watch.run(settings, watch.compose(settings, source, client.trino.trino_clusters, repo))
client.close()
sys.exit(code)
"""


@pytest.mark.slow
def test_sigterm_mid_batch_exits_0_without_a_commit(tmp_path: Path, wire: ChangeStreamServer,
                                                    bare_remote: Path) -> None:
    """`watch.run` in a real process: SIGTERM during the debounce window exits 0, commits nothing."""
    alive = tmp_path / "alive"
    overrides = {"git.remote": str(bare_remote), "git.workdir": str(tmp_path / "wd"),
                 "git.init_local_remote": "false", "watch.debounce_seconds": "30",
                 "watch.max_wait_seconds": "60", "watch.max_await_ms": "100",
                 "watch.liveness_file": str(alive), "watch.health_port": "0"}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(ROOT), wire.uri,
                             json.dumps(overrides)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wire.wait_for(lambda: commit_count(bare_remote) == 1 and wire.getmores > 0
                      or proc.poll() is not None, timeout=30, what="the initial sync")
        assert proc.poll() is None, proc.communicate()[1]
        oid = example_docs()[0]["_id"]
        wire.emit("update", oid, {"_id": oid})
        wire.wait_for(lambda: wire.delivered >= 1, what="the event to reach the watcher")
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert commit_count(bare_remote) == 1
    assert "SIGTERM: stopping" in stderr and alive.exists()


# --- leadership ---------------------------------------------------------------------------------


def test_only_the_leader_syncs(rig: Rig) -> None:
    """Two watchers on one state collection: exactly one opens a stream and syncs."""
    w1, w2 = rig.watcher(), rig.watcher()
    drive(w1, w2, until=lambda: w1.work is None and w1.stream is not None
          and w1.metrics.counts["syncs"] >= 1)
    rig.change("analytics-prod", "owner", "x")
    drive(w1, w2, until=synced(w1, 1))
    assert (w1.role, w2.role) == ("leader", "follower")
    assert w2.metrics.counts["syncs"] == 0 and w2.stream is None
    assert len(rig.wire.aggregates) == 1
    assert rig.commits() == 2


def test_follower_takes_over_after_the_lease_expires(rig: Rig) -> None:
    """When the leader stops heartbeating, the follower leads after expiry, from the saved token."""
    w1, w2 = rig.watcher(), rig.watcher()
    drive(w1, until=lambda: w1.work is None and w1.stream is not None
          and w1.metrics.counts["syncs"] >= 1)
    rig.change("analytics-prod", "owner", "x")
    drive(w1, until=synced(w1, 1))
    saved = rig.state()["resumeToken"]
    # w1 freezes (no more steps, no heartbeats)
    rig.wall.advance(2.0)
    for _ in range(3):
        w2.step()
        time.sleep(0.06)
    assert w2.role == "follower"  # not expired yet
    rig.wall.advance(1.5)
    drive(w2, until=lambda: w2.role == "leader" and w2.stream is not None)
    assert rig.wire.aggregates[-1]["resumeAfter"] == saved
    rig.change("adhoc-dev", "owner", "y")
    drive(w2, until=synced(w2, 1))
    assert rig.commits() == 3 and rig.state()["owner"] == w2.lease.owner


def test_paused_ex_leader_cannot_push_or_save_its_token(rig: Rig) -> None:
    """A leader paused mid-sync past its lease finds a new owner at before_push: no push."""
    w1, w2 = rig.watcher(), rig.watcher()
    drive(w1, until=lambda: w1.work is None and w1.stream is not None
          and w1.metrics.counts["syncs"] >= 1)
    saved = rig.state()["resumeToken"]
    rig.change("analytics-prod", "owner", "during_pause")
    drive(w1, until=lambda: w1.batch is not None)

    def pause() -> None:  # w1 stalls inside its sync; its lease expires; w2 takes it
        rig.wall.advance(5.0)
        drive(w2, until=lambda: w2.role == "leader")

    rig.source.on_targeted = pause
    drive(w1, until=lambda: w1.role == "follower")
    assert w1.metrics.counts["syncs_batch_abandoned"] == 1
    assert rig.commits() == 1  # w1's commit never left its working copy
    with pytest.raises(watch.LeaseLost):
        w1.lease.save(watch.StreamPosition({"_data": "ff"}))
    assert rig.state()["resumeToken"] == saved and rig.state()["owner"] == w2.lease.owner
    drive(w2, until=synced(w2, 1))  # the new leader replays the batch: nothing lost
    assert rig.commits() == 2 and w2.metrics.counts["events"] == 1


# --- operability --------------------------------------------------------------------------------


def test_health_endpoint_and_liveness_file(tmp_path: Path, wire: ChangeStreamServer) -> None:
    """/healthz is 200 while the loop runs and came round recently, 503 otherwise; the file is touched."""
    alive = tmp_path / "alive"
    rig = Rig(tmp_path, wire, health_port=0, liveness_file=str(alive))
    w = rig.watcher(sleep=None)
    try:
        with watch.health_server(w).serving() as server:
            (port,) = server.ports
            assert get(port, "/healthz")[0] == 503  # not running yet
            thread = threading.Thread(target=w.run)
            thread.start()
            wire.wait_for(lambda: alive.exists() and w.stream is not None, what="the loop")
            code, body = get(port, "/healthz")
            assert code == 200 and json.loads(body)["role"] == "leader"
            first = alive.stat().st_mtime_ns
            wire.wait_for(lambda: alive.stat().st_mtime_ns > first, what="a fresh touch")
            w.stale_after = -1.0  # as if the loop had not come round for too long
            assert get(port, "/healthz")[0] == 503
            w.stale_after = 60.0
            w.request_stop("test")
            thread.join(10)
            assert not thread.is_alive()
            assert get(port, "/healthz")[0] == 503
            assert get(port, "/nope")[0] == 404
    finally:
        rig.close()


def test_metrics_endpoint(tmp_path: Path, wire: ChangeStreamServer) -> None:
    """/metrics exports events, batches, syncs and the event-to-push histogram (prometheus_client)."""
    pytest.importorskip("prometheus_client")
    rig = Rig(tmp_path, wire, metrics_port=0)
    w = rig.watcher()
    try:
        with watch.health_server(w).serving() as server:
            started(rig, w)
            rig.change("analytics-prod", "owner", "m")
            drive(w, until=synced(w, 1))
            code, text = get(server.ports[0], "/metrics")
        assert code == 200
        assert 'trinogen_watch_events_total{operation="update"} 1.0' in text
        assert "trinogen_watch_batches_total 1.0" in text
        assert 'trinogen_watch_syncs_total{kind="batch",result="pushed"} 1.0' in text
        assert "trinogen_watch_event_to_push_seconds_count 1.0" in text
        assert "trinogen_watch_leader 1.0" in text
    finally:
        rig.close()


def test_without_prometheus_client_metrics_degrade(tmp_path: Path, wire: ChangeStreamServer,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Without prometheus_client the watcher still works; /metrics is 404 and a warning says why."""
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    rig = Rig(tmp_path, wire, metrics_port=0)
    w = rig.watcher()
    try:
        with caplog.at_level(logging.WARNING), watch.health_server(w).serving() as server:
            assert not w.metrics.available
            started(rig, w)
            assert get(server.ports[0], "/metrics")[0] == 404
            assert get(server.ports[0], "/healthz")[0] == 503  # served (loop not in run())
        assert "install trinogen[metrics]" in caplog.text
        assert rig.commits() == 1
    finally:
        rig.close()


def test_event_to_push_latency_is_logged(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """Each batch logs its event-to-push latency (measured here; only a generous sanity bound)."""
    w = rig.watcher()
    started(rig, w)
    rig.wall = watch._utcnow  # type: ignore[assignment]
    w.wall = watch._utcnow
    with caplog.at_level(logging.INFO, logger="trinogen.watch"):
        rig.change("analytics-prod", "owner", "fast")
        drive(w, until=synced(w, 1))
    records = [r for r in caplog.records if getattr(r, "watch", None) == "sync"
               and getattr(r, "kind", None) == "batch"]
    assert len(records) == 1
    lag = records[0].eventToPushSeconds  # type: ignore[attr-defined]
    local = records[0].receiveToPushSeconds  # type: ignore[attr-defined]
    print(f"\nevent-to-push {lag:.3f}s, receive-to-push {local:.3f}s "
          f"(debounce {rig.settings.watch.debounce_seconds}s)")
    assert "event-to-push" in records[0].getMessage()
    line = json.loads(JsonLogFormatter().format(records[0]))  # --log-format json
    assert line["eventToPushSeconds"] == lag and line["documents"] == 1 and line["commit"]
    assert 0 < lag < rig.settings.watch.debounce_seconds + 10  # sanity only: speed is for benches
    assert w.metrics.lags == [lag] or abs(w.metrics.lags[0] - lag) < 0.01


def test_each_sync_logs_its_stats_at_debug(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """A batch logs what it cost at DEBUG (issue 22): one changed document among the fleet is
    the one cluster rendered; the others' cache entries are kept for the next full sync."""
    w = rig.watcher()
    started(rig, w)
    with caplog.at_level(logging.DEBUG, logger="trinogen.watch"):
        rig.change("analytics-prod", "owner", "fast")
        drive(w, until=synced(w, 1))
    stats = [r.stats for r in caplog.records  # type: ignore[attr-defined]
             if getattr(r, "watch", None) == "stats"]
    assert len(stats) == 1 and stats[0]["clustersRendered"] == 1
    assert "clustersRendered=1" in caplog.text


def test_watch_command_refuses_the_embedded_database(tmp_path: Path, bare_remote: Path) -> None:
    """`trinogen watch` needs change streams: mongomock:// is refused with a usage error (exit 2)."""
    from typer.testing import CliRunner

    from trinogen.cli import app

    env = {"TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
           "TRINOGEN_GIT_REMOTE": str(bare_remote), "TRINOGEN_GIT_WORKDIR": str(tmp_path / "wd")}
    result = CliRunner().invoke(app, ["watch"], env=env, catch_exceptions=False)
    assert result.exit_code == 2
    assert "change streams" in result.output


def test_watch_command_exits_4_when_mongodb_stays_unreachable(tmp_path: Path,
                                                              bare_remote: Path) -> None:
    """`trinogen watch` against a MongoDB nobody answers exits 4 after watch.max_reconnects."""
    from typer.testing import CliRunner

    from trinogen.cli import app

    env = {"TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
           "TRINOGEN_MONGODB_URI": "mongodb://127.0.0.1:1/?directConnection=true",
           "TRINOGEN_MONGODB_TIMEOUT_MS": "200", "TRINOGEN_WATCH_MAX_RECONNECTS": "2",
           "TRINOGEN_WATCH_LEASE_SECONDS": "0.3",
           "TRINOGEN_GIT_REMOTE": str(bare_remote), "TRINOGEN_GIT_WORKDIR": str(tmp_path / "wd")}
    started_at = time.monotonic()
    result = CliRunner().invoke(app, ["watch"], env=env, catch_exceptions=False)
    assert result.exit_code == 4, result.output
    assert "the watch lease" in result.output and "failed 3 times in a row" in result.output
    assert time.monotonic() - started_at < 20


def test_lease_is_exclusive_and_expires(rig: Rig) -> None:
    """Only one owner at a time; another can take the lease only after it expires."""
    a = watch.Lease(rig.mongo.source.state, "k", 3.0, owner="a", wall=rig.wall)
    b = watch.Lease(rig.mongo.source.state, "k", 3.0, owner="b", wall=rig.wall)
    assert a.acquire() and not b.acquire()
    a.save(watch.StreamPosition({"_data": "01"}))
    rig.wall.advance(2.9)
    assert not b.acquire() and a.renew()
    rig.wall.advance(3.1)
    assert b.acquire() and b.position() == watch.StreamPosition({"_data": "01"})
    with pytest.raises(watch.LeaseLost):
        a.confirm()
    assert not a.held and b.held


def test_settings_from_environment() -> None:
    """The watch knobs come from TRINOGEN_WATCH_<KEY> like every other setting."""
    from trinogen.settings import load_settings

    s = load_settings(None, {"TRINOGEN_WATCH_DEBOUNCE_SECONDS": "0.5",
                             "TRINOGEN_WATCH_MAX_AWAIT_MS": "300"})
    assert (s.watch.debounce_seconds, s.watch.max_await_ms) == (0.5, 300)
    with pytest.raises(ConfigError, match="watch.max_await_ms must be between 1 and 1000"):
        load_settings(None, {"TRINOGEN_WATCH_MAX_AWAIT_MS": "5000"})


# --- a stuck watcher is visible (health, metrics, exit code) ------------------------------------


class Unreachable:
    """A state collection on a MongoDB that cannot be reached."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise ServerSelectionTimeoutError("127.0.0.1:1: [Errno 111] Connection refused")

        return fail


@pytest.mark.parametrize("fault", ["lease", "stream"])
def test_unreachable_mongodb_is_unhealthy_then_exits_4(tmp_path: Path, wire: ChangeStreamServer,
                                                       fault: str) -> None:
    """MongoDB failing for the lease or the stream: /healthz 503 while retrying, then exit 4."""
    rig = Rig(tmp_path, wire, max_reconnects=3)
    try:
        if fault == "lease":
            rig.source.state = Unreachable()
        else:
            rig.wire.fail("aggregate", "unauthorized", times=20)
        w = rig.watcher(sleep=None, poll_seconds=0.3)
        with Running(w) as running:
            running.wait(lambda: w.metrics.counts[f"failures_{fault}"] >= 1, "a failure")
            code, body = w.health()
            assert code == 503 and body["status"] == "unavailable"
            assert body["failing"] == {fault: w.metrics.counts[f"failures_{fault}"]}
            exposition = w.metrics.exposition()
            if exposition is not None:  # prometheus_client is installed
                assert f'trinogen_watch_failures_in_a_row{{stage="{fault}"}}' in \
                    exposition[0].decode()
            error = running.ended(timeout=10)
        assert isinstance(error, SourceUnavailable), error
        assert "failed 4 times in a row" in str(error) and int(error.exit_code) == 4
    finally:
        rig.close()


def test_sync_failing_forever_exits_4(rig: Rig) -> None:
    """A batch whose sync keeps failing (the git remote is gone) is retried, then exits 4."""
    sleeps: list[float] = []
    w = rig.watcher(sleep=sleeps.append)
    started(rig, w)
    shutil.rmtree(rig.remote)
    rig.change("analytics-prod", "owner", "never_pushed")
    with pytest.raises(UnavailableError, match="sync .* failed 4 times in a row") as e:
        drive(w, until=lambda: False, timeout=60)
    assert int(e.value.exit_code) == 4
    assert sleeps == [0.5, 1.0, 1.0]
    assert w.metrics.counts["syncs_batch_failed"] == 4


def test_refused_batch_is_reported_and_later_changes_still_sync(tmp_path: Path,
                                                                wire: ChangeStreamServer) -> None:
    """A batch the prune guard refuses is not retried: health says degraded, later changes land."""
    rig = Rig(tmp_path, wire, sync={"max_prune_count": 1, "max_prune_share": 0.0})
    # The loop's clock moves only when the test moves it: the two changes below are one batch
    # because both events were read before the batch was due, however slow the machine is.
    clock = ManualClock()

    def batched(*cluster_ids: str) -> Callable[[], bool]:
        ids = {doc_key(rig.doc(c)["_id"]) for c in cluster_ids}
        return lambda: w.batch is not None and w.batch.doc_ids == ids

    try:
        w = rig.watcher(sleep=None, clock=clock)
        with Running(w) as running:
            running.wait(lambda: w.metrics.counts["syncs_full_pushed"] == 1 and w.work is None,
                         "the initial full sync")
            rig.change("analytics-prod", "enabled", False)
            rig.change("etl-batch", "enabled", False)  # 2 prunes: more than both limits
            running.wait(batched("analytics-prod", "etl-batch"), "both changes in one batch")
            clock.advance(2 * rig.settings.watch.debounce_seconds)  # quiet for the debounce
            running.wait(lambda: w.metrics.counts["refused"] == 1, "the refusal")
            code, body = w.health()
            assert (code, body["status"]) == (200, "degraded")
            assert body["refused"]["kind"] == "batch" and "prune 2 of 3" in body["refused"]["message"]
            rig.change("adhoc-dev", "owner", "after_the_refusal")
            running.wait(batched("adhoc-dev"), "the next batch")
            clock.advance(2 * rig.settings.watch.debounce_seconds)  # quiet for the debounce
            running.wait(lambda: rig.commits() == 2, "the next batch's commit")
            assert in_remote(rig, "after_the_refusal")
            assert any("analytics-prod" in p for p in rig.tree())  # the refused prune did not happen
            assert w.metrics.counts["syncs_batch_refused"] == 1  # refused once, never retried
            assert w.health()[1]["status"] == "degraded"
            exposition = w.metrics.exposition()
            if exposition is not None:  # prometheus_client is installed
                text = exposition[0].decode()
                assert 'trinogen_watch_refused_total{kind="batch"} 1.0' in text
                assert "trinogen_watch_degraded 1.0" in text

            rig.change("analytics-prod", "enabled", True, event=False)  # a person fixes it
            w.at.next_reconcile = 0.0  # as if watch.reconcile_seconds had passed
            running.wait(lambda: w.metrics.counts["syncs_full_pushed"] == 2, "the reconcile")
            # The count rises a moment before the batch's outcome clears "degraded": wait for it.
            running.wait(lambda: w.health()[1]["status"] == "ok", "health back to ok")
            assert w.health()[:1] == (200,) and w.health()[1]["status"] == "ok"
            assert not any("etl-batch" in p for p in rig.tree())  # one prune: allowed now
    finally:
        rig.close()


def test_rejected_saved_token_is_discarded_for_a_full_resync(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """A saved token refused with an unexpected code is dropped: new stream, full sync, no loop."""
    w1 = rig.watcher()
    started(rig, w1)
    rig.change("adhoc-dev", "owner", "before_restart")
    drive(w1, until=synced(w1, 1))
    w1.close()
    old = rig.state()["resumeToken"]
    rig.wire.reject_resume(9, "FailedToParse")  # not 260, 280 or 286
    rig.change("analytics-prod", "owner", "changed_while_down")
    w2 = rig.watcher()
    with caplog.at_level(logging.WARNING, logger="trinogen.watch"):
        drive(w2, until=lambda: w2.metrics.counts["syncs_full_pushed"] == 1 and w2.work is None)
    assert rig.wire.aggregates[-2]["resumeAfter"] == old  # tried once...
    assert "resumeAfter" not in rig.wire.aggregates[-1]  # ...then from now
    assert in_remote(rig, "changed_while_down")
    assert rig.state()["resumeToken"] != old
    assert "rejected the saved resume token" in caplog.text and "FailedToParse" in caplog.text


def test_idle_leader_keeps_the_saved_token_recent(rig: Rig) -> None:
    """While idle, the stream's newer position is saved (an old token may leave the oplog)."""
    w = rig.watcher()
    started(rig, w)
    saved = rig.state()["resumeToken"]
    rig.wire.emit("createIndexes")  # moves the stream on without a document change
    drive(w, until=lambda: rig.state()["resumeToken"] == rig.wire.last_token, timeout=5)
    assert rig.state()["resumeToken"] != saved and w.metrics.counts["syncs"] == 1


@pytest.mark.parametrize("fault", ["no_replica_set", "not_implemented"])
def test_a_server_without_change_streams_fails_at_once(tmp_path: Path, wire: ChangeStreamServer,
                                                       fault: str) -> None:
    """A server that has no change streams (standalone mongod, FerretDB) exits 4 on the first try."""
    rig = Rig(tmp_path, wire)
    try:
        wire.fail("aggregate", fault, times=50)
        w = rig.watcher()
        with pytest.raises(watch.ChangeStreamsUnsupported, match="need a replica set") as caught:
            drive(w, until=lambda: False, timeout=10)
        assert int(caught.value.exit_code) == 4
        assert len(wire.aggregates) == 1  # no reconnect budget spent on an error that never clears
    finally:
        rig.close()
