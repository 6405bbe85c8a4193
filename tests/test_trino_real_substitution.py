"""Real Trino 476 resolves every `${<provider>:...}` form trinogen refuses, and reads the pod's
own files through a local catalog (issue 19, findings 2 and 6).

One coordinator boots from a valid document rendered through trinogen and the real chart; the
files below are then written into its pod directly, bypassing trinogen's refusal, with
QET, MID and DCT in the pod's environment. Trino resolves `${Env:QET}` in config.properties and
`1${eNv:MID}h` mid-value; `${Env:DCT}` and `1${eNv:MID}9` in catalog properties (SHOW SESSION
shows the defaults they set); and a hive catalog on the native local file system reads a file
of the pod (standing in for /var/run/secrets) as a table, as does a hive catalog with legacy
Hadoop through a `file:` location named in SQL. trinogen refuses each as a document (legacy
Hadoop comes only from the platform's storage option of type hdfs).
(`connector.name` itself is not substituted: Trino reads it before resolving the rest.)
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings, with_hdfs
from tests.marks import REAL_TRINO, helm_python
from tests.test_library import classified, cluster_doc, library, messages
from tests.test_trino_real import _catalog, _doc, heap_factor, render_pods
from tests.test_trino_real_files import Boot, boot_alone
from trinogen.model import Cluster

pytestmark = REAL_TRINO

# TWICE stands for a Vault value a tenant wrote: `${ENV:TWICE}` is how trinogen wires it.
ENV = {"QET": "17m", "MID": "7", "DCT": "123", "TWICE": "${env:DCT}"}
SERVER = {"query.max-execution-time": "${Env:QET}", "query.max-run-time": "1${eNv:MID}h"}
PG = {"connector.name": "postgresql", "connection-url": "jdbc:postgresql://127.0.0.1:9/db"}
CATALOGS = {"pgupper": {**PG, "domain-compaction-threshold": "${Env:DCT}"},
            "pgmid": {**PG, "domain-compaction-threshold": "1${eNv:MID}9"}}
TWICE = {"pgtwice": {**PG, "domain-compaction-threshold": "${ENV:TWICE}"}}
TOKEN = "stand-in-for-the-service-account-token"
SQL = ("SHOW SESSION LIKE 'query_max_%_time'",
       "SHOW SESSION LIKE 'pg%.domain_compaction_threshold'",
       "CREATE SCHEMA root.s",
       "CREATE TABLE root.s.t (line varchar) WITH (format = 'TEXTFILE', "
       "external_location = 'local:///secrets')",
       "SELECT line FROM root.s.t",
       "CREATE SCHEMA hadoop.s",
       "CREATE TABLE hadoop.s.t (line varchar) WITH (format = 'TEXTFILE', "
       "external_location = 'file://{local}/secrets')",
       "SELECT line FROM hadoop.s.t")


def _local_hive(root: Path) -> dict[str, str]:
    """The issue's catalog: a file metastore and the native local file system on `root`."""
    return {"connector.name": "hive", "hive.metastore": "file",
            "hive.metastore.catalog.dir": "local:///metastore",
            "fs.native-local.enabled": "true", "local.location": str(root)}


# The document's form of the "hadoop" catalog booted below: there the metastore is a local file
# metastore only because the test has no remote one (trinogen refuses that on its own); the
# file: read comes from SQL, which any metastore serves once legacy Hadoop is on.
HADOOP_DOC = {"connector.name": "hive", "hive.metastore.uri": "thrift://metastore.example:9083",
              "fs.hadoop.enabled": "true"}


def _props(props: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())  # plain text: no escapes needed


@pytest.fixture(scope="module")
def boot(tmp_path_factory: pytest.TempPathFactory) -> Boot:
    settings = demo_settings()
    pods = render_pods(_doc("subst", [_catalog("tpch", "tpch")]), settings,
                       helm_python.Chart.load(CHART_DIR))
    pod = pods.role["coordinator"]
    base = tmp_path_factory.mktemp("trino-subst")
    local = base / "local"
    (local / "secrets").mkdir(parents=True)
    (local / "metastore").mkdir()
    (local / "secrets" / "token").write_text(TOKEN + "\n")
    files = dict(pod.files)
    catalog_dir = next(p for p in files if p.endswith("/tpch.properties")).rsplit("/", 1)[0]
    config = "/etc/trino/config.properties"
    files[config] = ts.properties_with(files[config], dict(SERVER))
    hadoop = {"connector.name": "hive", "hive.metastore": "file", "fs.hadoop.enabled": "true",
              "hive.metastore.catalog.dir": f"file://{local}/metastore2"}
    (local / "metastore2").mkdir()
    for name, props in {**CATALOGS, **TWICE, "root": _local_hive(local),
                        "hadoop": hadoop}.items():
        files[f"{catalog_dir}/{name}.properties"] = _props(props)
    written = ts.NodeFiles(files, {**pod.env, **ENV})
    sql = tuple(q.replace("{local}", str(local)) for q in SQL)
    out = boot_alone(written, heap_factor(pods.role), ts.distribution(), base / "node", sql)
    out.rows = {q: out.rows[r] for q, r in zip(SQL, sql, strict=True)}
    shutil.rmtree(base, ignore_errors=True)
    return out


