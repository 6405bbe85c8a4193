"""A real Trino 476 queues and refuses queries by the resource groups trinogen checks and renders.

One document with a tpch catalog and its own `resourceGroups` goes through trinogen and the real
chart (tests/test_trino_real.py's way, its REWRITES unchanged); the chart writes
resource-groups.properties (the file manager) and mounts the JSON trinogen checked, and those
ConfigMaps boot the coordinator alone. Then:
- `alice`'s group allows one running query: her second query waits in state QUEUED while her
  first (a long tpch scan) runs, and starts once the first is killed;
- `watcher` (a group of its own) reads system.runtime.queries meanwhile;
- `mallory` matches no selector and is refused with Trino's own message.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python, trino
from tests.test_trino_real import BOOT_TIMEOUT, Pods, for_laptop, heap_factor, render_pods

pytestmark = REAL_TRINO

GROUPS: dict[str, Any] = {
    "rootGroups": [
        {"name": "adhoc", "softMemoryLimit": "50%", "hardConcurrencyLimit": 1, "maxQueued": 5},
        {"name": "watch", "softMemoryLimit": "10%", "hardConcurrencyLimit": 3, "maxQueued": 5},
    ],
    "selectors": [
        {"user": "alice|bob", "group": "adhoc"},
        {"user": "watcher", "group": "watch"},
    ],
}
DOC = {
    "_id": "trino-real-rgroups", "clusterId": "rgroups", "owner": "qa_team", "enabled": True,
    "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
    "resourceGroups": GROUPS,
}
JSON_PATH = "/etc/trino/resource-groups/resource-groups.json"
PROPERTIES = "/etc/trino/resource-groups.properties"
# Long enough to be still running when killed (sf100 lineitem: 600 million generated rows).
SLOW = "SELECT count(*) FROM tpch.sf100.lineitem WHERE comment <> '{marker}'"
# Trino 476's rejection (io.trino.execution.resourcegroups.InternalResourceGroupManager)
NO_MATCH = "No matching resource group found with the configured selection rules"
WAIT = 120.0  # seconds for a query to reach a state, on 2 shared cores


def pods() -> Pods:
    """The document through trinogen's render (demo settings) and the real chart."""
    return render_pods(DOC, demo_settings(), helm_python.Chart.load(CHART_DIR))


def _connect(port: int, user: str) -> Any:
    return trino.dbapi.connect(host="127.0.0.1", port=port, user=user, http_scheme="http",
                               request_timeout=300)


def run(port: int, user: str, sql: str) -> list[list[object]]:
    conn = _connect(port, user)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()


@dataclass
class Background:
    """A query run on its own thread; what it ended with (rows or the error)."""

    port: int
    user: str
    sql: str
    outcome: list[Any] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> Background:
        def body() -> None:
            try:
                self.outcome.append(run(self.port, self.user, self.sql))
            except trino.exceptions.TrinoQueryError as e:  # a killed query ends so
                self.outcome.append(e)

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()
        return self


def states(port: int, marker: str) -> list[tuple[str, str, str]]:
    """(query_id, state, resource group) of the queries whose text holds `marker`, as the
    watcher sees them in system.runtime.queries."""
    rows = run(port, "watcher",
               "SELECT query_id, state, array_join(resource_group_id, '.') "
               "FROM system.runtime.queries "
               f"WHERE strpos(query, '{marker}') > 0 AND strpos(query, 'system.runtime') = 0")
    return [(str(q), str(s), str(g)) for q, s, g in rows]


def wait_for(port: int, marker: str, state: str) -> tuple[str, str, str]:
    deadline = time.monotonic() + WAIT
    seen: list[tuple[str, str, str]] = []
    while time.monotonic() < deadline:
        seen = states(port, marker)
        if seen and seen[0][1] == state:
            return seen[0]
        if seen and seen[0][1] == "FAILED":
            break
        time.sleep(0.5)
    errors = run(port, "watcher", "SELECT query_id, error_code, error_type "
                 f"FROM system.runtime.queries WHERE strpos(query, '{marker}') > 0 "
                 "AND strpos(query, 'system.runtime') = 0")
    raise AssertionError(f"query {marker} never reached {state}: {seen}; errors: {errors}")


