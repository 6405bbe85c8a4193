"""A fleet change in waves against a real kube-apiserver (issue 20, section 3): twenty clusters,
a chart version bump in three waves. The Application files trinogen commits are applied to the
API server server-side (as Argo CD's app-of-apps would), and Argo CD's view is read back from the
Application objects' `status`.

One stand-in, said here once: the test writes each Application's `status` the way Argo CD's
application controller does (the CRD has no status subresource, so the controller patches the
object; here a merge patch under the controller's field manager). trinogen reads it back with
its own Argo CD reader (`trinogen.argocd.argo_view`, the one `status`, `sync` and `watch` use),
through the API server's kubeconfig."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubeapi import Cluster
from tests.marks import KUBE_API
from tests.test_sync_rollout import ALL, CANARY, EARLY, WAVES, Fleet
from trinogen.argocd import KubeArgoView, argo_view
from trinogen.settings import Settings, replace

pytestmark = KUBE_API

def reader(cluster: Cluster, settings: Settings) -> KubeArgoView:
    """trinogen's own reader of `settings.argocd.namespace`, through the API server's kubeconfig."""
    return argo_view(settings, {"KUBECONFIG": str(cluster.server.kubeconfig)})


class KubeFleet:
    """The Fleet of tests.test_sync_rollout, its Applications living on the real API server."""

    def __init__(self, tmp_path: Path, cluster: Cluster) -> None:
        self.ns = f"argocd-waves-{abs(hash(tmp_path)) % 10**8}"
        self.f = Fleet(tmp_path, {**WAVES, "soak": 0})
        self.f.settings = replace(self.f.settings, argocd={"namespace": self.ns})
        self.cluster = cluster
        cluster.namespace(self.ns)
        self.f.argo = reader(cluster, self.f.settings)  # type: ignore[assignment]

    def deploy(self) -> None:
        """The app-of-apps: every Application file in git, applied server-side."""
        for path, content in sorted(self.f.tree().items()):
            if path.startswith("trino-applications/") and path.endswith(".yaml"):
                self.cluster.apply(yaml.safe_load(content), manager="argocd-controller")

    def controller_reports(self, clusters: set[str] = ALL, health: str = "Healthy",
                           message: str | None = None) -> None:
        """What Argo CD's controller writes after syncing the head: per Application."""
        head = self.f.head()
        for cid in sorted(clusters):
            app = self.cluster.get("argoproj.io/v1alpha1", "Application", f"trino-{cid}",
                                   self.ns)
            sources = app["spec"]["sources"]
            revisions = [head if s.get("ref") == "values" or "chart" not in s
                         else s["targetRevision"] for s in sources]
            patch = {"status": {
                "sync": {"status": "Synced", "revisions": revisions,
                         "comparedTo": {"destination": app["spec"]["destination"]}},
                "health": {"status": health, **({"message": message} if message else {})},
                "operationState": {"operation": {"sync": {"revisions": revisions}},
                                   "phase": "Succeeded", "startedAt": "2026-12-04T12:00:00Z"}}}
            path = self.cluster.path("argoproj.io/v1alpha1", "Application", f"trino-{cid}",
                                     self.ns)
            status, body = self.cluster.server.request(
                "PATCH", path + "?fieldManager=argocd-application-controller", patch,
                content_type="application/merge-patch+json")
            assert status == 200, body

    def step(self, **status: Any) -> Any:
        """Argo CD catches up with the head, then trinogen syncs."""
        self.deploy()
        self.controller_reports(**status)
        return self.f.sync()


@pytest.fixture
def fleet(tmp_path: Path, kube_cluster: Cluster) -> KubeFleet:
    k = KubeFleet(tmp_path, kube_cluster)
    k.f.sync()  # twenty clusters, and the record
    k.deploy()
    k.f.bump_chart()
    k.f.sync()  # wave 1
    return k


def test_a_chart_bump_completes_when_every_application_turns_healthy(fleet: KubeFleet) -> None:
    """Three waves, each released once Argo CD reports the earlier ones Healthy at the head."""
    f = fleet.f
    assert f.on_version() == CANARY
    fleet.step()
    assert f.on_version() == CANARY | EARLY
    fleet.step()
    assert f.on_version() == ALL
    done = fleet.step()
    assert done.rollout["notes"] == ["rollout complete"] and f.record()["rollout"] is None
    live = reader(fleet.cluster, fleet.f.settings).applications()
    assert {a.cluster_id for a in live.values()} == ALL


def test_a_degraded_canary_stops_the_later_waves_until_it_recovers(fleet: KubeFleet) -> None:
    """One wave-1 Application Degraded: waves 2 and 3 stay unchanged in git and the report
    names it; after it recovers (and a person resumes), the rollout completes."""
    f = fleet.f
    held_before = {p: c for p, c in f.tree().items() if "/c0" in p and not any(
        f"/{c}" in p for c in CANARY)}
    fleet.deploy()
    fleet.controller_reports()
    fleet.controller_reports({"c00"}, health="Degraded", message="Deployment exceeded its "
                             "progress deadline")
    halted = f.sync()
    assert halted.rollout["haltedBy"]["cluster"] == "c00"
    assert "progress deadline" in halted.rollout["haltedBy"]["reason"]
    assert f.on_version() == CANARY
    assert {p: c for p, c in f.tree().items() if p in held_before} == held_before
    fleet.deploy()
    fleet.controller_reports()  # recovered
    resumed = f.sync(resume_rollout=True)
    assert resumed.rollout["state"] == "rolling" and f.on_version() == CANARY | EARLY
    fleet.step()
    fleet.step()
    assert f.on_version() == ALL and f.record()["rollout"] is None


def test_kube_argo_reads_what_the_controller_wrote(fleet: KubeFleet) -> None:
    """The reader sees the label, health message and the values source's revision."""
    fleet.controller_reports({"c01"}, health="Progressing", message="rolling")
    view = reader(fleet.cluster, fleet.f.settings).applications()["trino-c01"]
    assert dataclasses.astuple(view)[:7] == ("trino-c01", "c01", view.owner, "Synced",
                                             "Progressing", "rolling", fleet.f.head())
