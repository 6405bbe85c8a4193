"""The tenants' AppProjects as rendered: the Argo CD CRD accepts them, and they let through
exactly the kinds the real chart and trinogen render.

Expectations come from the inputs (the Applications' destinations and repositories), the
upstream AppProject CRD (../shared/crds) and the real Trino chart's output for every feature
(tests/kitchen_sink.py and tests/test_chart.py's documents), never from the project module.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import k8s_schema, kitchen_sink
from tests.conftest import CHART_DIR, ROOT, demo_settings, needs
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.render.projects import (
    CLUSTER_KINDS,
    NAMESPACE_KINDS,
    AppUse,
    Destination,
    app_use,
    project_of,
    project_path,
    projects_of,
)
from trinogen.settings import Settings, replace
from trinogen.settings.tenants import Tenant
from trinogen.source import doc_key

CRD = ROOT.parent / "shared" / "crds" / "argoproj.io_appproject-crd.yaml"

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None


def tenant_settings(**tenants: str) -> Settings:
    """The demo settings with tenant projects on: owner -> project."""
    s = demo_settings(argocd={"tenant_projects": True})
    return dataclasses.replace(s, tenants={o: Tenant(o, every=True, project=p)
                                           for o, p in tenants.items()})


def _schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return k8s_schema.strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))


USES = [
    AppUse("growth", Destination("trino-a", server="https://kubernetes.default.svc"),
           ("https://trinodb.github.io/charts", "https://git.example.com/gitops.git")),
    AppUse("growth", Destination("trino-b", name="spoke-eu"), ("https://git.example.com/gitops.git",)),
    AppUse("finance", Destination("trino-c", server="https://kubernetes.default.svc"), ()),
]


@needs(CRD.is_file(), f"no AppProject CRD at {CRD}")
def test_a_rendered_project_passes_the_crd_schema() -> None:
    """Every project file is a valid AppProject (strict CRD schema and ObjectMeta)."""
    files = Renderer(tenant_settings(g="growth")).render_projects(projects_of(USES, {"growth"}))
    (content,) = files.values()
    obj = yaml.safe_load(content)
    assert k8s_schema.schema_errors(obj, _schema()) == []
    assert k8s_schema.object_meta_errors(obj["metadata"]) == []
    assert obj["kind"] == "AppProject" and obj["metadata"]["name"] == "growth"


def test_a_project_allows_exactly_what_its_applications_use() -> None:
    """Destinations (server or name, each namespace) and repositories: the inputs', no more."""
    s = tenant_settings(g="growth", f="finance")
    files = Renderer(s).render_projects(projects_of(USES, {"growth", "finance"}))
    growth = yaml.safe_load(files[project_path(s.output.applications_dir, "growth")])
    assert growth["metadata"]["namespace"] == s.argocd.namespace
    assert growth["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
    assert growth["spec"]["destinations"] == [
        {"namespace": "trino-a", "server": "https://kubernetes.default.svc"},
        {"namespace": "trino-b", "name": "spoke-eu"}]
    assert sorted(growth["spec"]["sourceRepos"]) == ["https://git.example.com/gitops.git",
                                                     "https://trinodb.github.io/charts"]
    assert growth["spec"]["clusterResourceWhitelist"] == [{"group": "", "kind": "Namespace"}]


def test_a_project_nobody_owns_is_not_written() -> None:
    """Only owned projects: an Application naming another project adds nothing."""
    assert set(projects_of(USES, {"finance", "other"})) == {"finance"}


@pytest.mark.parametrize("text", [
    b"", b"- a list\n", b"kind: Application\n", b"spec: 3\n", b"spec: {project: p}\n",
    b"spec: {project: 3, destination: {namespace: n}}\n", b"spec: {project: p, destination: x}\n",
    b"spec: {project: p, destination: {server: s}}\n", b"{unclosed\n", b"spec: {sources: 3}\n",
])
def test_a_file_without_a_project_and_destination_namespace_is_no_use(text: bytes) -> None:
    """Malformed Application texts are skipped, never a traceback."""
    assert app_use(text) is None


@pytest.mark.parametrize(("path", "name"), [
    ("trino-applications/appproject.growth.yaml", "growth"),
    ("trino-applications/appproject.yaml", None),
    ("trino-applications/appproject..yaml", None),
    ("trino-applications/growth.yaml", None),
    ("trino-applications/x/appproject.growth.yaml", None),
    ("trino-clusters/appproject.growth.yaml", None),
])
def test_project_files_are_named_apart_from_clusters(path: str, name: str | None) -> None:
    """A project file is `appproject.<name>.yaml` in the applications directory, nothing else."""
    assert project_of("trino-applications", path) == name


def test_a_project_file_is_never_a_clusters() -> None:
    """The plan's layout attributes no cluster to a project file (a clusterId has no '.')."""
    from trinogen.plan import Layout

    layout = Layout("trino-clusters", "trino-applications")
    assert layout.cluster_of(project_path("trino-applications", "growth")) is None
    assert layout.cluster_of("trino-applications/growth.yaml") == "growth"


def test_the_application_creates_its_namespace() -> None:
    """Namespace is whitelisted because the Applications sync with CreateNamespace=true."""
    s = tenant_settings(data_platform="trino-data")
    doc = {"_id": "x", "clusterId": "x", "owner": "data_platform", "enabled": True}
    cluster = classify(RawDocument(doc_key("x"), doc), s)
    assert isinstance(cluster, Cluster), cluster
    app = yaml.safe_load(Renderer(s).render_cluster(cluster, {})["trino-applications/x.yaml"])
    assert "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]
    assert app["spec"]["project"] == "trino-data"
    assert CLUSTER_KINDS == (("", "Namespace"),)


# --- every kind rendered is whitelisted, and nothing else --------------------------------------

def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _kinds_of(files: dict[str, bytes], chart: Any, cid: str) -> set[tuple[str, str]]:
    from tests.test_chart import render_through_chart

    values = next(c for p, c in files.items() if p.endswith(f"/{cid}/values.yaml")).decode()
    _, objects = render_through_chart(chart, values, cid, f"trino-{cid}")
    own = [yaml.safe_load(c) for p, c in files.items() if "/manifests/" in p or "/secrets/" in p]
    hooks = [o for o in objects if "helm.sh/hook" in ((o.get("metadata") or {})
                                                      .get("annotations") or {})]
    return {(_group(o["apiVersion"]), o["kind"]) for o in objects + own
            if "kind" in o and o not in hooks}


@needs(helm_python is not None and (CHART_DIR / "Chart.yaml").is_file(),
       "the real chart and helm-python-sdk are needed")
def test_every_kind_the_chart_and_trinogen_render_is_whitelisted(tmp_path: Path) -> None:
    """The kitchen sink and every chart-test document through the real chart: the kinds they
    make are exactly NAMESPACE_KINDS (a new kind fails here instead of failing in Argo CD)."""
    from tests.test_chart import DOCS
    from tests.test_features_together import build

    chart = helm_python.Chart.load(CHART_DIR)
    sink = build(tmp_path, kitchen_sink.document())
    seen = {(_group(o["apiVersion"]), o["kind"]) for o in sink.chart_objects + sink.own_objects}
    settings = replace(demo_settings(), validation={"trino_properties": "off"})
    for case, doc in DOCS.items():
        cluster = classify(RawDocument(doc_key(doc["_id"]), copy.deepcopy(doc)), settings)
        assert isinstance(cluster, Cluster), (case, cluster)
        seen |= _kinds_of(Renderer(settings).render_cluster(cluster, {}), chart, case)
    assert seen - set(NAMESPACE_KINDS) == set(), "rendered but not whitelisted"
    assert set(NAMESPACE_KINDS) - seen == set(), "whitelisted but never rendered"


def test_an_owner_without_a_tenant_gets_no_application() -> None:
    """With tenant projects on, an owner the settings do not name has no project: render fails."""
    from trinogen.render import RenderError

    s = tenant_settings(data_platform="trino-data")
    doc = {"_id": "y", "clusterId": "y", "owner": "stranger", "enabled": True}
    cluster = classify(RawDocument(doc_key("y"), doc), s)
    if not isinstance(cluster, Cluster):  # tenant scoping (another part of issue 19) refused it
        return
    with pytest.raises(RenderError, match="owner 'stranger' is not a tenant"):
        Renderer(s).render_cluster(cluster, {})
