"""Generated Argo CD Applications and ExternalSecrets: what the API server and Argo CD accept.

Each Application (and the app-of-apps) is validated against the upstream Application CRD schema
and each ExternalSecret against the ESO CRD schema (../shared/schemas, made strict by
tests/k8s_schema.py), then checked against the Argo CD rules in the domain facts: multi-source
with `$values/` files relative to the repository root, a ref source without a chart, destination
server XOR name, the resources finalizer, namespace trino-<clusterId>, ignoreDifferences on the
worker replicas when autoscaling. Expectations come from the documents and the settings.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from tests import k8s_schema
from tests.conftest import SCHEMAS, demo_settings, example_docs
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.source import doc_key

APP_SCHEMA = SCHEMAS / "argocd-application.schema.json"
ES_SCHEMA = SCHEMAS / "externalsecret.schema.json"

pytestmark = pytest.mark.skipif(
    not (APP_SCHEMA.is_file() and ES_SCHEMA.is_file()),
    reason=f"CRD schemas not found in {SCHEMAS}",
)

FINALIZER = "resources-finalizer.argocd.argoproj.io"
PROD_SERVER = "https://prod.example.com:6443"
_PLACEHOLDER = re.compile(r"\{\{\s*(vault:[^}]*|[A-Za-z0-9_]+)\s*\}\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --- settings and documents ----------------------------------------------------------------------

def _settings(variant: str) -> Settings:
    """demo: the shipped demo; multi: several allowed destinations; hub: a default destination."""
    allowed = (PROD_SERVER, "spoke-eu", "hub")
    if variant == "demo":
        return demo_settings()
    if variant == "multi":
        return demo_settings(argocd={"allowed_destinations": allowed})
    if variant == "hub":
        return demo_settings(argocd={"allowed_destinations": allowed, "destination_name": "hub"})
    raise AssertionError(variant)


def _doc(cluster_id: str, **body: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"_id": f"schema-{cluster_id}", "clusterId": cluster_id,
                           "owner": "qa_team", "enabled": True}
    doc.update(body)
    return doc


_HPA = {"clusterConfig": {"worker": {"autoscaling": {"type": "hpa", "minReplicas": 2,
                                                     "maxReplicas": 6}}}}
_KEDA = {"clusterConfig": {"worker": {"autoscaling": {
    "type": "keda", "minReplicas": 0, "maxReplicas": 4,
    "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}]}}}}
_SECRET_CONNECTORS = [{"name": "pg", "properties": {
    "connector.name": "postgresql", "connection-url": "jdbc:postgresql://db:5432/x",
    "connection-user": "{{ vault:secret/trino/with-secrets/pg#user }}",
    "connection-password": "{{ PG_PASSWORD }}"}}]

# (settings variant, document)
CASES: list[tuple[str, dict[str, Any]]] = [
    *(("demo", d) for d in example_docs()),
    ("demo", _doc("plain")),
    ("demo", _doc("hpa", **_HPA)),
    ("demo", _doc("keda", **_KEDA)),
    ("demo", _doc("tri", **_HPA)),
    ("demo", _doc("long-" + "x" * 45, **_KEDA)),  # 50 characters, the longest clusterId
    ("demo", _doc("with-secrets", connectors=_SECRET_CONNECTORS)),
    ("multi", _doc("to-server", destination={"server": PROD_SERVER})),
    ("multi", _doc("to-name", destination={"name": "spoke-eu"})),
    ("hub", _doc("hub-default")),
    ("hub", _doc("hub-to-name", destination={"name": "spoke-eu"})),
    ("hub", _doc("hub-to-server", destination={"server": PROD_SERVER})),
]
IDS = [f"{v}:{d['clusterId']}" for v, d in CASES]
_RENDERED: dict[str, tuple[Settings, dict[str, Any], dict[str, bytes]]] = {}


def rendered(case_id: str) -> tuple[Settings, dict[str, Any], dict[str, bytes]]:
    """Settings, document and rendered files of one case (rendered once per session)."""
    if case_id not in _RENDERED:
        variant, doc = CASES[IDS.index(case_id)]
        settings = _settings(variant)
        doc = copy.deepcopy(doc)
        cluster = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
        assert isinstance(cluster, Cluster), f"{case_id} does not validate: {cluster}"
        _RENDERED[case_id] = (settings, doc, Renderer(settings).render_cluster(cluster, {}))
    return _RENDERED[case_id]


def _app(case_id: str) -> dict[str, Any]:
    settings, doc, files = rendered(case_id)
    return yaml.safe_load(files[f"{settings.output.applications_dir}/{doc['clusterId']}.yaml"])


def _external_secrets(files: Mapping[str, bytes]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path, content in files.items():
        if path.endswith(".yaml"):
            obj = yaml.safe_load(content)
            if isinstance(obj, dict) and obj.get("kind") == "ExternalSecret":
                out.append((path, obj))
    return out


def _autoscaled(doc: Mapping[str, Any]) -> bool:
    return bool(doc.get("clusterConfig", {}).get("worker", {}).get("autoscaling"))


def _chart_worker(release: str) -> str:
    """The chart's trino.worker name (hasPrefix rule, trunc 63, trimSuffix "-")."""
    def trunc(name: str) -> str:
        name = name[:63]
        return name[:-1] if name.endswith("-") else name
    full = trunc("trino" if "trino".startswith(release) else f"{release}-trino")
    return trunc(f"{full}-worker")


