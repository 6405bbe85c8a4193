"""Every platform option at once (issues 13 and 14): the kitchen-sink document of
tests/kitchen_sink.py rendered by trinogen and then by the real Trino chart.

Each feature was tested alone; here they must not step on each other: the pods (JMX exporter
sidecar included) pass Pod Security `restricted` (tests/pod_security.py), every object passes
strict Kubernetes or CRD schema validation, no pod has two volumes or mounts of one name or
path, the PodDisruptionBudgets select the pods, and every `${ENV:X}` in a ConfigMap is a key of
the env ExternalSecret the pods load. Expectations come from the document, the settings text and
the Kubernetes rules, never from trinogen's output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import k8s_schema, kitchen_sink, pod_security
from tests.conftest import CHART_DIR, SCHEMAS
from tests.marks import CHART, helm_python
from tests.test_chart import render_through_chart
from trinogen.model import Cluster, RawDocument, classify
from trinogen.model.library import parse_library
from trinogen.render import Renderer
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key

pytestmark = CHART

CID = kitchen_sink.CID
NAMESPACE = f"trino-{CID}"
K8S_VERSION = "1.30"
_ENV_REF = re.compile(r"\$\{ENV:([^}]*)\}")


@dataclass
class Sink:
    """trinogen's files for the kitchen sink and every object the chart and trinogen produce."""

    files: dict[str, bytes]
    chart_objects: list[dict[str, Any]]  # from values.yaml through the chart
    own_objects: list[dict[str, Any]]  # trinogen's manifests/ and secrets/ files

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.chart_objects + self.own_objects if o.get("kind") == kind]

    def deployment(self, role: str) -> dict[str, Any]:
        (d,) = [o for o in self.of("Deployment")
                if o["metadata"]["labels"]["app.kubernetes.io/component"] == role]
        return d

    def env_secret(self) -> dict[str, Any]:
        """The ExternalSecret whose target the Trino containers load with envFrom."""
        (container,) = [c for c in self.deployment("coordinator")["spec"]["template"]["spec"]
                        ["containers"] if c["name"] == "trino-coordinator"]
        (name,) = [e["secretRef"]["name"] for e in container["envFrom"]]
        (es,) = [o for o in self.of("ExternalSecret") if o["spec"]["target"]["name"] == name]
        return es


def settings_of(tmp: Path) -> Settings:
    path = tmp / "settings.yaml"
    path.write_text(kitchen_sink.SETTINGS)
    return load_settings(path, environ={})


def _is_helm_test(o: Mapping[str, Any]) -> bool:
    return ((o.get("metadata") or {}).get("annotations") or {}).get("helm.sh/hook") == "test"


def build(tmp: Path, doc: dict[str, Any]) -> Sink:
    """The kitchen-sink settings and library, `doc` through trinogen and the real chart."""
    settings = settings_of(tmp)
    library = parse_library([RawDocument(doc_key(d["_id"]), d) for d in kitchen_sink.catalogs()])
    cluster = classify(RawDocument(doc_key(doc["_id"]), doc), settings, library)
    assert isinstance(cluster, Cluster), cluster
    assert cluster.warnings == (), cluster.warnings
    files = Renderer(settings).render_cluster(cluster, {})
    values = files[f"trino-clusters/{CID}/values.yaml"].decode()
    chart = helm_python.Chart.load(CHART_DIR)
    _, objects = render_through_chart(chart, values, CID, NAMESPACE)
    own = [yaml.safe_load(raw) for path, raw in sorted(files.items())
           if "/manifests/" in path or "/secrets/" in path]
    return Sink(files, [o for o in objects if "kind" in o and not _is_helm_test(o)], own)


@pytest.fixture(scope="module")
def sink(tmp_path_factory: pytest.TempPathFactory) -> Sink:
    return build(tmp_path_factory.mktemp("sink"), kitchen_sink.document())


