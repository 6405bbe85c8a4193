"""The platform hatches through the real Trino chart (helm-python-sdk, ../shared/charts/trino).

A document picking hatch options goes through trinogen's render (tests/hatch_rig.py), and the
chart renders the objects. Expectations come from the options'
text, the chart's templates (its container port names, selector labels, its jvm.config) and
Kubernetes' rules, never from trinogen's output.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.conftest import CHART_DIR, demo_settings
from tests.hatch_rig import Picks, Rendered, with_hatches
from tests.marks import CHART, helm_python
from tests.test_auth import secure_settings
from tests.test_chart import render_through_chart
from tests.test_workload import doc
from trinogen.kinds.images import options as image
from trinogen.kinds.runtime import jvm
from trinogen.kinds.runtime import options as runtime
from trinogen.kinds.services import options as service
from trinogen.settings import Settings

pytestmark = CHART

ROLES = ("coordinator", "worker")
DIGEST = "sha256:" + "0123456789abcdef" * 4
MIRROR = {"repository": "registry.example.com/mirror/trino", "digests": {"476": DIGEST},
          "pull_policy": "Always", "pull_secrets": ["registry-credentials"]}
RUNTIME = {"env": {"OTEL_SERVICE_NAME": "trino-{cluster}", "TZ": "UTC"},
           "jvm": ["-XX:+UseStringDeduplication", "-Duser.timezone=UTC"],
           "coordinator_jvm": ["-XX:MaxDirectMemorySize=2G"]}
NETWORK = {"clients": ["bi-tools"], "client_cidrs": ["10.20.0.0/16"],
           "ingress_controller": {"namespace": "ingress-nginx",
                                  "pod_labels": {"app.kubernetes.io/name": "ingress-nginx"}},
           "monitoring": "monitoring"}
LB = {"type": "LoadBalancer",
      "annotations": {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                      "example.com/cluster": "{cluster}"}}


class Objects:
    """The chart's objects for one document, with trinogen's own."""

    def __init__(self, r: Rendered, objects: list[dict[str, Any]]) -> None:
        self.r, self.objects = r, objects
        self.fullname = f"{r.cluster.cluster_id}-trino"

    def one(self, kind: str, name: str) -> dict[str, Any]:
        (found,) = [o for o in self.objects if o.get("kind") == kind
                    and o["metadata"]["name"] == name]
        return found

    def pod(self, role: str) -> dict[str, Any]:
        return dict(self.one("Deployment", f"{self.fullname}-{role}")["spec"]["template"])

    def trino(self, role: str) -> dict[str, Any]:
        (c,) = [c for c in self.pod(role)["spec"]["containers"] if c["name"] == f"trino-{role}"]
        return dict(c)

    def jvm_config(self, role: str) -> list[str]:
        """The role's jvm.config flags in order (comment lines left out, as the launcher does)."""
        text = self.one("ConfigMap", f"{self.fullname}-{role}")["data"]["jvm.config"]
        return [s for ln in text.splitlines() if (s := ln.strip()) and not s.startswith("#")]


def render(chart: Any, d: dict[str, Any], picks: Picks, settings: Settings | None = None,
           ) -> Objects:
    r = with_hatches(d, settings or demo_settings(), picks)
    cid = r.cluster.cluster_id
    _, objects = render_through_chart(chart, yaml.safe_dump(r.values), cid, f"trino-{cid}")
    return Objects(r, [o for o in objects if "kind" in o])


@pytest.fixture(scope="module")
def chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


# --- image ------------------------------------------------------------------------------------

def test_a_mirrored_pinned_image_runs_on_both_roles_with_its_pull_secret(chart: Any) -> None:
    """Both Trino containers run repository@digest with the option's pull policy, and both pods
    name the pull Secret; the exporter sidecar keeps its own image."""
    o = render(chart, doc("mirror", monitoring={"jmx": True}), Picks(image=MIRROR))
    for role in ROLES:
        c = o.trino(role)
        assert (c["image"], c["imagePullPolicy"]) == (
            f"{MIRROR['repository']}@{DIGEST}", "Always")
        assert o.pod(role)["spec"]["imagePullSecrets"] == [{"name": "registry-credentials"}]
        (exporter,) = [c for c in o.pod(role)["spec"]["containers"] if c["name"] != f"trino-{role}"]
        assert not exporter["image"].startswith(MIRROR["repository"])


@pytest.mark.parametrize("picked", [
    {"repository": "registry.example.com/mirror/trino"},
    {"digests": {"476": DIGEST}},  # the stock repository, pinned by digest
])
def test_another_image_keeps_every_jvm_flag_of_the_stock_one(
        chart: Any, picked: dict[str, Any]) -> None:
    """The chart drops its JDK-8329528 pair for any image but its stock one; trinogen writes it,
    so both roles' jvm.config are line for line what the stock image gets."""
    d = doc("pinned")
    stock, other = render(chart, d, Picks()), render(chart, d, Picks(image=picked))
    assert other.trino("coordinator")["image"] != stock.trino("coordinator")["image"]
    for role in ROLES:
        assert other.jvm_config(role) == stock.jvm_config(role)
        for flag in image.PINNED_REGION_FLAGS:
            assert stock.jvm_config(role).count(flag) == 1


# --- runtime: env and JVM flags ------------------------------------------------------------------