@pytest.fixture(scope="module")
def app_schema() -> dict[str, Any]:
    return k8s_schema.load(APP_SCHEMA)


@pytest.fixture(scope="module")
def es_schema() -> dict[str, Any]:
    return k8s_schema.load(ES_SCHEMA)


# --- the schema helper itself -----------------------------------------------------------------

def test_strict_schemas_reject_unknown_fields_and_allow_declared_nulls() -> None:
    """The schema conversion adds additionalProperties: false and maps nullable to a null type."""
    schema = k8s_schema.strict({
        "type": "object",
        "properties": {"a": {"type": "string", "nullable": True},
                       "open": {"type": "object", "properties": {"x": {"type": "string"}},
                                "x-kubernetes-preserve-unknown-fields": True}},
    })
    assert k8s_schema.schema_errors({"a": None, "open": {"y": 1}}, schema) == []
    assert k8s_schema.schema_errors({"b": "x"}, schema) != []


def test_the_real_application_schema_catches_a_wrong_field(app_schema: dict[str, Any]) -> None:
    """A misspelt spec field and a source with valueFiles at the wrong level fail the schema."""
    app = _app(IDS[0])
    app["spec"]["sources"][0]["valueFiles"] = ["x.yaml"]
    app["spec"]["syncPolicy"]["automated"]["selfheal"] = True
    errors = k8s_schema.schema_errors(app, app_schema)
    assert any("valueFiles" in e for e in errors) and any("selfheal" in e for e in errors)


# --- Applications ------------------------------------------------------------------------------

@pytest.mark.parametrize("case_id", IDS)
def test_application_matches_the_crd_schema(app_schema: dict[str, Any], case_id: str) -> None:
    """Each generated Application is valid for the Application CRD (strict) and ObjectMeta rules."""
    app = _app(case_id)
    assert (app["apiVersion"], app["kind"]) == ("argoproj.io/v1alpha1", "Application")
    assert k8s_schema.schema_errors(app, app_schema) == []
    assert k8s_schema.object_meta_errors(app["metadata"]) == []


@pytest.mark.parametrize("case_id", IDS)
def test_application_lives_where_argocd_watches_and_has_the_finalizer(case_id: str) -> None:
    """The Application is in Argo CD's namespace, in the configured project, with the finalizer."""
    settings, _, _ = rendered(case_id)
    app = _app(case_id)
    assert app["metadata"]["namespace"] == settings.argocd.namespace
    assert app["spec"]["project"] == settings.argocd.project
    assert FINALIZER in app["metadata"].get("finalizers", [])


