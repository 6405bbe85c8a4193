"""trinogen.pool: classify, render and self-check of a large sync on forked workers (issue 22)
give what the serial path gives, byte for byte, and fall back to it when a worker is lost."""

from __future__ import annotations

import base64
import functools
import logging
import os
import pickle
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bench import gen_docs
from tests import kitchen_sink
from tests.fakes import FakeCache, FakeReader, FakeRepo, FakeSource
from trinogen import pipeline
from trinogen.desired import Context, Desired, build_desired
from trinogen.errors import ConfigError
from trinogen.model.library import NO_LIBRARY
from trinogen.pool import MAX_AUTO_WORKERS, ForkPool, quota_cpus, usable_cpus, worker_count
from trinogen.render import Renderer
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key

SPOOLING_KEY = base64.b64encode(bytes(range(32))).decode()
FLEET = 90  # documents: several chunks per worker at the chunk size the pool picks


def fleet_settings(tmp_path: Path, workers: int, *, check: bool = True) -> Settings:
    """The kitchen sink's settings (every option kind), `workers` workers from one document on."""
    path, _ = gen_docs.write_feature_settings(str(tmp_path / "features"))
    return load_settings(path, environ={}, overrides={
        "git.remote": "https://git.example.com/platform/trino-gitops.git",
        "secrets.check": check, "sync.workers": workers, "sync.parallel_min_clusters": 1})


def fleet() -> tuple[FakeSource, FakeReader]:
    """A generated fleet with the options spread over it, some documents broken on purpose
    (a clusterId twice, an invalid field), and a Vault holding the plain placeholders only (so
    every fifth cluster lacks its secrets and fails in the secrets stage)."""
    docs = gen_docs.generate(FLEET, features=True)
    docs[7]["clusterId"] = docs[3]["clusterId"]  # contested: both fail
    docs[7]["enabled"] = docs[3]["enabled"] = True
    docs[11]["enabled"], docs[11]["trinoVersion"] = True, "not-a-version"
    docs[12]["enabled"], docs[12]["surprise"] = True, 1
    src = FakeSource({doc_key(d["_id"]): d for d in docs})
    src.catalogs = {doc_key(c["_id"]): c for c in gen_docs.kitchen_sink.catalogs()}
    vault = gen_docs.secrets(docs)
    for d in docs[::5]:  # every fifth cluster misses its options' secrets
        vault.pop(f"secret/trino/{d['clusterId']}", None)
    for d in docs[1:][::5] + docs[2:][::5] + docs[3:][::5] + docs[4:][::5]:
        for path, keys in kitchen_sink.VAULT.items():
            where = f"secret/{path}".replace(f"/{kitchen_sink.CID}", f"/{d['clusterId']}", 1)
            vault.setdefault(where, {}).update(
                {k: SPOOLING_KEY if tag == kitchen_sink.SPOOLING_KEY_TAG else f"value-{tag}"
                 for k, tag in keys.items()})
    return src, FakeReader(vault)


def run(settings: Settings, src: FakeSource, reader: FakeReader, repo: FakeRepo) -> dict[str, Any]:
    """One sync, as everything it leaves behind that a reader could compare."""
    report = pipeline.sync(settings, src, repo, reader_factory=lambda: reader)
    out = report.to_json()
    for timing in ("durationSeconds", "seconds", "timings"):
        out.get("stats", {}).pop(timing, None)
        out.pop(timing, None)
    assert repo.cache is not None
    return {"report": out, "files": dict(repo.files),
            "commits": [(m, [(c.path, c.action) for c in ch]) for m, ch in repo.commits],
            "cache": (dict(repo.cache.entries), dict(repo.cache.failures), repo.cache.extra),
            "status": {k: {f: v for f, v in r.items() if not f.endswith("At")}  # times
                       for k, r in src.status.items()}}


def history(tmp_path: Path, workers: int, check: bool) -> list[dict[str, Any]]:
    """A full sync, a no-op, then a quarter of the fleet edited: every output of each."""
    settings = fleet_settings(tmp_path, workers, check=check)
    src, reader = fleet()
    repo = FakeRepo(cache=FakeCache())
    runs = [run(settings, src, reader, repo), run(settings, src, reader, repo)]
    for i, key in enumerate(sorted(src.docs)):
        if i % 4 == 0:
            src.docs[key] = {**src.docs[key], "owner": "another_team"}
    runs.append(run(settings, src, reader, repo))
    return runs


