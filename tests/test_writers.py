"""Two writers (two `trinogen sync` processes with their own working copies) against one
database over the wire (FerretDB) and one remote: the remote never ends with an older read's
state than the newest one pushed (issue 11, items 1 and 2).

The slow writer's push is held by a `pre-receive` hook on the bare remote while a flag file
exists; the hook runs with the pusher's environment (a local remote), so only the process
started with SLOW_PUSH_FLAG waits. When the flag goes, its push loses the ref-lock race to the
commit the other writer pushed meanwhile, and it must re-plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import ferretdb
from tests.conftest import ROOT, RealMongo, commit_count, git, needs, portable_docs, remote_tree
from trinogen.errors import ExitCode
from trinogen.settings import load_settings

pytestmark = [pytest.mark.slow,
              needs(ferretdb.available(), "FerretDB is not built and Go is not installed")]

SLOW_HOOK = """#!/bin/sh
# Holds the push of the process that set SLOW_PUSH_FLAG while that file exists.
if [ -n "$SLOW_PUSH_FLAG" ] && [ -e "$SLOW_PUSH_FLAG" ]; then
  touch "$SLOW_PUSH_FLAG.waiting"
  while [ -e "$SLOW_PUSH_FLAG" ]; do sleep 0.05; done
fi
exit 0
"""


class Writers:
    """One FerretDB database, one bare remote with the slow hook, and a CLI per writer."""

    def __init__(self, tmp: Path, db: RealMongo) -> None:
        self.tmp, self.db = tmp, db
        self.remote = tmp / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        hook = self.remote / "hooks" / "pre-receive"
        hook.write_text(SLOW_HOOK)
        hook.chmod(0o755)
        self.flag = tmp / "slow-push"

    def env(self, name: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRINOGEN_")}
        env.update({
            "TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
            "TRINOGEN_MONGODB_URI": self.db.settings.mongodb.uri,
            "TRINOGEN_MONGODB_DATABASE": self.db.database,
            "TRINOGEN_GIT_REMOTE": str(self.remote),
            "TRINOGEN_GIT_WORKDIR": str(self.tmp / f"workdir-{name}"),
            "TRINOGEN_GIT_INIT_LOCAL_REMOTE": "false",
            **extra,
        })
        return env

    def sync(self, name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "trinogen.cli", "sync"], env=self.env(name),
                              capture_output=True, text=True, timeout=120, check=False)

    def start_slow(self, name: str) -> subprocess.Popen[str]:
        """A sync whose push waits in the hook until release(); returns once it waits there."""
        self.flag.write_text("")
        proc = subprocess.Popen([sys.executable, "-m", "trinogen.cli", "sync", "-o", "json"],
                                env=self.env(name, SLOW_PUSH_FLAG=str(self.flag)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        waiting = Path(f"{self.flag}.waiting")
        deadline = time.monotonic() + 60
        while not waiting.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the slow writer never reached its push"
            time.sleep(0.05)
        return proc

    def release(self, proc: subprocess.Popen[str]) -> tuple[int, str, dict[str, Any]]:
        """Let the slow push go on; its exit code, stderr and JSON report."""
        self.flag.unlink()
        out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, err
        return proc.returncode, err, json.loads(out) if out.strip() else {}

    def workers(self, cluster: str) -> Any:
        values = remote_tree(self.remote)[f"trino-clusters/{cluster}/values.yaml"]
        return yaml.safe_load(values)["server"]["workers"]


@pytest.fixture
def writers(tmp_path: Path, ferretdb_server: Any) -> Iterator[Writers]:
    settings = load_settings(ROOT / "config" / "demo.yaml", environ={})
    db = RealMongo(ferretdb_server, settings, portable_docs())
    w = Writers(tmp_path, db)
    first = w.sync("b")
    assert first.returncode == ExitCode.OK, first.stderr
    yield w
    db.close()


def test_a_slow_writer_never_replaces_a_newer_state(writers: Writers) -> None:
    """A reads 11 workers and is slow to push; B reads 22 and pushes; A's retry leaves 22."""
    writers.db.set("analytics-prod", "clusterConfig.worker.replicas", 11)
    slow = writers.start_slow("a")
    writers.db.set("analytics-prod", "clusterConfig.worker.replicas", 22)
    fast = writers.sync("b")
    assert fast.returncode == ExitCode.OK, fast.stderr
    assert writers.workers("analytics-prod") == 22
    code, err, report = writers.release(slow)
    assert code == ExitCode.OK, err
    assert not report["pushed"]  # B had pushed what the new read says: nothing left to do
    assert writers.workers("analytics-prod") == 22


def test_a_slow_writer_never_brings_back_a_pruned_cluster(writers: Writers) -> None:
    """A reads adhoc-dev enabled; B prunes it after it is disabled; A's retry keeps it pruned."""
    writers.db.set("analytics-prod", "clusterConfig.worker.replicas", 7)  # so A has a push to hold
    slow = writers.start_slow("a")
    writers.db.set("adhoc-dev", "enabled", False)
    fast = writers.sync("b")
    assert fast.returncode == ExitCode.OK, fast.stderr
    code, err, report = writers.release(slow)
    assert code == ExitCode.OK, err
    assert not report["pushed"]  # B's commit holds what the new read says (7, adhoc-dev pruned)
    tree = remote_tree(writers.remote)
    assert not any(p.startswith("trino-clusters/adhoc-dev/") for p in tree)
    assert "trino-applications/adhoc-dev.yaml" not in tree
    assert writers.workers("analytics-prod") == 7


def test_a_persons_commit_to_a_cached_clusters_file_is_rendered_over(writers: Writers) -> None:
    """A serves etl-batch from its render cache; a person edits its values between A's plan and
    push; A's retry renders it again (no "no content for a changed file") and reverts the edit."""
    again = writers.sync("a")  # A's own clone and render cache: every cluster is a cache hit now
    assert again.returncode == ExitCode.OK, again.stderr
    expected = remote_tree(writers.remote)["trino-clusters/etl-batch/values.yaml"]
    writers.db.set("analytics-prod", "clusterConfig.worker.replicas", 9)  # A has work to push
    slow = writers.start_slow("a")
    person = writers.tmp / "person"
    git("clone", "--quiet", str(writers.remote), str(person))
    values = person / "trino-clusters" / "etl-batch" / "values.yaml"
    values.write_bytes(values.read_bytes() + b"# tuned by hand\n")
    git("-c", "user.name=p", "-c", "user.email=p@example.invalid", "commit", "-q", "-am", "tune",
        cwd=person)
    git("push", "-q", "origin", "HEAD:main", cwd=person)
    before = commit_count(writers.remote)
    code, err, report = writers.release(slow)
    assert code == ExitCode.OK, err
    assert report["pushed"] and report["stats"]["pushAttempts"] == 2
    assert remote_tree(writers.remote)["trino-clusters/etl-batch/values.yaml"] == expected
    assert writers.workers("analytics-prod") == 9
    assert commit_count(writers.remote) == before + 1
