"""Every object, applied: what trinogen writes and what the real chart renders from it, held to a
real kube-apiserver 1.34 (issue 20, section 1).

For every example, every feature document of the chart tests and the kitchen sink (running and
stopped), trinogen renders its whole tree (`pipeline.render`: Applications, ExternalSecrets,
ConfigMaps, PodDisruptionBudgets, the app-of-apps, AppProjects when on) and the Trino chart
(helm-python-sdk, `CHART_DIR`) renders every object of the cluster's values.yaml, its `helm test`
hooks left out (Argo CD does not run them, argo-cd#2038). Each object is then applied the way
Argo CD applies it with `ServerSideApply=true`: server-side, field manager `argocd-controller`,
strict field validation, into a namespace of its own labelled
`pod-security.kubernetes.io/enforce: restricted`; every pod template (Deployment, StatefulSet,
DaemonSet, Job, CronJob) is then created as a Pod with `dryRun=All`, since Pod Security
admission enforces on Pods only. The judge is the API server (and the upstream CRDs in
../shared/crds); the expectation, zero rejections, comes from the issue, not from trinogen.

Stand-ins, named: no controller-manager runs, so the namespace's `default` ServiceAccount is made
by `Cluster.namespace`, and the platform's objects a pod names but nothing here deploys (a
PriorityClass of a placement option, a ServiceAccount the chart is told to use but not to
create) are created by this module as the platform would, before the Pods.

The API server is the session's, shared with other test modules, so this one keeps to namespaces
of its own: Argo CD's is the settings' `argocd.namespace` set to `argocd-apply`, and each
document's objects go to `apply-<clusterId>` (suffixed when two cases share a clusterId) instead
of `trino-<clusterId>`: the chart is rendered into it and trinogen's objects are moved there (only
metadata.namespace changes, after checking that each names the Application's destination).
"""

from __future__ import annotations

import base64
import copy
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from bson import json_util

from tests import kitchen_sink, pod_security
from tests.conftest import CHART_DIR, EXAMPLES, ROOT, demo_settings, example_docs, with_hdfs
from tests.fakes import FakeReader, FakeSource
from tests.kubeapi import Cluster as Kube
from tests.kubeapi import KubeError
from tests.marks import CHART, KUBE_API, helm_python
from trinogen import pipeline
from trinogen.model import Cluster, RawDocument, classify
from trinogen.model.library import parse_library
from trinogen.settings import Settings, load_settings, replace
from trinogen.source import doc_key

pytestmark = [*KUBE_API, *CHART]

ARGOCD_MANAGER = "argocd-controller"  # the field manager of Argo CD's server-side apply
PLATFORM_MANAGER = "platform"  # what this module creates as the platform would
RESTRICTED = {"pod-security.kubernetes.io/enforce": "restricted",
              "pod-security.kubernetes.io/enforce-version": "latest"}
TRACKING = "argocd.argoproj.io/tracking-id"
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")
VAULT_VERSION = 3  # every fake Vault secret's KV version: ExternalSecrets pin it
# The API server is the session's, shared with other modules: this one keeps to namespaces of
# its own, Argo CD's (the settings' argocd.namespace) and each document's (apply-<clusterId>).
ARGOCD_NAMESPACE = "argocd-apply"


# --- the documents ---------------------------------------------------------------------------

# A placement option spreading each release's workers by zone: the platform cannot name the
# release, so it names the label keys whose values the API server takes from each pod
# (matchLabelKeys, Kubernetes 1.27+); pod-template-hash spreads each rollout on its own.
ZONAL = {"zonal": {"topologySpreadConstraints": [
    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
     "whenUnsatisfiable": "DoNotSchedule",
     "matchLabelKeys": ["app.kubernetes.io/instance", "pod-template-hash"]}]},
         # every label the chart selects a role's pods by: trinogen's selector is left empty
         "zonal-all": {"topologySpreadConstraints": [
             {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
              "whenUnsatisfiable": "ScheduleAnyway",
              "matchLabelKeys": ["app.kubernetes.io/name", "app.kubernetes.io/instance",
                                 "app.kubernetes.io/component"]}]}}

