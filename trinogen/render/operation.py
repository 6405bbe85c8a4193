"""What a cluster's operation choices put into values.yaml: the shutdown budget and scale-in
behaviour (placement and the disruption option are kinds of their own: trinogen/kinds/).

Pure: plain data for the templates. `pod_labels` are the labels the chart puts on a role's pods
(its `trino.selectorLabels` plus `app.kubernetes.io/component`), which the placements' topology
spread and the disruption budgets select.
"""

from __future__ import annotations

from typing import Any

from trinogen.model import Cluster
from trinogen.model.shutdown import scale_down, termination_grace


def pod_labels(cluster_id: str, role: str, chart: str) -> dict[str, str]:
    """The labels the chart's Deployment of `role` selects its pods by (_helpers.tpl)."""
    return {"app.kubernetes.io/name": chart, "app.kubernetes.io/instance": cluster_id,
            "app.kubernetes.io/component": role}


def values_context(cluster: Cluster) -> dict[str, Any]:
    """Template variables of values.yaml.j2 for shutdown and scale-in."""
    grace, drain = cluster.grace_period_seconds, cluster.drain_seconds
    budget = termination_grace(grace, grace if drain is None else drain) if grace else None
    return {
        "termination_grace": budget,
        # Only for an autoscaled cluster whose workers drain: without graceful shutdown a worker
        # is killed after 30 s anyway, and Kubernetes' default behaviour stays as it was.
        "scale_down": scale_down(budget) if budget and cluster.autoscaling else None,
    }
