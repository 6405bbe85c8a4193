"""Validation: every problem of a document at once, each naming the cluster and the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from bson import Decimal128, Int64, ObjectId

from trinogen.model import (
    Cluster,
    Disabled,
    Failed,
    RawDocument,
    classify,
    classify_all,
    deep_merge,
)
from trinogen.settings import load_settings, replace
from trinogen.source import doc_key

SETTINGS = load_settings(environ={})


def valid_doc(**changes: Any) -> dict[str, Any]:
    """A complete, valid document (no defaults needed); `changes` set dotted paths."""
    doc: dict[str, Any] = {
        "_id": ObjectId("653a1a7b8e1f4a1e9c5d8e1a"),
        "clusterId": "analytics-prod",
        "owner": "data_analytics_team",
        "enabled": True,
        "trinoVersion": "476",
        "clusterConfig": {
            "coordinator": {
                "replicas": 1,
                "resources": {"requests": {"cpu": "4", "memory": "16Gi"},
                              "limits": {"cpu": "8", "memory": "24Gi"}},
                "jvm": {"maxHeapSize": "20G"},
            },
            "worker": {
                "replicas": 5,
                "resources": {"requests": {"cpu": "8", "memory": "32Gi"},
                              "limits": {"cpu": "8", "memory": "32Gi"}},
                "jvm": {"maxHeapSize": "28G"},
            },
        },
        "properties": {"query": {"max-memory": "100TB", "max-memory-per-node": "12GB"},
                       "node": {"environment": "production"}},
        "connectors": [
            # a lake catalog needs a file system to read tables (else a warning)
            {"name": "hive-prod", "properties": {"connector.name": "hive",
                                                 "hive.metastore.uri": "thrift://hms:9083",
                                                 "fs.native-s3.enabled": "true",
                                                 "s3.region": "us-east-1"}},
            {"name": "mysql-rds", "properties": {"connector.name": "mysql",
                                                 "connection-password": "{{ MYSQL_RDS_PASSWORD }}"}},
        ],
    }
    for path, value in changes.items():
        _set(doc, path, value)
    return doc


_DELETE = object()


def _set(doc: Any, dotted: str, value: Any) -> None:
    parts = dotted.split("/")
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    last = parts[-1]
    if isinstance(doc, list):
        doc[int(last)] = value
    elif value is _DELETE:
        del doc[last]
    else:
        doc[last] = value


def run(doc: dict[str, Any], settings: Any = SETTINGS) -> Any:
    return classify(RawDocument(doc_key(doc.get("_id")), doc), settings)


def test_valid_document_becomes_a_cluster() -> None:
    """A complete document validates into a Cluster carrying its chart-relevant values."""
    c = run(valid_doc())
    assert isinstance(c, Cluster)
    assert (c.cluster_id, c.workers, c.coordinator.max_heap, c.worker.max_heap) == (
        "analytics-prod", 5, "20G", "28G")
    assert c.max_memory == "100TB" and c.worker.max_memory_per_node == "12GB"
    assert c.node_environment == "production"
    assert [x.name for x in c.connectors] == ["hive-prod", "mysql-rds"]
    assert c.namespace == "trino-analytics-prod"


def test_issue_example_is_rejected_with_the_memory_explanation() -> None:
    """The issue's own example (26GB per node, 28G/20G heaps) fails for both roles, saying why."""
    c = run(valid_doc(**{"properties/query/max-memory-per-node": "26GB"}))
    assert isinstance(c, Failed)
    fields = {p.field for p in c.problems}
    assert fields == {"clusterConfig.coordinator.jvm.maxHeapSize", "clusterConfig.worker.jvm.maxHeapSize"}
    worker = next(p for p in c.problems if "worker" in p.field)
    assert "26GB" in worker.message and "30%" in worker.message and "refuses to start" in worker.message
    assert "38G" in worker.message  # 26GB / 0.7 rounded up: a heap that would work


