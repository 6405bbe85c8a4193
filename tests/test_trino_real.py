"""A real Trino accepts what trinogen writes, and refuses the mistakes it must refuse (issue 10).

Every example in config/examples/ and the documents below go through trinogen and the real chart
(`../shared/charts/trino` with helm-python-sdk); the chart's ConfigMaps are laid out as the pods
mount them, changed only as REWRITES lists (for a laptop), and booted as a real Trino
(tests/trino_server.py: the Maven Central release, coordinator plus one worker on 127.0.0.1).
The Trino client (PyPI `trino`) then checks the catalogs and runs a query on the worker. No
catalog's remote system is contacted: connectors connect on first use, and the tests query only
tpch and system.

MISTAKES is the other half: one Trino-level mistake each, injected into the files of a valid
document; Trino itself must refuse to start and name the property (one control shows that a
misspelt node.* key is silently ignored, which is why trinogen must catch it). Each entry also
states the mistake as a document would, so trinogen's own validation can be held to the same list.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import javaprops
from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings, example_docs
from tests.marks import REAL_TRINO, helm_python, trino
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.source import doc_key

pytestmark = REAL_TRINO

BOOT_TIMEOUT = 300.0  # seconds; 2 shared cores, several JVMs
TARGET_HEAP_MIB = 1024  # the larger role's heap is scaled to this

# --- what is changed for a laptop, and why (the only differences from the pods) ---------------


@dataclass(frozen=True)
class Rewrite:
    file: str
    key: str  # a property key, a JVM flag prefix, or a launcher option
    becomes: str
    why: str


REWRITES = (
    Rewrite("jvm.config", "-agentpath:/usr/lib/trino/bin/libjvmkill.so", "dropped",
            "the container image ships libjvmkill.so; the Maven Central tarball does not"),
    Rewrite("jvm.config", "-Xmx", "x f (one factor per document: larger heap -> 1024M)",
            "two JVMs per document on a 2-core machine; a common factor keeps Trino's startup "
            "check (max-memory-per-node + headroom <= heap) exactly as in the pods"),
    Rewrite("jvm.config", "-Xms", "x f", "as -Xmx"),
    Rewrite("config.properties", "query.max-memory-per-node", "x f", "as -Xmx"),
    Rewrite("config.properties", "memory.heap-headroom-per-node", "x f (absolute sizes)",
            "as -Xmx"),
    Rewrite("config.properties", "query.max-memory", "x f", "kept in proportion to the nodes"),
    Rewrite("config.properties", "query.max-total-memory", "x f", "kept in proportion"),
    Rewrite("config.properties", "http-server.http.port", "a free port per node",
            "each pod has its own IP and port 8080; locally the nodes share 127.0.0.1"),
    Rewrite("config.properties", "discovery.uri", "http://127.0.0.1:<coordinator port>",
            "pods reach the coordinator as localhost:8080 or through the Service"),
    Rewrite("node.properties", "node.data-dir", "<node>/data", "the pod's /data/trino"),
    Rewrite("node.properties", "plugin.dir", "<distribution>/plugin (every plugin)",
            "the image's /usr/lib/trino/plugin"),
    Rewrite("jvm.config", "-XX:TieredStopAtLevel=1", "added",
            "JIT with C1 only: half the CPU time to boot (coordinator of `sources`: 21 s of "
            "CPU instead of 39 s) on 2 shared cores; no config check depends on the compiler"),
    Rewrite("jvm.config", "-XX:AOTCache=", "added: <cache>/aot/trino-server-476-jdk-<id>.aot",
            "classes pre-parsed and linked by a first training boot (JDK 25 AOT cache): 30% "
            "less CPU per boot (19 s -> 13.5 s); the JVM ignores a cache that does not match"),
    Rewrite("node.properties", "node.internal-address", "added: 127.0.0.1",
            "a pod announces its pod IP; here every node is on the loopback"),
    Rewrite("any .properties", "values starting with /etc/trino/", "<node>/pod/etc/trino/...",
            "files the chart mounts at /etc/trino live below the node's directory"),
    Rewrite("launcher", "-Dnode.id", "added: coordinator / worker-0",
            "the image's run-trino passes -Dnode.id=$HOSTNAME"),
    Rewrite("config.properties", "node-scheduler.include-coordinator", "true (MISTAKES only)",
            "the negative cases boot a coordinator alone to save time"),
)
_REWRITTEN_KEYS = {r.key for r in REWRITES}

_JVM_SIZE = re.compile(r"(\d+)([kKmMgGtT]?)")
_JVM_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_DATA_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(B|kB|MB|GB|TB|PB)")
_DATA_UNIT = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}
_SCALED_SIZES = ("query.max-memory-per-node", "memory.heap-headroom-per-node",
                 "query.max-memory", "query.max-total-memory")
MiB = 1 << 20


def _jvm_bytes(text: str) -> int:
    m = _JVM_SIZE.fullmatch(text)
    assert m, f"not a JVM size: {text!r}"
    return int(m.group(1)) * _JVM_UNIT[m.group(2).lower()]


def _scaled_data_size(text: str, factor: float) -> str:
    m = _DATA_SIZE.fullmatch(text.strip())
    if m is None:  # a relative value (a percentage) does not depend on the heap
        return text
    return f"{max(1, int(float(m.group(1)) * _DATA_UNIT[m.group(2)] * factor) // MiB)}MB"


def heap_factor(pods: Mapping[str, ts.NodeFiles]) -> float:
    heaps = [_jvm_bytes(line.strip()[4:]) for p in pods.values()
             for line in p.files["/etc/trino/jvm.config"].splitlines()
             if line.strip().startswith("-Xmx")]
    return min(1.0, TARGET_HEAP_MIB * MiB / max(heaps))


def for_laptop(pod: ts.NodeFiles, node_root: Path, plugin_dir: Path, port: int,
               coordinator_port: int, factor: float, *, coordinator_alone: bool = False,
               aot: str | None = None) -> ts.NodeFiles:
    """The pod's files with exactly the REWRITES applied."""
    local_etc = str(node_root / "pod" / "etc" / "trino")
    files = {}
    for path, text in pod.files.items():
        if path.endswith("/jvm.config"):
            lines = []
            for line in text.splitlines():
                s = line.strip()
                if s == "-agentpath:/usr/lib/trino/bin/libjvmkill.so":
                    continue
                if s.startswith(("-Xmx", "-Xms")):
                    size = int(_jvm_bytes(s[4:]) * factor) // MiB
                    line = f"{s[:4]}{size}M"
                lines.append(line)
            lines.append("-XX:TieredStopAtLevel=1")
            if aot is not None:
                lines.append(aot)
            text = "\n".join(lines) + "\n"
        elif path.endswith(".properties"):
            props = javaprops.loads(text)
            changes: dict[str, str | None] = {
                k: local_etc + v[len("/etc/trino"):] for k, v in props.items()
                if v.startswith("/etc/trino/")}
            if path == "/etc/trino/config.properties":
                changes["http-server.http.port"] = str(port)
                changes["discovery.uri"] = f"http://127.0.0.1:{coordinator_port}"
                for key in _SCALED_SIZES:
                    if key in props:
                        changes[key] = _scaled_data_size(props[key], factor)
                if coordinator_alone:
                    changes["node-scheduler.include-coordinator"] = "true"
            elif path == "/etc/trino/node.properties":
                changes["node.data-dir"] = str(node_root / "data")
                changes["plugin.dir"] = str(plugin_dir)
                changes["node.internal-address"] = "127.0.0.1"
            text = ts.properties_with(text, changes)
        files[path] = text
    return ts.NodeFiles(files, dict(pod.env))