@pytest.mark.parametrize("check", [True, False])
def test_pooled_sync_equals_the_serial_one(tmp_path: Path, check: bool,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """With two workers, every run's files, report (warnings and failures in order), commits,
    status records and render-cache contents are those of the serial path, whether Vault is
    read (clusters using a secret render in workers forked after the read) or not."""
    serial = history(tmp_path / "serial", 1, check)
    with caplog.at_level(logging.DEBUG, logger="trinogen.pool"):
        pooled = history(tmp_path / "pooled", 2, check)
    pool_lines = [r.getMessage() for r in caplog.records if r.name == "trinogen.pool"]
    assert pool_lines and all(line.startswith("fanned out") for line in pool_lines)  # no fallback
    # Vault read: clusters using a secret go to a second fan-out after it; else one per run.
    assert len(pool_lines) > len(serial) if check else len(pool_lines) <= len(serial)
    first = serial[0]["report"]
    failed = first["clusters"]["failed"]
    assert first["stats"]["clustersRendered"] > 40 and first["warnings"]  # the fleet is mixed
    assert ({"secrets", "validate"} if check else {"validate"}) <= {f["stage"] for f in failed}
    for s, p in zip(serial, pooled, strict=True):
        assert p["report"] == s["report"]
        assert p["files"] == s["files"]
        assert p["commits"] == s["commits"]
        assert p["cache"] == s["cache"]
        assert p["status"] == s["status"]


def _ids(chunk: Sequence[int]) -> list[int]:
    return [i * 2 for i in chunk]


PARENT = os.getpid()  # the test process: a forked worker has another pid


def _crash(chunk: Sequence[int]) -> list[int]:
    os._exit(3)  # a worker dies without a word, as under the OOM killer


def _raises(chunk: Sequence[int]) -> list[int]:
    raise RuntimeError("a bug seen only in a worker")


def _hangs(chunk: Sequence[int]) -> list[int]:
    time.sleep(3600)
    return []


def _unpicklable(chunk: Sequence[int]) -> list[Any]:
    return [lambda i=i: i for i in chunk]  # a result that cannot travel back


def _short(chunk: Sequence[int]) -> list[int]:
    return [chunk[0] * 2]  # one result for a chunk of ten


def _worker_meets(fate: Any, marker: Path, chunk: Sequence[int]) -> list[int]:
    """The worker meets `fate` on the first chunk (the lowest: a worker starts from the
    front); the calling process, which starts from the back, waits until it has."""
    if os.getpid() != PARENT and 0 in chunk:
        marker.touch()
        return fate(chunk)  # type: ignore[no-any-return]
    deadline = time.monotonic() + 30
    while os.getpid() == PARENT and not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return [i * 2 for i in chunk]


def test_results_come_back_in_the_order_of_the_items() -> None:
    """Chunks computed on two workers come back as one list in the items' order."""
    assert ForkPool(2, 0, chunk=7)(_ids, list(range(100))) == [i * 2 for i in range(100)]
    assert ForkPool(3, 0, chunk=3)(_ids, list(range(100))) == [i * 2 for i in range(100)]


@pytest.mark.parametrize("work", [_crash, _raises, _hangs, _unpicklable, _short])
def test_a_lost_worker_loses_no_item(work: Any, tmp_path: Path,
                                     caplog: pytest.LogCaptureFixture) -> None:
    """A worker that dies, raises, hangs past the timeout, sends what does not pickle or a
    partial chunk: the chunks it did not deliver are computed in the calling process (every
    result, in order), with one warning, and no worker is left running."""
    before = set(_children())  # servers other tests of the session started stay out of it
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="trinogen.pool"):
        got = ForkPool(2, 0, chunk=10, timeout=1.0)(
            functools.partial(_worker_meets, work, tmp_path / "met"), list(range(1000)))
    assert got == [i * 2 for i in range(1000)]
    assert time.monotonic() - started < 30  # the hung worker was killed, not waited for
    lines = [r.getMessage() for r in caplog.records if r.name == "trinogen.pool"]
    assert len(lines) == 1 and lines[0].startswith("1 of 1 workers lost")
    assert not set(_children()) - before


def _children() -> list[str]:
    """The live (not zombie) child processes of this one, from /proc."""
    out = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if entry.name.isdigit() and int(fields[1]) == os.getpid() and fields[0] != "Z":
            out.append(entry.name)
    return out


def test_a_failing_caller_leaves_no_worker(caplog: pytest.LogCaptureFixture) -> None:
    """When the work fails in the calling process too (a bug, not a worker's loss), the pool
    answers None (the caller then works serially and meets the bug itself), with every
    worker stopped."""
    def broken(chunk: Sequence[int]) -> list[int]:
        raise RuntimeError("a bug everywhere")

    before = set(_children())
    with caplog.at_level(logging.WARNING, logger="trinogen.pool"):
        assert ForkPool(2, 0, chunk=10)(broken, list(range(100))) is None
    assert "rendering serially" in caplog.records[-1].getMessage()
    assert not set(_children()) - before


