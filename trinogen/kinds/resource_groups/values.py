"""The chart's `resourceGroups:` values (templates/values/resource_groups.yaml.j2).

Pure: the chart writes resource-groups.properties (`resource-groups.configuration-manager=file`,
the config file's path) and mounts `resourceGroupsConfig` on the coordinator only, without
`tpl`, so the JSON goes as checked.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.resource_groups.document import ResourceGroups
from trinogen.settings import Settings


def values(part: ResourceGroups, s: Settings) -> dict[str, Any]:
    """The template variable `resource_groups`: the file manager's JSON."""
    del s
    return {"type": "configmap", "resourceGroupsConfig": part.text}