# --- documents --------------------------------------------------------------------------------

# Nothing listens on these: every connector below contacts its system lazily, on first use.
DEAD_METASTORE = "thrift://127.0.0.1:9"
S3_FS = {"fs.native-s3.enabled": "true", "s3.region": "us-east-1"}


def _doc(cluster_id: str, connectors: list[dict[str, Any]], **body: Any) -> dict[str, Any]:
    return {"_id": f"trino-real-{cluster_id}", "clusterId": cluster_id, "owner": "qa_team",
            "enabled": True, "connectors": connectors, **body}


def _catalog(name: str, connector: str, **props: str) -> dict[str, Any]:
    return {"name": name, "properties": {"connector.name": connector, **props}}


TEST_DOCS = [
    _doc("lakes", [
        _catalog("hive", "hive", **{"hive.metastore.uri": DEAD_METASTORE}, **S3_FS),
        _catalog("iceberg", "iceberg", **{"iceberg.catalog.type": "hive_metastore",
                                          "hive.metastore.uri": DEAD_METASTORE}, **S3_FS),
        _catalog("delta", "delta_lake", **{"hive.metastore.uri": DEAD_METASTORE}, **S3_FS),
        _catalog("tpch", "tpch"),
    ]),
    _doc("sources", [
        _catalog("pg", "postgresql", **{
            "connection-url": "jdbc:postgresql://127.0.0.1:9/dw", "connection-user": "trino",
            "connection-password": "{{ PG_PASSWORD }}"}),
        _catalog("mysql", "mysql", **{
            "connection-url": "jdbc:mysql://127.0.0.1:9", "connection-user": "trino",
            "connection-password": "{{ MYSQL_PASSWORD }}"}),
        _catalog("events", "kafka", **{"kafka.nodes": "127.0.0.1:9",
                                       "kafka.table-names": "orders"}),
        _catalog("search", "opensearch", **{"opensearch.host": "127.0.0.1",
                                            "opensearch.port": "9",
                                            "opensearch.default-schema-name": "default"}),
        _catalog("scratch", "memory", **{"memory.max-data-per-node": "64MB"}),
        _catalog("sink", "blackhole"),
        _catalog("tpch", "tpch", **{"tpch.splits-per-node": "2"}),
        _catalog("tpcds", "tpcds"),
    ], properties={
        "query": {"max-execution-time": "1h", "max-run-time": "2h"},
        "exchange": {"compression-codec": "LZ4"},
        "optimizer": {"join-reordering-strategy": "AUTOMATIC"},
    }),
]
DOCS = {d["clusterId"]: d for d in [*example_docs(), *TEST_DOCS]}
CASES = sorted(DOCS)


