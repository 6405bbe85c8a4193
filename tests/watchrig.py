"""The watch test rig: a real pymongo change stream (mockupdb over TCP), mongomock documents,
lease and token, real git; helpers to drive watchers step by step."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self

from tests.conftest import FakeMongo, commit_count, example_docs, git, remote_tree, settings_for
from tests.mongowire import ChangeStreamServer
from trinogen import watch
from trinogen.gitops import WorkingCopy
from trinogen.settings import Settings

WATCH = {"debounce_seconds": 0.2, "max_wait_seconds": 5.0, "max_await_ms": 50,
         "lease_seconds": 3.0, "reconcile_seconds": 3600.0, "max_reconnects": 3}


class FakeWall:
    """A wall clock the test moves (lease expiry); starts at the real time."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class ManualClock:
    """A monotonic clock that moves only when the test says: a batch is due when the test
    advances past its debounce, never because the machine was slow between two events."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class SpySource:
    """The mongomock Source, with hooks on the reads the pipeline makes."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.full_reads: list[int] = []  # wire.aggregates count at each full read
        self.on_targeted: Callable[[], None] | None = None
        self.wire: ChangeStreamServer | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def read_all(self) -> Any:
        self.full_reads.append(len(self.wire.aggregates) if self.wire else -1)
        return self._inner.read_all()

    def read_targeted(self, doc_ids: Any, cluster_ids: Any) -> Any:
        hook, self.on_targeted = self.on_targeted, None
        if hook is not None:
            hook()
        return self._inner.read_targeted(doc_ids, cluster_ids)


class Rig:
    """One remote, one mongomock database, one change-stream server; watchers made on demand."""

    def __init__(self, tmp_path: Path, wire: ChangeStreamServer, *,
                 sync: dict[str, Any] | None = None, **watch_overrides: Any) -> None:
        self.tmp = tmp_path
        self.wire = wire
        self.remote = tmp_path / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.settings: Settings = settings_for(self.remote, tmp_path,
                                               watch={**WATCH, **watch_overrides},
                                               **({"sync": sync} if sync else {}))
        self.mongo = FakeMongo(self.settings, example_docs())
        self.source = SpySource(self.mongo.source)
        self.source.wire = wire
        self.wall = FakeWall()
        self.clients: list[Any] = []
        self.count = 0

    def watcher(self, **kwargs: Any) -> watch.Watcher:
        self.count += 1
        client = self.wire.client()
        self.clients.append(client)
        repo = WorkingCopy(self.settings.git, str(self.remote), self.tmp / f"workdir-{self.count}")
        kwargs.setdefault("wall", self.wall)
        kwargs.setdefault("poll_seconds", 0.05)
        kwargs.setdefault("sleep", lambda s: None)
        return watch.compose(self.settings, self.source, self.wire.watched(client), repo, **kwargs)

    def close(self) -> None:
        for c in self.clients:
            c.close()

    # documents and events
    def doc(self, cluster_id: str) -> dict[str, Any]:
        return self.mongo.coll.find_one({"clusterId": cluster_id})  # type: ignore[no-any-return]

    def change(self, cluster_id: str, path: str, value: Any, *, event: bool = True) -> None:
        self.mongo.set(cluster_id, path, value)
        if event:
            doc = self.doc(cluster_id)
            self.wire.emit("update", doc["_id"], doc)

    def commits(self) -> int:
        return commit_count(self.remote)

    def tree(self) -> dict[str, bytes]:
        return remote_tree(self.remote)

    def state(self) -> dict[str, Any]:
        return self.mongo.source.state.find_one({"_id": "watch:trino.trino_clusters"}) or {}


def drive(*watchers: watch.Watcher, until: Callable[[], bool], timeout: float = 15.0) -> None:
    """Step the watchers round-robin until `until()` holds."""
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise AssertionError("timed out driving the watcher(s)")
        for w in watchers:
            w.step()


def started(rig: Rig, w: watch.Watcher) -> None:
    """Lead, open the stream, run the initial full sync (no token saved yet)."""
    drive(w, until=lambda: w.stream is not None and w.work is None
          and w.metrics.counts["syncs_full_pushed"] + w.metrics.counts["syncs_full_unchanged"] >= 1)


def synced(w: watch.Watcher, batches: int) -> Callable[[], bool]:
    return lambda: w.metrics.counts["batches"] >= batches and w.work is None and w.batch is None


def in_remote(rig: Rig, text: str) -> bool:
    return text.encode() in b"".join(rig.tree().values())


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Running:
    """`watcher.run()` in a thread; `error` is what it raised, `code` what it returned."""

    def __init__(self, w: watch.Watcher) -> None:
        self.w = w
        self.error: BaseException | None = None
        self.code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.code = self.w.run()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            self.error = e

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.w.request_stop("test over")
        self.thread.join(15)
        assert not self.thread.is_alive(), "the watcher did not stop"

    def wait(self, predicate: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.error is not None:
                raise AssertionError(f"the watcher failed waiting for {what}") from self.error
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            time.sleep(0.01)

    def ended(self, timeout: float = 15.0) -> BaseException | None:
        """Wait for run() to end by itself; what it raised."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the watcher is still running"
        return self.error
