"""What a cluster's operation choices put into its files: placement and rollout in values.yaml,
the shutdown budget and scale-in behaviour, and its PodDisruptionBudgets under manifests/.

Pure: plain data for the templates. The PDBs and topology spread select the pods by the labels
the chart puts on them (its `trino.selectorLabels` plus `app.kubernetes.io/component`).
"""

from __future__ import annotations

from typing import Any

from trinogen.model import Cluster
from trinogen.model.shutdown import scale_down, termination_grace
from trinogen.render.names import chart_fullname

ROLES = ("coordinator", "worker")


def pod_labels(cluster: Cluster, role: str, chart: str) -> dict[str, str]:
    """The labels the chart's Deployment of `role` selects its pods by (_helpers.tpl)."""
    return {"app.kubernetes.io/name": chart, "app.kubernetes.io/instance": cluster.cluster_id,
            "app.kubernetes.io/component": role}


def values_context(cluster: Cluster, chart: str) -> dict[str, Any]:
    """Template variables of values.yaml.j2 for placement, rollout, shutdown and scale-in."""
    grace, drain = cluster.grace_period_seconds, cluster.drain_seconds
    budget = termination_grace(grace, grace if drain is None else drain) if grace else None
    return {
        "placement": {role: _placement(cluster, role, chart) for role in ROLES},
        "coordinator_strategy": ({"type": cluster.disruption.coordinator_rollout}
                                 if cluster.disruption else None),
        "termination_grace": budget,
        # Only for an autoscaled cluster whose workers drain: without graceful shutdown a worker
        # is killed after 30 s anyway, and Kubernetes' default behaviour stays as it was.
        "scale_down": scale_down(budget) if budget and cluster.autoscaling else None,
    }


def _placement(cluster: Cluster, role: str, chart: str) -> dict[str, Any]:
    picked = cluster.coordinator_placement if role == "coordinator" else cluster.worker_placement
    if picked is None:
        return {}
    values = picked.values()
    # A spread constraint without a labelSelector would count no pods at all; the platform's
    # option cannot name the release, so it gets this cluster's workers. A key the option names
    # in matchLabelKeys is left out: the API server adds it with each pod's own value, and
    # refuses a Pod whose key is in both (issue 20).
    for constraint in values.get("topologySpreadConstraints", []):
        if "labelSelector" not in constraint:
            keys = set(constraint.get("matchLabelKeys", ()))
            labels = {k: v for k, v in pod_labels(cluster, role, chart).items() if k not in keys}
            constraint["labelSelector"] = {"matchLabels": labels}
    return values


def disruption_budgets(cluster: Cluster, chart: str) -> dict[str, dict[str, Any]]:
    """Role -> the template variables of its PodDisruptionBudget (none without a choice)."""
    d = cluster.disruption
    if d is None:
        return {}
    fullname = chart_fullname(cluster.cluster_id, chart)
    limits = {"coordinator": d.coordinator_max_unavailable, "worker": d.worker_max_unavailable}
    return {role: {"name": f"{fullname}-{role}"[:63].removesuffix("-"),
                   "max_unavailable": limits[role],
                   "selector": pod_labels(cluster, role, chart)}
            for role in ROLES}