# (changes to a valid document, field path expected, words expected in the message)
INVALID = [
    ({"clusterId": _DELETE}, "clusterId", "is required"),
    ({"clusterId": "Analytics"}, "clusterId", "lowercase"),
    ({"clusterId": "1cluster"}, "clusterId", "start with a letter"),
    ({"clusterId": "a" * 51}, "clusterId", '"' + "a" * 51 + '" is 51 characters long'),
    ({"clusterId": "a" * 51}, "clusterId", "worker Service"),
    # the value is named, truncated as every message does (issue 19, small)
    ({"clusterId": "a" * 300}, "clusterId", '"' + "a" * 59 + '...(302 chars) is 300 characters'),
    ({"clusterId": "a\x1b" * 30}, "clusterId", '"a\\u001ba\\u001b'),
    ({"clusterId": "../x"}, "clusterId", "not valid"),
    ({"clusterId": "edge-"}, "clusterId", "not valid"),
    ({"clusterId": 42}, "clusterId", "must be a string, not an integer"),
    ({"owner": ""}, "owner", "not valid"),
    ({"owner": "team a"}, "owner", "not valid"),
    ({"enabled": "true"}, "enabled", "must be true or false"),
    ({"enabled": 1}, "enabled", "must be true or false"),
    ({"trinoVersion": "4.2.6"}, "trinoVersion", "release number"),
    ({"trinoVersion": "350"}, "trinoVersion", "oldest Trino release"),
    ({"trinoVersion": _DELETE}, "trinoVersion", "is required"),
    ({"clusterConfig": "big"}, "clusterConfig", "must be an object, not a string"),
    ({"clusterConfig/coordinator/replicas": 3}, "clusterConfig.coordinator.replicas",
     "exactly one coordinator"),
    ({"clusterConfig/worker/replicas": 0}, "clusterConfig.worker.replicas", "at least 1"),
    ({"clusterConfig/worker/replicas": "5"}, "clusterConfig.worker.replicas", "whole number"),
    ({"clusterConfig/worker/replicas": float("nan")}, "clusterConfig.worker.replicas", "NaN"),
    ({"clusterConfig/worker/resources/limits/memory": "32GB"},
     "clusterConfig.worker.resources.limits.memory", "Kubernetes quantity"),
    ({"clusterConfig/worker/resources/requests/cpu": "-1"},
     "clusterConfig.worker.resources.requests.cpu", "Kubernetes quantity"),
    ({"clusterConfig/worker/resources/requests/cpu": "16"},
     "clusterConfig.worker.resources.requests.cpu", "more than the limit"),
    ({"clusterConfig/worker/jvm/maxHeapSize": "28 GB"}, "clusterConfig.worker.jvm.maxHeapSize",
     "JVM size"),
    ({"clusterConfig/worker/jvm/maxHeapSize": "40G"}, "clusterConfig.worker.jvm.maxHeapSize",
     "not below the container memory limit"),
    ({"clusterConfig/worker/jvm": _DELETE}, "clusterConfig.worker.jvm", "is required"),
    ({"clusterConfig/worker/jvm/maxHeapSize": "2G",
      "clusterConfig/worker/jvm/minHeapSize": "4G"}, "clusterConfig.worker.jvm.minHeapSize",
     "larger than maxHeapSize"),
    ({"properties/node/environment": "Prod-1"}, 'properties.node.environment',
     "node.environment"),
    ({"properties/query/max-memory": "lots"}, 'properties.query.max-memory', "data size"),
    ({"properties/query/max-memory-per-node": "12 GB"}, 'properties.query.max-memory-per-node',
     "data size"),
    ({"properties/query/max-stage-count": 100}, 'properties.query.max-stage-count',
     "must be a string"),
    ({"properties/query/max-memory": "1TB\nx=y"}, 'properties.query.max-memory', "newline"),
    ({"properties/http-server": {"http.port": "9090"}}, 'properties.http-server["http.port"]',
     "set by the chart"),
    # Placeholders work in config.properties lines (tests/test_server_secrets.py), not in the
    # keys the chart writes from values.yaml or in node.properties.
    ({"properties/node/environment": "{{ DB_PASSWORD }}"}, "properties.node.environment",
     "cannot take a secret placeholder"),
    ({"connectors/1/name": "hive-prod"}, 'connectors[1].name', "repeats connectors[0]"),
    ({"connectors/1/name": "HIVE-prod"}, 'connectors[1].name', "ignoring case"),
    ({"connectors/1/name": "a/b"}, "connectors[1].name", "not valid"),
    ({"connectors/1/name": ".hidden"}, "connectors[1].name", "may not start"),
    ({"connectors/1/name": "a..b"}, "connectors[1].name", "'..'"),
    ({"connectors/1/name": "system"}, "connectors[1].name", "reserved by Trino"),
    ({"properties/node/id": "worker-1"}, "properties.node.id", "must differ on every pod"),
    ({"connectors/0/properties": {"hive.metastore.uri": "thrift://x:9083"}},
     'connectors["hive-prod"].properties', "connector.name"),
    ({"connectors/0/properties/hive.metastore.uri": "thrift://a\x00b"},
     'connectors["hive-prod"].properties["hive.metastore.uri"]', "NUL"),
    ({"connectors/0/properties/hive.metastore.uri": ObjectId()},
     'connectors["hive-prod"].properties["hive.metastore.uri"]', "not an ObjectId"),
    ({"connectors/0/properties/x": "{{ vault:secret/trino/analytics-prod }}"},
     'connectors["hive-prod"].properties.x', "has no key"),
    ({"connectors/0/properties/x": "{{ vault:secret/trino/other-team#password }}"},
     'connectors["hive-prod"].properties.x', "outside this cluster's allowed paths"),
    ({"connectors/0/properties/x": "${ENV:AWS_SECRET_ACCESS_KEY}"},
     'connectors["hive-prod"].properties.x', "reserved"),
    ({"connectors": {"name": "x"}}, "connectors", "must be a list"),
    ({"project": "platform-admin"}, "project", "Argo CD project"),
    ({"namespace": "kube-system"}, "namespace", "trino-<clusterId>"),
    ({"destination": {"server": "https://prod.example.com"}}, "destination.server",
     "not an allowed destination"),
    ({"replica": 3}, "replica", "unknown field"),
    ({"clusterConfig/worker/autoscaling": {"type": "keda", "minReplicas": 1, "maxReplicas": 4}},
     "clusterConfig.worker.autoscaling.triggers", "non-empty list of triggers"),
    ({"clusterConfig/worker/autoscaling": {"type": "hpa", "minReplicas": 5, "maxReplicas": 2}},
     "clusterConfig.worker.autoscaling.maxReplicas", "below minReplicas"),
    ({"clusterConfig/worker/gracefulShutdown": {"enabled": True}},
     "clusterConfig.worker.gracefulShutdown.gracePeriodSeconds", "is required"),
    ({"profile": "huge"}, "profile", "not a known profile"),
    ({"clusterConfig/worker/autoscaling": {"type": "keda", "minReplicas": 1, "maxReplicas": 4,
                                           "triggers": [{"type": "cpu", "metadata": {
                                               '{{ fail "x" }}': "1"}}]}},
     'clusterConfig.worker.autoscaling.triggers[0].metadata["{{ fail \\"x\\" }}"]',
     "not a KEDA metadata key"),
    ({"lastUpdated": Decimal128("1")}, None, None),  # metadata fields are ignored: still valid
]