def _features() -> dict[str, tuple[Callable[[], Settings], Callable[[], list[dict[str, Any]]]]]:
    """Groups of the chart tests' feature documents, each with the settings its tests use."""
    from tests import operation_support as ops
    from tests import test_chart, test_chart_storage, test_chart_workload
    from tests.test_access import ACCESS_DOCS, OPA_OPTIONS
    from tests.test_auth import secure_settings
    from tests.test_chart_objects import DEMO_DOCS
    from tests.test_disruption import HPA, KEDA
    from tests.test_files_chart import document as files_document

    def opa() -> Settings:
        s = demo_settings()
        return dataclasses.replace(s, named={**s.named, "opa": OPA_OPTIONS})

    def storage() -> Settings:
        return ops.with_options(storage=test_chart_storage.STORAGE,
                                exchange=test_chart_storage.EXCHANGE)

    def operation_settings() -> Settings:
        return ops.with_options(placement={**ops.PLACEMENTS, **ZONAL}, disruption=ops.DISRUPTIONS)

    def operation() -> list[dict[str, Any]]:
        drain = {"gracePeriodSeconds": 90, "drainSeconds": 300}
        return [
            ops.doc("placed", worker={"placement": "spot"}, coordinator={"placement": "steady"}),
            ops.doc("zonal", worker={"placement": "zonal"}),
            ops.doc("zonal-all", worker={"placement": "zonal-all"}),
            *[ops.doc(f"disruption-{name}", disruption=name) for name in sorted(ops.DISRUPTIONS)],
            ops.doc("drain-hpa", worker={"autoscaling": HPA, "gracefulShutdown": drain},
                    disruption="strict"),
            ops.doc("drain-keda", worker={"autoscaling": KEDA, "gracefulShutdown": drain},
                    disruption="rolling"),
        ]

    def auth() -> list[dict[str, Any]]:
        tpch = [{"name": "tpch", "properties": {"connector.name": "tpch"}}]
        return [{"_id": f"auth-{option}", "clusterId": f"auth-{option}", "owner": "fin_team",
                 "enabled": True, "authentication": option, "connectors": tpch}
                for option in ("corp-password", "corp-sso")]

    def constructed(escaping: bool) -> list[dict[str, Any]]:
        return [copy.deepcopy(d) for d in test_chart.CONSTRUCTED
                if (d["clusterId"] == "escaping") == escaping]

    return {
        "chart": (demo_settings, lambda: constructed(False)),
        # its keys are made up (as an unchecked plugin's may be): the registry checks are off
        "escaping": (lambda: replace(demo_settings(), validation={"trino_properties": "off"}),
                     lambda: constructed(True)),
        "access": (opa, lambda: copy.deepcopy(list(ACCESS_DOCS.values()))),
        "workload": (lambda: test_chart_workload.with_options(**test_chart_workload.EXPORTER),
                     lambda: copy.deepcopy(list(test_chart_workload.DOCS.values()))),
        "storage": (storage, lambda: [copy.deepcopy(test_chart_storage.DOC)]),
        "operation": (operation_settings, operation),
        "auth": (secure_settings, auth),
        "files": (lambda: with_hdfs(demo_settings()), lambda: [files_document()]),
        "objects": (demo_settings, lambda: copy.deepcopy(list(DEMO_DOCS.values()))),
    }


def _settings_text(text: str) -> Settings:
    """Settings loaded from a settings file's text, as the CLI loads them."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "settings.yaml"
        path.write_text(text)
        return load_settings(path, environ={})


def _sink_settings() -> Settings:
    return _settings_text(kitchen_sink.SETTINGS)


def _hostile() -> Group:
    """The hostile corpus' documents trinogen renders (YAML specials, template text, odd keys
    and text, 64-bit numbers) and its healthy neighbours, with that corpus' plain settings."""
    from tests import hostile_corpus
    from tests.test_hostile import SETTINGS_YAML

    def docs() -> list[dict[str, Any]]:
        rendered = [c.doc for c in hostile_corpus.corpus() if c.expect == "render"]
        return [*rendered, *hostile_corpus.good_docs()]

    return Group(lambda: _settings_text(SETTINGS_YAML), docs)


def _tenant_settings() -> Settings:
    from tests.test_render_projects import tenant_settings

    return tenant_settings(growth_analytics="growth", data_analytics_team="analytics",
                           data_platform="platform")


def _chart_doc(cid: str) -> dict[str, Any]:
    from tests.test_chart import DOCS

    return copy.deepcopy(DOCS[cid])


