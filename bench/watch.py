"""The watcher's latency: one changed document among N, from the write to MongoDB to the push.

    python bench/watch.py                          # 10,000 documents, 5 changes, debounce 2 s
    python bench/watch.py --documents 1000 --changes 9 --debounce 1
    python bench/watch.py --features --catalog     # every option on, + one shared-catalog change
    python bench/run.py --watch                    # the same, from the bench's entry point

Issue 22: "a batch of one change among 10,000 clusters is pushed within debounce + 0.5 s".
FerretDB (the tests' real MongoDB-wire server, tests/ferretdb.py) holds the documents, the
lease, the resume token and the status rows; it has no change streams, so `trinogen watch`
talks to it through bench/wireproxy.py, which passes every command through and serves the
change stream itself from events the bench appends right after FerretDB acknowledged each write
(and turns keys stored with U+FF0E back into dotted keys: FerretDB v1 refuses '.' in a key).

Steps: N generated documents (bench/gen_docs.py) inserted; a bare remote whose post-receive
hook appends the time of each push; `trinogen watch` started as a subprocess (through
`bench/watch.py --driver`, which runs the CLI unchanged with bench/stages.py's meter around
each stage and records every sync's split); its first full sync awaited; then --changes times:
one enabled document replaced (gen_docs.mutate: worker replicas), its event appended, and the
time from before the write until the hook ran is one latency. Between changes the bench waits
--settle seconds. Then SIGTERM; peak RSS from os.wait4 (the watcher and its git children).
Reported: median and min-max latency, the debounce, the peak RSS, and per batch the watcher's
own event-to-push lag, its sync's wall and CPU seconds and where they went (stages).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if sys.argv[1:2] != ["--driver"]:  # the driver imports trinogen from --code (PYTHONPATH)
    sys.path.insert(0, str(ROOT))

import gen_docs

REPO_URL = "https://git.example.com/platform/trino-gitops.git"
DB = "trino"


# --- inside the watcher's process ---------------------------------------------------------------


def _cpu() -> float:
    """CPU seconds of this process and of its children waited for (git's commands)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def driver(out: str, argv: list[str]) -> int:
    """Run the CLI with bench/stages.py's meter; write each sync's split to `out` as it ends."""
    # gen_docs put this tree first on the path (for tests.kitchen_sink): trinogen comes from
    # --code, the first entry of PYTHONPATH (Run.start).
    sys.path.insert(0, os.environ["PYTHONPATH"].split(os.pathsep)[0])
    import stages

    class CpuMeter(stages.Meter):  # type: ignore[misc]
        """The stages' meter, also counting CPU seconds (git's children included) per stage:
        wall seconds lie on a shared machine, CPU seconds much less."""

        def __init__(self) -> None:
            super().__init__()
            self.cpu: dict[str, float] = dict.fromkeys(self.seconds, 0.0)
            self.cpu_mark = _cpu()

        def _switch(self) -> None:
            now = _cpu()
            if self.stack:
                self.cpu[self.stack[-1]] += now - self.cpu_mark
            self.cpu_mark = now
            super()._switch()

    meter = CpuMeter()
    meter.run("import", stages._imports)
    stages.install(meter)
    from trinogen import cli, pipeline

    original = pipeline.sync
    code = str(Path(pipeline.__file__).parent.parent)  # which trinogen runs (--code)
    syncs: list[dict[str, Any]] = []

    def recorded(*args: Any, **kwargs: Any) -> Any:
        before, cpu, wall = dict(meter.seconds), _cpu(), time.perf_counter()
        cpu_before = dict(meter.cpu)
        report = None
        try:
            report = original(*args, **kwargs)
            return report
        finally:
            seconds = time.perf_counter() - wall
            split = {s: round(meter.seconds[s] - before[s], 4) for s in meter.seconds
                     if meter.seconds[s] - before[s] > 0}
            split["other"] = round(seconds - sum(split.values()), 4)
            total_cpu = _cpu() - cpu
            cpu_split = {s: round(meter.cpu[s] - cpu_before[s], 4) for s in meter.cpu
                         if meter.cpu[s] - cpu_before[s] > 0}
            cpu_split["other"] = round(total_cpu - sum(cpu_split.values()), 4)
            options = kwargs.get("options")
            syncs.append({"targeted": bool(options and options.targeted), "code": code,
                          "wall": round(seconds, 4), "cpu": round(total_cpu, 4),
                          "cpu_seconds": cpu_split, "seconds": split,
                          "stats": dict(report.stats) if report is not None else None})
            Path(out).write_text(json.dumps(syncs, indent=1))

    pipeline.sync = recorded  # type: ignore[assignment]
    sys.argv = ["trinogen", *argv]
    try:
        cli.main()
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    return 0


# --- the bench ----------------------------------------------------------------------------------


def documents(n: int, seed: int, features: bool) -> list[dict[str, Any]]:
    return gen_docs.generate(n, seed, features=features)


def as_bson(doc: dict[str, Any]) -> dict[str, Any]:
    """A generated document (Extended JSON) as pymongo writes it, keys escaped for FerretDB."""
    from bson import json_util
    from wireproxy import escape

    return escape(json_util.loads(json.dumps(doc)))  # type: ignore[no-any-return]


def settings_text(where: Path, proxy_uri: str, args: argparse.Namespace) -> str:
    text = (
        f"mongodb:\n  uri: \"{proxy_uri}\"\n  database: {DB}\n"
        f"git:\n  remote: {where / 'remote.git'}\n  workdir: {where / 'workdir'}\n"
        "  author_name: trinogen bench\n  author_email: bench@example.invalid\n"
        f"argocd:\n  repo_url: {REPO_URL}\n"
        "secrets:\n  check: false\n"
        "output:\n  root_app: argocd/trino-clusters.yaml\n"
        f"watch:\n  debounce_seconds: {args.debounce}\n  max_await_ms: {args.max_await_ms}\n"
        "  reconcile_seconds: 86400\n"
    )
    if args.features:
        from run import overlay_settings

        seed = where / "features"
        settings, _ = gen_docs.write_feature_settings(str(seed))
        text = overlay_settings(settings.read_text(), text)
    return text


def hooked_remote(remote: Path, stamps: Path) -> None:
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(remote)],
                   check=True)
    hook = remote / "hooks" / "post-receive"
    hook.write_text(f"#!/bin/sh\ndate +%s.%N >> '{stamps}'\n")
    hook.chmod(0o755)