# --- through trinogen and the chart into what the pods see ------------------------------------


@dataclass
class Pods:
    """One document's coordinator and worker as the chart has the pods mount them."""

    cluster_id: str
    catalogs: set[str]  # the catalogs the document declares (lowercased, as Trino names them)
    role: dict[str, ts.NodeFiles] = field(default_factory=dict)


def _dummy(key: str) -> str:
    return f"dummy-{key.lower()}"


def render_pods(doc: Mapping[str, Any], settings: Settings, chart: Any) -> Pods:
    doc = copy.deepcopy(dict(doc))
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    assert isinstance(outcome, Cluster), f"{doc['clusterId']} does not validate: {outcome}"
    files = Renderer(settings).render_cluster(outcome, {})
    cid = doc["clusterId"]
    values_text = files[f"{settings.output.clusters_dir}/{cid}/values.yaml"].decode()
    manifests = chart.render(helm_python.values_from_yaml(values_text), name=cid,
                             namespace=f"trino-{cid}", is_install=True)
    objects = [o for path, text in sorted(manifests.items()) if path.endswith((".yaml", ".yml"))
               for o in yaml.safe_load_all(text) if o]
    secrets = {}  # Secret name -> keys, as the ExternalSecret trinogen wrote would create it
    for path, raw in files.items():
        if path.endswith("/externalsecret.yaml"):
            es = yaml.safe_load(raw)
            secrets[es["spec"]["target"]["name"]] = [d["secretKey"] for d in es["spec"]["data"]]
    config_maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects
                   if o.get("kind") == "ConfigMap"}
    pods = Pods(cid, {c["name"].lower() for c in doc.get("connectors", [])})
    for o in objects:
        if o.get("kind") != "Deployment":
            continue
        role = o["metadata"]["labels"]["app.kubernetes.io/component"]
        spec = o["spec"]["template"]["spec"]
        (container,) = [c for c in spec["containers"] if c["name"] == f"trino-{role}"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        pod_files: dict[str, str] = {}
        for mount in container.get("volumeMounts", []):
            volume = volumes[mount["name"]]
            assert "configMap" in volume, f"{cid} {role}: unsupported volume {volume}"
            data = config_maps[volume["configMap"]["name"]]
            items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in data]
            for item in items:
                pod_files[f"{mount['mountPath'].rstrip('/')}/{item['path']}"] = data[item["key"]]
        env = {e["name"]: e["value"] for e in container.get("env") or [] if "value" in e}
        for source in container.get("envFrom") or []:
            name = source["secretRef"]["name"]
            assert name in secrets, f"{cid}: envFrom Secret {name} is created by no ExternalSecret"
            env.update({key: _dummy(key) for key in secrets[name]})
        pods.role[role] = ts.NodeFiles(pod_files, env)
    assert set(pods.role) == {"coordinator", "worker"}, f"{cid}: roles {set(pods.role)}"
    return pods


