"""Placement options (issue 14, item 2): checked like Kubernetes checks a pod spec when the
settings are loaded, picked per role by name, and arriving in the chart's pods as written.

Expectations come from the options and documents in tests/operation_support.py.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.conftest import demo_settings
from tests.operation_support import (
    CHART_MARKS,
    PLACEMENTS,
    cluster_of,
    doc,
    option_settings,
    problems_of,
    selects,
    through_chart,
    with_options,
)
from trinogen.errors import ConfigError
from trinogen.kinds.placement.options import FIELDS, parse
from trinogen.settings import load_settings

# --- the option's shape ------------------------------------------------------------------------

GOOD: list[tuple[str, dict[str, Any]]] = [
    ("selector only", {"nodeSelector": {"pool": "trino", "example.com/tier": ""}}),
    ("toleration of every taint", {"tolerations": [{"operator": "Exists"}]}),
    ("equal toleration", {"tolerations": [{"key": "k", "operator": "Equal", "value": "v",
                                           "effect": "PreferNoSchedule"}]}),
    ("operator defaults to Equal", {"tolerations": [{"key": "k", "value": "v"}]}),
    ("gt on a node label", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}]}}}}),
    ("pod affinity", {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname",
             "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}]}}}),
    ("spread with min domains", {"topologySpreadConstraints": [
        {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
         "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3, "nodeTaintsPolicy": "Honor",
         "matchLabelKeys": ["pod-template-hash"]}]}),
    ("priority class", {"priorityClassName": "trino-batch"}),
    *[(f"shipped {name}", raw) for name, raw in PLACEMENTS.items()],
]

BAD: list[tuple[str, dict[str, Any], str]] = [
    ("empty", {}, "p: sets nothing"),
    ("unknown field", {"nodeSelctor": {"a": "b"}}, "p.nodeSelctor: unknown field"),
    ("label key", {"nodeSelector": {"bad key": "v"}}, "p.nodeSelector.bad key"),
    ("label prefix", {"nodeSelector": {"Bad_Prefix/x": "v"}}, "invalid prefix"),
    ("label value", {"nodeSelector": {"pool": "-x"}}, "not a Kubernetes label value"),
    ("label value type", {"nodeSelector": {"pool": 3}}, "p.nodeSelector.pool: must be a string"),
    ("toleration operator", {"tolerations": [{"key": "k", "operator": "Has"}]},
     "p.tolerations[0].operator: must be one of Exists, Equal"),
    ("toleration effect", {"tolerations": [{"key": "k", "operator": "Exists",
                                            "effect": "NoRun"}]},
     "p.tolerations[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute"),
    ("exists with a value", {"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
     "p.tolerations[0].value: must be empty with operator Exists"),
    ("no key needs exists", {"tolerations": [{"value": "v"}]},
     "p.tolerations[0].operator: must be Exists when no key"),
    ("seconds without NoExecute", {"tolerations": [{"key": "k", "operator": "Exists",
                                                    "effect": "NoSchedule",
                                                    "tolerationSeconds": 5}]},
     "p.tolerations[0].tolerationSeconds: is only valid with effect NoExecute"),
    ("tolerations not a list", {"tolerations": {"key": "k"}}, "p.tolerations: must be a list"),
    ("affinity kind", {"affinity": {"nodeAffinty": {}}}, "p.affinity.nodeAffinty: unknown field"),
    ("no terms", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}},
     "nodeSelectorTerms: must not be empty"),
    ("in without values", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}},
     "matchExpressions[0].values: must not be empty with operator In"),
    ("gt not a number", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["many"]}]}]}}}},
     "must be exactly one integer with operator Gt"),
    ("weight", {"affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 101, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}}},
     "[0].weight: is 101; it must be between 1 and 100"),
    ("pod term without topology key", {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}}},
     "[0].topologyKey: is required"),
    ("label selector operator", {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt",
                                                    "values": ["1"]}]}}]}}},
     "operator: must be one of In, NotIn, Exists, DoesNotExist"),
    ("spread skew", {"topologySpreadConstraints": [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     "p.topologySpreadConstraints[0].maxSkew: is 0"),
    ("spread when", {"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}]},
     "whenUnsatisfiable: must be one of DoNotSchedule, ScheduleAnyway"),
    ("spread min domains", {"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
         "minDomains": 2}]},
     "minDomains: is only valid with whenUnsatisfiable DoNotSchedule"),
    ("spread without key", {"topologySpreadConstraints": [
        {"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}]},
     "topologySpreadConstraints[0].topologyKey: is required"),
    ("priority class name", {"priorityClassName": "Trino Batch"},
     "p.priorityClassName: 'Trino Batch' is not a Kubernetes object name"),
    ("system priority class", {"priorityClassName": "system-node-critical"},
     "the system- priority classes are Kubernetes' own, for cluster components"),
    ("boolean weight", {"affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": True, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}}},
     "weight: must be a whole number"),
    # Refused by kube-apiserver 1.34 (issue 20; tests/test_kube_rules.py holds them to it).
    ("match fields exists", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]}}}},
     "nodeSelectorTerms[0].matchFields[0].operator: must be one of In, NotIn"),
    ("match fields key", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "spec.nodeName", "operator": "In", "values": ["n"]}]}]}}}},
     "matchFields[0].key: 'spec.nodeName' is not a node field"),
    ("match fields two values", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In",
                              "values": ["a", "b"]}]}]}}}},
     "matchFields[0].values: must be exactly one node name"),
    ("spread twice", {"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     ("p.topologySpreadConstraints[1]: repeats topologyKey zone with whenUnsatisfiable "
     "DoNotSchedule of [0]")),
    ("spread match label key in selector", {"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"tier": "a"}}, "matchLabelKeys": ["tier"]}]},
     "p.topologySpreadConstraints[0].matchLabelKeys[0]: 'tier' is in the labelSelector too"),
    ("pod term namespace", {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname", "namespaces": ["Team_A"]}]}}},
     ("requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]: 'Team_A' is not a "
     "namespace name")),
    ("pod term match label keys without selector", {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname", "matchLabelKeys": ["pod-template-hash"]}]}}},
     "[0].matchLabelKeys: needs a labelSelector"),
    ("selector value", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a b"]}]}]}}}},
     "matchExpressions[0].values[0]: 'a b' is not a Kubernetes label value"),
]


@pytest.mark.parametrize(("name", "raw"), GOOD, ids=[g[0] for g in GOOD])
def test_kubernetes_valid_placements_are_accepted(name: str, raw: dict[str, Any]) -> None:
    """Each pod-spec fragment Kubernetes accepts is accepted and kept exactly as written."""
    values = parse("p", copy.deepcopy(raw)).values()
    assert values == {k: v for k, v in raw.items() if v}
    # The table itself is held to Kubernetes: each entry makes a valid Pod (1.30, strict).
    kv = pytest.importorskip("kubernetes_validate")
    kv.validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                 "spec": {"containers": [{"name": "c", "image": "i"}], **raw}}, "1.30",
                strict=True)


@pytest.mark.parametrize(("name", "raw", "message"), BAD, ids=[b[0] for b in BAD])
def test_invalid_placements_name_the_field(name: str, raw: dict[str, Any], message: str) -> None:
    """Each shape Kubernetes would refuse is a configuration error naming the field."""
    with pytest.raises(ConfigError) as e:
        parse("p", raw)
    assert message in str(e.value)


def test_the_demo_settings_offer_their_options() -> None:
    """config/demo.yaml's commented options load and are what documents could pick there."""
    s = demo_settings()
    assert sorted(s.options("placement")) == ["spot-workers"]
    assert sorted(s.options("disruption")) == ["standard"]


