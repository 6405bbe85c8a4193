"""A real Trino reads the files trinogen attaches, where the chart mounts them (issue 13, item 6).

A hive catalog with legacy Hadoop (`fs.hadoop.enabled=true`, written by the platform's storage
option of type hdfs: a document may not write it) and `hive.config.resources` naming an attached
core-site.xml, and one whose Kerberos metastore keytab is an attached secret
file, go through trinogen and the real chart; the pod's files are
laid out from the chart's volumes and volumeMounts (trinogen's own ConfigMap included, and the
Secret of secret files filled as ESO would, with test bytes), changed only as
tests/test_trino_real.py's REWRITES list (paths under /etc/trino move below the node's
directory), and booted as a real Trino 476 coordinator. The controls boot the same files
without core-site.xml, and without the keytab: Trino must refuse to start naming the missing
file, which is why trinogen refuses a property naming a file that is not mounted.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings, with_hdfs
from tests.marks import REAL_TRINO, helm_python
from tests.test_trino_real import BOOT_TIMEOUT, DEAD_METASTORE, for_laptop, heap_factor
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.source import doc_key

pytestmark = REAL_TRINO

CID = "files"
CORE_SITE = ("<?xml version=\"1.0\"?>\n<configuration>\n  <property>\n"
             "    <name>hadoop.tmp.dir</name>\n    <value>/tmp/trinogen-hadoop</value>\n"
             "  </property>\n</configuration>\n")
CORE_SITE_POD = "/etc/trino/files/core-site.xml"
KEYTAB_POD = "/etc/trino/secret-files/trino.keytab"
DOCUMENT = {
    "_id": "trino-real-files", "clusterId": CID, "owner": "qa_team", "enabled": True,
    "files": [
        {"name": "core-site.xml", "content": CORE_SITE},
        {"name": "trino.keytab", "secret": "{{ vault:secret/trino/files/kerberos#keytab }}",
         "encoding": "base64"},
    ],
    "connectors": [
        {"name": "hadoop", "storage": "hdfs", "properties": {
            "connector.name": "hive", "hive.metastore.uri": DEAD_METASTORE,
            "hive.config.resources": CORE_SITE_POD}},
        # Trino checks at startup that the metastore keytab exists (it logs in on first use)
        {"name": "kerberized", "properties": {
            "connector.name": "hive", "hive.metastore.uri": DEAD_METASTORE,
            "fs.native-s3.enabled": "true", "s3.region": "us-east-1",
            "hive.metastore.authentication.type": "KERBEROS",
            "hive.metastore.service.principal": "hive/_HOST@EXAMPLE.COM",
            "hive.metastore.client.principal": "trino@EXAMPLE.COM",
            "hive.metastore.client.keytab": KEYTAB_POD}},
        {"name": "tpch", "properties": {"connector.name": "tpch"}},
    ],
}
SECRET_BYTES = "test-bytes-standing-in-for-a-keytab\n"  # what ESO would write into the Secret


def pod_files(files: Mapping[str, bytes], objects: list[dict[str, Any]], role: str) -> ts.NodeFiles:
    """What one role's container sees: every volumeMount resolved to its ConfigMap (the chart's
    or trinogen's manifests) or Secret (keys from trinogen's ExternalSecrets, values as a fake
    ESO writes them)."""
    config_maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects
                   if o.get("kind") == "ConfigMap"}
    secrets: dict[str, dict[str, str]] = {}
    for path, raw in files.items():
        obj = yaml.safe_load(raw) if path.endswith(".yaml") else None
        if not isinstance(obj, dict):
            continue
        if obj.get("kind") == "ConfigMap":
            config_maps[obj["metadata"]["name"]] = obj["data"]
        elif obj.get("kind") == "ExternalSecret":
            secrets[obj["spec"]["target"]["name"]] = {
                d["secretKey"]: SECRET_BYTES for d in obj["spec"]["data"]}
    (dep,) = [o for o in objects if o.get("kind") == "Deployment"
              and o["metadata"]["labels"]["app.kubernetes.io/component"] == role]
    spec = dep["spec"]["template"]["spec"]
    (container,) = [c for c in spec["containers"] if c["name"] == f"trino-{role}"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    out: dict[str, str] = {}
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "configMap" in volume:
            data = config_maps[volume["configMap"]["name"]]
            items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in data]
        else:
            assert "secret" in volume, f"unsupported volume {volume}"
            data = secrets[volume["secret"]["secretName"]]
            items = volume["secret"].get("items") or [{"key": k, "path": k} for k in data]
        for item in items:
            out[f"{mount['mountPath'].rstrip('/')}/{item['path']}"] = data[item["key"]]
    return ts.NodeFiles(out, {})


@pytest.fixture(scope="module")
def pods() -> dict[str, ts.NodeFiles]:
    settings = with_hdfs(demo_settings())
    cluster = classify(RawDocument(doc_key(DOCUMENT["_id"]), DOCUMENT), settings)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, {})
    chart = helm_python.Chart.load(CHART_DIR)
    values = helm_python.values_from_yaml(files[f"trino-clusters/{CID}/values.yaml"].decode())
    manifests = chart.render(values, name=CID, namespace=f"trino-{CID}", is_install=True)
    objects = [o for p, t in sorted(manifests.items()) if p.endswith(".yaml")
               for o in yaml.safe_load_all(t) if o]
    return {role: pod_files(files, objects, role) for role in ("coordinator", "worker")}


@dataclass
class Boot:
    started: bool
    log: str
    catalogs: list[str]
    rows: dict[str, list[list[Any]]] = field(default_factory=dict)  # each of `sql`'s answers


def boot_alone(pod: ts.NodeFiles, heap: float, dist: Path, root: Path,
               sql: tuple[str, ...] = ()) -> Boot:
    """A coordinator alone from `pod` (after REWRITES): did it start, what it said, its catalogs
    and its answers to `sql`."""
    aot = ts.aot_cache_path()
    port = ts.free_port()
    files = for_laptop(pod, root, dist / "plugin", port, port, heap, coordinator_alone=True,
                       aot=f"-XX:AOTCache={aot}" if aot.is_file() else None)
    node = ts.TrinoNode("coordinator", root, files)
    node.start(dist)
    try:
        state, _ = node.wait_outcome(BOOT_TIMEOUT)
        if state != "started":
            return Boot(False, node.log(), [])
        catalogs = [str(r[0]) for r in ts.when_scheduled(lambda: ts.query(port, "SHOW CATALOGS"))]
        # each query may meet the node scheduler's refresh anew on a loaded machine
        return Boot(True, node.log(), catalogs,
                    {q: ts.when_scheduled(lambda q=q: ts.query(port, q)) for q in sql})
    finally:
        node.stop()


@pytest.fixture(scope="module")
def boots(pods: dict[str, ts.NodeFiles], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Boot]:
    """The coordinator as rendered, and the same without one mounted file each (two at a time)."""
    dist = ts.distribution()
    heap = heap_factor(pods)
    pod = pods["coordinator"]

    def without(path: str) -> ts.NodeFiles:
        return ts.NodeFiles({p: t for p, t in pod.files.items() if p != path}, pod.env)

    cases = {"mounted": pod, "no core-site": without(CORE_SITE_POD), "no keytab": without(KEYTAB_POD)}
    root = tmp_path_factory.mktemp("trino-files")
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {k: pool.submit(boot_alone, files, heap, dist, root / k.replace(" ", "-"))
                   for k, files in cases.items()}
        out = {k: f.result() for k, f in futures.items()}
    print(f"\nattached files: {len(cases)} coordinators in {time.monotonic() - t0:.1f}s")
    shutil.rmtree(root, ignore_errors=True)
    return out


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_the_pods_see_the_attached_files_at_their_paths(pods: dict[str, ts.NodeFiles], role: str) -> None:
    """Both roles' containers have core-site.xml (the document's text) and the secret file."""
    files = pods[role].files
    assert files[CORE_SITE_POD] == CORE_SITE
    assert files[KEYTAB_POD] == SECRET_BYTES
    assert "/etc/trino/config.properties" in files  # the chart's own files are still there


def test_trino_starts_with_hadoop_resources_naming_the_mounted_file(boots: dict[str, Boot]) -> None:
    """With the files mounted, Trino starts and serves the catalogs that name them."""
    b = boots["mounted"]
    assert b.started, "\n".join(b.log.splitlines()[-40:])
    assert {"hadoop", "kerberized", "tpch"} <= set(b.catalogs)


@pytest.mark.parametrize(("case", "name"), [("no core-site", "core-site.xml"),
                                            ("no keytab", "trino.keytab")])
def test_trino_refuses_to_start_when_a_named_file_is_not_mounted(
        boots: dict[str, Boot], case: str, name: str) -> None:
    """Control: the same files without one of them stop Trino at startup, naming that file."""
    b = boots[case]
    tail = "\n".join(b.log.splitlines()[-40:])
    assert not b.started, tail
    assert "does not exist" in b.log and name in b.log, tail
