"""Tenant AppProjects through a real sync (a bare git remote, mongomock, the CLI's wiring).

Every project file is read back from the remote with PyYAML; the expected destinations come from
the documents (`trino-<clusterId>` of each enabled document of the tenant's owner, on the
settings' destination server), never from trinogen's project code.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import example_docs
from tests.test_sync import World
from trinogen.settings.tenants import Tenant

PROJECTS = {"growth_analytics": "growth", "data_analytics_team": "analytics",
            "data_platform": "platform-data"}
APPS = "trino-applications"


def make_world(tmp_path: Path, docs: list[dict[str, Any]] | None = None, *,
               on: bool = True) -> World:
    w = World(tmp_path, docs, argocd={"tenant_projects": on})
    w.settings = dataclasses.replace(w.settings, tenants={
        o: Tenant(o, every=True, project=p) for o, p in PROJECTS.items()})
    return w


def projects(w: World) -> dict[str, dict[str, Any]]:
    """The project files on the remote, by metadata.name."""
    out = {}
    for path, content in w.tree().items():
        if path.startswith(f"{APPS}/appproject."):
            obj = yaml.safe_load(content)
            out[obj["metadata"]["name"]] = obj
    return out


def destinations(project: dict[str, Any]) -> set[tuple[str, str]]:
    return {(d["namespace"], d.get("server") or d["name"]) for d in project["spec"]["destinations"]}


def expected(w: World, docs: list[dict[str, Any]], owner: str) -> set[tuple[str, str]]:
    """From the documents: each enabled one of the owner, on the default server."""
    return {(f"trino-{d['clusterId']}", w.settings.argocd.destination_server)
            for d in docs if d["owner"] == owner and d.get("enabled", True)}


def app(w: World, cid: str) -> dict[str, Any]:
    return yaml.safe_load(w.tree()[f"{APPS}/{cid}.yaml"])


def test_each_tenant_gets_a_project_with_exactly_its_clusters(tmp_path: Path) -> None:
    """One project per tenant: its clusters' namespaces, the two repositories, the Namespace kind."""
    docs = example_docs()
    w = make_world(tmp_path, docs)
    w.sync()
    found = projects(w)
    assert set(found) == set(PROJECTS.values())
    for owner, name in PROJECTS.items():
        p = found[name]
        assert destinations(p) == expected(w, docs, owner)
        assert set(p["spec"]["sourceRepos"]) == {w.settings.chart.repo_url, w.settings.repo_url}
        assert p["spec"]["clusterResourceWhitelist"] == [{"group": "", "kind": "Namespace"}]
    for d in docs:
        assert app(w, d["clusterId"])["spec"]["project"] == PROJECTS[d["owner"]]
    root = yaml.safe_load(w.tree()[w.settings.output.root_app])
    assert root["spec"]["project"] == w.settings.argocd.project  # the app-of-apps stays
    commits = w.commits()
    w.sync()
    assert w.commits() == commits  # a second run changes nothing


def test_a_document_cannot_reach_another_tenants_project_or_namespace(tmp_path: Path) -> None:
    """A growth document naming finance's project, namespace or another server fails; its own
    Application is only ever in growth's project with its own namespace."""
    docs = example_docs()
    hostile = [
        {"_id": "h1", "clusterId": "h1", "owner": "growth_analytics", "project": "analytics"},
        {"_id": "h2", "clusterId": "h2", "owner": "growth_analytics",
         "namespace": "trino-analytics-prod"},
        {"_id": "h3", "clusterId": "h3", "owner": "growth_analytics",
         "destination": {"server": "https://prod-admin:6443"}},
        {"_id": "h4", "clusterId": "analytics-prod", "owner": "growth_analytics"},
    ]
    w = make_world(tmp_path, docs)
    w.sync()
    w.mongo.coll.insert_many([{**h, "enabled": True} for h in hostile])
    report = w.sync()
    assert {f.cluster_id for f in report.failed} >= {"h1", "h2", "h3"}
    assert f"{APPS}/h1.yaml" not in w.tree()
    found = projects(w)
    for owner, name in PROJECTS.items():
        assert destinations(found[name]) == expected(w, docs, owner)
    assert app(w, "analytics-prod")["spec"]["project"] == "analytics"


def test_a_failed_documents_cluster_stays_in_its_project(tmp_path: Path) -> None:
    """A document that fails keeps its Application, so its project keeps its namespace, even
    when the failing document now names another owner."""
    docs = example_docs()
    w = make_world(tmp_path, docs)
    w.sync()
    broken = next(d for d in docs if d["clusterId"] == "adhoc-dev")
    w.mongo.coll.replace_one({"_id": broken["_id"]}, {**broken, "owner": "data_platform", "replica": "x"})
    report = w.sync()
    assert "adhoc-dev" in {f.cluster_id for f in report.failed}
    assert app(w, "adhoc-dev")["spec"]["project"] == "growth"
    assert ("trino-adhoc-dev", w.settings.argocd.destination_server) in destinations(
        projects(w)["growth"])
    assert destinations(projects(w)["platform-data"]) == expected(w, docs, "data_platform")


