"""The rules trinogen says follow the API server, held to the real one (issue 20, section 1).

Each family is a table of cases. trinogen judges a case with its own check (the settings loader
for an option, the model for a document); the real kube-apiserver 1.34 judges the smallest
object that carries the value, with a server dry-run (strict field validation): a Pod for
placement, labels and quantities, a Deployment and its Pod for topology spread, a
PodDisruptionBudget, a HorizontalPodAutoscaler, an Ingress, a ServiceAccount, a Service, a
ConfigMap, a PriorityClass. Both must give the verdict the row states: `ok` is what Kubernetes
does, and trinogen agrees, except on the rows marked `policy`, where trinogen refuses on purpose
what the API server would take (the reason is in the row), and the test checks exactly that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from tests.kubeapi import Cluster, KubeError
from tests.marks import KUBE_API
from tests.operation_support import classified, doc, with_options
from trinogen.errors import ConfigError
from trinogen.model import Cluster as Model
from trinogen.model import Failed
from trinogen.render.kinds import kind_values
from trinogen.render.operation import values_context
from trinogen.settings.named import parse_kind

pytestmark = KUBE_API

NAMESPACE = "krules"
CHART = "trino"
CLUSTER = "rules"
WORKER_LABELS = {"app.kubernetes.io/name": CHART, "app.kubernetes.io/instance": CLUSTER,
                 "app.kubernetes.io/component": "worker"}


@dataclass(frozen=True)
class Case:
    """One row: what is judged, what Kubernetes says (`ok`), and why trinogen differs if it does."""

    name: str
    value: Any
    ok: bool
    policy: str = ""  # trinogen refuses what Kubernetes accepts, for this reason

    @property
    def trinogen_ok(self) -> bool:
        return self.ok and not self.policy


def rows(cases: list[Case]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", cases, ids=[c.name for c in cases])


@pytest.fixture(scope="module")
def kube(kube_cluster: Cluster) -> Iterator[Cluster]:
    """The session's API server, with a namespace of this module's own."""
    kube_cluster.namespace(NAMESPACE)
    yield kube_cluster


def api_verdict(kube: Cluster, *objects: dict[str, Any]) -> tuple[bool, str]:
    """(accepted, the API server's message): each object created with a server dry-run."""
    for obj in objects:
        try:
            kube.create(obj, namespace=NAMESPACE, dry_run=True)
        except KubeError as err:
            return False, str(err)
    return True, ""


def trinogen_verdict(judge: Callable[[], str | None]) -> tuple[bool, str]:
    """(accepted, trinogen's message): `judge` returns a problem or raises ConfigError."""
    try:
        problem = judge()
    except ConfigError as err:
        return False, str(err)
    return problem is None, problem or ""


def agree(case: Case, ours: tuple[bool, str], theirs: tuple[bool, str]) -> None:
    assert theirs[0] == case.ok, f"the API server {'accepts' if theirs[0] else 'refuses'} " \
        f"{case.name!r}, unlike the table says: {theirs[1]}"
    assert ours[0] == case.trinogen_ok, (
        f"trinogen {'accepts' if ours[0] else 'refuses'} {case.name!r} "
        f"({ours[1] or 'no problem'}); the API server: {theirs[1] or 'accepted'}")


def option(kind: str, raw: Mapping[str, Any]) -> Any:
    """One named option parsed as the settings loader parses it (ConfigError when refused)."""
    return parse_kind(kind, {"x": raw}, "settings.yaml")["x"]


def loads(kind: str, raw: Mapping[str, Any]) -> Callable[[], None]:
    """trinogen's judge of an option: the settings loader's parser (ConfigError when refused)."""
    def judge() -> None:
        option(kind, raw)

    return judge


def document_problem(document: Mapping[str, Any], kinds: Mapping[str, Any], field: str) -> \
        str | None:
    """The problem trinogen finds at `field` (or under it) of a document, or None."""
    outcome = classified(document, with_options(**kinds))
    if isinstance(outcome, Failed):
        found = [f"{p.field}: {p.message}" for p in outcome.problems
                 if p.field == field or p.field.startswith(field + ".")]
        return found[0] if found else None
    return None


def pod(spec: Mapping[str, Any] | None = None, *, labels: Mapping[str, str] | None = None,
        container: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": dict(labels or WORKER_LABELS)},
            "spec": {"containers": [{"name": "trino", "image": "trinodb/trino:476",
                                     **(container or {})}], **(spec or {})}}


def deployment(spec: Mapping[str, Any]) -> dict[str, Any]:
    template = pod(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": WORKER_LABELS},
                     "template": {"metadata": template["metadata"], "spec": template["spec"]}}}


