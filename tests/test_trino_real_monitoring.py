"""A real Trino with `monitoring.jmx` exports its metrics through the JMX exporter (issue 14.5).

A document with `"monitoring": {"jmx": true}` goes through trinogen and the real chart; its
coordinator's files are booted as a real Trino 476 (tests/trino_server.py, the REWRITES of
tests/test_trino_real.py plus the ones below), and the Prometheus JMX exporter is run as the
chart's sidecar runs it (`<port> <config file>`, the config from the chart's exporter ConfigMap).
The exporter must reach the JVM through the RMI registry the chart opened, and serve Trino's own
MBeans: the count of completed queries rises after a query.

The container image is bitnami's jmx-exporter 1.4.0; Maven Central (as this machine reaches it)
serves the same standalone HTTP server as `io.prometheus.jmx:jmx_prometheus_httpserver:1.0.1`
(same configuration format in 1.x), which is what runs here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python
from tests.test_chart import render_through_chart
from tests.test_trino_real import BOOT_TIMEOUT, for_laptop, heap_factor, render_pods
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings

pytestmark = REAL_TRINO

EXPORTER = ("io.prometheus.jmx", "jmx_prometheus_httpserver", "1.0.1", "jar")
DOC = {"_id": "trino-real-metrics", "clusterId": "metrics", "owner": "qa_team", "enabled": True,
       "monitoring": {"jmx": True},
       "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}]}
# Besides tests/test_trino_real.py's REWRITES, the boot below changes only the JMX ports: the pod's
# fixed 9080/9081 (jmx.rmiregistry.port, jmx.rmiserver.port in config.properties,
# -Dcom.sun.management.jmxremote.rmi.port in jvm.config) become free ports, as the HTTP port does
# (the nodes share 127.0.0.1 here), and the exporter's hostPort follows them.


@dataclass
class Exported:
    trino_port: int
    metrics_url: str
    config: dict[str, Any]  # the exporter config as the chart's ConfigMap has it


def _metrics(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return str(r.read().decode("utf-8"))


def _wait_for_metrics(url: str, proc: subprocess.Popen[bytes], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ts.TrinoHarnessError(f"the JMX exporter exited with {proc.returncode}")
        try:
            text = _metrics(url)
            if "QueryManager" in text:
                return text
        except OSError:
            pass
        time.sleep(1)
    raise ts.TrinoHarnessError(f"no Trino metrics at {url} within {timeout:.0f}s")


def _counter(text: str, pattern: str) -> float:
    values = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
              if not line.startswith("#") and re.search(pattern, line.split(" ", 1)[0])]
    assert values, f"no metric matching {pattern!r}"
    return max(values)


@pytest.fixture(scope="module")
def settings() -> Settings:
    return demo_settings()


@pytest.fixture(scope="module")
def exported(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """The document's coordinator booted alone, and the exporter beside it, as in the pod."""
    chart = helm_python.Chart.load(CHART_DIR)
    cluster = classify(RawDocument('"trino-real-metrics"', dict(DOC)), settings)
    assert isinstance(cluster, Cluster), cluster
    values = Renderer(settings).render_cluster(cluster, {})["trino-clusters/metrics/values.yaml"]
    _, objects = render_through_chart(chart, values.decode(), "metrics", "trino-metrics")
    (config_map,) = [o for o in objects if o.get("kind") == "ConfigMap" and o["metadata"]["name"]
                     == "metrics-trino-jmx-exporter-config-coordinator"]
    exporter_text = config_map["data"]["jmx-exporter-config.yaml"]
    pods = render_pods(DOC, settings, chart)

    dist = ts.distribution()
    jar = ts.maven_file(*EXPORTER)
    root = tmp_path_factory.mktemp("trino-metrics")
    port, registry, server, metrics_port = (ts.free_port() for _ in range(4))
    files = for_laptop(pods.role["coordinator"], root / "coordinator", dist / "plugin", port,
                       port, heap_factor(pods.role), coordinator_alone=True)
    etc = files.files
    etc["/etc/trino/config.properties"] = ts.properties_with(
        etc["/etc/trino/config.properties"],
        {"jmx.rmiregistry.port": str(registry), "jmx.rmiserver.port": str(server)})
    etc["/etc/trino/jvm.config"] = re.sub(
        r"-Dcom\.sun\.management\.jmxremote\.rmi\.port=\d+",
        f"-Dcom.sun.management.jmxremote.rmi.port={server}", etc["/etc/trino/jvm.config"])
    node = ts.TrinoNode("coordinator", root / "coordinator", files)
    config = yaml.safe_load(exporter_text)
    local_config = dict(config, hostPort=f"localhost:{registry}")
    config_path = root / "jmx-exporter-config.yaml"
    config_path.write_text(yaml.safe_dump(local_config), encoding="utf-8")
    exporter: subprocess.Popen[bytes] | None = None
    node.start(dist)
    try:
        node.wait_started(BOOT_TIMEOUT)
        with (root / "exporter.log").open("wb") as log:
            exporter = subprocess.Popen(
                [str(ts.JAVA_HOME / "bin" / "java"), "-jar", str(jar), f"127.0.0.1:{metrics_port}",
                 str(config_path)], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        _wait_for_metrics(url, exporter, 120)
        yield Exported(port, url, config)
    finally:
        if exporter is not None:
            exporter.terminate()
            try:
                exporter.wait(timeout=30)
            except subprocess.TimeoutExpired:
                exporter.kill()
                exporter.wait(timeout=30)
        node.stop()
    shutil.rmtree(root, ignore_errors=True)


def test_the_chart_opens_the_jmx_ports_trinogen_configured(settings: Settings) -> None:
    """What the boot below rewrites is exactly the JMX ports the chart wrote for the pod."""
    chart = helm_python.Chart.load(CHART_DIR)
    pods = render_pods(DOC, settings, chart)
    conf = pods.role["coordinator"].files["/etc/trino/config.properties"].splitlines()
    jvm = pods.role["coordinator"].files["/etc/trino/jvm.config"].splitlines()
    assert "jmx.rmiregistry.port=9080" in conf and "jmx.rmiserver.port=9081" in conf
    assert "-Dcom.sun.management.jmxremote.rmi.port=9081" in jvm


def test_the_exporter_config_points_at_the_registry_in_the_pod(exported: Exported) -> None:
    """The exporter's hostPort is the pod's own RMI registry port (localhost:9080)."""
    assert exported.config["hostPort"] == "localhost:9080"


def test_trinos_own_metrics_are_exported_and_move(exported: Exported) -> None:
    """The exporter serves Trino's QueryManager MBean: completed queries rise after a query."""
    pattern = r"QueryManager.*CompletedQueries.*TotalCount"
    before = _counter(_metrics(exported.metrics_url), pattern)
    assert ts.query(exported.trino_port, "SELECT count(*) FROM tpch.tiny.nation") == [[25]]
    deadline = time.monotonic() + 60
    after = before
    while time.monotonic() < deadline and after <= before:
        time.sleep(1)
        after = _counter(_metrics(exported.metrics_url), pattern)
    assert after >= before + 1

