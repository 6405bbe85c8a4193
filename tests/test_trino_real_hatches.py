"""A real Trino 476 booted with the JVM hatches, from the chart's ConfigMaps (issue 21, item 6).

A document with a jmx catalog picks a `runtime` option and an `images` mirror and goes through
trinogen's render (tests/hatch_rig.py), and the real chart renders the coordinator's files; the coordinator boots alone (tests/test_trino_real.py's
REWRITES, unchanged) with one more line in jvm.config, a flag the hatch refuses:
`-Dquery.max-length=200`. Trino then shows, in its own words, that
- the JVM runs every flag the option names and the JDK-8329528 pair trinogen writes for a mirror
  (the JVM's input arguments, read through Trino's jmx catalog);
- a Trino property given as a system property is Trino configuration (a longer query is
  refused), which is why `-D` of any property Trino reads is refused as a platform flag.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import yaml

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.hatch_rig import Picks, with_hatches
from tests.marks import REAL_TRINO, helm_python, trino
from tests.test_trino_real import BOOT_TIMEOUT, for_laptop, heap_factor
from trinogen.kinds.images import options as image
from trinogen.kinds.runtime import jvm
from trinogen.kinds.runtime import options as runtime

pytestmark = REAL_TRINO

DOC = {"_id": "trino-real-hatches", "clusterId": "hatches", "owner": "qa_team", "enabled": True,
       "connectors": [{"name": "jmx", "properties": {"connector.name": "jmx"}}]}
FLAGS = ["-XX:+UseStringDeduplication", "-Dtrinogen.hatch=on"]
COORDINATOR_FLAGS = ["-XX:MaxDirectMemorySize=512M"]
PICKS = Picks(image={"repository": "registry.example.com/mirror/trino"},
              runtime={"jvm": FLAGS, "coordinator_jvm": COORDINATOR_FLAGS})
REFUSED = "-Dquery.max-length=200"  # added to jvm.config by this test, as no option can
LIMIT_SAID = "exceeds the maximum length (200)"


def _pod_files(values: dict[str, Any], cid: str) -> dict[str, ts.NodeFiles]:
    """Each role's files and env as the chart's pods mount them (ConfigMaps only here)."""
    chart = helm_python.Chart.load(CHART_DIR)
    manifests = chart.render(helm_python.values_from_yaml(yaml.safe_dump(values)), name=cid,
                             namespace=f"trino-{cid}", is_install=True)
    objects = [o for p, t in sorted(manifests.items()) if p.endswith(".yaml")
               for o in yaml.safe_load_all(t) if o]
    maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects
            if o.get("kind") == "ConfigMap"}
    out = {}
    for o in objects:
        if o.get("kind") != "Deployment":
            continue
        role = o["metadata"]["labels"]["app.kubernetes.io/component"]
        spec = o["spec"]["template"]["spec"]
        (c,) = [c for c in spec["containers"] if c["name"] == f"trino-{role}"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        files = {}
        for m in c.get("volumeMounts", []):
            data = maps[volumes[m["name"]]["configMap"]["name"]]
            files.update({f"{m['mountPath'].rstrip('/')}/{k}": v for k, v in data.items()})
        out[role] = ts.NodeFiles(files, {e["name"]: e["value"] for e in c.get("env") or []})
    return out


def _when_scheduling(port: int, sql: str, timeout: float = 90) -> list[list[object]]:
    """The query's rows once the coordinator has announced itself as its own worker."""
    return ts.when_scheduled(lambda: ts.query(port, sql), timeout)


def test_the_refused_flag_is_refused_by_the_hatch() -> None:
    """The flag this test adds by hand is one a runtime option cannot carry."""
    assert "is a Trino property" in (jvm.problem(REFUSED, runtime.trino_reads) or "")


def test_trino_runs_the_hatch_flags_and_reads_system_properties_as_config(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The booted coordinator's JVM has every option flag and the pinned-region pair; a query
    longer than the -D limit is refused, a shorter one answers."""
    r = with_hatches(DOC, demo_settings(), PICKS)
    pods = _pod_files(r.values, "hatches")
    dist, root = ts.distribution(), tmp_path_factory.mktemp("trino-hatches")
    port = ts.free_port()
    files = for_laptop(pods["coordinator"], root, dist / "plugin", port, port,
                       heap_factor(pods), coordinator_alone=True)
    files.files["/etc/trino/jvm.config"] += REFUSED + "\n"
    node = ts.TrinoNode("coordinator", root, files)
    node.start(dist)
    try:
        node.wait_started(BOOT_TIMEOUT)
        ((arguments,),) = _when_scheduling(
            port, 'SELECT inputarguments FROM jmx.current."java.lang:type=runtime"')
        padded = "SELECT 1" + " " * 200
        with pytest.raises(trino.exceptions.TrinoQueryError) as refused:
            ts.query(port, padded)
        assert ts.query(port, "SELECT 1") == [[1]]
    finally:
        node.stop()
        shutil.rmtree(root, ignore_errors=True)
    for flag in [*FLAGS, *COORDINATOR_FLAGS, *image.PINNED_REGION_FLAGS, REFUSED]:
        assert flag in str(arguments), flag
    assert LIMIT_SAID in str(refused.value)
