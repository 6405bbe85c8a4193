"""A real Trino runs fault-tolerant execution as trinogen writes it, and boots a storage catalog.

One document with `faultTolerance: {retryPolicy: TASK, exchange: fte}` and a hive catalog that
names a storage option goes through trinogen and the real chart (as in tests/test_trino_real.py,
whose REWRITES apply unchanged), and boots Trino 476 as a coordinator plus one worker. The
exchange the settings name is on S3, which this machine has not: EXCHANGE_REWRITES moves it to a
local directory both nodes share (Trino's filesystem exchange serves `file://` base directories
with the same code above the storage), and lists what else that changes. A join with GROUP BY on
tpch.tiny then needs exchanges between the nodes and must return the right answer.

The control: the same cluster without the exchange manager (retry-policy TASK alone, which
trinogen refuses) starts, but its queries fail, which is why trinogen refuses it.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import javaprops
from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python, trino
from tests.test_trino_real import (
    BOOT_TIMEOUT,
    Pods,
    for_laptop,
    heap_factor,
    render_pods,
)
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind

pytestmark = REAL_TRINO

EXCHANGE_FILE = "/etc/trino/exchange-manager.properties"
STORAGE = {
    "lake": {"type": "s3", "region": "us-east-1", "endpoint": "http://127.0.0.1:9",
             "path_style_access": True,
             "credentials": {"vault": {"access_key": "secret/trino/{cluster}/s3#access_key",
                                       "secret_key": "secret/trino/{cluster}/s3#secret_key"}}},
}
EXCHANGE = {"fte": {"storage": "lake", "location": "s3://trino-exchange/{cluster}",
                    "properties": {"exchange.sink-buffers-per-partition": "2"}}}
DOC = {
    "_id": "trino-real-fte", "clusterId": "fte", "owner": "qa_team", "enabled": True,
    "faultTolerance": {"retryPolicy": "TASK", "exchange": "fte"},
    "connectors": [
        {"name": "tpch", "properties": {"connector.name": "tpch"}},
        # nothing listens on the metastore or the endpoint: the catalog connects on first use
        {"name": "lake", "storage": "lake",
         "properties": {"connector.name": "hive", "hive.metastore.uri": "thrift://127.0.0.1:9"}},
    ],
}
# A join and GROUP BY on tpch.tiny: every lineitem has its order, so the join keeps all 60,175
# lineitem rows (TPC-H scale 0.01), split by return flag as the tpch connector generates them.
QUERY = ("SELECT l.returnflag, count(*) FROM tpch.tiny.lineitem l "
         "JOIN tpch.tiny.orders o ON l.orderkey = o.orderkey GROUP BY l.returnflag "
         "ORDER BY l.returnflag")
CHECK = "SELECT returnflag, count(*) FROM tpch.tiny.lineitem GROUP BY returnflag ORDER BY 1"


@dataclass(frozen=True)
class ExchangeRewrite:
    key: str
    becomes: str
    why: str


EXCHANGE_REWRITES = (
    ExchangeRewrite("exchange.base-directories", "file://<run>/exchange",
                    "no S3 here; a directory on this machine is shared by both nodes as the "
                    "bucket is shared by the pods"),
    ExchangeRewrite("exchange.s3.*", "dropped",
                    "bound only for s3:// and gs:// base directories (Trino refuses them as "
                    "not used with file://)"),
    ExchangeRewrite("exchange.source-concurrent-readers", "added: ${ENV:TRINO_TEST_READERS}",
                    "stands in for the dropped ${ENV:...} credentials: the node refuses to "
                    "start unless Trino resolves environment variables in this file"),
)


def settings() -> Settings:
    s = demo_settings()
    named = {"storage": parse_kind("storage", STORAGE, "test"),
             "exchange": parse_kind("exchange", EXCHANGE, "test")}
    return dataclasses.replace(s, named=named)


def exchange_for_laptop(text: str, base: Path) -> str:
    """The exchange-manager.properties of a pod with exactly EXCHANGE_REWRITES applied."""
    props = javaprops.loads(text)
    changes: dict[str, str | None] = {k: None for k in props if k.startswith("exchange.s3.")}
    changes["exchange.base-directories"] = base.as_uri()
    changes["exchange.source-concurrent-readers"] = "${ENV:TRINO_TEST_READERS}"
    return ts.properties_with(text, changes)


def boot(pods: Pods, dist: Path, root: Path, *, exchange: bool) -> ts.TrinoCluster:
    """Coordinator and one worker from the pods' files (REWRITES, and EXCHANGE_REWRITES or no
    exchange-manager.properties at all), started."""
    factor = heap_factor(pods.role)
    cport, wport = ts.free_port(), ts.free_port()
    nodes = []
    for name, role, port in (("coordinator", "coordinator", cport), ("worker-0", "worker", wport)):
        node_root = root / name
        files = for_laptop(pods.role[role], node_root, dist / "plugin", port, cport, factor)
        if exchange:
            files.files[EXCHANGE_FILE] = exchange_for_laptop(files.files[EXCHANGE_FILE],
                                                             root / "exchange")
            files.env["TRINO_TEST_READERS"] = "2"
        else:
            del files.files[EXCHANGE_FILE]
        nodes.append(ts.TrinoNode(name, node_root, files))
    cluster = ts.TrinoCluster(nodes[0], nodes[1:], cport)
    cluster.start(dist, BOOT_TIMEOUT)
    return cluster


@pytest.fixture(scope="module")
def pods() -> Pods:
    return render_pods(DOC, settings(), helm_python.Chart.load(CHART_DIR))


@pytest.fixture(scope="module")
def dist() -> Path:
    return ts.distribution()


@pytest.fixture(scope="module")
def fte(pods: Pods, dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root = tmp_path_factory.mktemp("trino-fte")
    cluster = boot(pods, dist, root, exchange=True)
    try:
        ts.wait_for_active_workers(cluster.port, 1, BOOT_TIMEOUT)
        yield cluster.port
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_both_roles_get_the_exchange_and_the_retry_policy(pods: Pods) -> None:
    """The chart gives coordinator and worker the same exchange-manager.properties and TASK."""
    for role in ("coordinator", "worker"):
        files = pods.role[role].files
        props = javaprops.loads(files[EXCHANGE_FILE])
        assert props["exchange-manager.name"] == "filesystem"
        assert props["exchange.base-directories"] == "s3://trino-exchange/fte"
        assert javaprops.loads(files["/etc/trino/config.properties"])["retry-policy"] == "TASK"


def test_a_task_retry_cluster_answers_a_query_that_needs_exchanges(fte: int) -> None:
    """With TASK retries over the filesystem exchange, a join with GROUP BY returns every row."""
    joined = ts.query(fte, QUERY)
    assert sum(int(n) for _, n in joined) == 60175  # tpch tiny lineitem rows
    assert [tuple(r) for r in joined] == [tuple(r) for r in ts.query(fte, CHECK)]


def test_the_storage_catalog_boots(fte: int) -> None:
    """The hive catalog whose file system comes from the storage option is loaded."""
    catalogs = {row[0] for row in ts.query(fte, "SHOW CATALOGS")}
    assert {"lake", "tpch"} <= catalogs


def test_task_retry_without_an_exchange_starts_but_fails_queries(
    pods: Pods, dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The control for trinogen's refusal: with retry-policy TASK and no exchange manager both
    nodes start, and then every query fails, even one on system tables (seen on Trino 476)."""
    root = tmp_path_factory.mktemp("trino-fte-none")
    cluster = boot(pods, dist, root, exchange=False)
    try:
        for sql in (QUERY, "SELECT count(*) FROM system.runtime.nodes"):
            with pytest.raises(trino.exceptions.TrinoQueryError,
                               match="EXCHANGE_MANAGER_NOT_CONFIGURED"):
                ts.query(cluster.port, sql)
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_exchange_rewrites_touch_only_what_the_table_lists(pods: Pods, tmp_path: Path) -> None:
    """Between the pod's exchange-manager.properties and the booted one only listed keys differ."""
    listed = {r.key for r in EXCHANGE_REWRITES}
    before = javaprops.loads(pods.role["worker"].files[EXCHANGE_FILE])
    after = javaprops.loads(exchange_for_laptop(pods.role["worker"].files[EXCHANGE_FILE],
                                                tmp_path))
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert {("exchange.s3.*" if k.startswith("exchange.s3.") else k) for k in changed} <= listed
