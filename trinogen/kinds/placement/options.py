"""`placement:` options: where a role's pods may run (issue 14, item 2).

    placement:
      spot-workers:
        nodeSelector: {node.kubernetes.io/lifecycle: spot}
        tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
        affinity: {nodeAffinity: {...}}
        topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,
                                     whenUnsatisfiable: ScheduleAnyway}]
        priorityClassName: trino-batch

The fields are pod-spec fields under their Kubernetes names, copied into the chart's
`<role>.nodeSelector`, `.tolerations`, `.affinity`, `.topologySpreadConstraints` (the chart has it
for workers only) and `.priorityClassName`. A document picks one per role with
`clusterConfig.<role>.placement`. Priority classes are named here only: a document cannot name
one, so it cannot give itself a priority the platform did not offer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.settings.options import kube

FIELDS = {"nodeSelector", "tolerations", "affinity", "topologySpreadConstraints",
          "priorityClassName"}


@dataclass(frozen=True)
class Placement:
    """One placement option, as plain data ready for the chart's values."""

    node_selector: Mapping[str, str]
    tolerations: tuple[Mapping[str, Any], ...]
    affinity: Mapping[str, Any]
    topology_spread: tuple[Mapping[str, Any], ...]
    priority_class: str | None

    def values(self) -> dict[str, Any]:
        """The chart keys of one role that this option sets (empty ones left out)."""
        out: dict[str, Any] = {}
        if self.node_selector:
            out["nodeSelector"] = dict(self.node_selector)
        if self.tolerations:
            out["tolerations"] = [dict(t) for t in self.tolerations]
        if self.affinity:
            out["affinity"] = dict(self.affinity)
        if self.topology_spread:
            out["topologySpreadConstraints"] = [dict(t) for t in self.topology_spread]
        if self.priority_class:
            out["priorityClassName"] = self.priority_class
        return out


def parse(where: str, raw: Mapping[str, Any]) -> Placement:
    """One `placement.<name>` entry; ConfigError names `placement.<name>.<field>`."""
    kube.mapping(raw, where, FIELDS)
    if not any(raw.get(k) for k in FIELDS):
        raise kube.fail(where, f"sets nothing: give at least one of {', '.join(sorted(FIELDS))}")
    selector = kube.labels(raw.get("nodeSelector") or {}, f"{where}.nodeSelector")
    tolerations = kube.listing(raw.get("tolerations") or [], f"{where}.tolerations",
                               kube.toleration)
    affinity = kube.affinity(raw.get("affinity") or {}, f"{where}.affinity")
    spread = kube.spread_constraints(raw.get("topologySpreadConstraints") or [],
                                     f"{where}.topologySpreadConstraints")
    priority = _priority_class(raw.get("priorityClassName"), f"{where}.priorityClassName")
    return Placement(
        node_selector=selector,
        tolerations=tuple(_plain(t) for t in tolerations),
        affinity=_plain(affinity),
        topology_spread=tuple(_plain(t) for t in spread),
        priority_class=priority,
    )


def _priority_class(value: Any, where: str) -> str | None:
    if value is None:
        return None
    name = kube.dns_subdomain(value, where)
    if name.startswith("system-"):
        # Kubernetes reserves the prefix for its own classes (system-node-critical,
        # system-cluster-critical), which rank above every workload. A bare kube-apiserver
        # admits them in any namespace (tests/test_kube_rules.py); only a ResourceQuota limits
        # them, so trinogen does: a Trino pod must not preempt cluster components.
        raise kube.fail(where, f"{name!r}: the system- priority classes are Kubernetes' own, "
                        "for cluster components (a Trino pod holding one could preempt them); "
                        "name a PriorityClass of your own")
    return name


def _plain(value: Any) -> Any:
    """A deep copy as JSON data: the option is shared by every cluster that picks it."""
    return json.loads(json.dumps(value))