def test_a_crashed_worker_loses_no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When every worker dies, the sync's own process renders their share and writes what the
    serial path writes."""
    from trinogen import ahead

    real = ahead.model.classify

    def dying(*args: Any) -> Any:
        if os.getpid() != parent:
            os._exit(3)
        return real(*args)

    parent = os.getpid()
    src, reader = fleet()
    serial = run(fleet_settings(tmp_path / "s", 1), src, reader, FakeRepo(cache=FakeCache()))
    monkeypatch.setattr(ahead.model, "classify", dying)
    src, reader = fleet()
    fallen = run(fleet_settings(tmp_path / "p", 2), src, reader, FakeRepo(cache=FakeCache()))
    assert fallen == serial


class Recording:
    """A FanOut that records how much it was offered and declines (the caller works itself)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def wants(self, count: int) -> bool:
        self.sizes.append(count)
        return False

    def __call__(self, work: Any, items: Sequence[Any], landed: Any = None) -> None:
        raise AssertionError("a declined fan-out is never called")


@pytest.mark.parametrize(("workers", "items", "min_items"),
                         [(1, 1000, 0), (2, 199, 200), (2, 1, 0), (2, 0, 0)])
def test_small_or_single_core_runs_stay_serial(workers: int, items: int, min_items: int) -> None:
    """Below the threshold, with one worker or fewer than two items, no process is forked."""
    assert ForkPool(workers, min_items)(_ids, list(range(items))) is None  # else: the results


@pytest.mark.parametrize(("setting", "cpus", "expected"),
                         [(0, 1, 1), (0, 2, 2), (0, 64, MAX_AUTO_WORKERS), (3, 1, 3), (1, 8, 1)])
def test_worker_count(setting: int, cpus: int, expected: int) -> None:
    """0 means one worker per usable CPU, capped; any other value is taken as given."""
    assert worker_count(setting, cpus) == expected


def test_a_noop_sync_offers_only_what_the_cache_cannot_serve(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """After a full sync, a sync with nothing changed offers the pool only the documents that
    failed or are disabled (the cache serves every rendered cluster), so none at all on a
    healthy fleet."""
    recording = Recording()
    monkeypatch.setattr(pipeline, "_fan_out", lambda settings: recording)
    settings = fleet_settings(tmp_path, 2)
    src, reader = fleet()
    repo = FakeRepo(cache=FakeCache())
    first = run(settings, src, reader, repo)["report"]["clusters"]
    offered = len(recording.sizes)  # the documents, then the clusters using a secret
    run(settings, src, reader, repo)
    assert recording.sizes[0] == FLEET
    assert recording.sizes[offered:] == [len(first["failed"]) + len(first["disabled"])]
    assert all(s > 0 for s in recording.sizes)  # nothing to do: not even asked


@pytest.mark.parametrize(("text", "cpus"), [
    ("max 100000\n", None), ("100000 100000\n", 1), ("150000 100000\n", 2),
    ("50000 100000\n", 1), ("400000 100000", 4), ("", None), ("x y", None), ("1 0", None)])
def test_a_container_cpu_limit_counts(text: str, cpus: int | None) -> None:
    """cgroup v2 cpu.max: a quota over a period grants that many CPUs, rounded up; max: none."""
    assert quota_cpus(text) == cpus


def test_usable_cpus_never_exceeds_the_limit(tmp_path: Path) -> None:
    """A CPU limit of one caps the usable CPUs at one, whatever the machine has."""
    limit = tmp_path / "cpu.max"
    limit.write_text("100000 100000\n")
    assert usable_cpus(str(limit)) == 1
    assert usable_cpus(str(tmp_path / "absent")) >= 1


def test_the_environment_sets_the_workers() -> None:
    """TRINOGEN_SYNC_WORKERS and TRINOGEN_SYNC_PARALLEL_MIN_CLUSTERS override the defaults."""
    assert (load_settings(None, environ={}).sync.workers,
            load_settings(None, environ={}).sync.parallel_min_clusters) == (0, 200)
    got = load_settings(None, environ={"TRINOGEN_SYNC_WORKERS": "1",
                                       "TRINOGEN_SYNC_PARALLEL_MIN_CLUSTERS": "50"}).sync
    assert (got.workers, got.parallel_min_clusters) == (1, 50)


@pytest.mark.parametrize(("value", "accepted"), [("2.5", True), ("3600", True), ("0", False),
                                                 ("-1", False), ("3601", False)])
def test_the_worker_timeout_is_bounded(value: str, accepted: bool) -> None:
    """sync.worker_timeout_seconds (default 60) is taken above 0 and up to an hour."""
    assert load_settings(None, environ={}).sync.worker_timeout_seconds == 60
    environ = {"TRINOGEN_SYNC_WORKER_TIMEOUT_SECONDS": value}
    if accepted:
        assert load_settings(None, environ=environ).sync.worker_timeout_seconds == float(value)
    else:
        with pytest.raises(ConfigError, match="sync.worker_timeout_seconds"):
            load_settings(None, environ=environ)


def test_negative_workers_are_refused() -> None:
    """A negative worker count is a settings error naming the setting."""
    with pytest.raises(ConfigError, match="sync.workers"):
        load_settings(None, environ={"TRINOGEN_SYNC_WORKERS": "-1"})


def test_watch_never_forks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`watch`'s syncer renders a fleet the pool would take in its own process (a threaded
    process is never forked) and writes what a serial sync writes."""
    from trinogen.watch.syncing import pipeline_syncer

    forks: list[int] = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    settings = fleet_settings(tmp_path / "w", 2)
    src, reader = fleet()
    repo = FakeRepo(cache=FakeCache())
    outcome = pipeline_syncer(settings, src, repo, lambda: reader)((), lambda: None)
    assert forks == [] and outcome.pushed
    src, reader = fleet()
    assert repo.files == run(fleet_settings(tmp_path / "s", 1), src, reader,
                             FakeRepo(cache=FakeCache()))["files"]
    run(settings, *fleet(), FakeRepo(cache=FakeCache()))  # the same settings outside watch fork
    assert forks


class Crossing:
    """A FanOut that does the work in this process and keeps what a forked worker would
    send back (pickled), to look for secret values in it."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def wants(self, count: int) -> bool:
        return True

    def __call__(self, work: Any, items: Sequence[Any], landed: Any = None) -> list[Any]:
        results = work(items)
        self.sent.append(pickle.dumps(results))
        return results  # type: ignore[no-any-return]