# --- placement: the worker's pod spec as trinogen writes it ------------------------------------

def _node(term: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}}


def _fields(*requirements: dict[str, Any]) -> dict[str, Any]:
    return _node({"matchFields": list(requirements)})


def _exprs(*requirements: dict[str, Any]) -> dict[str, Any]:
    return _node({"matchExpressions": list(requirements)})


def _anti(term: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", **term}]}}}


def _spread(*constraints: dict[str, Any]) -> dict[str, Any]:
    base = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway"}
    return {"topologySpreadConstraints": [{**base, **c} for c in constraints]}


def _tolerate(**fields: Any) -> dict[str, Any]:
    return {"tolerations": [fields]}


_APP = {"matchLabels": {"app": "trino"}}
_COMPONENT = {"matchLabels": {"app.kubernetes.io/component": "worker"}}
_SYSTEM = ("Kubernetes' own classes rank above every workload: a Trino pod holding one could "
           "preempt cluster components (clusters that limit them do so with a ResourceQuota)")
_EITHER = ("Kubernetes refuses it as soon as a pod carries the label, and nothing keeps the "
           "label off the pods; the key belongs in one of the two")
_NOT_INT = ("the scheduler reads a Gt/Lt value as a 64-bit integer, so any other matches no "
            "node at all")
_LONG_PREFIX = "a" * 64 + ".example.com"

PLACEMENT = [
    Case("node selector", {"nodeSelector": {"pool": "trino", "example.com/tier": ""}}, True),
    Case("node selector bad value", {"nodeSelector": {"pool": "-x"}}, False),
    Case("node selector long prefix label", {"nodeSelector": {f"{_LONG_PREFIX}/k": "v"}}, True),
    Case("node selector uppercase prefix", {"nodeSelector": {"Example.com/k": "v"}}, False),
    Case("tolerate everything", _tolerate(operator="Exists"), True),
    Case("toleration equal", _tolerate(key="k", operator="Equal", value="v"), True),
    Case("toleration exists with value", _tolerate(key="k", operator="Exists", value="v"), False),
    Case("toleration no key equal", _tolerate(value="v"), False),
    Case("toleration bad value", _tolerate(key="k", value="a b"), False),
    Case("toleration seconds NoExecute", _tolerate(key="k", operator="Exists",
                                                   effect="NoExecute", tolerationSeconds=5), True),
    Case("toleration seconds NoSchedule", _tolerate(key="k", operator="Exists",
                                                    effect="NoSchedule", tolerationSeconds=5),
         False),
    Case("toleration bad effect", _tolerate(key="k", operator="Exists", effect="NoRun"), False),
    Case("node in", _exprs({"key": "pool", "operator": "In", "values": ["a", "b"]}), True),
    Case("node in empty", _exprs({"key": "pool", "operator": "In", "values": []}), False),
    Case("node exists with values", _exprs({"key": "pool", "operator": "Exists",
                                            "values": ["a"]}), False),
    Case("node gt", _exprs({"key": "cores", "operator": "Gt", "values": ["8"]}), True),
    Case("node gt two values", _exprs({"key": "cores", "operator": "Gt", "values": ["8", "9"]}),
         False),
    Case("node gt not a number", _exprs({"key": "cores", "operator": "Lt", "values": ["8x"]}),
         True, policy=_NOT_INT),
    Case("node gt beyond int64", _exprs({"key": "cores", "operator": "Gt",
                                         "values": ["9223372036854775808"]}), True,
         policy=_NOT_INT),
    Case("node gt plus sign", _exprs({"key": "cores", "operator": "Gt", "values": ["+8"]}),
         False),
    Case("node in not a label value", _exprs({"key": "pool", "operator": "In",
                                              "values": ["a b/c"]}), False),
    Case("no node selector terms", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}}, False),
    Case("match fields name", _fields({"key": "metadata.name", "operator": "In",
                                       "values": ["node-1"]}), True),
    Case("match fields exists", _fields({"key": "metadata.name", "operator": "Exists"}), False),
    Case("match fields two values", _fields({"key": "metadata.name", "operator": "In",
                                             "values": ["node-1", "node-2"]}), False),
    Case("match fields spec.nodeName", _fields({"key": "spec.nodeName", "operator": "In",
                                                "values": ["node-1"]}), False),
    Case("match fields bad node name", _fields({"key": "metadata.name", "operator": "NotIn",
                                                "values": ["Node_1"]}), False),
    Case("preferred weight 100", {"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"matchExpressions": [
                {"key": "pool", "operator": "Exists"}]}}]}}}, True),
    Case("preferred weight 0", {"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchExpressions": [
                {"key": "pool", "operator": "Exists"}]}}]}}}, False),
    Case("anti-affinity", _anti({"labelSelector": _APP}), True),
    Case("anti-affinity selector value", _anti({"labelSelector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["not a value"]}]}}), False),
    Case("anti-affinity namespaces", _anti({"labelSelector": _APP, "namespaces": ["trino-a"]}),
         True),
    Case("anti-affinity bad namespace", _anti({"labelSelector": _APP, "namespaces": ["Trino_A"]}),
         False),
    Case("anti-affinity match label keys", _anti({"labelSelector": _APP,
                                                  "matchLabelKeys": ["pod-template-hash"]}),
         True),
    Case("anti-affinity match label keys no selector",
         _anti({"matchLabelKeys": ["pod-template-hash"]}), False),
    Case("anti-affinity match label key in selector",
         _anti({"labelSelector": _COMPONENT, "matchLabelKeys": ["app.kubernetes.io/component"]}),
         False),
    Case("anti-affinity mismatch label key in selector",
         _anti({"labelSelector": _COMPONENT,
                "mismatchLabelKeys": ["app.kubernetes.io/component"]}), True),
    Case("anti-affinity match label key in selector, a label the pod lacks",
         _anti({"labelSelector": _APP, "matchLabelKeys": ["app"]}), True, policy=_EITHER),
    Case("anti-affinity match and mismatch", _anti({"labelSelector": _APP,
                                                    "matchLabelKeys": ["team"],
                                                    "mismatchLabelKeys": ["team"]}), False),
    Case("spread", _spread({}), True),
    Case("spread twice the same", _spread({}, {}), False),
    Case("spread same key other action", _spread({}, {"whenUnsatisfiable": "DoNotSchedule"}),
         True),
    Case("spread same key and action, other skew", _spread({}, {"maxSkew": 2}), False),
    Case("spread skew 0", _spread({"maxSkew": 0}), False),
    Case("spread min domains", _spread({"whenUnsatisfiable": "DoNotSchedule", "minDomains": 3}),
         True),
    Case("spread min domains anyway", _spread({"minDomains": 3}), False),
    Case("spread match label keys", _spread({"matchLabelKeys": ["pod-template-hash"]}), True),
    Case("spread match label key of the selector",
         _spread({"labelSelector": _COMPONENT,
                  "matchLabelKeys": ["app.kubernetes.io/component"]}), False),
    Case("spread match label key of the selector, a label the pod lacks",
         _spread({"labelSelector": _APP, "matchLabelKeys": ["app"]}), True,
         policy=_EITHER),
    Case("spread match label key trinogen selects by",
         _spread({"matchLabelKeys": ["app.kubernetes.io/instance"]}), True),
    Case("spread match label keys all worker labels",
         _spread({"matchLabelKeys": sorted(WORKER_LABELS)}), True),
    Case("spread policies", _spread({"nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore"}),
         True),    Case("spread bad policy", _spread({"nodeTaintsPolicy": "Sometimes"}), False),
    Case("spread bad action", _spread({"whenUnsatisfiable": "Sometimes"}), False),
    Case("spread bad topology key", _spread({"topologyKey": "zone name"}), True,
         policy="a topologyKey names a node label, and no node can have a label of that name"),
    Case("toleration bad key", _tolerate(key="bad key", operator="Exists"), False),
    Case("toleration empty key exists", _tolerate(key="", operator="Exists",
                                                  effect="NoSchedule"), True),
    Case("anti-affinity bad topology key", {"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "Bad_Prefix/zone", "labelSelector": _APP}]}}}, False),
    Case("anti-affinity namespace selector", _anti({"labelSelector": _APP, "namespaceSelector": {
        "matchLabels": {"team": "a"}}}), True),
    Case("anti-affinity namespace selector value", _anti({"labelSelector": _APP,
                                                         "namespaceSelector": {
        "matchLabels": {"team": "a b"}}}), False),
    Case("preferred pod weight 101", {"affinity": {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "podAffinityTerm": {
            "topologyKey": "kubernetes.io/hostname", "labelSelector": _APP}}]}}}, False),
    Case("empty node selector term", _node({}), True),
]


def _worker_spec(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What trinogen writes into the worker's pod spec for a document that picks `raw`."""
    settings = with_options(placement={"x": raw})
    outcome = classified(doc(CLUSTER, worker={"placement": "x"}), settings)
    assert isinstance(outcome, Model), outcome
    spec: dict[str, Any] = kind_values(outcome, settings)["placement"]["worker"]
    return spec


@rows(PLACEMENT)
def test_placement_rules_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A placement option trinogen accepts makes a worker Pod (and Deployment) the API server
    admits, and one it refuses is refused there too."""
    ours = trinogen_verdict(loads("placement", case.value))
    spec = _worker_spec(case.value) if ours[0] else dict(case.value)
    for constraint in spec.get("topologySpreadConstraints", []):  # what trinogen refused,
        constraint.setdefault("labelSelector", {"matchLabels": dict(WORKER_LABELS)})  # as it was
    objects = [pod(spec)]
    if "topologySpreadConstraints" in spec:
        objects.insert(0, deployment(spec))
    agree(case, ours, api_verdict(kube, *objects))


PRIORITY = [
    # not a name tests/test_kube_apply.py creates for real on the session's shared API server
    # (a dry-run create of an existing name is a 409)
    Case("priority class", "rules-trino-batch", True),
    Case("priority class subdomain", "trino.batch", True),
    Case("priority class long label", "a" * 64, True),
    Case("priority class uppercase", "Trino", False),
    Case("priority class system prefix", "system-trino", False),
]


@rows(PRIORITY)
def test_priority_class_names_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A priority class name trinogen accepts is one Kubernetes lets a PriorityClass have."""
    ours = trinogen_verdict(loads("placement", {"priorityClassName": case.value}))
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": {"name": case.value}, "value": 1000}
    agree(case, ours, api_verdict(kube, obj))


BUILT_IN_PRIORITY = [
    Case("system-node-critical", "system-node-critical", True, policy=_SYSTEM),
    Case("system-cluster-critical", "system-cluster-critical", True, policy=_SYSTEM),
]


@rows(BUILT_IN_PRIORITY)
def test_built_in_priority_classes_on_a_worker(kube: Cluster, case: Case) -> None:
    """trinogen refuses Kubernetes' own priority classes for a cluster's pods, which the API
    server (with no quota admission configured) would admit."""
    ours = trinogen_verdict(loads("placement", {"priorityClassName": case.value}))
    agree(case, ours, api_verdict(kube, pod({"priorityClassName": case.value})))


# --- names ----------------------------------------------------------------------------------------

CLUSTER_IDS = [
    Case("one letter", "a", True),
    Case("fifty characters", "a" * 50, True),
    Case("fifty-one characters", "a" * 51, False),  # <id>-trino-worker: 64 > 63
    Case("digit first", "1abc", False),  # a Service name starts with a letter
    Case("hyphen last", "abc-", False),  # trino-abc- is no namespace
    Case("uppercase", "Abc", False),
    Case("underscore", "a_b", False),
    Case("dot", "a.b", False),
    Case("double hyphen", "a--b", True),
]


@rows(CLUSTER_IDS)
def test_cluster_ids_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A clusterId trinogen accepts names the namespace `trino-<id>` and the chart's worker
    Service `<id>-trino-worker` (the longest name it makes, a DNS-1035 label), and one it
    refuses could not name both."""
    ours = trinogen_verdict(lambda: document_problem(doc(case.value), {}, "clusterId"))
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": f"trino-{case.value}"}}
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": f"{case.value}-{CHART}-worker"},
               "spec": {"ports": [{"port": 8080}], "selector": WORKER_LABELS}}
    agree(case, ours, api_verdict(kube, namespace, service))


SERVICE_ACCOUNT_NAMES = [
    Case("pattern", "{cluster}-trino", True),
    Case("subdomain", "trino.lake", True),
    Case("long label", "a" * 64, True),
    Case("uppercase", "Trino", False),
    Case("too long", "a" * 254, False),
    Case("default", "default", False),  # every namespace has its own already
]


@rows(SERVICE_ACCOUNT_NAMES)
def test_service_account_names_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A service_accounts option's name, filled, is a name a ServiceAccount can have."""
    ours = trinogen_verdict(loads("service_accounts", {"name": case.value}))
    obj = {"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": case.value.replace("{cluster}", CLUSTER)}}
    agree(case, ours, api_verdict(kube, obj))


# --- labels and annotations -----------------------------------------------------------------------

OWNERS = [
    Case("owner", "qa_team", True),
    Case("owner uppercase and dots", "QA.Team-1", True),
    Case("owner 63", "o" * 63, True),
    Case("owner 64", "o" * 64, False),
    Case("owner starts with underscore", "_qa", False),
    Case("owner with space", "qa team", False),
]


@rows(OWNERS)
def test_owners_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """An owner trinogen accepts is a value of the label `trinogen.io/owner`."""
    ours = trinogen_verdict(lambda: document_problem(doc(CLUSTER, owner=case.value), {}, "owner"))
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "owner", "labels": {"trinogen.io/owner": case.value}}}
    agree(case, ours, api_verdict(kube, obj))