def test_a_bad_option_in_the_settings_file_is_a_config_error(tmp_path: Path) -> None:
    """The settings loader parses placement options and names `placement.<name>.<field>`."""
    path = tmp_path / "trinogen.yaml"
    path.write_text("placement:\n  spot:\n    tolerations:\n      - {key: spot, operator: Has}\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_settings(path, environ={})
    assert "placement.spot.tolerations[0].operator" in str(e.value)
    path.write_text("placement:\n  spot:\n    nodeSelector: {pool: spot}\n", encoding="utf-8")
    loaded = load_settings(path, environ={})
    assert loaded.options("placement")["spot"].values() == {"nodeSelector": {"pool": "spot"}}


# --- picking ----------------------------------------------------------------------------------

def test_each_role_gets_the_placement_it_names() -> None:
    """The coordinator and the worker each get the option named for them, or none."""
    c = cluster_of(doc("p1", worker={"placement": "spot"}, coordinator={"placement": "steady"}),
                   option_settings())
    assert c.worker_placement is not None and c.coordinator_placement is not None
    assert c.worker_placement.values() == PLACEMENTS["spot"]
    assert c.coordinator_placement.values() == PLACEMENTS["steady"]
    plain = cluster_of(doc("p2"), option_settings())
    assert plain.worker_placement is None and plain.coordinator_placement is None


@pytest.mark.parametrize(
    ("worker", "coordinator", "field", "message"),
    [
        ({"placement": "spto"}, None, "clusterConfig.worker.placement",
         ("\"spto\" is not a placement option of these settings (did you mean spot?); known: "
          "spot, steady")),
        ({"placement": 3}, None, "clusterConfig.worker.placement", "must be a string"),
        (None, {"placement": "spot"}, "clusterConfig.coordinator.placement",
         "sets topologySpreadConstraints, which the Trino chart applies to workers only"),
    ],
)
def test_a_bad_pick_fails_the_document(worker: Any, coordinator: Any, field: str,
                                       message: str) -> None:
    """An unknown name, a non-string, or spread constraints for the coordinator are refused."""
    problems = problems_of(doc("p3", worker=worker, coordinator=coordinator), option_settings())
    assert message in problems[field]


def test_without_options_the_settings_offer_none() -> None:
    """A pick against settings that name no placements says so."""
    bare = dataclasses.replace(demo_settings(), named={})
    problems = problems_of(doc("p4", worker={"placement": "spot"}), bare)
    assert "the settings offer none" in problems["clusterConfig.worker.placement"]


def test_a_profile_can_pick_a_placement() -> None:
    """A placement named in a profile reaches the roles of every document using the profile."""
    base = demo_settings()
    profiles = {**base.profiles, "spotty": {"clusterConfig": {"worker": {"placement": "spot"}}}}
    s = with_options(dataclasses.replace(base, profiles=profiles), placement=PLACEMENTS)
    c = cluster_of(doc("p5", profile="spotty"), s)
    assert c.worker_placement is not None and c.worker_placement.priority_class == "trino-batch"


# --- through the chart --------------------------------------------------------------------------

POD_FIELDS = ("nodeSelector", "tolerations", "affinity", "priorityClassName",
              "topologySpreadConstraints")


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_placement_reaches_the_pods_of_each_role() -> None:
    """Every field of the option appears in that role's pod spec exactly as the option says."""
    t = through_chart(doc("p6", worker={"placement": "spot"}, coordinator={"placement": "steady"}),
                      option_settings())
    worker, coordinator = t.pod("worker"), t.pod("coordinator")
    spot, steady = PLACEMENTS["spot"], PLACEMENTS["steady"]
    for key in ("nodeSelector", "tolerations", "affinity", "priorityClassName"):
        assert worker[key] == spot[key], key
    for key in POD_FIELDS:
        assert coordinator.get(key) == steady.get(key), key
    # The option's spread constraint has no selector: it gets exactly this cluster's workers.
    (spread,) = worker["topologySpreadConstraints"]
    assert {k: v for k, v in spread.items() if k != "labelSelector"} == \
        spot["topologySpreadConstraints"][0]
    worker_labels = t.deployment("worker")["spec"]["template"]["metadata"]["labels"]
    coordinator_labels = t.deployment("coordinator")["spec"]["template"]["metadata"]["labels"]
    selector = spread["labelSelector"]["matchLabels"]
    assert selects(selector, worker_labels) and not selects(selector, coordinator_labels)
    assert selector["app.kubernetes.io/instance"] == "p6"


@CHART_MARKS[0]
@CHART_MARKS[1]
@pytest.mark.parametrize("keys", [
    ["app.kubernetes.io/instance"],
    ["app.kubernetes.io/instance", "pod-template-hash"],
    ["pod-template-hash"],
    ["app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component"],
])
def test_the_added_selector_leaves_the_match_label_keys_to_the_api_server(keys: list[str]) -> None:
    """A spread constraint naming matchLabelKeys gets a selector without those keys (Kubernetes
    refuses a Pod whose key is in both, issue 20), and with the keys' values taken from each pod
    it still counts exactly this cluster's workers."""
    zonal = {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": keys}]}
    t = through_chart(doc("p9", worker={"placement": "zonal"}),
                      with_options(placement={"zonal": zonal}))
    (spread,) = t.pod("worker")["topologySpreadConstraints"]
    assert spread["matchLabelKeys"] == keys
    selector = spread["labelSelector"]["matchLabels"]
    assert not set(selector) & set(keys)
    worker = t.deployment("worker")["spec"]["template"]["metadata"]["labels"]
    coordinator = t.deployment("coordinator")["spec"]["template"]["metadata"]["labels"]
    # what the API server merges in: each matchLabelKeys key with the pod's own value
    merged = {**selector, **{k: worker[k] for k in keys if k in worker}}
    assert selects(merged, worker) and not selects(merged, coordinator)
    assert merged["app.kubernetes.io/instance"] == "p9"


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_a_cluster_without_placement_gets_the_charts_defaults() -> None:
    """No option: no scheduling fields in either role's pods (the chart's empty defaults)."""
    t = through_chart(doc("p7"), option_settings())
    for role in ("worker", "coordinator"):
        assert not any(t.pod(role).get(key) for key in POD_FIELDS), role


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_placed_deployments_are_valid_kubernetes_objects() -> None:
    """Both Deployments with placements validate against the Kubernetes 1.30 schema, strictly."""
    kv = pytest.importorskip("kubernetes_validate")
    t = through_chart(doc("p8", worker={"placement": "spot"}, coordinator={"placement": "steady"}),
                      option_settings())
    for role in ("worker", "coordinator"):
        kv.validate(t.deployment(role), "1.30", strict=True)


# --- hostile settings ------------------------------------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), st.floats(),
                     st.text(max_size=8), st.sampled_from(["Exists", "Equal", "NoExecute", "In",
                                                          "Gt", "1", "zone", "DoNotSchedule"]))
_KEYS = st.one_of(st.sampled_from(sorted({"key", "operator", "value", "effect", "values",
                                          "tolerationSeconds", "nodeAffinity", "podAffinity",
                                          "matchExpressions", "topologyKey", "maxSkew",
                                          "whenUnsatisfiable", "labelSelector", "weight",
                                          "requiredDuringSchedulingIgnoredDuringExecution",
                                          "preferredDuringSchedulingIgnoredDuringExecution",
                                          "nodeSelectorTerms", "podAffinityTerm", "preference",
                                          "matchLabels", "minDomains"})),
                  st.text(max_size=6), st.integers())
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=12)


@given(st.dictionaries(st.sampled_from(sorted(FIELDS)), _VALUES, max_size=5))
@hsettings(max_examples=400, deadline=None)
def test_any_option_is_accepted_or_refused_with_a_config_error(raw: dict[str, Any]) -> None:
    """Whatever the settings file holds under a placement, parsing never raises anything else."""
    try:
        parse("p", raw)
    except ConfigError as e:
        assert str(e).startswith("p")
