"""A real Trino serves a large result through the client spooling protocol as trinogen writes it.

A storage option with a `spooling` block (the location per cluster, the shared secret key in
Vault) and a document that opts in with `spooling: {storage, inlining: {maxRows: 10}}` go
through trinogen (classify, render) and the real chart, and boot Trino 476 as a coordinator
plus one worker from the pods' files (tests/test_trino_real.py's REWRITES only). Trino 476
spools to s3://, gs:// or abfs:// only, never to a local path, so the store is
tests/s3_server.py: an S3-compatible server on loopback that keeps each object as a file in
this run's directory; the settings name its endpoint as a platform names its own. The
environment the ExternalSecret fills holds, as Vault would, a real base64 256-bit key for the
shared secret (Trino checks its length); the S3 credentials are stand-ins (the server checks no
signature).

Then the Python client (`trino`, encodings json+zstd and json) reads 60,175 rows: the worker
wrote segments into the bucket's directory, the client downloaded them from the store (not from
Trino), and the rows match what Trino counts and sums on its own; a 5-row result stays inline.
"""

from __future__ import annotations

import base64
import dataclasses
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests import javaprops
from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python
from tests.s3_server import S3Server
from tests.test_trino_real import BOOT_TIMEOUT, Pods, for_laptop, heap_factor, render_pods
from trinogen.model.spooling import MANAGER_FILE, SECRET_KEY
from trinogen.secrets import settings_use
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind

pytestmark = REAL_TRINO

CLUSTER, OWNER, BUCKET = "spool", "qa_team", "trino-spool"
KEY_REF = "secret/trino/{cluster}/spooling#key"
SPOOLING = {"location": f"s3://{BUCKET}/{{cluster}}", "shared_secret_key": KEY_REF,
            "segment_ttl": "1h"}
DOC = {
    "_id": "trino-real-spooling", "clusterId": CLUSTER, "owner": OWNER, "enabled": True,
    "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
    # at most 10 rows per worker inline, anything larger spooled
    "spooling": {"storage": "spool", "inlining": {"maxRows": 10}},
}
KEY = base64.b64encode(bytes(range(32))).decode()  # what Vault would hold: 256 bits, base64
# Trino 476 inlines what a worker still buffers when its output ends if that is under 2MB
# (OutputSpoolingOperator.SPOOLING_THRESHOLD), whatever the inline limits: a spooled result must
# be larger. Every column of tpch.tiny.lineitem, 60,175 rows, is several megabytes.
BIG = "SELECT * FROM tpch.tiny.lineitem"
BIG_CHECK = "SELECT count(*), sum(orderkey), sum(partkey) FROM tpch.tiny.lineitem"
SMALL = "SELECT nationkey, name FROM tpch.tiny.nation WHERE regionkey = 1"  # 5 rows


def settings(endpoint: str) -> Settings:
    """The demo settings with one S3 store at `endpoint` that offers spooling."""
    store = {"type": "s3", "region": "us-east-1", "endpoint": endpoint,
             "path_style_access": True, "spooling": SPOOLING,
             "credentials": {"vault": {"access_key": "secret/trino/{cluster}/s3#access_key",
                                       "secret_key": "secret/trino/{cluster}/s3#secret_key"}}}
    s = demo_settings()
    return dataclasses.replace(s, named={**s.named,
                                         "storage": parse_kind("storage", {"spool": store}, "t")})


def key_env() -> str:
    """The variable that carries the shared secret key (the ExternalSecret fills it)."""
    return settings_use(KEY_REF, CLUSTER, OWNER).env


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[S3Server, str]]:
    server = S3Server(tmp_path_factory.mktemp("s3"))
    endpoint = server.start()
    try:
        yield server, endpoint
    finally:
        server.stop()


@pytest.fixture(scope="module")
def pods(s3: tuple[S3Server, str]) -> Pods:
    return render_pods(DOC, settings(s3[1]), helm_python.Chart.load(CHART_DIR))