def _values(b: Boot, sql: str) -> dict[str, str]:
    return {str(r[0]): str(r[1]) for r in b.rows[sql]}


def test_trino_resolves_each_form_in_config_properties(boot: Boot) -> None:
    """`${Env:QET}` and `1${eNv:MID}h`: the provider in any case, at the start or mid-value."""
    assert boot.started, "\n".join(boot.log.splitlines()[-40:])
    got = _values(boot, SQL[0])
    assert got["query_max_execution_time"] == "17.00m", got
    assert got["query_max_run_time"] == "17.00h", got


def test_trino_resolves_each_form_in_catalog_properties(boot: Boot) -> None:
    """The catalogs load, and their session defaults are the environment's values."""
    assert {"pgupper", "pgmid", "root"} <= set(boot.catalogs), boot.catalogs
    got = _values(boot, SQL[1])
    assert got["pgupper.domain_compaction_threshold"] == "123", got
    assert got["pgmid.domain_compaction_threshold"] == "179", got


def test_a_catalog_value_is_substituted_twice(boot: Boot) -> None:
    """The catalog's `${ENV:TWICE}` resolves to `${env:DCT}`, which the connector's own
    configuration resolves again: a Vault value is checked like a document's text."""
    assert _values(boot, SQL[1])["pgtwice.domain_compaction_threshold"] == "123"


def test_a_local_catalog_reads_the_pods_files_through_sql(boot: Boot) -> None:
    """With the native local file system, any file below local.location is a table."""
    assert boot.rows[SQL[4]] == [[TOKEN]]


def test_the_legacy_hadoop_file_system_serves_file_uris_from_sql(boot: Boot) -> None:
    """With fs.hadoop.enabled, a table's location in SQL may be a `file:` URI, which no catalog
    property shows: why a document may not switch legacy Hadoop on (issue 19)."""
    assert boot.rows[SQL[7]] == [[TOKEN]]


def test_legacy_hadoop_is_only_the_platforms_storage_option() -> None:
    """The hadoop catalog fails as a document only at fs.hadoop.enabled; the same catalog
    picking an hdfs storage option (the platform accepting the risk) is accepted."""
    doc = cluster_doc("subst", "growth_analytics", [{"name": "hadoop", "properties": HADOOP_DOC}])
    assert [m.split(": ", 1)[0] for m in messages(classified(doc, library()))] == [
        'connectors["hadoop"].properties["fs.hadoop.enabled"]']
    props = {k: v for k, v in HADOOP_DOC.items() if k != "fs.hadoop.enabled"}
    picked = cluster_doc("subst", "growth_analytics",
                         [{"name": "hadoop", "storage": "hdfs", "properties": props}])
    accepted = classified(picked, library(), with_hdfs(demo_settings()))
    assert isinstance(accepted, Cluster), accepted


@pytest.mark.parametrize(("body", "field"), [
    ({"properties": SERVER}, 'properties["query.max-execution-time"]'),
    ({"properties": SERVER}, 'properties["query.max-run-time"]'),
    ({"connectors": [{"name": n, "properties": p} for n, p in CATALOGS.items()]},
     'connectors["pgupper"].properties.domain-compaction-threshold'),
    ({"connectors": [{"name": n, "properties": p} for n, p in CATALOGS.items()]},
     'connectors["pgmid"].properties.domain-compaction-threshold'),
    ({"connectors": [{"name": "root", "properties": _local_hive(Path("/"))}]},
     'connectors["root"].properties["fs.native-local.enabled"]'),
    ({"connectors": [{"name": "root", "properties": _local_hive(Path("/"))}]},
     'connectors["root"].properties["local.location"]'),
    ({"connectors": [{"name": "hadoop", "properties": HADOOP_DOC}]},
     'connectors["hadoop"].properties["fs.hadoop.enabled"]'),
])
def test_trinogen_refuses_the_same_documents(body: dict[str, Any], field: str) -> None:
    """Written as a document, each of the files above fails at its field."""
    doc = {**cluster_doc("subst", "growth_analytics", []), **body}
    found = messages(classified(doc, library()))
    assert any(m.startswith(f"{field}: ") for m in found), found