@pytest.mark.parametrize("case_id", IDS)
def test_chart_source_takes_values_from_the_git_repository(case_id: str) -> None:
    """One chart source (repo, chart, version, release = clusterId) reads $values/<repo path>."""
    settings, doc, files = rendered(case_id)
    spec = _app(case_id)["spec"]
    assert "source" not in spec, "with sources, Argo CD ignores source"
    charts = [s for s in spec["sources"] if "chart" in s]
    assert len(charts) == 1
    src = charts[0]
    assert (src["repoURL"], src["chart"], src["targetRevision"]) == (
        settings.chart.repo_url, settings.chart.name, settings.chart.version)
    assert src["helm"]["releaseName"] == doc["clusterId"]
    value_files = src["helm"]["valueFiles"]
    assert value_files, "the chart source must read the generated values"
    refs = {s["ref"] for s in spec["sources"] if "ref" in s}
    for vf in value_files:
        ref, _, rel = vf.partition("/")
        assert ref.startswith("$") and ref[1:] in refs, f"{vf} does not start with a $ref"
        path = PurePosixPath(rel)
        assert not path.is_absolute() and ".." not in path.parts and rel == str(path)
        assert rel in files and rel.endswith("values.yaml"), f"{rel} is not a generated file"
        assert rel.startswith(f"{settings.output.clusters_dir}/{doc['clusterId']}/")


@pytest.mark.parametrize("case_id", IDS)
def test_ref_source_is_the_gitops_repository_without_a_chart(case_id: str) -> None:
    """The `ref: values` source is the GitOps repository at its branch and sets no chart."""
    settings, _, _ = rendered(case_id)
    spec = _app(case_id)["spec"]
    refs = [s for s in spec["sources"] if "ref" in s]
    assert [s["ref"] for s in refs] == ["values"]
    assert "chart" not in refs[0]
    assert (refs[0]["repoURL"], refs[0]["targetRevision"]) == (
        settings.repo_url, settings.target_revision)


@pytest.mark.parametrize("case_id", IDS)
def test_path_sources_deploy_generated_manifest_directories(case_id: str) -> None:
    """Every `path` source points at a generated directory of manifests; secrets get exactly one."""
    settings, _, files = rendered(case_id)
    spec = _app(case_id)["spec"]
    dirs = sorted(s["path"] for s in spec["sources"] if "path" in s and "ref" not in s)
    for s in spec["sources"]:
        if "path" in s:
            assert "chart" not in s and s["repoURL"] == settings.repo_url
    expected = sorted(str(PurePosixPath(p).parent) for p, _ in _external_secrets(files))
    assert dirs == expected
    for d in dirs:  # the directory holds only manifests Argo CD should apply
        inside = [p for p in files if PurePosixPath(p).parent == PurePosixPath(d)]
        assert inside and all(p.endswith(".yaml") for p in inside)


def _expected_destination(settings: Settings, doc: Mapping[str, Any]) -> dict[str, str]:
    chosen = doc.get("destination")
    if chosen:
        return dict(chosen)
    if settings.argocd.destination_name:
        return {"name": settings.argocd.destination_name}
    return {"server": settings.argocd.destination_server}


@pytest.mark.parametrize("case_id", IDS)
def test_destination_is_the_documents_choice_with_server_xor_name(case_id: str) -> None:
    """The destination is the document's (else the settings'): server XOR name, trino-<id>."""
    settings, doc, _ = rendered(case_id)
    dest = _app(case_id)["spec"]["destination"]
    assert ("server" in dest) != ("name" in dest), f"server XOR name: {dest}"
    assert dest["namespace"] == f"trino-{doc['clusterId']}"
    chosen = {k: v for k, v in dest.items() if k != "namespace"}
    assert chosen == _expected_destination(settings, doc)


