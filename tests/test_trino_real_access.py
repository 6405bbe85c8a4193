"""A real Trino enforces the access rules trinogen writes, refreshes them, and still shuts down.

One document with file-based rules goes through trinogen and the real chart; the chart's
ConfigMaps boot Trino 476 (coordinator plus one worker, tests/trino_server.py, with the REWRITES
of tests/test_trino_real.py and one more below). Without authentication the client names the
user, and Trino checks the rules for that user:
- `bob` (the catch-all rules) queries tpch, but `forbidden` is missing from his SHOW CATALOGS and
  a query on it is refused; `alice` (a rule of her own) sees and queries it;
- the coordinator re-reads the rules file without a restart (a changed file lets bob in);
- `admin`, denied everything on the coordinator, still shuts a worker down: the worker's preStop
  call (PUT /v1/info/state as admin) is judged by the chart's graceful-shutdown rules on the worker.

A second document picks an OPA option: its coordinator (alone, to save a JVM) asks a small fake
OPA server in this module (it allows every request that names no `forbidden` catalog) and obeys
its answers: the OPA plugin and the properties trinogen writes for it work together.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import os
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python, trino
from tests.test_trino_real import BOOT_TIMEOUT, Pods, for_laptop, heap_factor, render_pods
from trinogen.kinds.opa.options import parse as parse_opa

pytestmark = REAL_TRINO

# One more change for a laptop: the pods re-read the rules every 60s (security.refresh-period);
# here every 2s, so the refresh is seen without waiting a minute. Nothing else depends on it.
REFRESH_REWRITE = ("security.refresh-period", "2s")

RULES: dict[str, Any] = {
    "catalogs": [
        {"user": "admin", "allow": "none"},
        {"user": "alice", "allow": "all"},
        {"catalog": "forbidden", "allow": "none"},
        {"allow": "all"},
    ],
}
DOC = {
    "_id": "trino-real-access", "clusterId": "guarded", "owner": "qa_team", "enabled": True,
    "trinoVersion": "476",
    "connectors": [
        {"name": "tpch", "properties": {"connector.name": "tpch"}},
        {"name": "forbidden", "properties": {"connector.name": "tpch"}},
    ],
    "clusterConfig": {"worker": {"gracefulShutdown": {"enabled": True, "gracePeriodSeconds": 5}}},
    "accessControl": {"rules": RULES},
}


@dataclass
class Guarded:
    pods: Pods
    cluster: ts.TrinoCluster
    worker_port: int

    @property
    def rules_file(self) -> Path:
        return self.cluster.coordinator.local("/etc/trino/access-control/rules.json")


def _with_refresh(files: ts.NodeFiles) -> ts.NodeFiles:
    path = "/etc/trino/access-control.properties"
    if path not in files.files:
        return files
    text = ts.properties_with(files.files[path], dict([REFRESH_REWRITE]))
    return ts.NodeFiles({**files.files, path: text}, dict(files.env))


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    """The document's coordinator and worker, booted once, stopped afterwards."""
    pods = render_pods(DOC, demo_settings(), helm_python.Chart.load(CHART_DIR))
    dist = ts.distribution()
    aot_file = ts.aot_cache_path()
    aot = f"-XX:AOTCache={aot_file}" if aot_file.is_file() else None
    root = tmp_path_factory.mktemp("trino-guarded")
    factor = heap_factor(pods.role)
    cport, wport = ts.free_port(), ts.free_port()
    nodes = []
    for name, role, port in (("coordinator", "coordinator", cport), ("worker-0", "worker", wport)):
        files = for_laptop(pods.role[role], root / name, dist / "plugin", port, cport, factor,
                           aot=aot)
        nodes.append(ts.TrinoNode(name, root / name, _with_refresh(files)))
    cluster = ts.TrinoCluster(nodes[0], nodes[1:], cport)
    cluster.start(dist, BOOT_TIMEOUT)
    try:
        ts.wait_for_active_workers(cport, 1, BOOT_TIMEOUT)
        yield Guarded(pods, cluster, wport)
    finally:
        cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


def _query(port: int, user: str, sql: str) -> list[list[object]]:
    conn = trino.dbapi.connect(host="127.0.0.1", port=port, user=user, http_scheme="http",
                               request_timeout=120)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()


def _catalogs(port: int, user: str) -> set[str]:
    return {str(row[0]) for row in _query(port, user, "SHOW CATALOGS")}


def test_the_pods_read_the_documents_rules(guarded: Guarded) -> None:
    """The coordinator's access control is the rules file the document gave, as the chart mounts it."""
    assert json.loads(guarded.rules_file.read_text()) == RULES


def test_an_allowed_user_queries_and_the_forbidden_catalog_is_hidden_and_refused(
        guarded: Guarded) -> None:
    """bob runs a tpch query on the worker, does not see `forbidden`, and is refused a query on it."""
    port = guarded.cluster.port
    assert _query(port, "bob", "SELECT count(*) FROM tpch.tiny.nation") == [[25]]
    assert _catalogs(port, "bob") == {"system", "tpch"}
    with pytest.raises(trino.exceptions.TrinoUserError, match="Access Denied"):
        _query(port, "bob", "SELECT count(*) FROM forbidden.tiny.nation")