def _tenants_file() -> Settings:
    """config/tenants.yaml as shipped (every example owner a tenant, PDBs by default), with the
    GitOps repository `render` needs."""
    shipped = load_settings(ROOT / "config" / "tenants.yaml", environ={})
    return replace(shipped, argocd={"repo_url": "https://git.example.com/platform/trino-gitops.git"})


def _example_catalogs() -> list[dict[str, Any]]:
    return [json_util.loads(p.read_text()) for p in sorted((EXAMPLES / "catalogs").glob("*.json"))]


@dataclass(frozen=True)
class Group:
    """Documents rendered together by one settings file (and catalog library)."""

    settings: Callable[[], Settings]
    docs: Callable[[], list[dict[str, Any]]]
    catalogs: Callable[[], list[dict[str, Any]]] = list
    inline: bool = False  # secrets.mode inline (opted in twice, as the CLI needs)


def _groups() -> dict[str, Group]:
    groups = {
        "examples": Group(demo_settings, example_docs, _example_catalogs),
        "tenants": Group(_tenant_settings, example_docs),
        "tenants-file": Group(_tenants_file, example_docs),
        # secret values written into the files (an encrypted repository's choice)
        "inline": Group(demo_settings, lambda: [*example_docs(), _chart_doc("secrets-mixed")],
                        inline=True),
        **{name: Group(s, d) for name, (s, d) in _features().items()},
        "hostile": _hostile(),
        "sink": Group(_sink_settings, lambda: [kitchen_sink.document()], kitchen_sink.catalogs),
        "sink-stopped": Group(_sink_settings, lambda: [{**kitchen_sink.document(),
                                                        "stopped": True}],
                              kitchen_sink.catalogs),
    }
    return groups


GROUPS = _groups()
CASES = [f"{g}/{d['clusterId']}" for g, group in GROUPS.items() for d in group.docs()]


def _namespaces() -> dict[str, str]:
    """Each case's namespace: apply-<clusterId> (as long as the cluster's own trino-<clusterId>),
    suffixed when two cases share a clusterId."""
    out: dict[str, str] = {}
    for case in CASES:
        group, cid = case.split("/", 1)
        ns = f"apply-{cid}"
        if ns in out.values():
            ns = f"{ns[:62 - len(group)]}-{group}"
        out[case] = ns
    assert len(set(out.values())) == len(out), out
    return out


NAMESPACES = _namespaces()


# --- trinogen's tree and the chart's objects ------------------------------------------------

@dataclass
class Tree:
    """One group through `pipeline.render`: each cluster's objects, and the files of none."""

    settings: Settings
    clusters: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # cid -> objects
    values: dict[str, str] = field(default_factory=dict)  # cid -> values.yaml
    shared: list[dict[str, Any]] = field(default_factory=list)  # app-of-apps, AppProjects


def _vault(settings: Settings, docs: list[dict[str, Any]], library: Any) -> FakeReader:
    """A fake Vault holding every key the documents read (so ExternalSecrets pin a version)."""
    secrets: dict[str, dict[str, str]] = {}
    for d in docs:
        c = classify(RawDocument(doc_key(d["_id"]), copy.deepcopy(d)), settings, library)
        assert isinstance(c, Cluster), c
        for use in c.vault_uses:
            secrets.setdefault(use.ref.secret_path, {})[use.ref.key] = "fake-vault-value"
        for s in c.server_secrets:  # the spooling protocol's key must be 256 bits of base64
            if s.key == "protocol.spooling.shared-secret-key":
                secrets[s.use.ref.secret_path][s.use.ref.key] = base64.b64encode(
                    bytes(32)).decode()
    return FakeReader(secrets, {p: VAULT_VERSION for p in secrets})