@pytest.mark.parametrize("case_id", IDS)
def test_sync_policy_is_automated_with_namespace_creation(case_id: str) -> None:
    """Automated sync with prune and self-heal, CreateNamespace and ServerSideApply."""
    policy = _app(case_id)["spec"]["syncPolicy"]
    assert policy["automated"] == {"prune": True, "selfHeal": True}
    assert {"CreateNamespace=true", "ServerSideApply=true"} <= set(policy["syncOptions"])


@pytest.mark.parametrize("case_id", IDS)
def test_ignore_differences_covers_worker_replicas_only_when_autoscaling(case_id: str) -> None:
    """With HPA/KEDA the worker Deployment's /spec/replicas is ignored; without, nothing is."""
    _, doc, _ = rendered(case_id)
    ignored = _app(case_id)["spec"].get("ignoreDifferences", [])
    if not _autoscaled(doc):
        assert ignored == []
        return
    assert [(d.get("group"), d["kind"], d.get("name"), d.get("namespace"), d.get("jsonPointers"))
            for d in ignored] == [("apps", "Deployment", _chart_worker(doc["clusterId"]),
                                   f"trino-{doc['clusterId']}", ["/spec/replicas"])]


@pytest.mark.parametrize("case_id", IDS)
def test_application_labels_name_cluster_and_owner(case_id: str) -> None:
    """The Application carries trinogen's management, cluster and owner labels."""
    _, doc, _ = rendered(case_id)
    labels = _app(case_id)["metadata"]["labels"]
    assert labels["trinogen.io/cluster"] == doc["clusterId"]
    assert labels["trinogen.io/owner"] == doc["owner"]
    assert labels["app.kubernetes.io/managed-by"] == "trinogen"


# --- the app-of-apps ------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["demo", "multi", "hub"])
def test_root_application_is_valid_and_deploys_the_applications_directory(
    app_schema: dict[str, Any], variant: str
) -> None:
    """The app-of-apps is a valid Application reading the repository's applications directory."""
    settings = _settings(variant)
    files = Renderer(settings).render_root_app()
    assert list(files) == [settings.output.root_app]
    path = PurePosixPath(settings.output.root_app)
    assert path.parts[0] not in (settings.output.applications_dir, settings.output.clusters_dir)
    app = yaml.safe_load(files[settings.output.root_app])
    assert k8s_schema.schema_errors(app, app_schema) == []
    assert k8s_schema.object_meta_errors(app["metadata"]) == []
    spec = app["spec"]
    sources = spec.get("sources") or [spec["source"]]
    assert [(s["repoURL"], s["targetRevision"], s.get("path")) for s in sources] == [
        (settings.repo_url, settings.target_revision, settings.output.applications_dir)]
    assert all("chart" not in s for s in sources)
    dest = spec["destination"]
    assert ("server" in dest) != ("name" in dest)
    assert dest["namespace"] == settings.argocd.namespace  # Applications live there
    assert app["metadata"]["namespace"] == settings.argocd.namespace


# --- ExternalSecrets ------------------------------------------------------------------------------

SECRET_IDS = [i for i, (_, d) in zip(IDS, CASES, strict=True)
              if any(_PLACEHOLDER.search(v) for c in d.get("connectors", [])
                     for v in c["properties"].values())]


def test_secret_cases_exist() -> None:
    """The table has documents with placeholders (both named and explicit vault references)."""
    assert len(SECRET_IDS) >= 3


@pytest.mark.parametrize("case_id", IDS)
def test_external_secret_exactly_when_placeholders(case_id: str) -> None:
    """A cluster gets one ExternalSecret when (and only when) its document has placeholders."""
    _, doc, files = rendered(case_id)
    expected = 1 if case_id in SECRET_IDS else 0
    assert len(_external_secrets(files)) == expected


