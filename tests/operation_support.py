"""Shared by the placement, disruption and stopping tests: settings with named options, test
documents, and one document through trinogen and the real Trino chart.

Expectations in those tests come from the documents and the options written here, never from
trinogen's output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import yaml

from tests.conftest import CHART_DIR, demo_settings
from tests.marks import CHART, helm_python
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind
from trinogen.source import doc_key

CHART_MARKS = CHART  # the marks of the chart tests (tests.marks)

PLACEMENTS: dict[str, Any] = {
    "spot": {
        "nodeSelector": {"node.kubernetes.io/lifecycle": "spot", "pool": "trino"},
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "dedicated", "operator": "Equal", "value": "trino",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app.kubernetes.io/component": "worker"}}}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "ScheduleAnyway"}],
        "priorityClassName": "trino-batch",
    },
    "steady": {
        "nodeSelector": {"pool": "steady"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": ["eu-west-1a", "eu-west-1b"]}]}]}}},
        "priorityClassName": "trino-interactive",
    },
}
DISRUPTIONS: dict[str, Any] = {
    "standard": {},
    "strict": {"worker_max_unavailable": "25%", "coordinator_max_unavailable": 0,
               "coordinator_rollout": "Recreate"},
    "rolling": {"worker_max_unavailable": 2, "coordinator_rollout": "RollingUpdate"},
}


def with_options(settings: Settings | None = None, **kinds: Mapping[str, Any]) -> Settings:
    """The demo settings with named options, parsed as the settings loader parses them."""
    base = settings or demo_settings()
    parsed = {kind: parse_kind(kind, raw, "test.yaml") for kind, raw in kinds.items()}
    return dataclasses.replace(base, named={**base.named, **parsed})


def option_settings() -> Settings:
    return with_options(placement=PLACEMENTS, disruption=DISRUPTIONS)


def doc(cluster_id: str, *, worker: Mapping[str, Any] | None = None,
        coordinator: Mapping[str, Any] | None = None, **body: Any) -> dict[str, Any]:
    """A small valid document (the demo defaults give heap and resources)."""
    d: dict[str, Any] = {
        "_id": f"test-{cluster_id}", "clusterId": cluster_id, "owner": "qa_team",
        "enabled": True,
        "connectors": [{"name": "memory", "properties": {"connector.name": "memory"}}],
        "clusterConfig": {"worker": {"replicas": 2, **(worker or {})}},
    }
    if coordinator:
        d["clusterConfig"]["coordinator"] = dict(coordinator)
    d.update(body)
    return d


def classified(document: Mapping[str, Any], settings: Settings) -> Cluster | Failed:
    outcome = classify(RawDocument(doc_key(document["_id"]), document), settings)
    assert isinstance(outcome, (Cluster, Failed)), outcome
    return outcome


def cluster_of(document: Mapping[str, Any], settings: Settings) -> Cluster:
    outcome = classified(document, settings)
    assert isinstance(outcome, Cluster), outcome
    return outcome


def problems_of(document: Mapping[str, Any], settings: Settings) -> dict[str, str]:
    """field path -> message of every problem of a document that must fail."""
    outcome = classified(document, settings)
    assert isinstance(outcome, Failed), "the document validated"
    return {p.field: p.message for p in outcome.problems}


@dataclasses.dataclass
class Through:
    """One document through trinogen and the real chart."""

    cluster: Cluster
    files: dict[str, bytes]
    values: dict[str, Any]
    objects: list[dict[str, Any]]

    def file(self, suffix: str) -> dict[str, Any] | None:
        hits = [v for k, v in self.files.items() if k.endswith(suffix)]
        return yaml.safe_load(hits[0]) if hits else None

    def find(self, kind: str, component: str | None = None) -> list[dict[str, Any]]:
        out = [o for o in self.objects if o["kind"] == kind]
        if component is not None:
            out = [o for o in out
                   if o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == component]
        return out

    def deployment(self, component: str) -> dict[str, Any]:
        (found,) = self.find("Deployment", component)
        return found

    def pod(self, component: str) -> dict[str, Any]:
        return dict(self.deployment(component)["spec"]["template"]["spec"])


def through_chart(document: Mapping[str, Any], settings: Settings) -> Through:
    from tests.test_chart import render_through_chart

    cluster = cluster_of(document, settings)
    files = Renderer(settings).render_cluster(cluster, {})
    cid = cluster.cluster_id
    values_text = files[f"{settings.output.clusters_dir}/{cid}/values.yaml"].decode()
    chart = helm_python.Chart.load(CHART_DIR)
    values, objects = render_through_chart(chart, values_text, cid, f"trino-{cid}")
    return Through(cluster, files, values, objects)


def selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """A matchLabels selector's verdict on a pod's labels (Kubernetes' rule: every pair present)."""
    return all(labels.get(k) == v for k, v in selector.items())
