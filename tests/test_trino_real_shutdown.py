"""A real Trino worker's graceful shutdown fits the budget trinogen gives it, and not the old one.

The document's worker drains for `drainSeconds`; it goes through trinogen and the real chart,
boots as Trino 476 (tests/test_trino_real.py's pods, REWRITES and harness), runs a query whose one
task on the worker takes TASK_SECONDS (a blackhole table with `page_processing_delay`), and then
gets the chart's own preStop hook (its curl, with the port rewritten as REWRITES says; its
`tail --pid=1` wait is the test's wait for the process). The worker must finish the query and
exit by itself within the pods' terminationGracePeriodSeconds, and it must need longer than the
chart's minimum (2 x grace, at least 30 s, what trinogen wrote before), which Kubernetes would
have cut with SIGKILL, failing the query.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from typing import Any

import pytest

from tests import javaprops
from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.operation_support import through_chart
from tests.test_trino_real import (  # noqa: F401 - pytestmark: the same needs (slow, Java, chart)
    BOOT_TIMEOUT,
    _catalog,
    _doc,
    boot_cluster,
    helm_python,
    pytestmark,
    render_pods,
)

GRACE = 5
TASK_SECONDS = 40
DRAIN = 45  # the document's promise: no task of this cluster runs longer after a shutdown
DOC = _doc("drain", [_catalog("sink", "blackhole")], clusterConfig={
    "worker": {"replicas": 1, "gracefulShutdown": {"gracePeriodSeconds": GRACE,
                                                   "drainSeconds": DRAIN}}})


def _hook_script(pod: dict[str, Any], port: int) -> str:
    """The chart's preStop command for the worker, aimed at the local worker's port."""
    (container,) = [c for c in pod["containers"] if c["name"] == "trino-worker"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[:2] == ["/bin/sh", "-c"]
    script = command[2]
    assert "localhost:8080/v1/info/state" in script and "tail --pid=1" in script
    lines = [ln for ln in script.splitlines() if "tail --pid=1" not in ln]
    return "\n".join(lines).replace("localhost:8080", f"127.0.0.1:{port}")


def test_a_draining_worker_finishes_its_task_within_the_budget(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The worker outlives the old 2 x grace budget, completes the query and exits in the new one."""
    settings, chart, dist = demo_settings(), helm_python.Chart.load(CHART_DIR), ts.distribution()
    # The JVM's AOT cache the real-Trino tests make on their first run only saves CPU time.
    cache = ts.aot_cache_path()
    aot = f"-XX:AOTCache={cache}" if cache.is_file() else None
    rendered = through_chart(DOC, settings)
    pod = rendered.pod("worker")
    budget = pod["terminationGracePeriodSeconds"]
    old_budget = max(30, 2 * GRACE)
    assert budget == 2 * GRACE + DRAIN + 30 + 15
    pods = render_pods(DOC, settings, chart)
    root = tmp_path_factory.mktemp("trino-drain")
    cluster = boot_cluster(pods, dist, root, aot)
    try:
        ts.wait_for_active_workers(cluster.port, 1, BOOT_TIMEOUT)
        ts.query(cluster.port, "CREATE TABLE sink.default.slow (x bigint) WITH (split_count = 1, "
                 f"pages_per_split = 1, rows_per_page = 1, page_processing_delay = "
                 f"'{TASK_SECONDS}s')")
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["rows"] = ts.query(cluster.port, "SELECT count(*) FROM sink.default.slow")
            except Exception as e:  # noqa: BLE001 - reported by the assertion below
                result["error"] = repr(e)

        query = threading.Thread(target=run, daemon=True)
        query.start()
        time.sleep(3)  # the slow task is running on the worker by now
        worker = cluster.workers[0]
        # the worker's HTTP port, as REWRITES set it
        port = int(javaprops.loads(worker.pod.files["/etc/trino/config.properties"])[
            "http-server.http.port"])
        started = time.monotonic()
        hook = subprocess.run(["/bin/sh", "-c", _hook_script(pod, port)], capture_output=True,
                              timeout=30, check=False)
        assert hook.returncode == 0, hook.stderr.decode(errors="replace")
        assert worker.proc is not None
        worker.proc.wait(timeout=budget + 60)
        took = time.monotonic() - started
        query.join(timeout=60)
        log = worker.log()
        print(f"\nworker shut down after {took:.1f}s (budget {budget}s, old {old_budget}s)")
        # Trino 476 runs the sequence in io.trino.server.NodeStateManager
        assert "Shutdown requested" in log, worker.tail()
        assert re.search(r"Waiting for [1-9][0-9]* active tasks to finish", log), worker.tail()
        assert "Waiting for 0 active tasks to finish" in log, worker.tail()
        assert result.get("rows") == [[1]], result
        assert old_budget < took <= budget
    finally:
        cluster.stop()
    shutil.rmtree(root, ignore_errors=True)