@pytest.fixture(scope="module")
def settings() -> Settings:
    return demo_settings()


@pytest.fixture(scope="module")
def chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


@pytest.fixture(scope="module")
def dist() -> Path:
    """The unpacked Trino distribution (downloaded into the cache on first use)."""
    return ts.distribution()


@pytest.fixture(scope="module")
def pods_of(settings: Settings, chart: Any) -> Callable[[str], Pods]:
    cache: dict[str, Pods] = {}

    def get(case: str) -> Pods:
        if case not in cache:
            cache[case] = render_pods(DOCS[case], settings, chart)
        return cache[case]

    return get


def boot_cluster(pods: Pods, dist: Path, root: Path, aot: str | None) -> ts.TrinoCluster:
    """Coordinator plus one worker from the pods' files (after REWRITES), started and ready."""
    factor = heap_factor(pods.role)
    cport, wport = ts.free_port(), ts.free_port()
    nodes = []
    for name, role, port in (("coordinator", "coordinator", cport), ("worker-0", "worker", wport)):
        node_root = root / name
        files = for_laptop(pods.role[role], node_root, dist / "plugin", port, cport, factor,
                           aot=aot)
        nodes.append(ts.TrinoNode(name, node_root, files))
    cluster = ts.TrinoCluster(nodes[0], nodes[1:], cport)
    cluster.start(dist, BOOT_TIMEOUT)
    return cluster


@pytest.fixture(scope="module")
def aot(pods_of: Callable[[str], Pods], dist: Path,
        tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """The jvm.config line using the JVM's AOT cache, made by one training boot the first time.

    The training boot is the `sources` coordinator alone; the JVM writes the cache when it
    exits. Written under a unique name and renamed, so concurrent runs never share a half.
    """
    final = ts.aot_cache_path()
    if not final.is_file():
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}")
        pods = pods_of("sources")
        root = tmp_path_factory.mktemp("trino-aot-training")
        port = ts.free_port()
        files = for_laptop(pods.role["coordinator"], root, dist / "plugin", port, port,
                           heap_factor(pods.role), coordinator_alone=True,
                           aot=f"-XX:AOTCacheOutput={tmp}")
        node = ts.TrinoNode("coordinator", root, files)
        node.start(dist)
        try:
            node.wait_started(BOOT_TIMEOUT)
        finally:
            node.stop(timeout=BOOT_TIMEOUT)  # the JVM writes the cache on its way out
        if tmp.is_file():
            os.replace(tmp, final)
        Path(f"{tmp}.config").unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
        shutil.rmtree(root, ignore_errors=True)
    return f"-XX:AOTCache={final}" if final.is_file() else None


@dataclass
class Running:
    pods: Pods
    cluster: ts.TrinoCluster
    nodes: list[list[object]]  # system.runtime.nodes once the worker was active


