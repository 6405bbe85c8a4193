"""A real Trino 476 with authentication, access rules and graceful shutdown at once.

Each was booted alone (tests/test_trino_real_auth.py, _access.py, _shutdown.py); together they
meet in two places this test checks: (1) the user signed in with a password is the user the
access rules judge (alice reads tpch, the catalog `hidden` is invisible and refused to her), and
(2) the chart's preStop hook still shuts a worker down when the cluster has authentication on:
the hook's plain-HTTP `PUT /v1/info/state` as `admin` goes to the worker, which has no
authenticator of its own, only the shared secret, and the chart's graceful-shutdown rules.
Rendering, Vault and External Secrets are played as in tests/test_trino_real_auth.py (its
helpers, REWRITES and HTTPS port rewrite).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests import chart_pods, javaprops
from tests.test_auth import secure_settings
from tests.test_trino_real import BOOT_TIMEOUT
from tests.test_trino_real_auth import (  # noqa: F401 - pytestmark: the same needs
    OPTION,
    PASSWORD,
    Booted,
    _https_query,
    eso_secrets,
    make_vault,
    pod_files,
    pytestmark,
    start,
    trino,
)
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer

CID = "secure"  # make_vault's Vault paths are for this clusterId
GRACE = 5
DOC = {"_id": "trino-real-together", "clusterId": CID, "owner": "qa_team", "enabled": True,
       "authentication": "test-password",
       "accessControl": {"rules": {
           "catalogs": [{"user": "admin", "allow": "all"}, {"catalog": "hidden", "allow": "none"},
                        {"allow": "read-only"}],
           "system_information": [{"user": "admin", "allow": ["read", "write"]}]}},
       "clusterConfig": {"worker": {"replicas": 1, "gracefulShutdown": {
           "gracePeriodSeconds": GRACE, "drainSeconds": GRACE}}},
       "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}},
                      {"name": "hidden", "properties": {"connector.name": "tpch"}}]}


@dataclass
class Together:
    booted: Booted
    worker_pod: dict[str, Any]  # the worker's pod spec from the chart (its preStop hook)


@pytest.fixture(scope="module")
def together(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Together]:
    root = tmp_path_factory.mktemp("trino-together")
    vault = make_vault(root)
    settings = secure_settings({"test-password": dict(OPTION)})
    cluster = classify(RawDocument('"trino-real-together"', DOC), settings)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, vault.resolved())
    pods = chart_pods.render(files[f"trino-clusters/{CID}/values.yaml"].decode(), CID)
    secrets = eso_secrets(files, vault)
    role_files = {role: pod_files(p, secrets) for role, p in pods.items()}
    booted = start(role_files, root, vault, [])
    try:
        yield Together(booted, pods["worker"].spec)
    finally:
        booted.cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


def _wait_for_worker(t: Together) -> None:
    deadline = time.monotonic() + BOOT_TIMEOUT
    nodes: list[list[Any]] = []
    while time.monotonic() < deadline:
        nodes = _https_query(t.booted, "SELECT coordinator, state FROM system.runtime.nodes",
                             PASSWORD)
        if [False, "active"] in nodes:
            return
        time.sleep(1)
    raise AssertionError(f"the worker never joined: {nodes}")


def test_the_signed_in_user_is_the_one_the_rules_judge(together: Together) -> None:
    """alice, signed in with her password over HTTPS, reads tpch on the worker, does not see the
    catalog the rules deny her, and is refused a query on it."""
    _wait_for_worker(together)
    b = together.booted
    assert _https_query(b, "SELECT count(*) FROM tpch.tiny.nation", PASSWORD) == [[25]]
    catalogs = {row[0] for row in _https_query(b, "SHOW CATALOGS", PASSWORD)}
    assert "tpch" in catalogs and "hidden" not in catalogs
    with pytest.raises(trino.exceptions.TrinoUserError, match="(?i)access denied|does not exist"):
        _https_query(b, "SELECT count(*) FROM hidden.tiny.nation", PASSWORD)


def test_the_charts_pre_stop_hook_still_shuts_the_worker_down(together: Together) -> None:
    """The chart's preStop request reaches the worker of an authenticated cluster and is obeyed:
    the worker logs the shutdown request and exits by itself within its budget."""
    _wait_for_worker(together)
    (container,) = [c for c in together.worker_pod["containers"] if c["name"] == "trino-worker"]
    script = container["lifecycle"]["preStop"]["exec"]["command"][2]
    assert "localhost:8080/v1/info/state" in script
    worker = together.booted.cluster.workers[0]
    port = javaprops.loads(worker.pod.files["/etc/trino/config.properties"])["http-server.http.port"]
    hook = "\n".join(ln for ln in script.splitlines() if "tail --pid=1" not in ln)
    hook = hook.replace("localhost:8080", f"127.0.0.1:{port}")
    done = subprocess.run(["/bin/sh", "-c", hook], capture_output=True, timeout=30, check=False)
    said = done.stderr.decode(errors="replace")
    # curl exits 0 on any HTTP status: its verbose output says what the worker answered
    assert "< HTTP/1.1 200" in said, said[-2000:]
    assert worker.proc is not None
    budget = together.worker_pod["terminationGracePeriodSeconds"]
    worker.proc.wait(timeout=budget)
    assert "Shutdown requested" in worker.log(), worker.tail()
