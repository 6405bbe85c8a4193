"""Workload identity, monitoring and ingress through the real Trino chart (helm-python-sdk).

Each document is rendered by trinogen, then by the chart in ../shared/charts/trino, and the
objects are read: the expectations come from the documents and the options' text in
tests/test_workload.py (patterns filled here with str.replace) and from the chart's own naming
rules (_helpers.tpl), never from trinogen's output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import yaml

from tests.conftest import CHART_DIR
from tests.marks import CHART, helm_python
from tests.test_chart import render_through_chart
from tests.test_workload import OPTIONS, doc, outcome, with_options
from trinogen.model import Cluster
from trinogen.render import Renderer
from trinogen.settings import Settings

pytestmark = CHART

ROLES = ("coordinator", "worker")
MONITOR_LABELS = {"release": "kube-prom", "team": "platform"}
EXPORTER = {"exporter_image": "mirror.example.com/jmx-exporter", "exporter_tag": "1.4.0-r7",
            "exporter_pull_policy": "Always", "scrape_interval": "1m30s",
            "service_monitor_labels": MONITOR_LABELS}
DOCS = {
    "aws-lake": doc("aws-lake", "data-eng", serviceAccount="aws", ingress="public",
                    monitoring={"jmx": True, "serviceMonitor": True}),
    "azure-lake": doc("azure-lake", "bi_team", serviceAccount="azure", ingress="internal"),
    "gke-lake": doc("gke-lake", "ml", serviceAccount="gke", monitoring={"jmx": True}),
    "plain": doc("plain", "ops"),
}


def fill(pattern: str, d: Mapping[str, Any]) -> str:
    return pattern.replace("{cluster}", d["clusterId"]).replace("{owner}", d["owner"])


class Objects:
    """The chart's objects for one document."""

    def __init__(self, d: dict[str, Any], values: dict[str, Any], objects: list[dict[str, Any]],
                 cluster: Cluster) -> None:
        self.doc, self.values, self.objects, self.cluster = d, values, objects, cluster
        # trino.fullname: "<release>-trino" (no release here is a prefix of "trino")
        self.fullname = f"{d['clusterId']}-trino"

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o.get("kind") == kind]

    def one(self, kind: str, name: str) -> dict[str, Any]:
        (found,) = [o for o in self.of(kind) if o["metadata"]["name"] == name]
        return found

    def deployment(self, role: str) -> dict[str, Any]:
        return self.one("Deployment", f"{self.fullname}-{role}")

    def pod(self, role: str) -> dict[str, Any]:
        return dict(self.deployment(role)["spec"]["template"])


def _render(chart: Any, settings: Settings, d: dict[str, Any],
            edit: Callable[[dict[str, Any]], None] | None = None) -> Objects:
    c = outcome(d, settings)
    assert isinstance(c, Cluster), c
    files = Renderer(settings).render_cluster(c, {})
    text = files[f"{settings.output.clusters_dir}/{d['clusterId']}/values.yaml"].decode()
    if edit is not None:  # a variant of the same values (e.g. without trinogen's pod labels)
        parsed = yaml.safe_load(text)
        edit(parsed)
        text = yaml.safe_dump(parsed)
    values, objects = render_through_chart(chart, text, d["clusterId"], f"trino-{d['clusterId']}")
    return Objects(d, values, [o for o in objects if "kind" in o], c)


@pytest.fixture(scope="module")
def chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


@pytest.fixture(scope="module")
def settings() -> Settings:
    return with_options(**EXPORTER)


@pytest.fixture(scope="module")
def rendered(chart: Any, settings: Settings) -> dict[str, Objects]:
    return {cid: _render(chart, settings, d) for cid, d in DOCS.items()}


# --- workload identity ----------------------------------------------------------------------------


@pytest.mark.parametrize("cid", ["aws-lake", "azure-lake", "gke-lake"])
def test_the_service_account_carries_the_profiles_annotations_and_both_roles_use_it(
    rendered: dict[str, Objects], cid: str
) -> None:
    """One ServiceAccount named by the profile's pattern, with its annotations filled for the
    cluster, in the cluster's namespace; both Deployments run as it."""
    r = rendered[cid]
    profile = OPTIONS["service_accounts"][r.doc["serviceAccount"]]
    name = fill(profile.get("name", "{cluster}-trino"), r.doc)
    (sa,) = r.of("ServiceAccount")
    assert sa["metadata"]["name"] == name
    assert sa["metadata"]["namespace"] == f"trino-{cid}"
    assert sa["metadata"]["annotations"] == {k: fill(v, r.doc)
                                             for k, v in profile["annotations"].items()}
    for role in ROLES:
        assert r.pod(role)["spec"]["serviceAccountName"] == name