@pytest.fixture(scope="module")
def cluster(pods: Pods, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    dist = ts.distribution()
    root = tmp_path_factory.mktemp("trino-spooling")
    factor = heap_factor(pods.role)
    cport, wport = ts.free_port(), ts.free_port()
    nodes = []
    for name, role, port in (("coordinator", "coordinator", cport), ("worker-0", "worker", wport)):
        files = for_laptop(pods.role[role], root / name, dist / "plugin", port, cport, factor)
        assert files.env[key_env()] == "dummy-" + key_env().lower()  # render_pods' stand-in
        files.env[key_env()] = KEY
        nodes.append(ts.TrinoNode(name, root / name, files))
    trino_cluster = ts.TrinoCluster(nodes[0], nodes[1:], cport)
    trino_cluster.start(dist, BOOT_TIMEOUT)
    try:
        ts.wait_for_active_workers(cport, 1, BOOT_TIMEOUT)
        yield cport
    finally:
        trino_cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def fetch(port: int, sql: str) -> list[list[Any]]:
    import trino

    conn = trino.dbapi.connect(host="127.0.0.1", port=port, user="trinogen-test",
                               http_scheme="http", request_timeout=120,
                               encoding=["json+zstd", "json"])
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()


def segment_writes(server: S3Server) -> list[str]:
    return [r.path for r in server.requests if r.method in ("PUT", "POST")
            and r.path.startswith(f"{BUCKET}/{CLUSTER}/") and "uploads" not in r.query]


def test_both_roles_mount_the_same_spooling_manager(pods: Pods) -> None:
    """The chart puts the one spooling-manager.properties into /etc/trino of both roles, with
    the cluster's location (a trailing slash added) and the store's S3 settings."""
    coordinator, worker = (pods.role[r].files for r in ("coordinator", "worker"))
    path = f"/etc/trino/{MANAGER_FILE}"
    assert coordinator[path] == worker[path]
    props = javaprops.loads(worker[path])
    assert props["spooling-manager.name"] == "filesystem"
    assert props["fs.location"] == f"s3://{BUCKET}/{CLUSTER}/"
    assert (props["fs.s3.enabled"], props["s3.path-style-access"]) == ("true", "true")
    assert props["fs.segment.ttl"] == "1h"
    for role in ("coordinator", "worker"):
        config = javaprops.loads(pods.role[role].files["/etc/trino/config.properties"])
        assert config["protocol.spooling.enabled"] == "true"
        assert config[SECRET_KEY] == f"${{ENV:{key_env()}}}"
        assert key_env() in pods.role[role].env  # from the ExternalSecret trinogen wrote


def test_a_large_result_reaches_the_client_through_spooled_segments(
        s3: tuple[S3Server, str], cluster: int) -> None:
    """60,175 rows come back through segments the worker wrote into the spool directory and
    the client downloaded from the store; count and sums agree with Trino's own."""
    server, _ = s3
    before = len(server.requests)
    rows = fetch(cluster, BIG)
    ((count, orderkeys, partkeys),) = ts.query(cluster, BIG_CHECK)
    assert count == 60175  # TPC-H scale 0.01
    assert (len(rows), sum(r[0] for r in rows), sum(r[1] for r in rows)) == (
        count, orderkeys, partkeys)
    assert len({(r[0], r[3]) for r in rows}) == count  # every (order, line number) once
    new = server.requests[before:]
    written = {r.path for r in new if r.method == "PUT" and
               r.path.startswith(f"{BUCKET}/{CLUSTER}/")}
    assert written, f"no segment was written into the spooling location: {new[:20]}"
    fetched = {r.path for r in new if r.method == "GET" and "aws-sdk" not in r.agent}
    assert fetched and fetched <= written, (fetched, written)


def test_a_small_result_stays_inline(s3: tuple[S3Server, str], cluster: int) -> None:
    """Five rows are under the inline limit: nothing is written to the store for them."""
    server, _ = s3
    fetch(cluster, "SELECT 1")  # warm up: the first query of a session may differ
    before = len(segment_writes(server))
    rows = fetch(cluster, SMALL)
    assert sorted(r[1] for r in rows) == ["ARGENTINA", "BRAZIL", "CANADA", "PERU",
                                          "UNITED STATES"]
    assert len(segment_writes(server)) == before
