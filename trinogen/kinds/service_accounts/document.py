"""`serviceAccount: "<name>"`: a document picks a workload identity; the ServiceAccount name,
its annotations and the pod labels come from the settings, filled with the cluster's clusterId
(and owner) and checked again as Kubernetes names and labels.

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker, show
from trinogen.settings import Settings
from trinogen.settings.options import metadata

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.service_accounts.options import ServiceAccountOption

FIELD = "serviceAccount"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ServiceAccount:
    """The workload identity a cluster runs as: a settings profile filled for this cluster."""

    name: str  # the ServiceAccount the chart creates; both Deployments use it
    annotations: tuple[tuple[str, str], ...] = ()  # on the ServiceAccount (IRSA, GKE, Azure)
    pod_labels: tuple[tuple[str, str], ...] = ()  # on both roles' pods (Azure's webhook)
    config: Lines = ()  # no Trino properties, no files
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: ServiceAccountOption, cluster_id: str, owner: str, d: Mapping[str, Any],
         s: Settings, c: Checker) -> ServiceAccount | None:
    """The cluster's ServiceAccount, or None when a filled-in value is invalid (reported)."""
    del d, s  # the option holds everything
    name = metadata.fill(option.name, cluster_id, owner)
    problems = []
    wrong = metadata.object_name(name)
    if wrong:
        problems.append(f"the ServiceAccount name {show(name)} is not valid: {wrong}")
    annotations, wrong = metadata.filled_pairs(option.annotations, cluster_id, owner, labels=False)
    problems += [f"annotation {wrong}"] if wrong else []
    labels, wrong = metadata.filled_pairs(option.pod_labels, cluster_id, owner, labels=True)
    problems += [f"pod label {wrong}"] if wrong else []
    for problem in problems:
        c.error(FIELD, f"{problem} (filled in from this cluster's clusterId and "
                "owner); pick another option or ask the platform team to change it")
    return None if problems else ServiceAccount(name, annotations, labels)