POD_LABELS = [
    Case("azure", {"azure.workload.identity/use": "true"}, True),
    Case("empty value", {"example.com/x": ""}, True),
    Case("name 63", {"k" * 63: "v"}, True),
    Case("name 64", {"k" * 64: "v"}, False),
    Case("prefix with a long label", {f"{_LONG_PREFIX}/k": "v"}, True),
    Case("prefix too long", {f"{'a.' * 127}com/k": "v"}, False),
    Case("uppercase prefix", {"Example.com/k": "v"}, False),
    Case("two slashes", {"a/b/c": "v"}, False),
    Case("empty prefix", {"/k": "v"}, False),
    Case("value 64", {"k": "v" * 64}, False),
    Case("value with space", {"k": "a b"}, False),
]


@rows(POD_LABELS)
def test_pod_labels_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A service_accounts option's pod_labels trinogen accepts are labels a Pod can carry."""
    ours = trinogen_verdict(loads("service_accounts", {"pod_labels": case.value}))
    agree(case, ours, api_verdict(kube, pod(labels={**WORKER_LABELS, **case.value})))


_BIG = 256 * 1024
ANNOTATIONS = [
    Case("role arn", {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/trino-{cluster}"},
         True),
    Case("json value", {"example.com/cfg": '{"a": [1, 2]}'}, True),
    Case("uppercase key", {"Example.COM/Key": "v"}, True),
    Case("prefix with a long label", {f"{_LONG_PREFIX}/k": "v"}, True),
    Case("key with space", {"bad key": "v"}, False),
    Case("name 64", {"k" * 64: "v"}, False),
    Case("exactly 256 KiB", {"k": "v" * (_BIG - 1)}, True),
    Case("one byte over", {"k": "v" * _BIG}, False),
    Case("256 KiB of characters, more bytes", {"k": "é" * (_BIG // 2)}, False),
    Case("line break", {"example.com/x": "a\nb"}, True,
         policy="an annotation value here is one line (a multi-line value is an issue to file)"),
]


@rows(ANNOTATIONS)
def test_annotations_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A service_accounts option's annotations trinogen accepts fit on a ServiceAccount."""
    ours = trinogen_verdict(loads("service_accounts", {"annotations": case.value}))
    filled = {k: v.replace("{cluster}", CLUSTER) for k, v in case.value.items()}
    obj = {"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": "annotated", "annotations": filled}}
    agree(case, ours, api_verdict(kube, obj))


# --- quantities -----------------------------------------------------------------------------------

QUANTITIES = [
    Case("milli", "500m", True),
    Case("whole", "4", True),
    Case("decimal", "0.5", True),
    Case("leading dot", ".5", True),
    Case("trailing dot", "1.", True),
    Case("exponent", "1e3", True),
    Case("capital exponent", "1E3", True),
    Case("kilo", "1k", True),
    Case("capital kilo", "1K", False),
    Case("kibi", "1Ki", True),
    Case("plus sign", "+1", True),
    Case("negative", "-1", False),
    Case("two dots", "1.5.5", False),
    Case("empty", "", False),
    Case("space", "1 ", True,
         policy="trinogen reads quantities itself (request <= limit, quotas) by Kubernetes' "
         "grammar, which has no spaces: the API server trims them before parsing"),
    Case("nano", "100n", True),
    Case("huge", "1e100", True),
]


@rows(QUANTITIES)
def test_quantities_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A CPU quantity trinogen accepts in a role's resources is one a Pod's container takes."""
    resources = {"requests": {"cpu": case.value}, "limits": {"cpu": case.value}}
    ours = trinogen_verdict(lambda: document_problem(
        doc(CLUSTER, worker={"resources": resources}), {}, "clusterConfig.worker.resources"))
    agree(case, ours, api_verdict(kube, pod(container={"resources": resources})))


REQUESTS = [
    Case("request below limit", ("1", "2"), True),
    Case("request equals limit in other units", ("1000m", "1"), True),
    Case("request above limit", ("3", "2"), False),
    Case("request a milli above", ("2001m", "2"), False),
]


@rows(REQUESTS)
def test_requests_above_limits_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """trinogen refuses a CPU request above its limit exactly when the API server does."""
    request, limit = case.value
    resources = {"requests": {"cpu": request}, "limits": {"cpu": limit}}
    ours = trinogen_verdict(lambda: document_problem(
        doc(CLUSTER, worker={"resources": resources}), {}, "clusterConfig.worker.resources"))
    agree(case, ours, api_verdict(kube, pod(container={"resources": resources})))


_GPU = "example.com/gpu"
RESOURCES = [
    Case("ephemeral storage", ({"ephemeral-storage": "1Gi"}, {"ephemeral-storage": "2Gi"}), True),
    Case("extended resource", ({_GPU: "1"}, {_GPU: "1"}), True),
    Case("extended resource, limit only", ({}, {_GPU: "2"}), True),
    Case("extended resource, request only", ({_GPU: "1"}, {}), False),
    Case("extended resource below its limit", ({_GPU: "1"}, {_GPU: "2"}), False),
    Case("extended resource, a fraction", ({_GPU: "500m"}, {_GPU: "500m"}), False),
    Case("unknown unprefixed name", ({"gpu": "1"}, {"gpu": "1"}), False),
    Case("kubernetes.io name", ({"kubernetes.io/gpu": "1"}, {"kubernetes.io/gpu": "1"}), True),
    Case("huge pages", ({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi"}), True),
    Case("huge pages below their limit", ({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "4Mi"}),
         False),
]


@rows(RESOURCES)
def test_resource_names_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A role's resources trinogen accepts (merged with the settings' defaults, as written into
    the container) are resources a Pod's container takes, whatever the resource's name."""
    requests, limits = case.value
    resources = {"requests": requests, "limits": limits}
    outcome = classified(doc(CLUSTER, worker={"resources": resources}), with_options())
    if isinstance(outcome, Model):
        ours, written = (True, ""), outcome.worker.resources
    else:
        ours, written = (False, str(outcome.problems)), {  # with cpu and memory, as merged
            kind: {"cpu": "1", "memory": "6Gi", **values}
            for kind, values in resources.items()}
    container = {"resources": {k: dict(v) for k, v in written.items()}}
    agree(case, ours, api_verdict(kube, pod(container=container)))


# --- PodDisruptionBudgets -------------------------------------------------------------------------

PDBS = [
    Case("one", 1, True),
    Case("a thousand", 1000, True),
    Case("percent", "25%", True),
    Case("all", "100%", True),
    Case("over all", "101%", False),
    Case("leading zero percent", "07%", True),
    Case("fraction percent", "1.5%", False),
    Case("number as text", "5", False),
    Case("negative", -1, False),
    Case("zero", 0, True, policy="0 would block every node drain for good"),
    Case("zero percent", "0%", True, policy="0% would block every node drain for good"),
]


@rows(PDBS)
def test_worker_budgets_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """A disruption option's worker_max_unavailable trinogen accepts is one a PDB takes."""
    ours = trinogen_verdict(loads("disruption", {"worker_max_unavailable": case.value}))
    obj = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
           "spec": {"maxUnavailable": case.value, "selector": {"matchLabels": WORKER_LABELS},
                    "unhealthyPodEvictionPolicy": "AlwaysAllow"}}
    agree(case, ours, api_verdict(kube, obj))


# --- HorizontalPodAutoscaler ----------------------------------------------------------------------

HPAS = [
    Case("one to one", {"minReplicas": 1, "maxReplicas": 1}, True),
    Case("zero minimum", {"minReplicas": 0, "maxReplicas": 3}, False),
    Case("maximum below minimum", {"minReplicas": 3, "maxReplicas": 2}, False),
    Case("cpu target", {"minReplicas": 1, "maxReplicas": 9,
                        "targetCPUUtilizationPercentage": 70}, True),
    Case("zero target", {"minReplicas": 1, "maxReplicas": 9,
                         "targetCPUUtilizationPercentage": 0}, False),
    Case("short drain", {"minReplicas": 1, "maxReplicas": 9, "grace": 10}, True),
    Case("drain at the policy period cap", {"minReplicas": 1, "maxReplicas": 9, "grace": 877},
         True),
    Case("drain beyond every cap", {"minReplicas": 1, "maxReplicas": 9, "grace": 43200}, True),
]


def _hpa(scaling: Mapping[str, Any], behavior: Mapping[str, Any] | None) -> dict[str, Any]:
    metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": scaling["targetCPUUtilizationPercentage"]}}}
               ] if "targetCPUUtilizationPercentage" in scaling else []
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "minReplicas": scaling["minReplicas"], "maxReplicas": scaling["maxReplicas"],
        "metrics": metrics}
    if behavior:
        spec["behavior"] = dict(behavior)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "hpa"}, "spec": spec}


