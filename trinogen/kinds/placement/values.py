"""The pod-spec keys a role's placement sets in its section of values.yaml
(templates/values/placement.yaml.j2, included in each role's section).

Pure: plain data for the template. Topology spread selects the pods by the labels the chart
puts on them (`render.operation.pod_labels`).
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds import ROLES
from trinogen.kinds.placement.document import Placements
from trinogen.render.operation import pod_labels
from trinogen.settings import Settings


def values(part: Placements, s: Settings) -> dict[str, dict[str, Any]]:
    """The template variable `placement`: role -> the chart keys its option sets ({}: none)."""
    return {role: _role(part, role, s.chart.name) for role in ROLES}


def _role(part: Placements, role: str, chart: str) -> dict[str, Any]:
    picked = part.of(role)
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
                k: v for k, v in pod_labels(part.cluster_id, role, chart).items()
                if k not in named}}
    return values