def test_adding_and_removing_a_cluster_changes_its_project(tmp_path: Path) -> None:
    """Added: the namespace joins the project in the same commit. Removed: it stays for the
    commit that prunes the Application (Argo CD deletes the cluster through the project), and
    goes in the next run."""
    docs = example_docs()
    w = make_world(tmp_path, docs)
    w.sync()
    new = {"_id": "n1", "clusterId": "growth-new", "owner": "growth_analytics", "enabled": True}
    w.mongo.coll.insert_one(dict(new))
    w.sync()
    ns = ("trino-growth-new", w.settings.argocd.destination_server)
    assert destinations(projects(w)["growth"]) == expected(w, docs + [new], "growth_analytics")
    w.mongo.coll.replace_one({"_id": "n1"}, {**new, "enabled": False})
    w.sync()
    assert f"{APPS}/growth-new.yaml" not in w.tree()
    assert ns in destinations(projects(w)["growth"])  # while Argo CD finalizes the Application
    w.sync()
    assert destinations(projects(w)["growth"]) == expected(w, docs, "growth_analytics")


def test_the_last_cluster_of_a_tenant_takes_its_project_one_run_later(tmp_path: Path) -> None:
    """A tenant left with no cluster keeps its project for the run that prunes its last
    Application, loses it in the next, and then nothing changes."""
    docs = example_docs()
    w = make_world(tmp_path, docs)
    w.sync()
    last = next(d for d in docs if d["owner"] == "data_platform")
    w.mongo.coll.replace_one({"_id": last["_id"]}, {**last, "enabled": False})
    w.sync()
    assert f"{APPS}/{last['clusterId']}.yaml" not in w.tree()
    assert "platform-data" in projects(w)
    w.sync()
    assert "platform-data" not in projects(w)
    commits = w.commits()
    w.sync()
    assert w.commits() == commits


def test_a_targeted_run_keeps_every_other_cluster_in_its_project(tmp_path: Path) -> None:
    """`--cluster` renders one cluster; the projects still hold every Application in git."""
    docs = example_docs()
    w = make_world(tmp_path, docs)
    w.sync()
    new = {"_id": "n1", "clusterId": "growth-new", "owner": "growth_analytics", "enabled": True}
    w.mongo.coll.insert_one(dict(new))
    w.sync(clusters=("growth-new",))
    found = projects(w)
    for owner, name in PROJECTS.items():
        assert destinations(found[name]) == expected(w, docs + [new], owner)


def test_no_project_without_the_setting_and_switching_off_prunes_them(tmp_path: Path) -> None:
    """Off: no project file and Applications in argocd.project. Switched off after being on: the
    Applications return to argocd.project, and the projects go one run later."""
    off = make_world(tmp_path / "off", on=False)
    off.sync()
    assert projects(off) == {}
    assert app(off, "etl-batch")["spec"]["project"] == off.settings.argocd.project
    w = make_world(tmp_path / "on")
    w.sync()
    assert set(projects(w)) == set(PROJECTS.values())
    w.settings = dataclasses.replace(w.settings, argocd=dataclasses.replace(
        w.settings.argocd, tenant_projects=False))
    w.sync()
    assert app(w, "etl-batch")["spec"]["project"] == w.settings.argocd.project
    assert set(projects(w)) == set(PROJECTS.values())
    w.sync()
    assert projects(w) == {}


def test_an_unchanged_application_is_parsed_once(tmp_path: Path, monkeypatch: Any) -> None:
    """The render cache keeps what each Application blob needs: a run that changes nothing parses
    none, and one that changes a cluster parses only its new Application."""
    from trinogen import appprojects

    docs = example_docs()
    w = make_world(tmp_path, docs)
    w.sync()
    parsed: list[bytes] = []
    real = appprojects.app_use

    def counting(content: bytes) -> Any:
        parsed.append(content)
        return real(content)

    monkeypatch.setattr(appprojects, "app_use", counting)
    w.sync()
    assert parsed == []
    new = {"_id": "n1", "clusterId": "growth-new", "owner": "growth_analytics", "enabled": True}
    w.mongo.coll.insert_one(dict(new))
    w.sync()
    assert [yaml.safe_load(p)["metadata"]["name"] for p in parsed] == ["trino-growth-new"]
    assert destinations(projects(w)["growth"]) == expected(w, docs + [new], "growth_analytics")
