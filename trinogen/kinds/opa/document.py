"""`accessControl: {opa: "<name>"}`: a document hands its coordinator's authorization to an OPA
endpoint the platform names; the option's URIs and flags become Trino's OPA plugin properties.

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.opa.options import OpaOption

FIELD = "accessControl.opa"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Opa:
    """The coordinator's access-control.properties: the OPA plugin and the option's properties."""

    properties: Lines  # access-control.name=opa first, then the option's, in its fixed order
    config: Lines = ()  # nothing in config.properties, no files
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: OpaOption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Opa:
    """The cluster's OPA access control (an option holds no pattern: nothing to check)."""
    del cluster_id, owner, d, s, c
    return Opa((("access-control.name", "opa"), *option.properties))
