"""`disruption: "<name>"`: a document picks how voluntary disruptions may touch its cluster.

Pure: the option is the settings' and every field was checked when they were read; the
document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.disruption.options import Disruption

FIELD = "disruption"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Budgets:
    """The cluster's disruption budgets and its coordinator's rollout (the picked option)."""

    worker_max_unavailable: int | str  # a count or "N%" (a PDB's intOrString)
    coordinator_max_unavailable: int
    coordinator_rollout: str  # Recreate | RollingUpdate
    config: Lines = ()  # no Trino properties, no files
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: Disruption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Budgets:
    """The cluster's budgets: the option as it is (it holds no pattern)."""
    del cluster_id, owner, d, s, c
    return Budgets(option.worker_max_unavailable, option.coordinator_max_unavailable,
                   option.coordinator_rollout)