def test_the_irsa_role_is_the_clusters_own(rendered: dict[str, Objects]) -> None:
    """The IRSA role ARN ends in the cluster's id: the pattern, filled, not the author's text."""
    (sa,) = rendered["aws-lake"].of("ServiceAccount")
    assert sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"] == (
        "arn:aws:iam::123456789012:role/trino-aws-lake")


def test_without_a_profile_the_chart_creates_no_service_account(
    rendered: dict[str, Objects]
) -> None:
    """A document that picks none runs as the namespace's default ServiceAccount, as before."""
    r = rendered["plain"]
    assert r.of("ServiceAccount") == []
    for role in ROLES:
        assert r.pod(role)["spec"]["serviceAccountName"] == "default"


# --- pod labels and selectors ---------------------------------------------------------------------


@pytest.mark.parametrize("cid", sorted(DOCS))
def test_both_pod_templates_carry_cluster_and_owner_labels(
    rendered: dict[str, Objects], cid: str
) -> None:
    """trinogen.io/cluster and trinogen.io/owner (from the document) are on both roles' pods,
    and the Azure profile's workload-identity label only where it was picked."""
    r = rendered[cid]
    for role in ROLES:
        labels = r.pod(role)["metadata"]["labels"]
        assert labels["trinogen.io/cluster"] == r.doc["clusterId"]
        assert labels["trinogen.io/owner"] == r.doc["owner"]
        azure = OPTIONS["service_accounts"]["azure"]["pod_labels"]
        if r.doc.get("serviceAccount") == "azure":
            assert azure.items() <= labels.items()
        else:
            assert not azure.keys() & labels.keys()


def _without_pod_labels(values: dict[str, Any]) -> None:
    for role in ROLES:
        values[role].pop("labels", None)


@pytest.mark.parametrize("cid", sorted(DOCS))
def test_the_selectors_are_the_charts_and_do_not_change_with_the_labels(
    chart: Any, settings: Settings, rendered: dict[str, Objects], cid: str
) -> None:
    """A Deployment's selector is immutable: it stays the chart's selector labels (name,
    instance, component), exactly as without trinogen's pod labels, and still matches the pods."""
    r = rendered[cid]
    before = _render(chart, settings, DOCS[cid], _without_pod_labels)
    for role in ROLES:
        selector = r.deployment(role)["spec"]["selector"]
        assert selector == {"matchLabels": {"app.kubernetes.io/name": "trino",
                                            "app.kubernetes.io/instance": cid,
                                            "app.kubernetes.io/component": role}}
        assert selector == before.deployment(role)["spec"]["selector"]
        assert selector["matchLabels"].items() <= r.pod(role)["metadata"]["labels"].items()
        assert "trinogen.io/cluster" not in before.pod(role)["metadata"]["labels"]


