"""`resourceGroups`: a platform policy by name, or the document's own groups, for its cluster.

`"resourceGroups": "shared"` picks a `resource_groups` option of the settings;
`"resourceGroups": {"rootGroups": [...], "selectors": [...]}` gives the cluster its own, as
`accessControl.rules` gives it its own access rules. Either is checked against Trino 476's file
manager schema (`trinogen.model.resource_groups`) and becomes the coordinator's
resource-groups.json; it applies to this cluster only. A tenant or profile that requires the
kind requires a policy: own groups then fail at `resourceGroups` (`trinogen.model.tenancy`).

Pure: the option is the settings', the groups the document's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker
from trinogen.model.kinds import Own
from trinogen.model.resource_groups import check_resource_groups, to_json
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.resource_groups.options import ResourceGroupsOption

FIELD = "resourceGroups"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ResourceGroups:
    """The coordinator's resource-groups.json (the chart writes resource-groups.properties)."""

    text: str  # resource-groups.json
    config: Lines = ()  # no config.properties lines: Trino reads etc/resource-groups.properties
    coordinator: Lines = ()
    files: Lines = ()  # the chart mounts the JSON itself (resourceGroups.resourceGroupsConfig)


def fill(option: ResourceGroupsOption | Own, cluster_id: str, owner: str, d: Mapping[str, Any],
         s: Settings, c: Checker) -> ResourceGroups | None:
    """The cluster's resource groups, or None when they are invalid (reported)."""
    del cluster_id, owner, d, s  # the groups hold everything; nothing is filled in
    if isinstance(option, Own):
        spec = check_resource_groups(option.value, FIELD, c)
        return None if spec is None else ResourceGroups(to_json(spec))
    # The platform's policy, checked here (a problem names resource_groups.<name>.<field>)
    spec = check_resource_groups(json.loads(option.spec_json), option.at, c)
    return None if spec is None else ResourceGroups(to_json(spec))
