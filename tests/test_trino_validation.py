"""Documents judged against the Trino registry through `trinogen.model.classify` (issue 10).

Valid documents use properties that real deployments set (checked against the registry and
Trino's connector documentation); each mistake is one a real Trino 476 refuses at startup, and
the problem must name the cluster, the field path (catalog) and the property.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import demo_settings, example_docs
from tests.test_sync import World
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings, replace
from trinogen.trino import registry

S3 = {"fs.native-s3.enabled": "true", "s3.region": "eu-west-1"}
METASTORE = {"hive.metastore.uri": "thrift://metastore.data.svc:9083"}


def _catalog(name: str, connector: str, **props: str) -> dict[str, Any]:
    return {"name": name, "properties": {"connector.name": connector, **props}}


def document(**body: Any) -> dict[str, Any]:
    """A cluster document on the demo settings' defaults (Trino 476, sized roles)."""
    return {"_id": "v1", "clusterId": "lake-prod", "owner": "data_team", "enabled": True, **body}


VALID = document(
    properties={
        "query": {"max-memory": "40GB", "max-execution-time": "4h"},
        "retry-policy": "QUERY",  # TASK by hand is refused: it needs faultTolerance
        "spill-enabled": "false",
        "join-distribution-type": "AUTOMATIC",
        "exchange": {"compression-codec": "LZ4"},
        "optimizer": {"join-reordering-strategy": "AUTOMATIC"},
        "node": {"environment": "production"},
        "web-ui.enabled": "false",
    },
    logLevels={"io.trino": "INFO", "io.trino.plugin.hive": "DEBUG"},
    connectors=[
        _catalog("hive", "hive", **METASTORE, **S3, **{"s3.endpoint": "https://s3.eu-west-1.amazonaws.com"}),
        _catalog("iceberg", "iceberg", **{"iceberg.catalog.type": "rest",
                                          "iceberg.rest-catalog.uri": "http://rest.data.svc:8181",
                                          "iceberg.rest-catalog.warehouse": "s3://lake/wh"}, **S3),
        _catalog("delta", "delta_lake", **METASTORE, **{"fs.native-gcs.enabled": "true",
                                                        "gcs.project-id": "analytics"}),
        _catalog("pg", "postgresql", **{"connection-url": "jdbc:postgresql://pg:5432/dw",
                                        "connection-user": "trino",
                                        "connection-password": "{{ PG_PASSWORD }}"}),
        _catalog("mysql", "mysql", **{"connection-url": "jdbc:mysql://mysql:3306",
                                      "connection-user": "trino",
                                      "connection-password": "{{ MYSQL_PASSWORD }}"}),
        _catalog("events", "kafka", **{"kafka.nodes": "kafka:9092",
                                       "kafka.table-names": "orders,clicks"}),
        _catalog("search", "opensearch", **{"opensearch.host": "search.example.com",
                                            "opensearch.port": "9200",
                                            "opensearch.default-schema-name": "default"}),
        _catalog("scratch", "memory", **{"memory.max-data-per-node": "128MB"}),
        _catalog("sink", "blackhole"),
        _catalog("tpch", "tpch", **{"tpch.splits-per-node": "4"}),
        _catalog("tpcds", "tpcds"),
    ],
)


def classify_doc(doc: dict[str, Any], settings: Settings | None = None) -> Any:
    return classify(RawDocument(str(doc["_id"]), doc), settings or demo_settings())


def test_a_document_with_every_common_connector_validates_with_no_warning() -> None:
    """Real properties of 11 connectors and the server pass with no error and no warning."""
    outcome = classify_doc(VALID)
    assert isinstance(outcome, Cluster), getattr(outcome, "problems", None)
    assert outcome.warnings == ()


@pytest.mark.parametrize("doc", example_docs(), ids=lambda d: d["clusterId"])
def test_every_shipped_example_validates_with_no_warning(doc: dict[str, Any]) -> None:
    """The examples people copy from are clean: no error and no warning on the demo settings."""
    outcome = classify_doc(doc)
    assert isinstance(outcome, Cluster), getattr(outcome, "problems", None)
    assert outcome.warnings == ()


