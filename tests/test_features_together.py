"""Every platform option at once (issues 13 and 14): the kitchen-sink document of
tests/kitchen_sink.py rendered by trinogen and then by the real Trino chart.

Each feature was tested alone; here they must not step on each other: the pods (JMX exporter
sidecar included) pass Pod Security `restricted` (tests/pod_security.py), every object passes
strict Kubernetes or CRD schema validation, no pod has two volumes or mounts of one name or
path, the PodDisruptionBudgets select the pods, and every `${ENV:X}` in a ConfigMap is a key of
the env ExternalSecret the pods load. Issue 21's kinds meet there too: no chart manifest has a
key twice (the chart's config files and the spooling, LDAP and listener files trinogen adds),
every /etc/... path a property names is a key of what is mounted there, each role's
`event-listener.config-files` lists exactly its listener files, and each option's Vault
reference reaches its own file through the env Secret. Expectations come from the document, the
settings text, the documented file names and the Kubernetes rules, never from trinogen's output.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import javaprops, k8s_schema, kitchen_sink, pod_security
from tests.conftest import CHART_DIR, SCHEMAS
from tests.marks import CHART, helm_python
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
    chart_texts: dict[str, str]  # the chart's manifests as it wrote them (template path -> YAML)

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
    texts = chart.render(helm_python.values_from_yaml(values), name=CID, namespace=NAMESPACE,
                         is_install=True)
    objects = [o for path, text in sorted(texts.items()) if path.endswith((".yaml", ".yml"))
               for o in yaml.safe_load_all(text) if o]
    own = [yaml.safe_load(raw) for path, raw in sorted(files.items())
           if "/manifests/" in path or "/secrets/" in path]
    return Sink(files, [o for o in objects if "kind" in o and not _is_helm_test(o)], own,
                {path: text for path, text in texts.items() if path.endswith((".yaml", ".yml"))})


@pytest.fixture(scope="module")
def sink(tmp_path_factory: pytest.TempPathFactory) -> Sink:
    return build(tmp_path_factory.mktemp("sink"), kitchen_sink.document())


def test_the_kitchen_sink_uses_every_feature(sink: Sink) -> None:
    """A tripwire for the rest of the module: each feature left its mark in the objects."""
    kinds = Counter(o["kind"] for o in sink.chart_objects + sink.own_objects)
    assert kinds["Ingress"] == 1 and kinds["ServiceAccount"] == 1
    assert kinds["ServiceMonitor"] == 2 and kinds["PodDisruptionBudget"] == 2
    # env, secret files, keystore, the LDAP server's CA, the JWKS server's CA
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
    assert "spooling-manager.name=" in config and "resource-groups.configuration-manager" in config
    assert "event-listener.config-files=" in config and "ldap.url=" in config


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


# --- where issue 21's options meet: config files, mounted paths, secrets per file ----------------

_SETTINGS = yaml.safe_load(kitchen_sink.SETTINGS)
_PATH_VALUE = re.compile(r"/etc/[^\s,]+")


class _NoDuplicates(yaml.SafeLoader):
    """A YAML reader that refuses a mapping with a key twice (the default keeps the last)."""


def _mapping(loader: _NoDuplicates, node: yaml.MappingNode, deep: bool = False) -> Any:
    keys = [loader.construct_object(k, deep=True) for k, _ in node.value]
    doubled = sorted({str(k) for k in keys if keys.count(k) > 1})
    if doubled:
        raise yaml.constructor.ConstructorError(None, None, f"keys twice: {doubled}",
                                                node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_NoDuplicates.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _trino_container(sink: Sink, role: str) -> dict[str, Any]:
    spec = sink.deployment(role)["spec"]["template"]["spec"]
    (container,) = [c for c in spec["containers"] if c["name"] == f"trino-{role}"]
    found: dict[str, Any] = container
    return found


def _role_config(sink: Sink, role: str) -> dict[str, str]:
    """The ConfigMap the role's Trino reads at /etc/trino (config.properties and its companions)."""
    spec = sink.deployment(role)["spec"]["template"]["spec"]
    (mount,) = [m for m in _trino_container(sink, role)["volumeMounts"]
                if m["mountPath"] == "/etc/trino"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
    (cm,) = [o for o in sink.of("ConfigMap")
             if o["metadata"]["name"] == volume["configMap"]["name"]]
    data: dict[str, str] = cm["data"]
    return data


def _file_in_pod(sink: Sink, role: str, path: str) -> str | None:
    """Where `path` comes from in the role's Trino container: the ConfigMap or the
    ExternalSecret-filled Secret of the deepest mount above it, if that holds the file's key;
    None when nothing mounted there has it."""
    spec = sink.deployment(role)["spec"]["template"]["spec"]
    mounts = sorted(_trino_container(sink, role)["volumeMounts"],
                    key=lambda m: len(m["mountPath"]), reverse=True)
    mount = next((m for m in mounts if path.startswith(m["mountPath"].rstrip("/") + "/")), None)
    if mount is None:
        return None
    key = path[len(mount["mountPath"].rstrip("/")) + 1:]
    (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
    if "configMap" in volume:
        name = volume["configMap"]["name"]
        held = {k for o in sink.of("ConfigMap") if o["metadata"]["name"] == name
                for k in (o.get("data") or {})}
    else:
        name = volume["secret"]["secretName"]
        held = {d["secretKey"] for es in sink.of("ExternalSecret")
                if es["spec"]["target"]["name"] == name for d in es["spec"].get("data") or []}
    return f"{name}:{key}" if key in held else None


def test_no_chart_object_has_a_key_twice(sink: Sink) -> None:
    """The chart's own config files and those trinogen adds through additionalConfigFiles
    (spooling manager, LDAP authenticator, event listeners) never share a name: each manifest
    reads without a duplicate mapping key (a reader keeping the last would hide the clash)."""
    errors = []
    for path, text in sorted(sink.chart_texts.items()):
        try:
            list(yaml.load_all(text, Loader=_NoDuplicates))  # a SafeLoader
        except yaml.constructor.ConstructorError as e:
            errors.append(f"{path}: {e}")
    assert errors == []


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_every_file_a_property_names_is_in_the_pod(sink: Sink, role: str) -> None:
    """Each /etc/... path in a ConfigMap the role's Trino reads (listener files, resource-groups
    JSON, rules files, LDAP and JWKS CA files, keystore, keytab) is a key of the ConfigMap or
    Secret mounted there."""
    spec = sink.deployment(role)["spec"]["template"]["spec"]
    mounted = {v["configMap"]["name"] for v in spec["volumes"] if "configMap" in v}
    paths = {p for o in sink.of("ConfigMap") if o["metadata"]["name"] in mounted
             for text in (o.get("data") or {}).values() for p in _PATH_VALUE.findall(text)}
    assert len(paths) >= {"coordinator": 8, "worker": 3}[role], paths
    assert sorted(p for p in paths if _file_in_pod(sink, role, p) is None) == []


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_event_listener_config_files_list_exactly_the_roles_listener_files(
        sink: Sink, role: str) -> None:
    """The coordinator lists every picked listener; a worker only those that log split events
    (docs/options.md#event-listeners), and each role's /etc/trino holds exactly the listener
    files its line names, beside the spooling manager's."""
    picked = kitchen_sink.document()["eventListeners"]
    options = _SETTINGS["event_listeners"]
    expected = {f"/etc/trino/event-listener-{n}.properties" for n in picked
                if role == "coordinator" or "split" in options[n].get("events", [])
                or "split" in options[n].get("topics", {})}
    assert expected  # the Kafka listener logs splits: the workers have one
    config = _role_config(sink, role)
    (line,) = [v for k, v in javaprops.pairs(config["config.properties"])
               if k == "event-listener.config-files"]
    assert set(line.split(",")) == expected and len(line.split(",")) == len(expected)
    on_disk = {f"/etc/trino/{k}" for k in config if k.startswith("event-listener-")}
    assert on_disk == expected
    assert "spooling-manager.properties" in config


def _ref(template: str) -> tuple[str, str]:
    """A settings Vault reference as ESO's remoteRef (key, property), for this cluster."""
    path, _, key = template.replace("{cluster}", CID).partition("#")
    return path, key


@pytest.mark.parametrize(("role", "file", "ref"), [
    ("coordinator", "event-listener-audit.properties",
     _ref(_SETTINGS["event_listeners"]["audit"]["headers"]["Authorization"]["vault"])),
    ("coordinator", "password-authenticator.properties",
     _ref(_SETTINGS["authentication"]["corp-ldap-jwt"]["ldap"]["bind_password"])),
    ("coordinator", "spooling-manager.properties",
     _ref(_SETTINGS["storage"]["lake-minio"]["credentials"]["vault"]["secret_key"])),
    ("worker", "spooling-manager.properties",
     _ref(_SETTINGS["storage"]["lake-minio"]["credentials"]["vault"]["access_key"])),
    ("coordinator", "config.properties",
     _ref(_SETTINGS["storage"]["lake-minio"]["spooling"]["shared_secret_key"])),
    ("worker", "config.properties",
     _ref(_SETTINGS["storage"]["lake-minio"]["spooling"]["shared_secret_key"])),
])
def test_each_options_secret_reaches_its_own_file(sink: Sink, role: str, file: str,
                                                  ref: tuple[str, str]) -> None:
    """A Vault reference of the listener, LDAP or spooling options is one key of the env
    Secret, read as ${ENV:<that key>} by the file its option writes on that role."""
    keys = [d["secretKey"] for d in sink.env_secret()["spec"]["data"]
            if (d["remoteRef"]["key"], d["remoteRef"]["property"]) == ref]
    assert len(keys) == 1, (ref, keys)
    assert "${ENV:" + keys[0] + "}" in _role_config(sink, role)[file]


def test_the_coordinator_has_one_authenticator_the_ldap_options(sink: Sink) -> None:
    """With [LDAP, JWT] the coordinator's password authenticator is LDAP (the chart's file
    authenticator is not written beside it), and the option's `${USER}` patterns reach Trino
    as written, through Helm's tpl and trinogen's ${ENV:...} handling alike."""
    ldap = _SETTINGS["authentication"]["corp-ldap-jwt"]["ldap"]
    props = dict(javaprops.pairs(_role_config(sink, "coordinator")[
        "password-authenticator.properties"]))
    assert props["password-authenticator.name"] == "ldap"
    assert props["ldap.url"] == ldap["url"]
    assert props["ldap.group-auth-pattern"] == ldap["group_auth_pattern"].replace("{cluster}", CID)
    assert not any(m["mountPath"].startswith("/etc/trino/auth/password")
                   for m in _trino_container(sink, "coordinator")["volumeMounts"])


def test_the_resource_groups_are_the_policys_on_the_coordinator_only(sink: Sink) -> None:
    """The coordinator's resource-groups.json is the picked policy as the settings wrote it
    (`${USER}` kept), and the worker has no resource-group manager."""
    policy = _SETTINGS["resource_groups"][kitchen_sink.document()["resourceGroups"]]
    (cm,) = [o for o in sink.of("ConfigMap")
             if "resource-groups.json" in (o.get("data") or {})]
    assert json.loads(cm["data"]["resource-groups.json"]) == policy
    assert "resource-groups.properties" in _role_config(sink, "coordinator")
    assert "resource-groups.properties" not in _role_config(sink, "worker")
