"""`service: "<name>"`: a document (or its profile) picks a Service option; its annotations are
filled, and it is judged with the cluster's other picks (a NodePort with a network policy is an
error, an exposed Service without authentication a warning).

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.kinds.services.options import conflicts
from trinogen.model.checker import Checker
from trinogen.settings import Settings
from trinogen.settings.options import metadata

if TYPE_CHECKING:
    from trinogen.kinds.services.options import ServiceOption

FIELD = "service"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Service:
    type: str
    annotations: Lines = ()
    config: Lines = ()
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: ServiceOption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Service | None:
    """The cluster's Service values, or None when they cannot go with its other picks."""
    annotations, wrong = metadata.filled_pairs(option.annotations, cluster_id, owner,
                                               labels=False)
    errors, warnings = conflicts(option, network_policy=d.get("networkPolicy") is not None,
                                 authenticated=d.get("authentication") is not None)
    if wrong:
        errors.append(f"annotation {wrong} (filled in from this cluster's clusterId and owner)")
    for message in warnings:
        c.warn(FIELD, message)
    for message in errors:
        c.error(FIELD, message)
    return None if errors else Service(option.type, annotations)