# --- monitoring -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cid", ["aws-lake", "gke-lake"])
def test_the_exporter_runs_beside_trino_with_the_settings_image(
    rendered: dict[str, Objects], cid: str
) -> None:
    """Both pods get the jmx-exporter container (image, tag and pull policy from the settings),
    its config reads the JVM's RMI registry, which the chart opens in Trino's config."""
    r = rendered[cid]
    image = f"{EXPORTER['exporter_image']}:{EXPORTER['exporter_tag']}"
    for role in ROLES:
        containers = {c["name"]: c for c in r.pod(role)["spec"]["containers"]}
        exporter = containers["jmx-exporter"]
        assert (exporter["image"], exporter["imagePullPolicy"]) == (image, "Always")
        # Pod Security `restricted`, container level (as the Kubernetes docs list it)
        sc = exporter["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["runAsNonRoot"] is True
        assert sc["capabilities"]["drop"] == ["ALL"]
        assert sc["seccompProfile"]["type"] in ("RuntimeDefault", "Localhost")
        port = {p["name"]: p["containerPort"] for p in exporter["ports"]}["jmx-exporter"]
        config = yaml.safe_load(r.one("ConfigMap", f"{r.fullname}-jmx-exporter-config-{role}")
                                ["data"]["jmx-exporter-config.yaml"])
        host, _, registry = config["hostPort"].partition(":")
        assert host == "localhost"
        trino = r.one("ConfigMap", f"{r.fullname}-{role}")["data"]
        assert f"jmx.rmiregistry.port={registry}" in trino["config.properties"].splitlines()
        assert "-Dcom.sun.management.jmxremote.rmi.port=" in trino["jvm.config"]
        service = r.one("Service", r.fullname if role == "coordinator" else f"{r.fullname}-worker")
        assert {"name": "jmx-exporter", "port": port, "protocol": "TCP",
                "targetPort": "jmx-exporter"} in service["spec"]["ports"]


def test_without_monitoring_there_is_no_exporter(rendered: dict[str, Objects]) -> None:
    """No switch: no exporter container, no exporter ConfigMap, no ServiceMonitor."""
    r = rendered["plain"]
    for role in ROLES:
        assert [c["name"] for c in r.pod(role)["spec"]["containers"]] == [f"trino-{role}"]
    assert not [o for o in r.of("ConfigMap") if "jmx-exporter" in o["metadata"]["name"]]
    assert r.of("ServiceMonitor") == []


def test_service_monitors_select_the_exporter_with_the_platforms_labels(
    rendered: dict[str, Objects]
) -> None:
    """One ServiceMonitor per role: the settings' labels (the chart's default label dropped),
    the settings' interval, scraping the exporter port of exactly that role's Service."""
    r = rendered["aws-lake"]
    monitors = r.of("ServiceMonitor")
    assert len(monitors) == 2
    services = r.of("Service")
    for m in monitors:
        labels = m["metadata"]["labels"]
        assert MONITOR_LABELS.items() <= labels.items()
        assert "prometheus" not in labels
        (endpoint,) = m["spec"]["endpoints"]
        assert endpoint == {"port": "jmx-exporter", "interval": EXPORTER["scrape_interval"]}
        assert m["spec"]["namespaceSelector"] == {"matchNames": [f"trino-{r.doc['clusterId']}"]}
        want = m["spec"]["selector"]["matchLabels"]
        picked = [s for s in services if want.items() <= s["metadata"]["labels"].items()]
        assert len(picked) == 1
        assert "jmx-exporter" in [p["name"] for p in picked[0]["spec"]["ports"]]
    assert rendered["gke-lake"].of("ServiceMonitor") == []  # jmx alone: no ServiceMonitor


def test_the_platforms_exporter_config_arrives_literally(chart: Any) -> None:
    """The settings' exporter config reaches the ConfigMap unchanged: the chart's tpl runs over
    it, and a `{{` in it is text, not a template."""
    config = ("hostPort: localhost:9080\nrules:\n  - pattern: 'trino.execution<name=(.*)>'\n"
              "# {{ .Release.Name }} {{ fail \"no\" }}\n")
    s = with_options(exporter_config=config)
    r = _render(chart, s, doc("cfg", monitoring={"jmx": True}))
    for role in ROLES:
        data = r.one("ConfigMap", f"{r.fullname}-jmx-exporter-config-{role}")["data"]
        assert data["jmx-exporter-config.yaml"] == config.rstrip("\n")  # the chart's `|-`


# --- ingress --------------------------------------------------------------------------------------


@pytest.mark.parametrize("cid", ["aws-lake", "azure-lake"])
def test_the_ingress_has_the_substituted_host_class_and_tls(
    rendered: dict[str, Objects], cid: str
) -> None:
    """The coordinator's Ingress: the option's host, class, TLS Secret and annotations, filled
    with the clusterId, routing to the coordinator Service's HTTP port."""
    r = rendered[cid]
    option = OPTIONS["ingress"][r.doc["ingress"]]
    (ing,) = r.of("Ingress")
    host = fill(option["host"], r.doc)
    assert ing["metadata"]["name"] == f"{r.fullname}-coordinator"
    assert ing["spec"].get("ingressClassName") == option.get("class_name")
    assert (ing["metadata"].get("annotations") or {}) == option.get("annotations", {})
    (rule,) = ing["spec"]["rules"]
    assert rule["host"] == host
    (path,) = rule["http"]["paths"]
    assert (path["path"], path["pathType"]) == (option.get("path", "/"),
                                                option.get("path_type", "Prefix"))
    service = r.one("Service", r.fullname)
    http = {p["name"]: p["port"] for p in service["spec"]["ports"]}["http"]
    assert path["backend"] == {"service": {"name": r.fullname, "port": {"number": http}}}
    if "tls_secret" in option:
        assert ing["spec"]["tls"] == [{"hosts": [host],
                                       "secretName": fill(option["tls_secret"], r.doc)}]
    else:
        assert "tls" not in ing["spec"]


def test_without_an_ingress_option_there_is_no_ingress(rendered: dict[str, Objects]) -> None:
    """A document that picks none is not exposed."""
    assert rendered["plain"].of("Ingress") == []
    assert rendered["gke-lake"].of("Ingress") == []


# --- schemas --------------------------------------------------------------------------------------


@pytest.mark.parametrize("cid", sorted(DOCS))
def test_the_objects_are_valid_kubernetes(rendered: dict[str, Objects], cid: str) -> None:
    """Ingress, ServiceAccount, Deployments, Services and ConfigMaps pass strict validation of
    Kubernetes 1.33 (kubernetes-validate; it has no ServiceMonitor schema, which the
    ServiceMonitor test checks by what it selects)."""
    kv = pytest.importorskip("kubernetes_validate")
    errors = []
    for o in rendered[cid].objects:
        if o["apiVersion"].startswith("monitoring.coreos.com/"):
            continue
        try:
            kv.validate(o, "1.33", strict=True)
        except kv.ValidationError as e:
            errors.append(f"{o['kind']}/{o['metadata']['name']}: {e.message}")
    assert errors == []
