"""A real Trino 476 refuses to start with the spooling protocol on and no spooling manager.

The row `protocol.spooling.enabled` of `trinogen.trino.companions` says so from the jars; this
boots it (one coordinator, one boot). A document with only a tpch catalog goes through trinogen
and the real chart (tests/test_trino_real.py's way, its REWRITES unchanged); then the line a
document may not write is added to the coordinator's config.properties, with a valid 256-bit
shared secret beside it so that the missing spooling-manager.properties is the only thing wrong.
"""

from __future__ import annotations

import base64
import copy
import shutil
from pathlib import Path

import pytest

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python
from tests.test_trino_real import BOOT_TIMEOUT, for_laptop, heap_factor, render_pods
from trinogen.model import Failed, RawDocument, classify
from trinogen.model.checker import field_path

pytestmark = REAL_TRINO

CONFIG = "/etc/trino/config.properties"
DOC = {
    "_id": "trino-real-companions", "clusterId": "companions", "owner": "qa_team",
    "enabled": True,
    "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
}
SPOOLING = {
    "protocol.spooling.enabled": "true",
    # SpoolingConfig: @NotNull and @AssertTrue "must be 256 bits long" (32 bytes, base64)
    "protocol.spooling.shared-secret-key": base64.b64encode(bytes(range(32))).decode(),
}
# Trino 476's ConfigurationException from SpoolingManagerRegistry.loadSpoolingManager
SAID = "Spooling protocol is enabled, but manager configuration file does not exist"


def test_trinogen_refuses_the_document_trino_cannot_start() -> None:
    """The same line written in a document is refused at that property, naming what is missing."""
    body = {**copy.deepcopy(DOC), "properties": {"protocol.spooling.enabled": "true"}}
    outcome = classify(RawDocument('"trino-real-companions"', body), demo_settings())
    assert isinstance(outcome, Failed), outcome
    assert any(p.field == field_path("properties", "protocol.spooling.enabled")
               and "spooling-manager.properties" in p.message for p in outcome.problems)


def test_spooling_without_a_manager_stops_trino_at_startup(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With protocol.spooling.enabled=true and no spooling-manager.properties the coordinator
    exits before SERVER STARTED, saying the manager's file does not exist."""
    pods = render_pods(DOC, demo_settings(), helm_python.Chart.load(CHART_DIR))
    dist = ts.distribution()
    root = tmp_path_factory.mktemp("trino-companions")
    pod = pods.role["coordinator"]
    assert "/etc/trino/spooling-manager.properties" not in pod.files
    files = dict(pod.files)
    files[CONFIG] = ts.properties_with(files[CONFIG], dict(SPOOLING))
    port = ts.free_port()
    node = ts.TrinoNode("coordinator", root, for_laptop(
        ts.NodeFiles(files, pod.env), root, dist / "plugin", port, port,
        heap_factor(pods.role), coordinator_alone=True))
    node.start(dist)
    try:
        state, code = node.wait_outcome(BOOT_TIMEOUT)
        log, tail = node.log(), node.tail()
    finally:
        node.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert (state, SAID in log) == ("exited", True), f"{state} {code}:\n{tail}"
    assert code != 0


def test_the_boot_changes_only_the_spooling_lines(tmp_path: Path) -> None:
    """Apart from the two spooling lines, the booted config.properties is the pod's."""
    pods = render_pods(DOC, demo_settings(), helm_python.Chart.load(CHART_DIR))
    before = pods.role["coordinator"].files[CONFIG]
    after = ts.properties_with(before, dict(SPOOLING))
    assert [ln for ln in after.splitlines() if ln not in before.splitlines()] == [
        f"{k}={v}" for k, v in SPOOLING.items()]