def _with(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """`doc` with one field set; `path` is a list of keys, a catalog given as connectors:<name>."""
    out = copy.deepcopy(doc)
    parts = path.split("/")
    if parts[0].startswith("connectors:"):
        target = next(c for c in out["connectors"] if c["name"] == parts[0].split(":")[1])
        parts = ["properties", *parts[1:]]
    else:
        target = out
    for p in parts[:-1]:
        target = target.setdefault(p, {})
    target[parts[-1]] = value
    return out


# (id, field set, value, expected field path of the problem, fragments of its message)
MISTAKES = [
    ("connector typo", "connectors:pg/connection-pasword", "x",
     'connectors["pg"].properties.connection-pasword', ["did you mean connection-password"]),
    ("another connector's property", "connectors:pg/hive.metastore.uri", "thrift://m:9083",
     'connectors["pg"].properties["hive.metastore.uri"]', ["hive", "not of postgresql"]),
    ("unknown connector.name", "connectors:pg/connector.name", "postgres",
     'connectors["pg"].properties["connector.name"]', ["did you mean postgresql"]),
    ("defunct", "connectors:hive/hive.s3select-pushdown.enabled", "true",
     'connectors["hive"].properties["hive.s3select-pushdown.enabled"]', ["removed"]),
    ("hive.config.resources", "connectors:hive/hive.config.resources", "/etc/hadoop/core-site.xml",
     'connectors["hive"].properties["hive.config.resources"]', ["fs.hadoop.enabled=true"]),
    ("s3 without native s3", "connectors:delta/s3.region", "us-east-1",
     'connectors["delta"].properties["s3.region"]', ["fs.native-s3.enabled=true"]),
    ("server typo", "properties/query/max-memory-per-nod", "1GB",
     "properties.query.max-memory-per-nod", ["did you mean query.max-memory-per-node"]),
    ("dotless name as a section", "properties/retry", {"policy": "TASK"},
     "properties.retry.policy", ["did you mean retry-policy"]),
    ("node typo", "properties/node/enviroment", "staging",
     "properties.node.enviroment", ["did you mean node.environment"]),
    ("logger in properties", "properties/io", {"trino.plugin.hive": "DEBUG"},
     'properties.io["trino.plugin.hive"]', ["logLevels"]),
    ("connector property in server properties", "properties/kafka", {"nodes": "k:9092"},
     "properties.kafka.nodes", ["connector kafka"]),
    ("server property in a catalog", "connectors:tpch/query.max-memory", "1GB",
     'connectors["tpch"].properties["query.max-memory"]', ["server property"]),
    ("coordinator-only on the worker", "clusterConfig/worker/properties/web-ui",
     {"preview.enabled": "true"}, 'clusterConfig.worker.properties.web-ui["preview.enabled"]',
     ["coordinator only"]),
    ("unknown log level", "logLevels/io.trino.plugin.hive", "LOUD",
     'logLevels["io.trino.plugin.hive"]', ["not a log level"]),
    ("bad logger name", "logLevels/io trino", "INFO", 'logLevels["io trino"]', ["Java logger"]),
]


@pytest.mark.parametrize(("field", "value", "path", "fragments"), [m[1:] for m in MISTAKES],
                         ids=[m[0] for m in MISTAKES])
def test_one_trino_mistake_fails_naming_cluster_field_and_property(
    field: str, value: Any, path: str, fragments: list[str]
) -> None:
    """The document fails with one problem at the property's path, naming the cluster."""
    doc = _with(VALID, field, value)
    outcome = classify_doc(doc)
    assert isinstance(outcome, Failed)
    assert [p.field for p in outcome.problems] == [path], outcome.problems
    problem = outcome.problems[0]
    assert problem.cluster == "lake-prod"
    for fragment in fragments:
        assert fragment in problem.message, problem.message


def test_a_legacy_name_validates_with_a_warning_naming_its_replacement() -> None:
    """A @LegacyConfig name still starts Trino: a warning, and the document renders."""
    outcome = classify_doc(_with(VALID, "connectors:hive/hive.metastore-timeout", "1m"))
    assert isinstance(outcome, Cluster)
    [warning] = outcome.warnings
    assert warning.field == 'connectors["hive"].properties["hive.metastore-timeout"]'
    assert "hive.metastore.thrift.client.read-timeout" in warning.message


def test_a_lake_catalog_without_a_file_system_is_a_warning() -> None:
    """Trino starts with it but cannot read a table: the catalog is named in a warning."""
    doc = copy.deepcopy(VALID)
    doc["connectors"] = [_catalog("iceberg", "iceberg", **{"iceberg.catalog.type": "rest",
                                                          "iceberg.rest-catalog.uri": "http://r"})]
    outcome = classify_doc(doc)
    assert isinstance(outcome, Cluster)
    assert [(w.field, "No factory for location" in w.message) for w in outcome.warnings] == [
        ('connectors["iceberg"].properties', True)]


def test_an_uncovered_version_warns_once_and_checks_nothing() -> None:
    """Trino 999 is not in the registry: one warning for the document, typos pass."""
    doc = _with(_with(VALID, "trinoVersion", "999"), "connectors:pg/connection-pasword", "x")
    outcome = classify_doc(doc)
    assert isinstance(outcome, Cluster)
    assert [(w.field, "properties not checked for Trino 999" in w.message)
            for w in outcome.warnings] == [("trinoVersion", True)]


def test_partial_registry_data_only_warns() -> None:
    """For a version scanned in part (complete: false) a refusal is a warning, never an error."""
    if (r := registry.registry_for("474")) is None or r.complete:
        pytest.skip("the registry has no partial data for Trino 474")
    outcome = classify_doc(_with(_with(VALID, "trinoVersion", "474"),
                                 "connectors:hive/hive.metastore.urii", "thrift://m:9083"))
    assert isinstance(outcome, Cluster)  # the catalogs of plugins it could not read: unchecked
    assert [w.field for w in outcome.warnings] == [
        'connectors["hive"].properties["hive.metastore.urii"]']


def _settings(**validation: Any) -> Settings:
    return replace(demo_settings(), validation=validation)


def test_warn_mode_reports_refusals_as_warnings() -> None:
    """validation.trino_properties: warn renders the document and keeps the message."""
    outcome = classify_doc(_with(VALID, "connectors:pg/connection-pasword", "x"),
                           _settings(trino_properties="warn"))
    assert isinstance(outcome, Cluster)
    assert [w.field for w in outcome.warnings] == ['connectors["pg"].properties.connection-pasword']


def test_off_mode_checks_nothing_and_never_loads_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """validation.trino_properties: off neither checks nor asks the registry."""
    def refuse(version: str) -> None:
        raise AssertionError("the registry was asked")

    monkeypatch.setattr("trinogen.model.trino.registry_for", refuse)
    outcome = classify_doc(_with(VALID, "connectors:pg/connection-pasword", "x"),
                           _settings(trino_properties="off"))
    assert isinstance(outcome, Cluster) and outcome.warnings == ()


def test_an_unchecked_connector_is_a_platform_plugin() -> None:
    """A connector.name listed in validation.unchecked_connectors is not judged at all."""
    doc = copy.deepcopy(VALID)
    doc["connectors"].append(_catalog("acme", "acme_lake", **{"acme.endpoint": "http://a"}))
    assert isinstance(classify_doc(doc), Failed)
    outcome = classify_doc(doc, _settings(unchecked_connectors=["acme_lake"]))
    assert isinstance(outcome, Cluster) and outcome.warnings == ()


# --- where each setting goes ------------------------------------------------------------------


def test_a_string_is_one_whole_property_and_a_mapping_a_section() -> None:
    """{"retry-policy": "QUERY"} is the line retry-policy=QUERY; sections keep joining with '.'."""
    outcome = classify_doc(VALID)
    assert isinstance(outcome, Cluster)
    lines = dict(outcome.config_properties)
    assert lines["retry-policy"] == "QUERY"
    assert lines["exchange.compression-codec"] == "LZ4"


def test_the_same_property_in_both_forms_is_refused() -> None:
    """"query.max-memory" as a whole name and under "query" are one property, set twice."""
    outcome = classify_doc(_with(VALID, "properties/query.max-memory", "50GB"))
    assert isinstance(outcome, Failed)
    assert any("names the property query.max-memory again" in p.message for p in outcome.problems)


def test_a_coordinator_only_property_reaches_the_coordinator_alone() -> None:
    """web-ui.enabled from the shared properties goes to coordinatorExtraConfig only."""
    outcome = classify_doc(VALID)
    assert isinstance(outcome, Cluster)
    assert ("web-ui.enabled", "false") in outcome.coordinator.extra_properties
    assert "web-ui.enabled" not in dict(outcome.config_properties)
    assert "web-ui.enabled" not in dict(outcome.worker.extra_properties)


def _values(doc: dict[str, Any]) -> dict[str, Any]:
    settings = demo_settings()
    cluster = classify_doc(doc, settings)
    assert isinstance(cluster, Cluster)
    files = Renderer(settings).render_cluster(cluster, {})
    values: dict[str, Any] = yaml.safe_load(files[f"trino-clusters/{cluster.cluster_id}/values.yaml"])
    return values


def test_log_levels_reach_the_charts_log_keys() -> None:
    """io.trino sets server.log.trino.level; other loggers become additionalLogProperties."""
    values = _values(_with(VALID, "logLevels", {"io.trino": "warn", "io.trino.plugin.hive": "DEBUG",
                                               "org.apache.iceberg": "ERROR"}))
    assert values["server"]["log"] == {"trino": {"level": "WARN"}}
    assert values["additionalLogProperties"] == ["io.trino.plugin.hive=DEBUG",
                                                 "org.apache.iceberg=ERROR"]
    assert "web-ui.enabled=false" in values["server"]["coordinatorExtraConfig"].splitlines()
    assert "web-ui.enabled=false" not in values["additionalConfigProperties"]


def test_without_log_levels_the_chart_keeps_its_defaults() -> None:
    """No logLevels: neither chart key is written (the chart's io.trino=INFO stays)."""
    doc = copy.deepcopy(VALID)
    del doc["logLevels"]
    values = _values(doc)
    assert "log" not in values["server"] and "additionalLogProperties" not in values


# --- the render cache -------------------------------------------------------------------------


def test_a_registry_change_renders_every_cluster_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other registry bytes give another fingerprint: no document is served from the cache."""
    world = World(tmp_path)
    world.sync()
    monkeypatch.setattr("trinogen.render.renderer.registry_digest", lambda: b"another registry")
    report = world.sync()
    assert report.stats["cacheHits"] == 0 and report.plan.empty


def test_a_noop_sync_never_asks_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every document a cache hit: the registry is not consulted (nor loaded in a new process)."""
    world = World(tmp_path)
    world.sync()
    asked: list[str] = []
    monkeypatch.setattr("trinogen.model.trino.registry_for", asked.append)
    registry.registry_for.cache_clear()
    report = world.sync()
    assert report.stats["cacheHits"] == 3 and asked == []
    assert registry.registry_for.cache_info().currsize == 0  # no version file was read