def kill(port: int, query_id: str) -> None:
    run(port, "watcher", f"CALL system.runtime.kill_query(query_id => '{query_id}', "
        "message => 'test over')")


def ready(port: int) -> None:
    """Until the coordinator schedules tasks on itself: right after SERVER STARTED its own node
    may not be announced yet, and a query then fails (NO_NODES_AVAILABLE)."""
    deadline = time.monotonic() + BOOT_TIMEOUT
    while True:
        try:
            assert run(port, "watcher", "SELECT count(*) FROM tpch.tiny.nation") == [[25]]
            return
        except trino.exceptions.TrinoQueryError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


@pytest.fixture(scope="module")
def coordinator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The document's coordinator alone (it also runs the tasks), booted once; its port."""
    rendered = pods()
    dist = ts.distribution()
    aot_file = ts.aot_cache_path()
    aot = f"-XX:AOTCache={aot_file}" if aot_file.is_file() else None
    root = tmp_path_factory.mktemp("trino-rgroups")
    port = ts.free_port()
    node = ts.TrinoNode("coordinator", root, for_laptop(
        rendered.role["coordinator"], root, dist / "plugin", port, port,
        heap_factor(rendered.role), coordinator_alone=True, aot=aot))
    node.start(dist)
    try:
        node.wait_started(BOOT_TIMEOUT)
        ready(port)
        yield port
    finally:
        node.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_the_chart_mounts_the_groups_on_the_coordinator_only() -> None:
    """The chart selects the file manager, points it at the mounted JSON, and the JSON is the
    document's groups; the workers get neither."""
    rendered = pods()
    files = rendered.role["coordinator"].files
    assert "resource-groups.configuration-manager=file" in files[PROPERTIES].splitlines()
    assert f"resource-groups.config-file={JSON_PATH}" in files[PROPERTIES].splitlines()
    assert json.loads(files[JSON_PATH]) == GROUPS
    assert not {PROPERTIES, JSON_PATH} & set(rendered.role["worker"].files)


def test_a_second_query_waits_queued_while_the_first_runs(coordinator: int) -> None:
    """With hardConcurrencyLimit 1, alice's second query is QUEUED in `adhoc` while her first
    runs, and runs once the first is killed."""
    first = Background(coordinator, "alice", SLOW.format(marker="rg-first")).start()
    first_id, _, group = wait_for(coordinator, "rg-first", "RUNNING")
    assert group == "adhoc"
    second = Background(coordinator, "alice", SLOW.format(marker="rg-second")).start()
    try:
        _, _, group = wait_for(coordinator, "rg-second", "QUEUED")
        assert group == "adhoc"
        time.sleep(3)  # still queued a while later: not merely slow to start
        assert states(coordinator, "rg-second")[0][1] == "QUEUED"
        assert states(coordinator, "rg-first")[0][1] == "RUNNING"
        kill(coordinator, first_id)
        wait_for(coordinator, "rg-second", "RUNNING")
    finally:  # nothing left running for the next test; a query may end meanwhile
        for marker in ("rg-first", "rg-second"):
            for query_id, state, _ in states(coordinator, marker):
                if state not in ("FINISHED", "FAILED"):
                    with contextlib.suppress(trino.exceptions.TrinoQueryError):
                        kill(coordinator, query_id)
    for query in (first, second):
        assert query.thread is not None
        query.thread.join(WAIT)
    assert "test over" in str(first.outcome[0])  # killed by the test, not failed


def test_a_query_no_selector_matches_is_refused(coordinator: int) -> None:
    """mallory matches no selector: Trino rejects the query with its own message."""
    with pytest.raises(trino.exceptions.TrinoQueryError) as refused:
        run(coordinator, "mallory", "SELECT 1")
    assert NO_MATCH in str(refused.value)
    assert run(coordinator, "bob", "SELECT count(*) FROM tpch.tiny.nation") == [[25]]