def render_group(group: Group, out: Path) -> Tree:
    """The group's documents through trinogen's `render` (secret references checked)."""
    settings = replace(group.settings(), secrets={"check": True},
                       argocd={"namespace": ARGOCD_NAMESPACE})
    docs, catalogs = group.docs(), group.catalogs()
    library = parse_library([RawDocument(doc_key(c["_id"]), c) for c in catalogs])
    vault = _vault(settings, docs, library)
    source = FakeSource({doc_key(d["_id"]): d for d in docs})
    source.catalogs = {doc_key(c["_id"]): c for c in catalogs}
    if group.inline:
        settings = replace(settings, secrets={"mode": "inline", "allow_inline": True})
    report = pipeline.render(settings, source, out, reader_factory=lambda: vault,
                             inline=pipeline.inline_mode(settings, group.inline))
    assert not report.failed, f"documents failed to render: {report.failed}"
    tree = Tree(settings)
    cids = {d["clusterId"] for d in docs}
    clusters_dir = settings.output.clusters_dir.strip("/")
    apps_dir = settings.output.applications_dir.strip("/")
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        parts = rel.split("/")
        if rel.startswith(f"{clusters_dir}/") and parts[-1] == "values.yaml":
            tree.values[parts[-2]] = path.read_text()
        elif not rel.endswith(".yaml"):
            continue  # catalog copies (.properties) are for review, not for the API server
        elif rel.startswith(f"{clusters_dir}/"):
            tree.clusters.setdefault(parts[len(clusters_dir.split("/"))], []).extend(_objects(path))
        elif rel.removeprefix(f"{apps_dir}/").removesuffix(".yaml") in cids:  # an Application
            tree.clusters.setdefault(parts[-1].removesuffix(".yaml"), []).extend(_objects(path))
        else:
            tree.shared.extend(_objects(path))
    return tree


def _objects(path: Path) -> list[dict[str, Any]]:
    return [o for o in yaml.safe_load_all(path.read_text()) if isinstance(o, dict)]


def _is_helm_test(obj: Mapping[str, Any]) -> bool:
    hooks = ((obj.get("metadata") or {}).get("annotations") or {}).get("helm.sh/hook", "")
    return any(h.strip() in ("test", "test-success") for h in str(hooks).split(","))


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Tree]:
    """Each group rendered once for the module."""
    cache: dict[str, Tree] = {}

    def get(name: str) -> Tree:
        if name not in cache:
            cache[name] = render_group(GROUPS[name], tmp_path_factory.mktemp(f"tree-{name}"))
        return cache[name]

    return get


@pytest.fixture(scope="module")
def chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


@pytest.fixture(scope="module")
def kube(kube_cluster: Kube) -> Kube:
    """The session's API server with this module's Argo CD namespace."""
    kube_cluster.namespace(ARGOCD_NAMESPACE)
    return kube_cluster


# --- applying --------------------------------------------------------------------------------

class Rejections:
    """What the API server refused, each line naming the case, the object and its message."""

    def __init__(self, case: str) -> None:
        self.case = case
        self.lines: list[str] = []

    def call(self, what: str, action: Callable[[], Any]) -> Any:
        try:
            return action()
        except KubeError as e:
            body = e.body if isinstance(e.body, dict) else {"message": e.body}
            message = str(body.get("message"))
            causes = [f"{c.get('field', '')}: {c.get('message', '')}"
                      for c in (body.get("details") or {}).get("causes") or []]
            causes = [c for c in causes if c not in message]  # most messages list them already
            self.lines.append(f"{self.case}: {what}: HTTP {e.status}: {message}"
                              + "".join(f"\n    {c}" for c in causes))
            return None


def _in_namespace(obj: dict[str, Any], namespace: str, argocd: str) -> dict[str, Any]:
    """The object moved into the case's namespace (Argo CD's own objects stay in theirs)."""
    meta = obj.get("metadata") or {}
    if meta.get("namespace") in (None, argocd):
        return obj
    return {**obj, "metadata": {**meta, "namespace": namespace}}


def _tracked(obj: dict[str, Any], app: str, namespace: str) -> dict[str, Any]:
    """The object as Argo CD applies it: with the annotation of its resource tracking
    (`argocd.argoproj.io/tracking-id: <app>:<group>/<kind>:<namespace>/<name>`, Argo CD 3's
    default method), which counts toward the object's annotation limit like any other."""
    meta = obj.get("metadata") or {}
    group = obj["apiVersion"].rpartition("/")[0]
    key = f"{app}:{group}/{obj['kind']}:{meta.get('namespace') or namespace}/{meta['name']}"
    annotations = {**(meta.get("annotations") or {}), TRACKING: key}
    return {**obj, "metadata": {**meta, "annotations": annotations}}