@pytest.mark.parametrize("inline", [False, True])
def test_no_secret_value_comes_back_from_a_worker(tmp_path: Path, inline: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What workers send back holds no value read from Vault, whether the files git gets
    reference the secrets or (inline) hold them: those are rendered in the sync's process."""
    crossing = Crossing()
    monkeypatch.setattr(pipeline, "_fan_out", lambda settings: crossing)
    src, reader = fleet()
    out = tmp_path / "out"
    pipeline.render(fleet_settings(tmp_path, 2), src, out, reader_factory=lambda: reader,
                    inline=inline)
    values = {v.encode() for keys in reader.secrets.values() for v in keys.values()}
    assert len(crossing.sent) == (1 if inline else 2)  # after the Vault read too, unless inline
    assert not [v for blob in crossing.sent for v in values if v in blob]
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert any(v in written for v in values) == inline  # the values exist where they belong


def test_collections_resume_after_the_pool() -> None:
    """The pool pauses the cyclic garbage collector only while it works: enabled before, it
    is enabled after (and nothing stays frozen), even when the work fails."""
    import gc

    assert gc.isenabled()
    assert ForkPool(2, 0, chunk=7)(_ids, list(range(100))) is not None
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert ForkPool(2, 0)(lambda chunk: 1 / 0, list(range(100))) is None
    assert gc.isenabled() and gc.get_freeze_count() == 0


class LandsThenFails:
    """Stands in for trinogen.pool when it fails part-way: it computes the first `landing`
    chunks of `chunk` items here, tells each through `landed`, then gives up (None), as the
    pool does when it fails after some chunks arrived; the caller then works serially."""

    def __init__(self, landing: int, chunk: int = 7) -> None:
        self.landing, self.chunk = landing, chunk

    def wants(self, count: int) -> bool:
        return True

    def __call__(self, work: Any, items: Sequence[Any], landed: Any = None) -> None:
        for start in range(0, min(len(items), self.landing * self.chunk), self.chunk):
            if landed is not None:
                landed(start, work(items[start:start + self.chunk]))


def _desired_of(settings: Settings, src: FakeSource, reader: FakeReader,
                fan_out: Any) -> tuple[list[Any], Desired]:
    """build_desired over the source's documents (the list it was given, then emptied)."""
    raws = src.read_all()
    given = list(raws)
    desired = build_desired(Context(
        settings, Renderer(settings), lambda: reader, fan_out=fan_out), raws)
    assert raws == []  # handed over
    return given, desired


def _outputs(desired: Desired) -> dict[str, Any]:
    return {"files": desired.files, "docs": desired.docs, "failed": desired.failed,
            "disabled": desired.disabled, "warnings": desired.warnings,
            "stopped": desired.stopped}


@pytest.mark.parametrize("landing", [1, 3, 100])
def test_a_pool_failing_after_chunks_landed_gives_the_serial_outcome(
        tmp_path: Path, landing: int) -> None:
    """Chunks that landed before the pool failed keep their outcomes though their documents'
    bodies were let go (a disabled document's too: its outcome noted first); the rest is
    classified and rendered from intact documents; a clusterId claimed in the first chunk and
    again in the last fails both, as serially (the claims noted before any was let go)."""
    settings = fleet_settings(tmp_path, 2, check=False)
    src, reader = fleet()
    order = list(src.docs)  # as read: the first chunk's second document, the last chunk's last
    first, last = order[1], order[-1]
    src.docs[last] = {**src.docs[last], "clusterId": src.docs[first]["clusterId"],
                      "enabled": True}
    src.docs[first] = {**src.docs[first], "enabled": True}
    _, serial = _desired_of(settings, src, reader, None)
    given, pooled = _desired_of(settings, src, reader, LandsThenFails(landing))
    assert _outputs(pooled) == _outputs(serial)
    contested = {f.doc_id for f in serial.failed if f.cluster_id == src.docs[first]["clusterId"]}
    assert contested == {first, last}
    whole = [r for r in given if r.body == src.docs[r.doc_id]]
    assert all(r.body == {} for r in given if r not in whole)  # the others are let go
    enabled = [r for r in given if src.docs[r.doc_id].get("enabled") is not False]
    # Let go: the documents of a landed chunk (the first document is classified before the
    # fan-out), but not one that failed on its own (its body still tells if it decodes).
    # (The contested pair fails for the claim, whatever its own outcome: left out.)
    landed, rest = enabled[1:1 + landing * 7], enabled[:1] + enabled[1 + landing * 7:]
    invalid = {f.doc_id for f in serial.failed if f.stage == "validate"}
    assert all((r in whole) == (r.doc_id in invalid) for r in landed if r.doc_id not in contested)
    assert all(r in whole for r in rest)


def test_a_real_pool_lets_every_judged_document_go(tmp_path: Path) -> None:
    """With forked workers, every document fanned out lets its body go once its chunk landed,
    a disabled one from the start, but one invalid on its own; the outcome is the serial one
    (the source's documents untouched)."""
    settings = fleet_settings(tmp_path, 2, check=False)
    src, reader = fleet()
    kept = {k: dict(v) for k, v in src.docs.items()}
    _, serial = _desired_of(settings, src, reader, None)
    given, pooled = _desired_of(settings, src, reader, ForkPool(2, 1, chunk=5))
    assert _outputs(pooled) == _outputs(serial)
    invalid = {f.doc_id for f in serial.failed if f.stage == "validate"}
    whole = [r for r in given if r.body == src.docs[r.doc_id]]
    assert whole == given[:1] + [r for r in given[1:] if r.doc_id in invalid]  # [0]: classified first
    assert invalid and all(r.body == {} for r in given[1:] if r not in whole)
    assert src.docs == kept


def test_with_waves_the_documents_are_kept_whole(tmp_path: Path) -> None:
    """When the rollout step reads the documents after the render (waves), no body is let go."""
    from trinogen.ahead import Ahead

    settings = fleet_settings(tmp_path, 2, check=False)
    src, _ = fleet()
    raws = src.read_all()
    Ahead.of(LandsThenFails(100), raws, settings, NO_LIBRARY, Renderer(settings),
             inline=False, keep=True)
    assert [r.body for r in raws] == list(src.docs.values())


@pytest.mark.parametrize("inline", [False, True])
def test_a_worker_sends_back_no_cluster_but_inline(tmp_path: Path, inline: bool,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster a worker rendered comes back as what the run needs of it (served.Made), not
    as the Cluster (issue 22's memory); inline, whole, as its secret masks read it."""
    from trinogen.model import Cluster
    from trinogen.served import Made

    crossing = Crossing()
    monkeypatch.setattr(pipeline, "_fan_out", lambda settings: crossing)
    src, reader = fleet()
    pipeline.render(fleet_settings(tmp_path, 2), src, tmp_path / "out",
                    reader_factory=lambda: reader, inline=inline)
    outcomes = [o for o, rendered in pickle.loads(crossing.sent[0]) if rendered is not None]
    assert outcomes and all(isinstance(o, Cluster if inline else Made) for o in outcomes)
