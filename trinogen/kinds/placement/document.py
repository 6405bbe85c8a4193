"""`clusterConfig.<role>.placement: "<name>"`: each role picks where its pods may run.

Pure: the options are the settings' and were checked when they were read; the coordinator's
pick is checked against what the chart does for it where it is read (`model/operation.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.placement.options import Placement

FIELD = "clusterConfig.{role}.placement"
Lines = tuple[tuple[str, str], ...]
RolePicks = tuple[tuple[str, "Placement | None"], ...]  # (role, its pick), both roles


@dataclass(frozen=True)
class Placements:
    """The placement each role picked (a role absent: the chart's, anywhere); the spread
    constraints' pod selector names the cluster (`cluster_id`)."""

    cluster_id: str
    roles: tuple[tuple[str, Placement], ...]  # (role, its option), in ROLES order
    config: Lines = ()  # no Trino properties, no files
    coordinator: Lines = ()
    files: Lines = ()

    def of(self, role: str) -> Placement | None:
        """The option `role` picked, or None."""
        return dict(self.roles).get(role)


def fill(option: RolePicks, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Placements:
    """The cluster's placements: each role's pick as it is (an option holds no pattern)."""
    del owner, d, s, c
    return Placements(cluster_id, tuple((role, p) for role, p in option if p is not None))
