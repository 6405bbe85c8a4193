"""trinogen.trino.checks: one row per rule, each against the registry of Trino 476.

Expected names and messages come from Trino's own behaviour (domain-facts section 5 and the
real-Trino harness): the property named, the suggestion a reader would expect, the reason.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from trinogen.trino import checks
from trinogen.trino.checks import Finding
from trinogen.trino.registry import Registry, registry_for

R476 = registry_for("476")
assert R476 is not None


def _props(**kv: str) -> dict[str, tuple[str, str]]:
    """Flat properties, each with its key as its field path."""
    return {k.replace("__", "."): (v, k.replace("__", ".")) for k, v in kv.items()}


def catalog(**kv: str) -> Callable[[Registry], list[Finding]]:
    return lambda r: checks.check_catalog(r, "cat", _props(**kv))


def server(**kv: str) -> Callable[[Registry], list[Finding]]:
    return lambda r: checks.check_server(r, _props(**kv))


def node(**kv: str) -> Callable[[Registry], list[Finding]]:
    return lambda r: checks.check_node(r, _props(**kv))


def worker(**kv: str) -> Callable[[Registry], list[Finding]]:
    return lambda r: checks.check_role(r, "worker", _props(**kv))


PG = {"connector__name": "postgresql", "connection-url": "jdbc:postgresql://db:5432/dw"}
S3 = {"fs__native-s3__enabled": "true", "s3__region": "us-east-1"}

# (id, check, path of the finding, fragments of its message, warning?)
RULES = [
    ("connector typo", catalog(**PG, **{"connection-pasword": "x"}), "connection-pasword",
     ["connection-pasword", "did you mean connection-password"], False),
    ("another connector's property", catalog(**PG, **{"hive__metastore__uri": "thrift://m:9083"}),
     "hive.metastore.uri", ["hive.metastore.uri", "property of connector", "hive", "not of postgresql"],
     False),
    ("unknown connector.name", catalog(connector__name="postgres"), "connector.name",
     ["'postgres'", "did you mean postgresql"], False),
    ("defunct", catalog(connector__name="hive", **{"hive__s3select-pushdown__enabled": "true"}, **S3),
     "hive.s3select-pushdown.enabled", ["removed"], False),
    ("legacy", catalog(connector__name="hive", **{"hive__metastore-timeout": "1m"}, **S3),
     "hive.metastore-timeout", ["deprecated", "hive.metastore.thrift.client.read-timeout"], True),
    ("server typo", server(**{"query__max-memory-per-nod": "1GB"}), "query.max-memory-per-nod",
     ["did you mean query.max-memory-per-node"], False),
    ("dotted typo of a dotless name", server(retry__policy="TASK"), "retry.policy",
     ["did you mean retry-policy"], False),
    ("node typo", node(node__enviroment="prod"), "node.enviroment",
     ["did you mean node.environment", "ignore it silently"], False),
    ("logger in config.properties", server(io__trino__plugin__hive="DEBUG"),
     "io.trino.plugin.hive", ["log level", "logLevels"], False),
    ("connector property in server properties", server(kafka__nodes="k:9092"), "kafka.nodes",
     ["catalog property of connector kafka"], False),
    ("server property in a catalog", catalog(**PG, **{"query__max-memory": "1TB"}),
     "query.max-memory", ["server property", "document's properties"], False),
    ("hive.config.resources without Hadoop",
     catalog(connector__name="hive", **{"hive__config__resources": "/etc/hadoop/core-site.xml"}, **S3),
     "hive.config.resources", ["fs.hadoop.enabled=true", "mount"], False),
    ("s3.* without native s3", catalog(connector__name="hive", s3__region="us-east-1",
                                       **{"fs__native-gcs__enabled": "true"}),
     "s3.region", ["fs.native-s3.enabled=true"], False),
    ("gcs.* without native gcs", catalog(connector__name="iceberg", **{"gcs__project-id": "p"}, **S3),
     "gcs.project-id", ["fs.native-gcs.enabled=true"], False),
    ("azure.* without native azure", catalog(connector__name="delta_lake",
                                             **{"azure__auth-type": "DEFAULT"}, **S3),
     "azure.auth-type", ["fs.native-azure.enabled=true"], False),
    ("lake with no file system", catalog(connector__name="iceberg", **{"iceberg__catalog__type": "rest",
                                         "iceberg__rest-catalog__uri": "http://rest:8181"}),
     "cat", ["no file system", "No factory for location"], True),
    ("coordinator-only on a worker", worker(**{"web-ui__enabled": "false"}), "web-ui.enabled",
     ["coordinator only"], False),
    ("log level unknown", lambda r: checks.check_log_levels(r, _props(io__trino="LOUD")),
     "io.trino", ["'LOUD'", "WARN"], False),
]


@pytest.mark.parametrize(("check", "path", "fragments", "warning"),
                         [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_each_rule_names_the_property_and_why(
    check: Callable[[Registry], list[Finding]], path: str, fragments: list[str], warning: bool
) -> None:
    """The rule gives exactly one finding, at the property's path, saying what and why."""
    assert R476 is not None
    findings = check(R476)
    assert len(findings) == 1, findings
    assert findings[0].path == path
    assert findings[0].warning is warning
    for fragment in fragments:
        assert fragment in findings[0].message, (fragment, findings[0].message)


