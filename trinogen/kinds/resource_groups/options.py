"""`resource_groups:` options: resource-group policies the platform names (issue 21, item 1).

    resource_groups:
      shared:                                   # a Trino resource-groups.json, as it is
        rootGroups:
          - {name: adhoc, softMemoryLimit: 60%, hardConcurrencyLimit: 10, maxQueued: 100,
             subGroups: [{name: "${USER}", hardConcurrencyLimit: 2, maxQueued: 10}]}
          - {name: etl, softMemoryLimit: 40%, hardConcurrencyLimit: 5, maxQueued: 50}
        selectors:
          - {source: ".*airflow.*", group: etl}
          - {group: "adhoc.${USER}"}

Read here for its shape only (the settings layer cannot reach the Java regex judge): the
option's groups are checked against Trino's schema, with the same rules as a document's own,
by `trinogen.kinds.resource_groups.document` when a document picks it; a problem there names
`resource_groups.<name>.<field>`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("rootGroups", "selectors", "cpuQuotaPeriod")  # Trino's ManagerSpec
MAX_BYTES = 256 * 1024  # as a document's own groups (trinogen.model.resource_groups)


@dataclass(frozen=True)
class ResourceGroupsOption:
    at: str  # `resource_groups.<name>`: the field path its problems name
    spec_json: str  # the entry as JSON (frozen; checked when picked)


def parse(where: str, raw: Mapping[str, Any]) -> ResourceGroupsOption:
    """One entry of `resource_groups:`; ConfigError names `resource_groups.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    for key in ("rootGroups", "selectors"):
        if not isinstance(raw.get(key), list) or not raw[key]:
            raise ConfigError(f"{where}.{key}: must be a non-empty list (Trino's "
                              "resource-groups.json: rootGroups and selectors)")
    try:
        text = json.dumps(raw, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: holds a value JSON cannot hold ({e}); write strings, "
                          "numbers, booleans, lists and maps only") from e
    if len(text) > MAX_BYTES:
        raise ConfigError(f"{where}: is {len(text)} bytes as JSON; at most {MAX_BYTES}")
    return ResourceGroupsOption(where.rsplit(": ", 1)[-1], text)  # without the file's name
