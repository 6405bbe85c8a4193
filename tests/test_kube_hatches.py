"""The platform hatches held to a real kube-apiserver 1.34 (the session's `kube_cluster`).

Each case's document picks hatch options and goes through trinogen's render (tests/hatch_rig.py),
the real chart renders it, and every object (its `helm test` hooks left out), with the client
NetworkPolicy trinogen writes, is applied the way Argo CD applies it (server-side, strict field
validation) into a namespace labelled `pod-security.kubernetes.io/enforce: restricted`; each
pod template is then created as a Pod with dryRun=All. The judge is the API server; the
expectation (zero rejections) comes from the issue. Controls show the judge refuses what the
hatches keep out: a Service type the options do not offer, and a second Service on a node port
one already holds (why no option names a nodePort). No controller runs: the namespace's
`default` ServiceAccount is made by `Cluster.namespace`.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.conftest import CHART_DIR, demo_settings
from tests.hatch_rig import Picks, with_hatches
from tests.kubeapi import Cluster as Kube
from tests.kubeapi import KubeError
from tests.marks import CHART, KUBE_API, helm_python
from tests.test_auth import secure_settings
from tests.test_chart import render_through_chart
from tests.test_chart_hatches import LB, MIRROR, NETWORK, RUNTIME
from tests.test_kube_apply import RESTRICTED, WORKLOADS, Rejections, _is_helm_test, _pods
from tests.test_workload import doc

pytestmark = [*KUBE_API, *CHART]

MANAGER = "argocd-controller"
CASES: dict[str, tuple[dict[str, Any], Picks, bool]] = {
    "hatch-image": (doc("hatch-image", monitoring={"jmx": True}),
                    Picks(image=MIRROR, runtime=RUNTIME), False),
    "hatch-net": (doc("hatch-net", monitoring={"jmx": True, "serviceMonitor": True}),
                  Picks(network=NETWORK, service=LB, ingress=True), False),
    "hatch-net-tls": (doc("hatch-net-tls", authentication="corp-password"),
                      Picks(network=NETWORK, runtime=RUNTIME), True),
    "hatch-nodeport": (doc("hatch-nodeport"), Picks(service={"type": "NodePort"}), False),
}


@pytest.fixture(scope="module")
def chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


def _objects(chart: Any, name: str, namespace: str) -> list[dict[str, Any]]:
    d, picks, secure = CASES[name]
    r = with_hatches(d, secure_settings() if secure else demo_settings(), picks)
    _, rendered = render_through_chart(chart, yaml.safe_dump(r.values), r.cluster.cluster_id,
                                       namespace)
    chart_objects = [o for o in rendered if "kind" in o and not _is_helm_test(o)]
    own = [{**o, "metadata": {**o["metadata"], "namespace": namespace}} for o in r.own]
    return [*own, *chart_objects]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_hatches_objects_are_admitted(kube_cluster: Kube, chart: Any, name: str) -> None:
    """Every object applies server-side with strict validation and every pod template is
    admitted as a Pod in a `restricted` namespace."""
    namespace = f"apply-{name}"
    objects = _objects(chart, name, namespace)
    kube_cluster.namespace(namespace, RESTRICTED)
    refused = Rejections(name)
    for obj in objects:
        what = f"{obj['kind']}/{obj['metadata']['name']}"
        refused.call(f"apply {what}", lambda o=obj: kube_cluster.apply(
            o, manager=MANAGER, namespace=namespace))
    for what, pod in _pods(objects):
        refused.call(f"Pod of {what} (dry run)",
                     lambda p=pod: kube_cluster.create(p, namespace=namespace, dry_run=True))
    assert refused.lines == [], "\n".join(refused.lines)
    kinds = {o["kind"] for o in objects}
    assert "Deployment" in kinds and any(w.startswith(WORKLOADS) for w, _ in _pods(objects))
    if CASES[name][1].network is not None:  # a tripwire: the policies were among them
        assert [o["kind"] for o in objects].count("NetworkPolicy") == 2


def test_the_load_balancer_got_a_node_port_of_its_own(kube_cluster: Kube, chart: Any) -> None:
    """The API server gave the LoadBalancer and NodePort Services each their own node port (no
    option names one, so no two clusters can ask for the same)."""
    ports = []
    for name in ("hatch-net", "hatch-nodeport"):
        namespace = f"apply-{name}"
        kube_cluster.namespace(namespace, RESTRICTED)
        (svc,) = [o for o in _objects(chart, name, namespace)
                  if o["kind"] == "Service" and o["metadata"]["name"] == f"{name}-trino"]
        applied = kube_cluster.apply(svc, manager=MANAGER, namespace=namespace)
        ports += [p["nodePort"] for p in applied["spec"]["ports"] if p["name"] == "http"]
    assert len(ports) == 2 and len(set(ports)) == 2


def test_the_judge_refuses_a_node_port_another_service_holds(kube_cluster: Kube) -> None:
    """A control: two Services asking for one node port, the second is refused (what a
    platform option naming a nodePort would do to every cluster after the first)."""
    kube_cluster.namespace("control-nodeport", RESTRICTED)
    base = {"apiVersion": "v1", "kind": "Service", "spec": {
        "type": "NodePort", "selector": {"app": "x"},
        "ports": [{"name": "http", "port": 8080, "nodePort": 30080}]}}
    kube_cluster.apply({**base, "metadata": {"name": "first", "namespace": "control-nodeport"}})
    with pytest.raises(KubeError, match="already allocated"):
        kube_cluster.apply({**base, "metadata": {"name": "second",
                                                 "namespace": "control-nodeport"}})


def test_the_judge_refuses_a_service_type_no_option_offers(kube_cluster: Kube, chart: Any) -> None:
    """A control: the chart's coordinator Service with type ExternalName (which trinogen
    refuses: it reaches no pod) is refused by the API server."""
    namespace = "control-externalname"
    d, _, _ = CASES["hatch-nodeport"]
    r = with_hatches(d, demo_settings(), Picks(extra={"service": {"type": "ExternalName"}}))
    _, rendered = render_through_chart(chart, yaml.safe_dump(r.values), r.cluster.cluster_id,
                                       namespace)
    (svc,) = [o for o in rendered if o.get("kind") == "Service"
              and o["spec"].get("type") == "ExternalName"]
    kube_cluster.namespace(namespace, RESTRICTED)
    with pytest.raises(KubeError, match="externalName"):
        kube_cluster.apply(svc, manager=MANAGER, namespace=namespace)