@rows(HPAS)
def test_autoscaling_agrees_with_the_api_server(kube: Cluster, case: Case) -> None:
    """An HPA autoscaling trinogen accepts, with the scale-in behaviour it writes for the
    workers' shutdown budget, is an HPA the API server takes."""
    scaling = {k: v for k, v in case.value.items() if k != "grace"}
    worker: dict[str, Any] = {"autoscaling": {"type": "hpa", **scaling}}
    if "grace" in case.value:  # large enough budgets need a larger cap than the default
        worker["gracefulShutdown"] = {"gracePeriodSeconds": case.value["grace"]}
    document = doc(CLUSTER, worker=worker)
    del document["clusterConfig"]["worker"]["replicas"]
    settings = _with_shutdown_cap(with_options(), 200_000)
    outcome = classified(document, settings)
    if isinstance(outcome, Model):
        ours, behavior = (True, ""), values_context(outcome)["scale_down"]
    else:
        ours, behavior = (False, str(outcome.problems)), None
    agree(case, ours, api_verdict(kube, _hpa(scaling, behavior)))


def _with_shutdown_cap(settings: Any, seconds: int) -> Any:
    return dataclasses.replace(settings, validation=dataclasses.replace(
        settings.validation, max_shutdown_seconds=seconds))


# --- Ingress --------------------------------------------------------------------------------------