def pushes(stamps: Path) -> list[float]:
    try:
        return [float(x) for x in stamps.read_text().split()]
    except (OSError, ValueError):
        return []


def log_entries(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def wait_for(what: str, predicate: Any, timeout: float, proc: subprocess.Popen[bytes],
             log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise RuntimeError(f"the watcher exited ({proc.returncode}) waiting for {what}:\n"
                               + log.read_text(errors="replace")[-3000:])
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}:\n"
                               + log.read_text(errors="replace")[-3000:])
        time.sleep(0.005)


def vm(pid: int, key: str) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def synced_lines(log: Path) -> list[dict[str, Any]]:
    return [e for e in log_entries(log) if e.get("watch") == "sync"]


class Run:
    """FerretDB, the proxy, the seeded database, the remote and the watcher of one bench run."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.stamps = work / "pushes.txt"
        self.log = work / "watch.log"
        self.splits = work / "syncs.json"

    def seed(self, server: Any) -> list[dict[str, Any]]:
        import pymongo

        docs = documents(self.args.documents, self.args.seed, self.args.features)
        client = pymongo.MongoClient(server.uri)
        db = client[DB]
        db.trino_clusters.insert_many([as_bson(d) for d in docs])
        if self.args.features:
            from tests import kitchen_sink

            db.trino_catalogs.insert_many([as_bson(c) for c in kitchen_sink.catalogs()])
        self.client = client
        return docs

    def start(self, proxy_uri: str) -> subprocess.Popen[bytes]:
        config = self.work / "trinogen.yaml"
        config.write_text(settings_text(self.work, proxy_uri, self.args))
        hooked_remote(self.work / "remote.git", self.stamps)
        (self.work / "gitconfig").write_text("")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TRINOGEN_", "GIT_"))}
        env.update({"PYTHONPATH": os.pathsep.join([self.args.code, str(HERE)]),
                    "HOME": str(self.work), "XDG_CACHE_HOME": str(self.work / "cache"),
                    "GIT_CONFIG_GLOBAL": str(self.work / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
                    "PYTHONPYCACHEPREFIX": str(Path(self.args.results).resolve() / "pycache")})
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [sys.executable, __file__, "--driver", str(self.splits), "--config", str(config),
               "--log-level", "DEBUG", "--log-format", "json", "watch"]
        with self.log.open("wb") as log:
            return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.work, start_new_session=True)

    def change(self, proxy: Any, docs: list[dict[str, Any]], round_no: int
               ) -> tuple[float, float]:
        """Replace one enabled document (worker replicas); the wall time before the write and
        when FerretDB acknowledged it."""
        (idx,) = gen_docs.mutate(docs, 1, round_no, self.args.seed)
        doc = as_bson(docs[idx])
        started = time.time()
        self.client[DB].trino_clusters.replace_one({"_id": doc["_id"]}, doc)
        acked = time.time()
        proxy.emit("replace", DB, "trino_clusters", doc["_id"])
        return started, acked

    def change_catalog(self, proxy: Any, round_no: int) -> tuple[float, float]:
        from tests import kitchen_sink

        cat = as_bson(kitchen_sink.catalogs()[0])
        cat["properties"]["connection-user"] = f"trino-{round_no}"
        started = time.time()
        self.client[DB].trino_catalogs.replace_one({"_id": cat["_id"]}, cat)
        acked = time.time()
        proxy.emit("replace", DB, "trino_catalogs", cat["_id"])
        return started, acked


def measure_one(run: Run, proc: subprocess.Popen[bytes], start_write: Any,
                timeout: float, proxy: Any) -> dict[str, Any]:
    before, lines = len(pushes(run.stamps)), len(synced_lines(run.log))
    calls = len(proxy.upstream_calls)
    started, acked = start_write()
    wait_for("the push", lambda: len(pushes(run.stamps)) > before, timeout, proc, run.log)
    pushed = pushes(run.stamps)[before]
    wait_for("the sync's log line", lambda: len(synced_lines(run.log)) > lines, 10, proc, run.log)
    line = synced_lines(run.log)[lines]
    # What FerretDB took to answer the watcher between the write and the push (the bench's own
    # write excluded): a batch reads by `_id` equality only (trinogen.watch.claimants), which
    # a real MongoDB answers from its `_id` index in milliseconds; FerretDB v1 takes ~0.2 s.
    server = [(s, name) for end, s, name in proxy.upstream_calls[calls:]
              if end <= pushed and name != "replace" and name != "update"]
    by_name: dict[str, float] = {}
    for s, name in server:
        by_name[name] = round(by_name.get(name, 0.0) + s, 3)
    return {"latency": round(pushed - started, 3), "fromAck": round(pushed - acked, 3),
            "write": round(acked - started, 3), "kind": line.get("kind"),
            "server": round(sum(s for s, _ in server), 3), "serverCommands": by_name,
            "eventToPush": line.get("eventToPushSeconds"), "syncSeconds": line.get("syncSeconds")}


def bench(args: argparse.Namespace) -> dict[str, Any]:
    from wireproxy import WireProxy

    from tests.ferretdb import ferretdb

    work = Path(args.results).resolve() / "watch-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run = Run(args, work)
    rows: list[dict[str, Any]] = []
    with ferretdb(work / "ferretdb") as server:
        proxy = WireProxy(("127.0.0.1", server.port)).start()
        _progress(f"seeding {args.documents:,} documents into FerretDB ...")
        docs = run.seed(server)
        proc = run.start(proxy.uri)
        try:
            t0 = time.monotonic()
            wait_for("the first full sync", lambda: len(synced_lines(run.log)) >= 1,
                     args.timeout, proc, run.log)
            first = synced_lines(run.log)[0]
            _progress(f"first full sync pushed after {time.monotonic() - t0:.1f}s "
                      f"(sync {first.get('syncSeconds')}s); RSS {vm(proc.pid, 'VmRSS'):.0f} MiB")
            time.sleep(args.settle)
            for i in range(args.changes):
                r = measure_one(run, proc, lambda i=i: run.change(proxy, docs, 1000 + i),
                                args.timeout, proxy)
                rows.append(r)
                _progress(f"  change {i + 1}/{args.changes}: pushed {r['latency']:.3f}s after "
                          f"the write ({r['fromAck']:.3f}s after its ack; watcher: event-to-push {r['eventToPush']}s, sync "
                          f"{r['syncSeconds']}s; FerretDB {r['server']}s {r['serverCommands']})")
                time.sleep(args.settle)
            catalog = None
            if args.catalog:
                catalog = measure_one(run, proc, lambda: run.change_catalog(proxy, 1),
                                      args.timeout, proxy)
                _progress(f"  shared catalog: pushed {catalog['latency']:.3f}s after the write "
                          f"(kind {catalog['kind']}, sync {catalog['syncSeconds']}s)")
                time.sleep(args.settle)
            idle_rss = vm(proc.pid, "VmRSS")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            _, status, usage = os.wait4(proc.pid, 0)
            proxy.stop()
            run.client.close()
    if os.waitstatus_to_exitcode(status) != 0:
        _progress(f"the watcher exited {os.waitstatus_to_exitcode(status)}: see {run.log}")
    splits = json.loads(run.splits.read_text()) if run.splits.exists() else []
    latencies = [r["latency"] for r in rows]
    return {
        "documents": args.documents, "features": args.features, "debounce": args.debounce,
        "max_await_ms": args.max_await_ms, "changes": rows, "catalog": catalog,
        "latency_median": round(statistics.median(latencies), 3) if latencies else None,
        "latency_min": min(latencies, default=None), "latency_max": max(latencies, default=None),
        "rss_peak_mib": round(usage.ru_maxrss / 1024, 1), "rss_idle_mib": idle_rss,
        "syncs": splits,
    }


def summary(result: dict[str, Any]) -> str:
    d = result["debounce"]
    lines = [
        f"N={result['documents']:,} ({'every feature on' if result['features'] else 'plain'}), "
        f"debounce {d} s, max_await_ms {result['max_await_ms']}:",
        # The goal is judged from the acknowledgement: before it the change is not committed,
        # and no watcher can see it (the event is emitted once FerretDB acknowledged the write).
        f"from the write's acknowledgement to the push: median {_med(result, 'fromAck')} s "
        f"(goal debounce + 0.5 = {d + 0.5} s: {_verdict(_med(result, 'fromAck'), d + 0.5)}; "
        f"{len(result['changes'])} changes); from before the write (FerretDB's time to store "
        f"it included) {result['latency_median']} s (min {result['latency_min']}, max "
        f"{result['latency_max']}); less FerretDB's answers to the watcher "
        f"{_med(result, 'lessServer')} s (from the acknowledgement: "
        f"{_med(result, 'ackLessServer')} s); "
        f"watcher peak RSS {result['rss_peak_mib']} MiB (idle after the batches "
        f"{result['rss_idle_mib']:.0f} MiB)",
    ]
    if result["catalog"]:
        c = result["catalog"]
        last = result["syncs"][-1] if result["syncs"] else {}
        stats = last.get("stats") or {}
        lines.append(f"shared-catalog change: pushed {c['latency']} s after the write "
                     f"(kind {c['kind']}, sync {c['syncSeconds']} s, CPU {last.get('cpu')} s, "
                     f"{stats.get('clustersRendered')} clusters rendered, "
                     f"{stats.get('cacheHits')} cache hits; FerretDB {c['server']} s)")
    targeted = [s for s in result["syncs"] if s["targeted"]]
    if targeted:
        lines += ["", "one-document batch, median of the syncs (s; CPU of trinogen and its git "
                  "children; wall includes waiting for FerretDB):", ""] + split_table(targeted)
    return "\n".join(lines)


def _verdict(value: float | None, goal: float) -> str:
    return "no change measured" if value is None else ("met" if value <= goal else "not met")


def _med(result: dict[str, Any], key: str) -> float | None:
    # lessServer: the latency less FerretDB's answers to the watcher; ackLessServer: the same
    # from the write's acknowledgement (FerretDB's own time to store the bench's write, 0.3 s
    # at 10,000 documents, is no part of what the watcher can shorten either)
    derived = {"lessServer": lambda c: c["latency"] - c["server"],
               "ackLessServer": lambda c: c["fromAck"] - c["server"]}
    values = [derived[key](c) if key in derived else c[key] for c in result["changes"]]
    return round(statistics.median(values), 3) if values else None


def split_table(syncs: list[dict[str, Any]]) -> list[str]:
    def med(key: str, stage: str | None = None) -> float:
        return statistics.median((s[key] if stage is None else s[key].get(stage, 0))
                                 for s in syncs)

    stages = sorted({k for s in syncs for k in s["seconds"]}, key=lambda k: -med("seconds", k))
    return ["| | sync | " + " | ".join(stages) + " |", "|---|---:|" + "---:|" * len(stages),
            f"| wall | {med('wall'):.3f} | "
            + " | ".join(f"{med('seconds', k):.3f}" for k in stages) + " |",
            f"| CPU | {med('cpu'):.3f} | "
            + " | ".join(f"{med('cpu_seconds', k):.3f}" for k in stages) + " |"]


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--driver"]:
        return driver(argv[1], argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--documents", type=int, default=10000)
    ap.add_argument("--changes", type=int, default=5, help="one-document changes measured")
    ap.add_argument("--debounce", type=float, default=2.0, help="watch.debounce_seconds")
    ap.add_argument("--max-await-ms", type=int, default=250, help="watch.max_await_ms")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds between changes")
    ap.add_argument("--features", action="store_true", help="every option on (gen_docs --features)")
    ap.add_argument("--catalog", action="store_true",
                    help="also one change of the shared catalog (implies --features)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--timeout", type=float, default=600, help="seconds to wait for one push")
    ap.add_argument("--code", default=str(ROOT), help="trinogen source tree (PYTHONPATH)")
    ap.add_argument("--results", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    args.features = args.features or args.catalog
    args.code = str(Path(args.code).resolve())
    result = bench(args)
    out = Path(args.results) / f"watch-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(result, indent=1))
    print(summary(result))
    _progress(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