def test_extra_env_reaches_both_trino_containers_filled(chart: Any) -> None:
    """Each variable is on both Trino containers with {cluster} filled; the env Secret (envFrom)
    stays as trinogen wrote it."""
    o = render(chart, doc("envy"), Picks(runtime=RUNTIME))
    for role in ROLES:
        env = {e["name"]: e["value"] for e in o.trino(role)["env"]}
        assert env == {"OTEL_SERVICE_NAME": "trino-envy", "TZ": "UTC"}


def test_extra_jvm_flags_follow_the_charts_in_each_role(chart: Any) -> None:
    """The shared flags land in both roles' jvm.config after the chart's own lines, the
    coordinator's only in the coordinator's; the heap stays the one the document sized."""
    o = render(chart, doc("flags"), Picks(runtime=RUNTIME))
    plain = render(chart, doc("flags"), Picks())
    for role in ROLES:
        lines, before = o.jvm_config(role), plain.jvm_config(role)
        own = [*RUNTIME["jvm"], *(RUNTIME["coordinator_jvm"] if role == "coordinator" else [])]
        assert lines == [*before, *own]
        assert [ln for ln in lines if ln.startswith("-Xmx")] == [
            ln for ln in before if ln.startswith("-Xmx")]


def test_every_flag_the_chart_writes_is_refused_as_an_extra_flag(chart: Any) -> None:
    """Each line of the chart's jvm.config (stock image, JMX on, both heaps set) is refused as a
    platform flag: the list of what the chart writes is read from the chart, not from
    trinogen."""
    d = doc("chartflags", monitoring={"jmx": True},
            clusterConfig={"coordinator": {"jvm": {"minHeapSize": "1G"}}})
    o = render(chart, d, Picks())
    lines = {ln for role in ROLES for ln in o.jvm_config(role)}
    assert any(ln.startswith("-Dcom.sun.management.jmxremote.rmi.port") for ln in lines)
    assert set(image.PINNED_REGION_FLAGS) <= lines
    accepted = sorted(ln for ln in lines if jvm.problem(ln, runtime.trino_reads) is None)
    assert accepted == []


# --- network policy ------------------------------------------------------------------------------

def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector["matchLabels"].items())


def test_the_charts_policy_protects_both_roles_and_lets_prometheus_to_the_exporter(
        chart: Any) -> None:
    """The chart's NetworkPolicy selects both roles' pods, keeps its same-release rule and adds
    the monitoring namespace on the port named jmx-exporter, which both pods' exporter has."""
    o = render(chart, doc("netpol", monitoring={"jmx": True}), Picks(network=NETWORK))
    pol = o.one("NetworkPolicy", o.fullname)
    for role in ROLES:
        pod = o.pod(role)
        assert _selects(pol["spec"]["podSelector"], pod["metadata"]["labels"]), role
        ports = {p["name"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
        assert "jmx-exporter" in ports
    same_release, prometheus = pol["spec"]["ingress"]
    assert same_release["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "trino-netpol"}
    assert prometheus == {"from": [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "monitoring"}}}],
        "ports": [{"port": "jmx-exporter", "protocol": "TCP"}]}
    assert pol["spec"]["policyTypes"] == ["Ingress"]  # egress stays open


@pytest.mark.parametrize("auth, port", [(None, "http"), ("corp-password", "https")])
def test_the_client_policy_selects_the_coordinator_only_on_a_port_it_serves(
        chart: Any, auth: str | None, port: str) -> None:
    """trinogen's client policy selects the coordinator's pod and not the worker's, and opens
    the coordinator container's serving port by its name in the chart (https with TLS in the
    pod)."""
    body = {"authentication": auth} if auth else {}
    settings = secure_settings() if auth else demo_settings()
    o = render(chart, doc("clients", **body), Picks(network=NETWORK, ingress=True), settings)
    (policy,) = o.r.own
    selector = policy["spec"]["podSelector"]
    assert _selects(selector, o.pod("coordinator")["metadata"]["labels"])
    assert not _selects(selector, o.pod("worker")["metadata"]["labels"])
    (rule,) = policy["spec"]["ingress"]
    assert rule["ports"] == [{"port": port, "protocol": "TCP"}]
    assert port in {p["name"] for p in o.trino("coordinator")["ports"]}
    assert len(rule["from"]) == 3  # the client namespace, the CIDR, the ingress controller


# --- service -----------------------------------------------------------------------------------

def test_a_load_balancer_option_exposes_the_coordinator_and_annotates_both_services(
        chart: Any) -> None:
    """The coordinator Service gets the type; both Services the annotations, filled; the
    workers' stays headless."""
    o = render(chart, doc("lb"), Picks(service=LB))
    coord, workers = o.one("Service", o.fullname), o.one("Service", f"{o.fullname}-worker")
    assert coord["spec"]["type"] == "LoadBalancer"
    assert workers["spec"]["clusterIP"] == "None" and "type" not in workers["spec"]
    for svc in (coord, workers):
        assert svc["metadata"]["annotations"] == {
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
            "example.com/cluster": "lb"}
    assert "nodePort" not in coord["spec"]["ports"][0]


def test_nodeport_and_a_network_policy_are_refused_by_trinogen_and_by_the_chart(
        chart: Any) -> None:
    """The pair trinogen refuses is the pair the chart fails on."""
    errors, _ = service.conflicts(service.parse("t", {"type": "NodePort"}), network_policy=True,
                                  authenticated=True)
    assert errors
    with pytest.raises(Exception, match="NodePort"):
        render(chart, doc("np"), Picks(service={"type": "NodePort"}, network=NETWORK))
    render(chart, doc("np"), Picks(service={"type": "NodePort"}))  # alone, it renders
