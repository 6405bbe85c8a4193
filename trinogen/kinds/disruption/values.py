"""What a disruption option puts into a cluster's files: the coordinator Deployment's strategy
in values.yaml (templates/values/disruption.yaml.j2) and a PodDisruptionBudget per role under
manifests/ (poddisruptionbudget.yaml.j2).

Pure: plain data for the templates. The PDBs select the pods by the labels the chart puts on
them (its `trino.selectorLabels` plus `app.kubernetes.io/component`).
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds import ROLES
from trinogen.kinds.disruption.document import Budgets
from trinogen.kinds.protocol import Manifest
from trinogen.model import Cluster
from trinogen.render.names import chart_fullname
from trinogen.render.operation import pod_labels
from trinogen.settings import Settings

# Argo CD's sync option for a Recreate coordinator (see `values`).
REPLACE = {"argocd.argoproj.io/sync-options": "Replace=true"}


def values(part: Budgets, s: Settings) -> dict[str, Any]:
    """The template variable `disruption`: the coordinator Deployment's strategy, and the Argo
    CD sync option a Recreate one needs (None for RollingUpdate).

    `Replace=true` makes Argo CD replace (PUT) this one Deployment instead of its server-side
    apply, which cannot switch a running Deployment to `Recreate`: the `rollingUpdate` the API
    server defaulted belongs to no field manager, so apply keeps it and the API server refuses
    the pair. After a replace, `strategy.type` belongs to the replace's manager, so a later apply
    that names no strategy would leave `Recreate` in place: the type is therefore always written,
    `RollingUpdate` for a cluster that picked no option (the fragment's own default, the chart's
    spelled out). Issue 20; proven in tests/test_kube_strategy.py, documented in
    docs/kubernetes.md.
    """
    del s  # the option holds everything
    rollout = part.coordinator_rollout
    return {"strategy": {"type": rollout},
            "annotations": REPLACE if rollout == "Recreate" else None}


def manifests(part: Budgets, cluster: Cluster, s: Settings) -> tuple[Manifest, ...]:
    """A PodDisruptionBudget for each role, `manifests/pdb-<role>.yaml`."""
    chart = s.chart.name
    fullname = chart_fullname(cluster.cluster_id, chart)
    limits = {"coordinator": part.coordinator_max_unavailable,
              "worker": part.worker_max_unavailable}
    out = []
    for role in ROLES:
        name = f"{fullname}-{role}"[:63].removesuffix("-")
        out.append(Manifest(f"pdb-{role}.yaml", "poddisruptionbudget.yaml.j2",
                            {"name": name, "max_unavailable": limits[role],
                             "selector": pod_labels(cluster.cluster_id, role, chart)},
                            "PodDisruptionBudget", name))
    return tuple(out)
