"""`disruption:` options: how voluntary disruptions may touch a cluster (issue 14, item 3).

    disruption:
      standard:
        worker_max_unavailable: 1        # or a percentage, "25%"
        coordinator_max_unavailable: 1   # 0: a node drain waits until a person moves it
        coordinator_rollout: Recreate    # or RollingUpdate (the chart's default)

A document that picks one (`"disruption": "standard"`) gets a PodDisruptionBudget for its
workers and one for its coordinator (under `manifests/`, deployed by its Application) and the
coordinator Deployment's strategy (a Recreate one with Argo CD's `Replace=true`: see
trinogen/kinds/disruption/values.py). Every field has a default, so `standard: {}` is valid. To give
every cluster one, name it in the settings' `defaults` (`defaults: {disruption: standard}`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.settings.options import kube

# A PDB's percentage as the API server reads it (digits, so "07%" is 7%), at most 100%.
_PERCENT = re.compile(r"([0-9]{1,9})%")
ROLLOUTS = ("Recreate", "RollingUpdate")


@dataclass(frozen=True)
class Disruption:
    worker_max_unavailable: int | str = 1  # a count or "N%" (a PDB's intOrString)
    coordinator_max_unavailable: int = 1
    # Recreate: the old coordinator stops before the new one starts, so there are never two
    # (workers would announce themselves to both through the one discovery Service).
    coordinator_rollout: str = "Recreate"


def parse(where: str, raw: Mapping[str, Any]) -> Disruption:
    """One `disruption.<name>` entry; ConfigError names `disruption.<name>.<field>`."""
    kube.mapping(raw, where, {"worker_max_unavailable", "coordinator_max_unavailable",
                              "coordinator_rollout"})
    out = Disruption()
    worker = raw.get("worker_max_unavailable", out.worker_max_unavailable)
    at = f"{where}.worker_max_unavailable"
    if isinstance(worker, str):
        m = _PERCENT.fullmatch(worker)
        if m is None or not 1 <= int(m.group(1)) <= 100:
            raise kube.fail(at, f"{worker!r} is not a percentage from 1% to 100%")
    else:
        # 0 would block every node drain for good; a platform that wants that says so per node.
        kube.whole(worker, at, 1, 1000)
    coordinator = kube.whole(raw.get("coordinator_max_unavailable", 1),
                             f"{where}.coordinator_max_unavailable", 0, 1)
    rollout = kube.choice(raw.get("coordinator_rollout", out.coordinator_rollout),
                          f"{where}.coordinator_rollout", ROLLOUTS)
    return Disruption(worker, coordinator, rollout)