@pytest.mark.parametrize("case_id", SECRET_IDS)
def test_external_secret_matches_the_crd_schema(es_schema: dict[str, Any], case_id: str) -> None:
    """Each ExternalSecret is valid external-secrets.io/v1 (strict) in the cluster's namespace."""
    _, doc, files = rendered(case_id)
    ((_, es),) = _external_secrets(files)
    assert es["apiVersion"] == "external-secrets.io/v1"
    assert k8s_schema.schema_errors(es, es_schema) == []
    assert k8s_schema.object_meta_errors(es["metadata"]) == []
    assert es["metadata"]["namespace"] == f"trino-{doc['clusterId']}"


@pytest.mark.parametrize("case_id", SECRET_IDS)
def test_external_secret_spells_out_defaulted_fields(case_id: str) -> None:
    """refreshInterval, creationPolicy and deletionPolicy are explicit (no Argo CD drift)."""
    settings, _, files = rendered(case_id)
    ((_, es),) = _external_secrets(files)
    spec = es["spec"]
    assert spec["refreshInterval"] == settings.secrets.refresh_interval
    assert spec["target"]["creationPolicy"] == settings.secrets.creation_policy
    assert spec["target"]["deletionPolicy"] == settings.secrets.deletion_policy
    assert spec["secretStoreRef"] == {"kind": settings.secrets.store_kind,
                                      "name": settings.secrets.store_name}


def _ref_of(settings: Settings, doc: Mapping[str, Any], placeholder: str) -> tuple[str, str, str]:
    body = _PLACEHOLDER.fullmatch(placeholder).group(1)  # type: ignore[union-attr]
    if body.startswith("vault:"):
        target = body[len("vault:"):].strip()
    else:
        target = settings.secrets.refs.get(body) or settings.secrets.default_ref.format(
            cluster=doc["clusterId"], owner=doc["owner"], name=body)
    where, _, key = target.partition("#")
    mount, _, path = where.partition("/")
    return mount, path, key


@pytest.mark.parametrize("case_id", SECRET_IDS)
def test_external_secret_provides_every_placeholder_as_an_env_var(case_id: str) -> None:
    """Each placeholder's Vault path/key is one ExternalSecret entry whose key the catalogs use."""
    settings, doc, files = rendered(case_id)
    ((_, es),) = _external_secrets(files)
    data = es["spec"]["data"]
    names = [d["secretKey"] for d in data]
    assert len(names) == len(set(names)), "duplicate secretKey"
    for name in names:  # envFrom exports only keys that are valid environment variable names
        assert _ENV_NAME.fullmatch(name), name
    catalogs = b"\n".join(v for p, v in files.items() if p.endswith(".properties")).decode()
    used = set(re.findall(r"\$\{ENV:([A-Za-z0-9_]+)\}", catalogs))
    assert used == set(names)
    wanted = {_ref_of(settings, doc, m.group(0)) for c in doc["connectors"]
              for v in c["properties"].values() for m in _PLACEHOLDER.finditer(v)}
    got = set()
    for d in data:
        ref = d["remoteRef"]
        assert "/data/" not in f"/{ref['key']}/", "ESO adds /data/ for KV v2 itself"
        got.add(next(w for w in wanted if ref["property"] == w[2]
                     and ref["key"] in (w[1], f"{w[0]}/{w[1]}")))
    assert got == wanted


@pytest.mark.parametrize("case_id", SECRET_IDS)
def test_values_load_the_external_secrets_target(case_id: str) -> None:
    """values.yaml's envFrom names the Secret the ExternalSecret creates, in the same namespace."""
    settings, doc, files = rendered(case_id)
    ((_, es),) = _external_secrets(files)
    values = yaml.safe_load(files[f"{settings.output.clusters_dir}/{doc['clusterId']}/values.yaml"])
    assert values["envFrom"] == [{"secretRef": {"name": es["spec"]["target"]["name"]}}]
    assert es["metadata"]["namespace"] == _app(case_id)["spec"]["destination"]["namespace"]
