"""The coordinator's rollout switches on a running cluster the way Argo CD syncs it (issue 20, §1).

A Deployment first applied without `strategy` (the chart's default) or with `type: RollingUpdate`
gets `strategy.rollingUpdate` (25%/25%) from the API server's defaulting, and no field manager owns
that field. Server-side apply of `type: Recreate` keeps it (apply only removes fields its own
manager owned), and the API server refuses the pair; `rollingUpdate: null` is refused the same way.
trinogen therefore puts `argocd.argoproj.io/sync-options: Replace=true` on a Recreate coordinator
Deployment, and writes the strategy even when no disruption option is picked.

**What stands in for Argo CD** is `argocd_sync` below: the HTTP calls Argo CD's application
controller makes to sync one object, read from its source (gitops-engine, vendored in
argoproj/argo-cd 3.x: `pkg/sync/sync_context.go` `applyObject`, `pkg/utils/kube/resource_ops.go`):
- `Replace=true` in the object's `argocd.argoproj.io/sync-options` annotation takes precedence over
  the Application's `ServerSideApply=true` (also in Argo CD's sync-options docs). An existing
  object is then written by kubectl's `replace` (`ReplaceResource`: `replace.NewReplaceOptions`
  with no field manager and no `--force`), whose `Helper.Replace` GETs the live object when the
  manifest has no `resourceVersion`, copies it, and PUTs the manifest: a full replace, the manager
  named by the API server from the User-Agent. A missing one is created (`kubectl create`: POST).
- Otherwise, with the Application's `ServerSideApply=true` (trinogen's Application has it; this
  test reads it from trinogen's own Application), `ApplyResource` runs `kubectl apply
  --server-side --force-conflicts` as field manager `argocd-controller` with strict field
  validation: one PATCH `application/apply-patch+yaml`.
Argo CD first runs the same tasks as a client-side dry run, which calls no API; and it adds its
tracking annotation to every object it applies, which the stand-in adds too. No
controller-manager runs, so "running" means a Deployment that exists (no Pods are made); the
strategy validation, defaulting and field ownership under test are all the API server's.
The expected strategies come from the options written in tests/operation_support.py and from
Kubernetes' documented default (`RollingUpdate`, `maxSurge` and `maxUnavailable` 25%).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from tests.kubeapi import Cluster, KubeError
from tests.marks import CHART, KUBE_API
from tests.operation_support import DISRUPTIONS, doc, option_settings, through_chart

pytestmark = [*KUBE_API, *CHART]

SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
TRACKING = "argocd.argoproj.io/tracking-id"
DEFAULTED = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
REFUSED = "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is"
# The options of tests/operation_support.py; None is a document that picks none.
RECREATE, ROLLING, NO_OPTION = "strict", "rolling", None


@functools.cache
def rendered(option: str | None, cluster_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(coordinator Deployment as the chart renders it from trinogen's values, the Application)."""
    body = {"disruption": option} if option else {}
    t = through_chart(doc(cluster_id, **body), option_settings())
    app = t.file(f"trino-applications/{cluster_id}.yaml")
    assert app is not None
    return t.deployment("coordinator"), app


def desired(option: str | None, cluster_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    deployment, app = rendered(option, cluster_id)
    return copy.deepcopy(deployment), app


def sync_options(obj: dict[str, Any]) -> set[str]:
    """Argo CD's reading of the annotation: options split at commas, spaces trimmed."""
    raw = (obj["metadata"].get("annotations") or {}).get(SYNC_OPTIONS, "")
    return {part.strip() for part in raw.split(",") if part.strip()}


def argocd_sync(cluster: Cluster, obj: dict[str, Any], app: dict[str, Any]) -> dict[str, Any]:
    """Sync one object as Argo CD's controller does (module docstring); the live object after."""
    target = copy.deepcopy(obj)
    meta = target["metadata"]
    ns, name = meta["namespace"], meta["name"]
    meta.setdefault("annotations", {})[TRACKING] = (
        f"{app['metadata']['name']}:apps/Deployment:{ns}/{name}")
    path = cluster.path("apps/v1", "Deployment", name, ns)
    if "Replace=true" in sync_options(target):
        status, live = cluster.server.request("GET", path)
        if status == 404:  # no live object: `kubectl create` (CreateResource), one POST
            return dict(cluster.create(target))
        meta["resourceVersion"] = live["metadata"]["resourceVersion"]
        status, body = cluster.server.request("PUT", path, target)
        if status != 200:
            raise KubeError(f"replace Deployment/{name}", status, body)
        return dict(body)
    assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"], (
        "this stand-in only knows Argo CD's server-side apply; client-side apply is not modelled")
    return dict(cluster.apply(target, manager="argocd-controller", force=True, strict=True))