INGRESS = [
    Case("plain", {}, True),
    Case("exact path", {"path": "/ui", "path_type": "Exact"}, True),
    Case("double slash", {"path": "/a//b"}, False),
    Case("dot segment", {"path": "/a/./b"}, False),
    Case("dot dot end", {"path": "/a/.."}, False),
    Case("dot end", {"path": "/a/."}, False),
    Case("double slash, implementation specific",
         {"path": "/a//b", "path_type": "ImplementationSpecific"}, True),
    Case("class name", {"class_name": "nginx-internal"}, True),
    Case("class name with dots", {"class_name": "nginx.example.com"}, True),
    Case("class name with a long label", {"class_name": "a" * 64}, True),
    Case("class name uppercase", {"class_name": "Nginx"}, False),
    Case("tls secret", {"tls_secret": "{cluster}-ingress-tls"}, True),
    Case("tls secret with a long label", {"tls_secret": "tls-" + "a" * 64}, True),
    Case("tls secret uppercase", {"tls_secret": "{cluster}-TLS"}, False),
    Case("host uppercase", {"host": "{cluster}.Example.com"}, False),
    Case("host with a long label", {"host": "{cluster}." + "a" * 64 + ".com"}, True,
         policy="a host is looked up in DNS, whose labels have at most 63 characters"),
    Case("annotation", {"annotations": {"nginx.ingress.kubernetes.io/backend-protocol": "HTTPS"}},
         True),
]