VALID = [
    ("hive on s3", catalog(connector__name="hive", **{"hive__metastore__uri": "thrift://m:9083"},
                           **S3)),
    ("postgresql", catalog(**PG, **{"connection-user": "trino", "connection-password": "x"})),
    ("server", server(**{"retry-policy": "TASK", "query__max-execution-time": "1h",
                         "spill-enabled": "true", "join-distribution-type": "AUTOMATIC",
                         "web-ui__enabled": "false"})),
    ("node", node(**{"node__data-dir": "/data"})),
    ("levels in any case", lambda r: checks.check_log_levels(r, _props(io__trino="debug"))),
    # Trino binds it under legacy Hadoop; whether its files are mounted is the model's check
    # (tests/test_files.py), not the registry's.
    ("hive.config.resources with Hadoop",
     catalog(connector__name="hive", **{"hive__config__resources": "/etc/trino/files/core-site.xml",
                                        "fs__hadoop__enabled": "true"})),
]


@pytest.mark.parametrize("check", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_what_trino_accepts_gives_no_finding(check: Callable[[Registry], list[Finding]]) -> None:
    """Properties a real Trino 476 binds (and a lake catalog with a file system) pass silently."""
    assert R476 is not None
    assert check(R476) == []


R483 = registry_for("483")


@pytest.mark.skipif(R483 is None or R483.connector("hive") is None,
                    reason="the registry has no hive data for Trino 483")
@pytest.mark.parametrize(("switch", "warnings"), [("fs.s3.enabled", 0),
                                                  ("fs.native-s3.enabled", 1)])
def test_a_renamed_file_system_switch_counts_under_either_name(switch: str, warnings: int) -> None:
    """Trino 483 calls it fs.s3.enabled; the old name still works (a legacy warning only)."""
    assert R483 is not None
    findings = checks.check_catalog(R483, "cat", _props(
        connector__name="hive", **{switch.replace(".", "__"): "true"}, s3__region="eu-west-1",
        **{"hive__metastore__uri": "thrift://m:9083"}))
    assert [f.warning for f in findings] == [True] * warnings, findings


def test_a_platform_plugin_in_an_incomplete_registry_is_not_refused() -> None:
    """When the registry lacks some plugins, an unknown connector.name is no proof of a typo."""
    assert R476 is not None
    partial = Registry("999", False, ("io.trino:trino-x:zip",), R476.log_levels,
                       R476._entry, R476._sets)
    assert checks.check_catalog(partial, "cat", _props(connector__name="acme")) == []


def test_an_uncovered_version_says_which_are_covered() -> None:
    """The warning names the version and every version the registry covers."""
    message = checks.unchecked("999")
    assert "properties not checked for Trino 999" in message
    assert "470" in message and "476" in message


@pytest.mark.parametrize(("name", "ok"), [
    ("io.trino", True), ("io.trino.plugin.hive.HiveMetadata$Inner", True), ("com_x.y", True),
    ("io..trino", False), ("io.9trino", False), ("io trino", False), (".io", False),
    ("io.tríno", True), ("io.trino-x", False),
])
def test_logger_names_are_dotted_java_names(name: str, ok: bool) -> None:
    """Package and class names pass; empty parts, a leading digit, spaces and dashes do not."""
    assert checks.is_logger_name(name) is ok