def _pods(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(Kind/name, Pod) for every pod template among the objects."""
    for what, template in pod_security.pod_templates(objects):
        if not what.startswith(WORKLOADS):
            continue
        meta = dict(template.get("metadata") or {})
        meta["name"] = what.split("/", 1)[1] + "-template"
        yield what, {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                     "spec": copy.deepcopy(template.get("spec") or {})}


def _platform_objects(objects: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """What the pods name that the platform provides: PriorityClasses, and ServiceAccounts no
    object here creates (the namespace's `default` comes from Cluster.namespace)."""
    have = {o["metadata"]["name"] for o in objects if o["kind"] == "ServiceAccount"} | {"default"}
    out: list[dict[str, Any]] = []
    for _, pod in _pods(objects):
        spec = pod["spec"]
        if spec.get("priorityClassName"):
            out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": spec["priorityClassName"]}, "value": 1000})
        account = spec.get("serviceAccountName")
        if account and account not in have:
            out.append({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": account, "namespace": namespace}})
    return out


def apply_case(kube: Kube, tree: Tree, chart: Any, case: str,
               namespace: str) -> tuple[list[str], list[str]]:
    """Apply one document's objects and dry-run its Pods: (rejections, what was applied)."""
    from tests.test_chart import render_through_chart

    cid = case.split("/", 1)[1]
    argocd = tree.settings.argocd.namespace
    _, rendered = render_through_chart(chart, tree.values[cid], cid, namespace)
    from_chart = [o for o in rendered if isinstance(o, dict) and "kind" in o
                  and not _is_helm_test(o)]
    own = [_in_namespace(o, namespace, argocd) for o in tree.clusters[cid]]
    (app,) = [o["metadata"]["name"] for o in own if o["kind"] == "Application"]
    root = tree.settings.argocd.root_app_name  # the app-of-apps deploys the Application
    kube.namespace(namespace, RESTRICTED)
    refused = Rejections(case)
    applied = []
    for obj in [_tracked(o, root if o["kind"] == "Application" else app, namespace)
                for o in [*own, *from_chart]]:
        what = f"{obj['kind']}/{obj['metadata']['name']}"
        applied.append(what)
        refused.call(f"apply {what}", lambda o=obj: kube.apply(o, manager=ARGOCD_MANAGER,
                                                                namespace=namespace))
    for obj in _platform_objects(from_chart, namespace):
        kube.apply(obj, manager=PLATFORM_MANAGER, namespace=namespace)
    for what, pod in _pods(from_chart):
        refused.call(f"Pod of {what} (dry run)",
                     lambda p=pod: kube.create(p, namespace=namespace, dry_run=True))
    return refused.lines, applied


# --- the tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_every_object_of_the_document_is_admitted(
        kube: Kube, trees: Callable[[str], Tree], chart: Any, case: str) -> None:
    """trinogen's objects and the chart's (no helm test hooks) apply server-side with strict
    validation into a `restricted` namespace, and every pod template is admitted as a Pod."""
    tree = trees(case.split("/", 1)[0])
    rejections, applied = apply_case(kube, tree, chart, case, NAMESPACES[case])
    own = tree.clusters[case.split("/", 1)[1]]
    (app,) = [o for o in own if o["kind"] == "Application"]
    elsewhere = [f"{o['kind']}/{o['metadata']['name']}" for o in own if o is not app
                 and o["metadata"].get("namespace") != app["spec"]["destination"]["namespace"]]
    assert elsewhere == [], "outside the namespace the Application deploys into"
    assert rejections == [], "\n".join(rejections)
    kinds = {w.split("/", 1)[0] for w in applied}
    assert {"Application", "Deployment", "ConfigMap"} <= kinds, applied  # a tripwire


def test_the_files_of_no_single_cluster_are_admitted(
        kube: Kube, trees: Callable[[str], Tree]) -> None:
    """The app-of-apps and the tenants' AppProjects apply server-side, strictly, in Argo CD's
    namespace."""
    refused = Rejections("shared files")
    applied = []
    for name in GROUPS:
        for obj in trees(name).shared:
            what = f"{name}: {obj['kind']}/{obj['metadata']['name']}"
            applied.append(what)
            refused.call(f"apply {what}", lambda o=obj: kube.apply(o, manager=ARGOCD_MANAGER))
    assert refused.lines == [], "\n".join(refused.lines)
    assert any("AppProject/" in w for w in applied) and any("Application/" in w for w in applied)


def test_every_case_was_judged() -> None:
    """A tripwire for the table: the examples, the kitchen sink and each group of the chart
    tests' feature documents are all in it."""
    examples = {f"examples/{d['clusterId']}" for d in example_docs()}
    assert examples <= set(CASES)
    assert {"sink/sink", "sink-stopped/sink"} <= set(CASES)
    assert {c.split("/", 1)[0] for c in CASES} == set(GROUPS)


@pytest.mark.parametrize(("mode", "refused"), [("chart", True), ("restricted", False)])
def test_the_judge_refuses_pods_restricted_forbids(
        kube: Kube, chart: Any, tmp_path: Path, mode: str, refused: bool) -> None:
    """A control for the judge: with pods.security=chart (the chart's own contexts, without
    seccomp), the API server refuses both roles' Pods in the restricted namespace, naming the
    document and the profile; the same document with trinogen's contexts is admitted."""
    (doc,) = [d for d in example_docs() if d["clusterId"] == "adhoc-dev"]
    group = Group(lambda: demo_settings(pods={"security": mode}), lambda: [doc])
    tree = render_group(group, tmp_path / "tree")
    rejections, _ = apply_case(kube, tree, chart, f"control-{mode}/adhoc-dev",
                               f"control-pods-{mode}")
    if not refused:
        assert rejections == []
        return
    pods = [r for r in rejections if "(dry run)" in r]
    assert len(pods) == 2 and len(rejections) == 2, rejections
    for line in pods:
        assert line.startswith(f"control-{mode}/adhoc-dev: Pod of Deployment/adhoc-dev-trino-")
        assert 'violates PodSecurity "restricted:latest"' in line


def test_the_judge_refuses_an_unknown_field(kube: Kube, trees: Callable[[str], Tree]) -> None:
    """A control for strict field validation: an ExternalSecret of the kitchen sink with a field
    its CRD does not declare is refused, naming the object and the field."""
    (es,) = [o for o in trees("sink").clusters["sink"]
             if o["metadata"]["name"] == "sink-trino-secrets"]
    bad = copy.deepcopy(_in_namespace(es, "control-fields", ARGOCD_NAMESPACE))
    bad["spec"]["target"]["templatee"] = {}
    kube.namespace("control-fields", RESTRICTED)
    refused = Rejections("sink/sink")
    refused.call("apply ExternalSecret/sink-trino-secrets",
                 lambda: kube.apply(bad, manager=ARGOCD_MANAGER))
    (line,) = refused.lines
    assert line.startswith("sink/sink: apply ExternalSecret/sink-trino-secrets: ")
    assert ".spec.target.templatee: field not declared in schema" in line


@pytest.mark.parametrize("name", ["catalogs", "files"])
def test_a_config_map_of_one_mib_is_admitted_and_one_byte_more_is_refused(
        kube: Kube, chart: Any, tmp_path: Path, name: str) -> None:
    """trinogen's 1 MiB limit is the API server's: the chart's catalog ConfigMap (or trinogen's
    files ConfigMap) holding exactly 1,048,576 bytes of data applies server-side; one byte more,
    rendered with trinogen's own check switched off, is refused by the API server."""
    from tests.test_chart_limits import BOUNDARY, MIB, Case, _target, _unchecked

    build, suffix, exact, _ = BOUNDARY[name]
    assert exact  # the pad moves the real object's bytes one for one
    base = Case(chart, demo_settings(), build(1))
    (key,) = [k for k in base.real if k[1].endswith(suffix)]
    pad = 1 + _target(base, key, MIB, exact)
    outcomes = {}
    for extra in (0, 1):
        doc = build(pad + extra)
        with _unchecked():
            tree = render_group(Group(demo_settings, lambda d=doc: [d]), tmp_path / f"{extra}")
        case = f"limits-{extra}/{doc['clusterId']}"
        outcomes[extra], _ = apply_case(kube, tree, chart, case, f"limits-{name}-{extra}")
    assert outcomes[0] == []
    (refused,) = outcomes[1]
    assert f"apply ConfigMap/{key[1]}: HTTP 422" in refused
    assert f"Too long: may not be more than {MIB} bytes" in refused