def live(cluster: Cluster, obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return dict(cluster.get("apps/v1", "Deployment", meta["name"], meta["namespace"]))


def rollout_of(option: str | None) -> str:
    """The strategy type an option asks for (the option's default is Recreate)."""
    return "RollingUpdate" if option is None else str(
        DISRUPTIONS[option].get("coordinator_rollout", "Recreate"))


def test_the_options_under_test_are_the_two_rollouts() -> None:
    """The options this module switches between ask for Recreate and for RollingUpdate."""
    assert (rollout_of(RECREATE), rollout_of(ROLLING)) == ("Recreate", "RollingUpdate")


@pytest.mark.parametrize("back", [ROLLING, NO_OPTION], ids=["to-rolling", "to-no-option"])
@pytest.mark.parametrize("start", [ROLLING, NO_OPTION], ids=["from-rolling", "from-no-option"])
def test_the_coordinator_switches_to_recreate_and_back(
        kube_cluster: Cluster, start: str | None, back: str | None) -> None:
    """A RollingUpdate coordinator becomes Recreate through Argo CD's sync and returns, twice."""
    cid = f"rc-{start or 'none'}-{back or 'none'}"
    kube_cluster.namespace(f"trino-{cid}")
    first, app = desired(start, cid)
    recreate, _ = desired(RECREATE, cid)
    returned, _ = desired(back, cid)

    created = argocd_sync(kube_cluster, first, app)
    assert created["spec"]["strategy"] == DEFAULTED

    # The plain way: Argo CD's server-side apply of the same object without the sync option.
    plain = copy.deepcopy(recreate)
    plain["metadata"]["annotations"].pop(SYNC_OPTIONS, None)
    with pytest.raises(KubeError, match=REFUSED):
        argocd_sync(kube_cluster, plain, app)
    plain["spec"]["strategy"]["rollingUpdate"] = None
    with pytest.raises(KubeError, match=REFUSED):
        argocd_sync(kube_cluster, plain, app)

    for _ in range(2):
        switched = argocd_sync(kube_cluster, recreate, app)
        assert switched["spec"]["strategy"] == {"type": "Recreate"}
        again = argocd_sync(kube_cluster, recreate, app)  # every later sync replaces it again
        assert again["metadata"]["generation"] == switched["metadata"]["generation"]
        assert argocd_sync(kube_cluster, returned, app)["spec"]["strategy"] == DEFAULTED
        assert live(kube_cluster, returned)["spec"]["strategy"] == DEFAULTED


def test_without_a_written_strategy_a_dropped_option_keeps_recreate(
        kube_cluster: Cluster) -> None:
    """Left to the chart's default, the way back is silently lost: why trinogen writes the type."""
    cid = "rc-chart-default"
    kube_cluster.namespace(f"trino-{cid}")
    chart_default, app = desired(NO_OPTION, cid)
    chart_default["spec"].pop("strategy", None)  # the chart renders none when values name none
    recreate, _ = desired(RECREATE, cid)
    assert argocd_sync(kube_cluster, chart_default, app)["spec"]["strategy"] == DEFAULTED
    argocd_sync(kube_cluster, recreate, app)
    # The replace's manager owns strategy.type now; apply without a strategy leaves it alone.
    assert argocd_sync(kube_cluster, chart_default, app)["spec"]["strategy"] == {
        "type": "Recreate"}


def test_writing_rolling_update_out_changes_no_running_coordinator(kube_cluster: Cluster) -> None:
    """trinogen's explicit RollingUpdate over a chart-default Deployment changes not its generation."""
    cid = "rc-upgrade"
    kube_cluster.namespace(f"trino-{cid}")
    written, app = desired(NO_OPTION, cid)
    chart_default = copy.deepcopy(written)
    chart_default["spec"].pop("strategy", None)
    before = argocd_sync(kube_cluster, chart_default, app)
    after = argocd_sync(kube_cluster, written, app)
    assert after["spec"]["strategy"] == DEFAULTED
    assert after["metadata"]["generation"] == before["metadata"]["generation"]


def test_a_replace_sync_drops_a_restart_made_outside_git(kube_cluster: Cluster) -> None:
    """A replace keeps nothing others wrote: a rollout restart's annotation goes, and the pods roll."""
    cid = "rc-restart"
    kube_cluster.namespace(f"trino-{cid}")
    recreate, app = desired(RECREATE, cid)
    argocd_sync(kube_cluster, recreate, app)
    restart = {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": "2026-12-04T21:00:00Z"}}}}}
    path = kube_cluster.path("apps/v1", "Deployment", recreate["metadata"]["name"], f"trino-{cid}")
    status, restarted = kube_cluster.server.request(  # what `kubectl rollout restart` sends
        "PATCH", path + "?fieldManager=kubectl-rollout", restart,
        content_type="application/strategic-merge-patch+json")
    assert status == 200, restarted
    after = argocd_sync(kube_cluster, recreate, app)
    annotations = after["spec"]["template"]["metadata"].get("annotations") or {}
    assert "kubectl.kubernetes.io/restartedAt" not in annotations
    assert after["metadata"]["generation"] == restarted["metadata"]["generation"] + 1