def _ingress(o: Any) -> dict[str, Any]:
    host = o.host.replace("{cluster}", CLUSTER)
    spec: dict[str, Any] = {"rules": [{"host": host, "http": {"paths": [{
        "path": o.path, "pathType": o.path_type, "backend": {"service": {
            "name": f"{CLUSTER}-trino", "port": {"number": 8080}}}}]}}]}
    if o.class_name:
        spec["ingressClassName"] = o.class_name
    if o.tls_secret:
        spec["tls"] = [{"hosts": [host], "secretName": o.tls_secret.replace("{cluster}", CLUSTER)}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "ing", "annotations": dict(o.annotations)}, "spec": spec}


@rows(INGRESS)
def test_ingress_options_agree_with_the_api_server(kube: Cluster, case: Case) -> None:
    """An ingress option trinogen accepts makes, filled for a cluster, an Ingress the API server
    takes; the fields of one it refuses are refused there too."""
    raw = {"host": "{cluster}.trino.example.com", **case.value}
    ours = trinogen_verdict(loads("ingress", raw))
    parsed = option("ingress", raw) if ours[0] else _Unchecked(raw)
    agree(case, ours, api_verdict(kube, _ingress(parsed)))


@dataclass
class _Unchecked:
    """An ingress option's fields as written, for the API server to judge what trinogen refused."""

    raw: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        defaults = {"path": "/", "path_type": "Prefix", "class_name": None, "tls_secret": None}
        if name == "annotations":
            return tuple((self.raw.get("annotations") or {}).items())
        return self.raw.get(name, defaults.get(name))