def test_the_kitchen_sink_uses_every_feature(sink: Sink) -> None:
    """A tripwire for the rest of the module: each feature left its mark in the objects."""
    kinds = Counter(o["kind"] for o in sink.chart_objects + sink.own_objects)
    assert kinds["Ingress"] == 1 and kinds["ServiceAccount"] == 1
    assert kinds["ServiceMonitor"] == 2 and kinds["PodDisruptionBudget"] == 2
    # env, secret files, keystore, password file, group file
    assert kinds["ExternalSecret"] == 5
    for role in ("coordinator", "worker"):
        spec = sink.deployment(role)["spec"]["template"]["spec"]
        assert "jmx-exporter" in [c["name"] for c in spec["containers"]]
        assert spec["serviceAccountName"] == f"{CID}-trino"
    coordinator = sink.deployment("coordinator")["spec"]["template"]["spec"]
    assert coordinator["priorityClassName"] == "trino-coordinator"
    worker = sink.deployment("worker")["spec"]["template"]["spec"]
    assert worker["nodeSelector"] == {"node.kubernetes.io/lifecycle": "spot"}
    config = "\n".join(d for o in sink.of("ConfigMap") for d in (o.get("data") or {}).values())
    assert "retry-policy=TASK" in config and "exchange-manager.name=filesystem" in config
    assert '"system_information"' in config and "connection-url=jdbc:postgresql" in config


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_every_pod_passes_pod_security_restricted(sink: Sink, role: str) -> None:
    """Both roles' pods, with the exporter sidecar and every added mount, pass `restricted`."""
    assert pod_security.violations(sink.deployment(role)["spec"]["template"]) == []


def test_every_workload_template_is_judged(sink: Sink) -> None:
    """No pod template of the release escapes the restricted check (Deployments only, and
    all of them pass)."""
    templates = dict(pod_security.pod_templates(sink.chart_objects))
    assert sorted(templates) == [f"Deployment/{CID}-trino-coordinator",
                                 f"Deployment/{CID}-trino-worker"]
    assert {name: pod_security.violations(t) for name, t in templates.items()} == \
        {name: [] for name in templates}


def test_kubernetes_objects_pass_strict_validation(sink: Sink) -> None:
    """Every core object (chart's and trinogen's: Deployments, Services, ConfigMaps, Ingress,
    ServiceAccount, PDBs) passes kubernetes-validate strictly; CRDs are checked below."""
    kv = pytest.importorskip("kubernetes_validate")
    errors = []
    for o in sink.chart_objects + sink.own_objects:
        if "." in o["apiVersion"].split("/")[0] and not o["apiVersion"].startswith(
                ("networking.k8s.io/", "policy/", "apps/", "autoscaling/")):
            continue  # CRDs: ServiceMonitor, ExternalSecret, Application
        try:
            kv.validate(o, K8S_VERSION, strict=True)
        except kv.ValidationError as e:
            errors.append(f"{o['kind']}/{o['metadata']['name']}: "
                          f"{'.'.join(str(p) for p in e.path)}: {e.message}")
    assert errors == []


def test_application_and_external_secrets_pass_their_crd_schemas(sink: Sink) -> None:
    """The Application and all five ExternalSecrets pass the strict CRD schemas and ObjectMeta."""
    app_schema = k8s_schema.load(SCHEMAS / "argocd-application.schema.json")
    es_schema = k8s_schema.load(SCHEMAS / "externalsecret.schema.json")
    app = yaml.safe_load(sink.files[f"trino-applications/{CID}.yaml"])
    errors = k8s_schema.schema_errors(app, app_schema) + k8s_schema.object_meta_errors(
        app["metadata"])
    for es in sink.of("ExternalSecret"):
        errors += k8s_schema.schema_errors(es, es_schema)
        errors += k8s_schema.object_meta_errors(es["metadata"])
    assert errors == []


def test_the_application_deploys_the_extra_manifests(sink: Sink) -> None:
    """The Application has a directory source for manifests/ (files ConfigMap, PDBs) and
    secrets/ (ExternalSecrets), so every file trinogen wrote is deployed."""
    app = yaml.safe_load(sink.files[f"trino-applications/{CID}.yaml"])
    paths = {s.get("path") for s in app["spec"]["sources"]}
    for folder in ("manifests", "secrets"):
        assert any(p.startswith(f"trino-clusters/{CID}/{folder}") for p in sink.files)
        assert f"trino-clusters/{CID}/{folder}" in paths


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_volume_and_mount_names_are_unique_per_pod(sink: Sink, role: str) -> None:
    """Files, secret files, keystore, password/group files and the exporter's config each get
    their own volume, and no two mounts of a container share a path or name."""
    spec = sink.deployment(role)["spec"]["template"]["spec"]
    volumes = [v["name"] for v in spec["volumes"]]
    assert [n for n, k in Counter(volumes).items() if k > 1] == []
    for c in spec["containers"]:
        mounts = c.get("volumeMounts") or []
        assert {m["name"] for m in mounts} <= set(volumes), c["name"]
        paths = [m["mountPath"] for m in mounts]
        assert [p for p, k in Counter(paths).items() if k > 1] == [], c["name"]
    trino = f"trino-{role}"
    (container,) = [c for c in spec["containers"] if c["name"] == trino]
    paths = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/etc/trino/files", "/etc/trino/secret-files"} <= paths
    if role == "coordinator":
        assert "/etc/trino/tls" in paths


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_the_budget_selects_exactly_its_roles_pods(sink: Sink, role: str) -> None:
    """Each PDB's selector matches its role's pod labels (the pods also carry trinogen's and the
    service account option's labels) and not the other role's."""
    other = {"coordinator": "worker", "worker": "coordinator"}[role]
    (pdb,) = [p for p in sink.of("PodDisruptionBudget") if p["metadata"]["name"].endswith(role)]
    selector = pdb["spec"]["selector"]["matchLabels"]
    assert pdb["metadata"]["namespace"] == NAMESPACE

    def selects(r: str) -> bool:
        labels = sink.deployment(r)["spec"]["template"]["metadata"]["labels"]
        return all(labels.get(k) == v for k, v in selector.items())

    assert selects(role) and not selects(other)