@pytest.mark.parametrize(("changes", "field", "words"), INVALID,
                         ids=[f"{i}-{c[1]}" for i, c in enumerate(INVALID)])
def test_invalid_document_reports_field_and_reason(changes: dict[str, Any], field: str | None,
                                                    words: str | None) -> None:
    """Each broken field yields a message naming the cluster, the field path and the rule."""
    outcome = run(valid_doc(**changes))
    if field is None:
        assert isinstance(outcome, Cluster)
        return
    assert isinstance(outcome, Failed), outcome
    matching = [p for p in outcome.problems if p.field == field]
    assert matching, f"no problem at {field}: {[str(p) for p in outcome.problems]}"
    assert any(words in p.message for p in matching), [p.message for p in matching]
    label = valid_doc(**changes).get("clusterId")
    expected_label = label if label == "analytics-prod" else f"_id={doc_key(ObjectId('653a1a7b8e1f4a1e9c5d8e1a'))}"
    assert all(p.cluster == expected_label for p in outcome.problems)
    assert str(matching[0]).startswith(f"cluster {expected_label}: {field}: ")


def test_all_problems_are_reported_together() -> None:
    """A document with several independent mistakes gets all of them in one run."""
    outcome = run(valid_doc(**{
        "enabled": "yes",
        "trinoVersion": "latest",
        "clusterConfig/worker/replicas": -2,
        "connectors/1/name": "bad name",
    }))
    assert isinstance(outcome, Failed)
    assert {"enabled", "trinoVersion", "clusterConfig.worker.replicas", "connectors[1].name"} <= {
        p.field for p in outcome.problems}


def test_enabled_false_is_disabled_even_when_the_rest_is_broken() -> None:
    """A disabled document is not validated further: it is pruned, not reported."""
    outcome = run({"_id": 7, "clusterId": "old-one", "enabled": False, "clusterConfig": "junk"})
    assert isinstance(outcome, Disabled) and outcome.cluster_id == "old-one"


def test_enabled_string_false_is_an_error_not_a_disable() -> None:
    """enabled: "false" (a string) is an error; its cluster is kept, never silently pruned."""
    outcome = run(valid_doc(enabled="false"))
    assert isinstance(outcome, Failed) and outcome.cluster_id == "analytics-prod"