@pytest.fixture(scope="module", params=CASES)
def running(request: pytest.FixtureRequest, pods_of: Callable[[str], Pods], dist: Path,
            aot: str | None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One document's cluster, booted once for the tests below, stopped afterwards."""
    pods = pods_of(request.param)
    root = tmp_path_factory.mktemp(f"trino-{request.param}")
    t0 = time.monotonic()
    cluster = boot_cluster(pods, dist, root, aot)
    try:
        nodes = ts.wait_for_active_workers(cluster.port, 1, BOOT_TIMEOUT)
        print(f"\n{request.param}: started {cluster.boot_seconds}, worker active after "
              f"{time.monotonic() - t0:.1f}s")
        yield Running(pods, cluster, nodes)
    finally:
        cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


def test_rewrites_touch_only_what_the_table_lists(
    pods_of: Callable[[str], Pods], tmp_path: Path
) -> None:
    """Between the pods' files and the booted files only keys named in REWRITES differ."""
    for case in CASES:
        pods = pods_of(case)
        factor = heap_factor(pods.role)
        for role, pod in pods.role.items():
            local = for_laptop(pod, tmp_path / role, tmp_path / "plugin", 1, 2, factor,
                               coordinator_alone=True, aot="-XX:AOTCache=/x.aot")
            assert set(local.files) == set(pod.files) and local.env == pod.env
            for path, before in pod.files.items():
                after = local.files[path]
                if path.endswith(".properties"):
                    old, new = javaprops.loads(before), javaprops.loads(after)
                    changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
                    moved = {k for k in changed if old.get(k, "").startswith("/etc/trino/")}
                    assert changed - moved <= _REWRITTEN_KEYS, f"{case} {role} {path}"
                elif path.endswith("jvm.config"):
                    old_l = {ln.strip() for ln in before.splitlines()}
                    new_l = {ln.strip() for ln in after.splitlines()}
                    for line in old_l ^ new_l:
                        assert any(line.startswith(k) for k in _REWRITTEN_KEYS), line
                else:
                    assert after == before, f"{case} {role} {path}"


REQUIRED_CONNECTORS = {"hive", "iceberg", "delta_lake", "postgresql", "mysql", "kafka",
                       "opensearch", "memory", "blackhole", "tpch", "tpcds"}  # issue 10


def test_the_documents_cover_every_connector_the_issue_names() -> None:
    """The booted documents declare at least one catalog of each connector issue 10 lists."""
    declared = {c["properties"]["connector.name"] for d in DOCS.values() for c in d["connectors"]}
    assert REQUIRED_CONNECTORS <= declared


@pytest.mark.parametrize(("size", "factor", "expected"), [
    ("12GB", 1 / 28, "438MB"),  # 12 GiB / 28 = 438.86 MiB, rounded down
    ("100TB", 1 / 28, "3744914MB"),
    ("2GB", 1 / 6, "341MB"),
    ("512MB", 1.0, "512MB"),
    ("30%", 1 / 28, "30%"),  # a share of the heap scales by itself
    ("1B", 1 / 28, "1MB"),  # never 0
])
def test_data_sizes_scale_like_the_heap(size: str, factor: float, expected: str) -> None:
    """A Trino data size is multiplied by the heap factor in MiB (airlift's MB is 1024 KiB)."""
    assert _scaled_data_size(size, factor) == expected


def test_the_larger_heap_becomes_the_target_and_ratios_stay(tmp_path: Path) -> None:
    """With heaps 20G and 28G the worker gets 1024M, the coordinator 20/28 of it, in proportion."""
    pods = {role: ts.NodeFiles({"/etc/trino/jvm.config": f"-server\n-Xmx{heap}\n",
                                "/etc/trino/config.properties":
                                    "query.max-memory-per-node=12GB\nquery.max-memory=100TB\n"})
            for role, heap in (("coordinator", "20G"), ("worker", "28G"))}
    factor = heap_factor(pods)
    out = {role: for_laptop(p, tmp_path, tmp_path / "plugin", 1, 1, factor)
           for role, p in pods.items()}
    assert "-Xmx731M" in out["coordinator"].files["/etc/trino/jvm.config"].split()
    assert "-Xmx1024M" in out["worker"].files["/etc/trino/jvm.config"].split()
    config = javaprops.loads(out["worker"].files["/etc/trino/config.properties"])
    assert config["query.max-memory-per-node"] == "438MB"


@pytest.mark.parametrize(("text", "changes", "expected"), [
    ("a=1\nb=2\n", {"a": "9"}, "a=9\nb=2\n"),
    ("a=1\nb=2\n", {"a": None}, "b=2\n"),
    ("a=1\n", {"c": "3"}, "a=1\nc=3\n"),
    ("# a=1\na=1\n", {"a": "2"}, "# a=1\na=2\n"),
    ("a.b=x=y\n", {"a.b": "z"}, "a.b=z\n"),
])
def test_properties_with_replaces_removes_and_appends(
    text: str, changes: dict[str, str | None], expected: str
) -> None:
    """properties_with changes a key's line in place, drops it for None, appends new keys."""
    assert ts.properties_with(text, changes) == expected


class _Maven:
    """A local stand-in for Maven Central serving one artifact and its .sha1 over HTTP."""

    def __init__(self, body: bytes, sha1: str) -> None:
        import http.server
        import threading

        files = {"/g/a/1/a-1.zip": body, "/g/a/1/a-1.zip.sha1": f"{sha1}  a-1.zip\n".encode()}
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                data = files.get(self.path)
                self.send_response(200 if data is not None else 404)
                self.end_headers()
                self.wfile.write(data or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_downloads_are_checked_renamed_into_place_and_then_offline(tmp_path: Path) -> None:
    """A download whose sha1 matches lands in Maven's layout; the next call makes no request."""
    import hashlib

    body = b"artifact bytes" * 1000
    maven = _Maven(body, hashlib.sha1(body).hexdigest())
    try:
        path = ts.maven_file("g", "a", "1", "zip", cache=tmp_path, base_url=maven.url)
        assert path == tmp_path / "maven" / "g" / "a" / "1" / "a-1.zip"
        assert path.read_bytes() == body
        assert sorted(p.name for p in path.parent.iterdir()) == ["a-1.zip"]  # no partial file
        before = len(maven.requests)
        assert ts.maven_file("g", "a", "1", "zip", cache=tmp_path, base_url=maven.url) == path
        assert len(maven.requests) == before
    finally:
        maven.close()


def test_a_download_with_the_wrong_sha1_leaves_nothing(tmp_path: Path) -> None:
    """A body that does not match the published .sha1 fails and leaves no file, not even a part."""
    maven = _Maven(b"tampered", "0" * 40)
    try:
        with pytest.raises(ts.TrinoHarnessError, match="sha1"):
            ts.maven_file("g", "a", "1", "zip", cache=tmp_path, base_url=maven.url)
        assert list((tmp_path / "maven" / "g" / "a" / "1").iterdir()) == []
    finally:
        maven.close()


def test_show_catalogs_lists_exactly_the_declared_catalogs(running: Running) -> None:
    """SHOW CATALOGS on the real Trino is the document's catalogs plus system, nothing else."""
    rows = ts.query(running.cluster.port, "SHOW CATALOGS")
    assert {r[0] for r in rows} == running.pods.catalogs | {"system"}


def test_the_worker_joined_the_coordinator(running: Running) -> None:
    """system.runtime.nodes shows the coordinator and one active worker."""
    assert sorted((str(n), bool(c), str(s)) for n, c, s in running.nodes) == [
        ("coordinator", True, "active"), ("worker-0", False, "active")]


def test_tpch_nation_has_25_rows_where_declared(running: Running) -> None:
    """Where tpch is declared, a query the worker executes returns 25 nations; else no tpch."""
    if "tpch" in running.pods.catalogs:
        assert ts.query(running.cluster.port, "SELECT count(*) FROM tpch.tiny.nation") == [[25]]
    else:
        with pytest.raises(trino.exceptions.TrinoUserError, match="tpch"):
            ts.query(running.cluster.port, "SELECT count(*) FROM tpch.tiny.nation")


# --- the mistakes Trino refuses (and one it ignores) ------------------------------------------


@dataclass(frozen=True)
class Mistake:
    """One Trino-level mistake: where it goes, what Trino says, and how a document states it."""

    id: str
    description: str
    file: str  # a pod path: /etc/trino/config.properties, /etc/trino/catalog/<name>.properties
    key: str
    value: str
    message: str | None  # a fragment of Trino's startup error; None: Trino starts regardless
    document: dict[str, Any]  # the same mistake in a cluster document (MISTAKE_BASE + this)


MISTAKE_BASE = _doc("mistakes", [
    _catalog("pg", "postgresql", **{"connection-url": "jdbc:postgresql://127.0.0.1:9/dw",
                                    "connection-user": "trino"}),
    _catalog("lake", "hive", **{"hive.metastore.uri": DEAD_METASTORE}, **S3_FS),
])
_PG, _LAKE = "/etc/trino/catalog/pg.properties", "/etc/trino/catalog/lake.properties"
_CONFIG, _NODE = "/etc/trino/config.properties", "/etc/trino/node.properties"


def _in_catalog(name: str, key: str, value: str) -> dict[str, Any]:
    connectors = copy.deepcopy(MISTAKE_BASE["connectors"])
    for c in connectors:
        if c["name"] == name:
            c["properties"][key] = value
    return {"connectors": connectors}


def _in_properties(section: str, key: str, value: str) -> dict[str, Any]:
    return {"properties": {section: {key: value}}}


MISTAKES = (
    Mistake("catalog-typo", "a typo in a catalog property (postgresql)", _PG,
            "connection-pasword", "secret",
            "Configuration property 'connection-pasword' was not used",
            _in_catalog("pg", "connection-pasword", "secret")),
    Mistake("foreign-property", "another connector's property in a postgresql catalog", _PG,
            "hive.metastore.uri", DEAD_METASTORE,
            "Configuration property 'hive.metastore.uri' was not used",
            _in_catalog("pg", "hive.metastore.uri", DEAD_METASTORE)),
    Mistake("unknown-connector", "an unknown connector.name", _PG,
            "connector.name", "postgres", "No factory for connector 'postgres'",
            _in_catalog("pg", "connector.name", "postgres")),
    Mistake("server-typo", "a typo in a server property", _CONFIG,
            "query.max-memory-per-nod", "1GB",
            "Configuration property 'query.max-memory-per-nod' was not used",
            _in_properties("query", "max-memory-per-nod", "1GB")),
    Mistake("logger-in-config", "a logger level in config.properties", _CONFIG,
            "io.trino.plugin.hive", "DEBUG",
            "Configuration property 'io.trino.plugin.hive' was not used",
            _in_properties("io", "trino.plugin.hive", "DEBUG")),
    Mistake("hadoop-resources-without-hadoop", "hive.config.resources without fs.hadoop.enabled",
            _LAKE, "hive.config.resources", "/etc/trino/hadoop/core-site.xml",
            "Configuration property 'hive.config.resources' was not used",
            _in_catalog("lake", "hive.config.resources", "/etc/trino/hadoop/core-site.xml")),
    # @DefunctConfig of io.trino.plugin.hive.HiveConfig in trino-hive-476.jar (read with javap)
    Mistake("defunct", "a defunct hive property", _LAKE,
            "hive.s3select-pushdown.enabled", "true",
            "Defunct property 'hive.s3select-pushdown.enabled'",
            _in_catalog("lake", "hive.s3select-pushdown.enabled", "true")),
    Mistake("invalid-value", "a server property with a value of the wrong type", _CONFIG,
            "query.max-memory", "lots", "Invalid value 'lots' for type",
            _in_properties("query", "max-memory", "lots")),
    Mistake("node-typo", "a misspelt node.* property: Trino starts and ignores it", _NODE,
            "node.enviroment", "staging", None,
            _in_properties("node", "enviroment", "staging")),
)


def mistake_document(m: Mistake) -> dict[str, Any]:
    """MISTAKE_BASE with `m` applied, as a cluster document (for validating with trinogen)."""
    return {**copy.deepcopy(MISTAKE_BASE), "_id": f"trino-real-{m.id}", "clusterId": m.id,
            **copy.deepcopy(m.document)}


@dataclass
class BootOutcome:
    started: bool
    exit_code: int | None
    log: str
    seconds: float


def boot_with_mistake(pods: Pods, m: Mistake, dist: Path, root: Path,
                      aot: str | None) -> BootOutcome:
    """A coordinator alone from the base document's files plus `m`: did it start, what it said."""
    port = ts.free_port()
    pod = pods.role["coordinator"]
    assert m.file in pod.files, f"{m.id}: {m.file} is not a file of the pod"
    injected = dict(pod.files)
    injected[m.file] = ts.properties_with(pod.files[m.file], {m.key: m.value})
    files = for_laptop(ts.NodeFiles(injected, pod.env), root, dist / "plugin", port, port,
                       heap_factor(pods.role), coordinator_alone=True, aot=aot)
    node = ts.TrinoNode("coordinator", root, files)
    node.start(dist)
    try:
        state, code = node.wait_outcome(BOOT_TIMEOUT)
        return BootOutcome(state == "started", code, node.log(), time.monotonic() - node.started_at)
    finally:
        node.stop()


@pytest.fixture(scope="module")
def mistake_outcomes(
    settings: Settings, chart: Any, dist: Path, aot: str | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, BootOutcome]:
    """Every MISTAKES boot, two at a time (coordinator only, so each is one JVM)."""
    pods = render_pods(MISTAKE_BASE, settings, chart)
    root = tmp_path_factory.mktemp("trino-mistakes")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {m.id: pool.submit(boot_with_mistake, pods, m, dist, root / m.id, aot)
                   for m in MISTAKES}
        outcomes = {k: f.result() for k, f in futures.items()}
    for m in MISTAKES:
        o = outcomes[m.id]
        said = next((ln.strip() for ln in o.log.splitlines() if m.message and m.message in ln),
                    "started" if o.started else f"exited {o.exit_code}")
        print(f"\nmistake {m.id}: {o.seconds:.1f}s: {said[:200]}")
    shutil.rmtree(root, ignore_errors=True)
    return outcomes


@pytest.mark.parametrize("m", [m for m in MISTAKES if m.message], ids=lambda m: m.id)
def test_trino_refuses_to_start_naming_the_property(
    mistake_outcomes: dict[str, BootOutcome], m: Mistake
) -> None:
    """With the mistake in its file the real Trino exits at startup, naming the property."""
    o = mistake_outcomes[m.id]
    tail = "\n".join(o.log.splitlines()[-40:])
    assert not o.started, f"{m.id}: Trino started\n{tail}"
    assert o.exit_code != 0, tail
    assert m.message is not None and m.message in o.log, f"{m.id}: {m.message!r} not in\n{tail}"


def test_a_misspelt_node_property_is_silently_ignored(
    mistake_outcomes: dict[str, BootOutcome]
) -> None:
    """Control: node.enviroment starts a Trino that never mentions it (trinogen must catch it)."""
    o = mistake_outcomes["node-typo"]
    assert o.started, "\n".join(o.log.splitlines()[-40:])
    assert "enviroment" not in o.log.replace("-Dnode.enviroment", "")


def test_mistake_documents_state_the_same_mistake(settings: Settings, chart: Any) -> None:
    """Each MISTAKES document that trinogen renders today carries the key into the named file."""
    for m in MISTAKES:
        doc = mistake_document(m)
        if not isinstance(classify(RawDocument(doc_key(doc["_id"]), doc), settings), Cluster):
            continue  # trinogen refuses it already: that is the goal
        pod = render_pods(doc, settings, chart).role["coordinator"]
        assert javaprops.loads(pod.files[m.file]).get(m.key) == m.value, m.id
