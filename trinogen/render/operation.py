"""What a cluster's operation choices put into its files: placement in values.yaml, the
shutdown budget and scale-in behaviour (the disruption option's rollout and budgets are its
kind's: trinogen/kinds/disruption/values.py).

Pure: plain data for the templates. Topology spread (and the disruption budgets) select the pods
by the labels the chart puts on them (its `trino.selectorLabels` plus
`app.kubernetes.io/component`): `pod_labels`.
"""

from __future__ import annotations

from typing import Any

from trinogen.model import Cluster
from trinogen.model.shutdown import scale_down, termination_grace

ROLES = ("coordinator", "worker")


def pod_labels(cluster: Cluster, role: str, chart: str) -> dict[str, str]:
    """The labels the chart's Deployment of `role` selects its pods by (_helpers.tpl)."""
    return {"app.kubernetes.io/name": chart, "app.kubernetes.io/instance": cluster.cluster_id,
            "app.kubernetes.io/component": role}


def values_context(cluster: Cluster, chart: str) -> dict[str, Any]:
    """Template variables of values.yaml.j2 for placement, shutdown and scale-in."""
    grace, drain = cluster.grace_period_seconds, cluster.drain_seconds
    budget = termination_grace(grace, grace if drain is None else drain) if grace else None
    return {
        "placement": {role: _placement(cluster, role, chart) for role in ROLES},
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
    # option cannot name the release, so it gets this cluster's workers. A label its
    # matchLabelKeys names is left out: the API server adds that one from the pod itself (the
    # same value), and refuses a pod whose selector has it already (issue 20).
    for constraint in values.get("topologySpreadConstraints", []):
        if "labelSelector" not in constraint:
            named = set(constraint.get("matchLabelKeys", []))
            constraint["labelSelector"] = {"matchLabels": {
                k: v for k, v in pod_labels(cluster, role, chart).items() if k not in named}}
    return values