def test_duplicate_cluster_ids_fail_both_documents() -> None:
    """Two enabled documents with one clusterId: both fail, naming each other's _id."""
    a, b = valid_doc(), valid_doc(_id=ObjectId("653a1a7b8e1f4a1e9c5d8e1f"))
    disabled = valid_doc(_id=ObjectId("653a1a7b8e1f4a1e9c5d8e20"), enabled=False)
    outcomes = classify_all([RawDocument(doc_key(d["_id"]), d) for d in (a, b, disabled)], SETTINGS)
    assert [type(o).__name__ for o in outcomes] == ["Failed", "Failed", "Disabled"]
    for o in outcomes[:2]:
        assert "used by 2 enabled documents" in o.problems[-1].message
        assert doc_key(a["_id"]) in o.problems[-1].message and doc_key(b["_id"]) in o.problems[-1].message


def test_unknown_fields_can_be_downgraded_to_warnings() -> None:
    """validation.unknown_fields: warn renders the document and reports the field."""
    settings = replace(SETTINGS, validation={"unknown_fields": "warn"})
    outcome = run(valid_doc(replica=3), settings)
    assert isinstance(outcome, Cluster)
    assert [w.field for w in outcome.warnings] == ["replica"]


def test_reserved_fields_stay_errors_when_unknown_fields_only_warn() -> None:
    """Choosing the Argo CD project is refused even when unknown fields are only warnings."""
    settings = replace(SETTINGS, validation={"unknown_fields": "warn"})
    assert isinstance(run(valid_doc(project="admin"), settings), Failed)


def test_defaults_and_profiles_merge_under_the_document() -> None:
    """Maps merge, lists and scalars replace, null removes; the document wins over its profile."""
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 1, "c": 3}
    assert deep_merge(base, {"a": {"y": [3]}, "b": None}) == {"a": {"x": 1, "y": [3]}, "c": 3}
    doc = valid_doc(profile="big")
    del doc["clusterConfig"]["worker"]["replicas"]
    settings = replace(SETTINGS)
    import dataclasses

    settings = dataclasses.replace(
        settings,
        defaults={"clusterConfig": {"worker": {"replicas": 2}}},
        profiles={"big": {"clusterConfig": {"worker": {"replicas": 9}}, "trinoVersion": "400"}},
    )
    c = run(doc, settings)
    assert isinstance(c, Cluster)
    assert c.workers == 9  # profile over defaults
    assert c.trino_version == "476"  # document over profile


def test_destination_may_be_chosen_only_from_the_allowed_list() -> None:
    """A destination in argocd.allowed_destinations is accepted."""
    settings = replace(SETTINGS, argocd={"allowed_destinations": ("prod-eu",)})
    c = run(valid_doc(destination={"name": "prod-eu"}), settings)
    assert isinstance(c, Cluster) and c.destination_name == "prod-eu"


def test_bson_types_and_int64_are_handled() -> None:
    """Int64 counts as an integer; a date where a string belongs is named as a date."""
    import datetime

    ok = run(valid_doc(**{"clusterConfig/worker/replicas": Int64(3)}))
    assert isinstance(ok, Cluster) and ok.workers == 3
    bad = run(valid_doc(owner=datetime.datetime(2024, 1, 1)))
    assert isinstance(bad, Failed) and "not a date" in bad.problems[0].message


def test_autoscaling_sets_workers_from_min_replicas() -> None:
    """With HPA, server.workers is the HPA minimum and worker replicas may be omitted."""
    doc = valid_doc(**{"clusterConfig/worker/autoscaling": {
        "type": "hpa", "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 70}})
    del doc["clusterConfig"]["worker"]["replicas"]
    c = run(doc)
    assert isinstance(c, Cluster)
    assert c.workers == 2 and c.autoscaling is not None and c.autoscaling.max_replicas == 10


def test_placeholders_bind_to_scoped_references_and_env_names() -> None:
    """{{ NAME }} maps through the default convention; explicit refs keep mount/path/key."""
    doc = valid_doc(**{"connectors/1/properties/connection-user":
                         "u-{{ vault:secret/trino/analytics-prod/db#pw }}/y"})
    c = run(doc)
    assert isinstance(c, Cluster)
    uses = {u.env: str(u.ref) for u in c.secret_uses}
    assert uses["TRINO_SECRET_MYSQL_RDS_PASSWORD"] == "secret/trino/analytics-prod#MYSQL_RDS_PASSWORD"
    explicit = [e for e in uses if e.startswith("TRINO_VAULT_")]
    assert len(explicit) == 1 and uses[explicit[0]] == "secret/trino/analytics-prod/db#pw"


def test_validation_never_mutates_the_input() -> None:
    """Merging defaults and validating leaves the document exactly as it was read."""
    doc = valid_doc()
    before = copy.deepcopy(doc)
    run(doc)
    assert doc == before