def test_every_env_reference_is_a_key_of_the_env_secret(sink: Sink) -> None:
    """Every ${ENV:X} in any ConfigMap (config.properties of both roles, catalogs,
    exchange-manager.properties) is a secretKey of the ExternalSecret the pods load, and that
    secret holds nothing else."""
    referenced = {m for o in sink.of("ConfigMap") for text in (o.get("data") or {}).values()
                  for m in _ENV_REF.findall(text)}
    keys = {d["secretKey"] for d in sink.env_secret()["spec"]["data"]}
    assert referenced  # shared secret, keystore password, S3 keys, two placeholders
    assert referenced == keys


def test_every_mounted_secret_is_filled_by_an_external_secret(sink: Sink) -> None:
    """Each Secret a pod mounts (files, keystore, password and group files) is the target of one
    of trinogen's ExternalSecrets in the same namespace: none is left for a person to create."""
    targets = {es["spec"]["target"]["name"] for es in sink.of("ExternalSecret")
               if es["metadata"]["namespace"] == NAMESPACE}
    for role in ("coordinator", "worker"):
        spec = sink.deployment(role)["spec"]["template"]["spec"]
        mounted = {v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v}
        assert mounted and mounted <= targets, (role, mounted - targets)


def test_the_ingress_reaches_the_coordinators_https_port(sink: Sink) -> None:
    """With TLS in the pod, the Ingress backend is the coordinator Service's HTTPS port, which
    exists on the Service and targets a container port of the coordinator."""
    (ing,) = sink.of("Ingress")
    (rule,) = ing["spec"]["rules"]
    assert rule["host"] == f"{CID}.trino.example.com"
    backend = rule["http"]["paths"][0]["backend"]["service"]
    (svc,) = [s for s in sink.of("Service") if s["metadata"]["name"] == backend["name"]]
    (port,) = [p for p in svc["spec"]["ports"] if p["port"] == backend["port"]["number"]]
    assert port["port"] == 8443
    (container,) = [c for c in sink.deployment("coordinator")["spec"]["template"]["spec"]
                    ["containers"] if c["name"] == "trino-coordinator"]
    assert port["targetPort"] in {p["name"] for p in container["ports"]}


def test_the_service_monitors_select_services_with_the_exporter_port(sink: Sink) -> None:
    """Each ServiceMonitor selects a Service of the release that has the endpoint port it scrapes."""
    for sm in sink.of("ServiceMonitor"):
        selector = sm["spec"]["selector"]["matchLabels"]
        services = [s for s in sink.of("Service") if all(
            s["metadata"]["labels"].get(k) == v for k, v in selector.items())]
        assert services, sm["metadata"]["name"]
        for endpoint in sm["spec"]["endpoints"]:
            for s in services:
                assert endpoint["port"] in {p.get("name") for p in s["spec"]["ports"]}


def test_stopping_the_kitchen_sink_keeps_the_rest_valid(tmp_path: Path) -> None:
    """`stopped: true` on top of every option: no worker Deployment, the coordinator still passes
    `restricted`, every core object still validates, and the files, PDBs and ExternalSecrets
    stay (a stopped cluster starts again as written)."""
    kv = pytest.importorskip("kubernetes_validate")
    stopped = build(tmp_path, {**kitchen_sink.document(), "stopped": True})
    roles = [d["metadata"]["labels"]["app.kubernetes.io/component"] for d in stopped.of("Deployment")]
    assert roles == ["coordinator"]
    assert pod_security.violations(stopped.deployment("coordinator")["spec"]["template"]) == []
    for o in stopped.chart_objects + stopped.own_objects:
        if o["apiVersion"].startswith(("v1", "apps/", "policy/", "networking.k8s.io/")):
            kv.validate(o, K8S_VERSION, strict=True)
    assert len(stopped.of("PodDisruptionBudget")) == 2 and len(stopped.of("ExternalSecret")) == 5
