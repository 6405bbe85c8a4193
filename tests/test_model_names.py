"""Names the platform owns are never a cluster's (issue 19, finding 1)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import demo_settings
from trinogen.model import Cluster, Failed, classify
from trinogen.model.names import reserved
from trinogen.model.raw_document import RawDocument
from trinogen.settings import ArgoSettings

DEMO = ArgoSettings(root_app_name="trino-clusters")


@pytest.mark.parametrize(("cluster_id", "argocd", "needle"), [
    # the issue's reproduction: prefix trino- + clusters is the app-of-apps' name
    ("clusters", DEMO, "Application trino-clusters in argocd, the app-of-apps' own name"),
    ("root", ArgoSettings(app_name_prefix="", root_app_name="root"), "app-of-apps' own name"),
    ("apps", ArgoSettings(app_name_prefix="team-", root_app_name="team-apps"), "app-of-apps"),
    # a cluster deployed into Argo CD's own namespace
    ("argocd", ArgoSettings(namespace="trino-argocd"), "namespace trino-argocd, where Argo CD"),
    # reserved by the platform: Application name or namespace, globs
    ("gateway", ArgoSettings(reserved_names=("trino-gateway",)), "Application trino-gateway"),
    ("gateway-eu", ArgoSettings(reserved_names=("trino-gateway*",)),
     "(argocd.reserved_names: trino-gateway*)"),
    ("gateway", ArgoSettings(app_name_prefix="app-", reserved_names=("trino-gateway",)),
     "namespace trino-gateway"),
    ("gateway", ArgoSettings(app_name_prefix="", reserved_names=("gateway",)),
     "Application gateway"),
    ("x1", ArgoSettings(reserved_names=("trino-x?",)), "trino-x1"),
])
def test_a_name_the_platform_owns_is_refused(cluster_id: str, argocd: ArgoSettings,
                                             needle: str) -> None:
    """A clusterId whose Application or namespace is a platform name is refused, saying which."""
    why = reserved(cluster_id, argocd)
    assert why is not None and needle in why and "choose another clusterId" in why


@pytest.mark.parametrize(("cluster_id", "argocd"), [
    ("clusters-a", DEMO),  # near the root's name is fine
    ("clusterz", DEMO),
    ("gateways", ArgoSettings(reserved_names=("trino-gateway",))),  # a glob matches whole names
    ("my-gateway", ArgoSettings(reserved_names=("trino-gateway*",))),
    ("argocd", ArgoSettings()),  # namespace trino-argocd is not Argo CD's argocd
])
def test_other_names_stay_free(cluster_id: str, argocd: ArgoSettings) -> None:
    """A clusterId near, but not equal to, a platform name is a cluster like any other."""
    assert reserved(cluster_id, argocd) is None


def _doc(cluster_id: str) -> RawDocument:
    body: dict[str, Any] = {"clusterId": cluster_id, "owner": "growth_team", "enabled": True}
    return RawDocument('"x"', body)


def test_the_issue_document_cannot_take_the_app_of_apps_name() -> None:
    """With the demo settings, clusterId "clusters" fails on its clusterId instead of rendering
    the Application trino-clusters (the app-of-apps' own name)."""
    out = classify(_doc("clusters"), demo_settings())
    assert isinstance(out, Failed)
    assert [p.field for p in out.problems] == ["clusterId"]
    assert out.problems[0].message.startswith('"clusters" would name its Application '
                                              "trino-clusters")
    assert isinstance(classify(_doc("clusters-eu"), demo_settings()), Cluster)


def test_reserved_names_from_the_settings_refuse_a_document() -> None:
    """A document whose namespace matches argocd.reserved_names fails naming the pattern."""
    s = demo_settings(argocd={"reserved_names": ("trino-gateway*",)})
    out = classify(_doc("gateway"), s)
    assert isinstance(out, Failed)
    assert "argocd.reserved_names: trino-gateway*" in out.problems[0].message


@pytest.mark.parametrize(("output", "cluster_id"), [
    ({"root_app": "argocd/trino-clusters.yaml"}, "clusters"),
    ({"root_app": "trino-applications.yaml"}, "trino-applications"),
    ({"root_app": "root/apps.yaml", "applications_dir": "root/apps-x"}, "apps"),
    ({"root_app": "gitops/trino-applications-root.yaml", "applications_dir": "gitops/apps",
      "clusters_dir": "gitops/clusters"}, "trino-applications-root"),
])
def test_no_cluster_file_is_the_app_of_apps_file(output: dict[str, str], cluster_id: str) -> None:
    """Whatever the clusterId, none of its rendered paths is the app-of-apps' file, and the plan
    never attributes that file to a cluster (so no cluster's run updates or prunes it)."""
    from trinogen.pipeline import _layout
    from trinogen.render import Renderer

    s = demo_settings(output=output, argocd={"root_app_name": "the-root"})
    cluster = classify(_doc(cluster_id), s)
    assert isinstance(cluster, Cluster)
    files = Renderer(s).render_cluster(cluster, {})
    root = s.output.root_app
    assert root not in files and root.casefold() not in {p.casefold() for p in files}
    assert _layout(s).cluster_of(root) is None