def test_a_user_with_her_own_rule_reaches_the_forbidden_catalog(guarded: Guarded) -> None:
    """alice's rule comes first: she sees and queries `forbidden`."""
    port = guarded.cluster.port
    assert _catalogs(port, "alice") == {"forbidden", "system", "tpch"}
    assert _query(port, "alice", "SELECT count(*) FROM forbidden.tiny.region") == [[5]]


def test_changed_rules_apply_without_a_restart(guarded: Guarded) -> None:
    """A new rules file (as a ConfigMap update swaps it in) is read by the running coordinator."""
    port = guarded.cluster.port
    opened = {"catalogs": [r for r in RULES["catalogs"] if r.get("catalog") != "forbidden"]}
    tmp = guarded.rules_file.with_name(".rules.json.new")
    tmp.write_text(json.dumps(opened))
    os.replace(tmp, guarded.rules_file)
    deadline = time.monotonic() + 60
    while "forbidden" not in _catalogs(port, "bob"):
        assert time.monotonic() < deadline, "the coordinator never re-read the rules"
        time.sleep(1)
    assert _query(port, "bob", "SELECT count(*) FROM forbidden.tiny.region") == [[5]]


def _put_state(port: int, user: str) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/info/state", data=b'"SHUTTING_DOWN"', method="PUT",
        headers={"Content-Type": "application/json", "X-Trino-User": user})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_admin_still_shuts_a_worker_down(guarded: Guarded) -> None:
    """The preStop call succeeds for admin (denied on the coordinator) and fails for anyone else."""
    assert _catalogs(guarded.cluster.port, "admin") == set()  # the coordinator's rules deny admin
    assert _put_state(guarded.worker_port, "bob") == 403
    assert _put_state(guarded.worker_port, "admin") == 200
    with urllib.request.urlopen(f"http://127.0.0.1:{guarded.worker_port}/v1/info/state",
                                timeout=30) as response:
        assert json.loads(response.read()) == "SHUTTING_DOWN"


# --- OPA ---------------------------------------------------------------------------------------

OPA_DOC = {**DOC, "_id": "trino-real-opa", "clusterId": "opa-guarded",
           "clusterConfig": {}, "accessControl": {"opa": "fake"}}


class _FakeOpa(http.server.BaseHTTPRequestHandler):
    """OPA's data API as the Trino plugin calls it: allow unless the request names `forbidden`."""

    seen: ClassVar[list[dict[str, Any]]] = []  # every request body, for the test to read

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(body)
        action = body["input"]["action"]
        if self.path.endswith("/batch"):
            resources = action.get("filterResources") or []
            result: Any = [i for i, r in enumerate(resources) if "forbidden" not in json.dumps(r)]
        else:
            result = "forbidden" not in json.dumps(action)
        data = json.dumps({"result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def fake_opa() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpa)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def opa_port(fake_opa: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The OPA document's coordinator, alone, asking the fake OPA; its port."""
    base = f"http://127.0.0.1:{fake_opa}/v1/data/trino"
    settings = demo_settings()
    settings = dataclasses.replace(settings, named={**settings.named, "opa": {"fake": parse_opa(
        "test: opa.fake", {"policy_uri": f"{base}/allow", "batched_uri": f"{base}/batch"})}})
    pods = render_pods(OPA_DOC, settings, helm_python.Chart.load(CHART_DIR))
    dist = ts.distribution()
    aot_file = ts.aot_cache_path()
    root = tmp_path_factory.mktemp("trino-opa")
    port = ts.free_port()
    files = for_laptop(pods.role["coordinator"], root, dist / "plugin", port, port,
                       heap_factor(pods.role), coordinator_alone=True,
                       aot=f"-XX:AOTCache={aot_file}" if aot_file.is_file() else None)
    node = ts.TrinoNode("coordinator", root, files)
    node.start(dist)
    try:
        node.wait_started(BOOT_TIMEOUT)
        _wait_schedulable(port)
        yield port
    finally:
        node.stop(timeout=BOOT_TIMEOUT)
    shutil.rmtree(root, ignore_errors=True)


def _wait_schedulable(port: int) -> None:
    """Until the lone coordinator has announced itself as a node: "started" comes a moment
    before it can schedule a query (NO_NODES_AVAILABLE on a loaded machine)."""
    ts.when_scheduled(lambda: _query(port, "bob", "SELECT count(*) FROM tpch.tiny.nation"),
                      BOOT_TIMEOUT)


def test_opa_decides_what_a_user_sees_and_queries(opa_port: int) -> None:
    """With an OPA pick, the coordinator asks OPA: tpch answers, `forbidden` is hidden and refused."""
    _FakeOpa.seen.clear()
    assert _query(opa_port, "bob", "SELECT count(*) FROM tpch.tiny.nation") == [[25]]
    assert "forbidden" not in _catalogs(opa_port, "bob")
    assert "tpch" in _catalogs(opa_port, "bob")
    with pytest.raises(trino.exceptions.TrinoUserError, match="Access Denied"):
        _query(opa_port, "bob", "SELECT count(*) FROM forbidden.tiny.nation")
    users = {b["input"]["context"]["identity"]["user"] for b in _FakeOpa.seen}
    assert users == {"bob"}, "the coordinator did not ask OPA for bob's requests"
