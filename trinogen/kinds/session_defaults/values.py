"""The chart's `sessionProperties:` values (templates/values/session_defaults.yaml.j2).

Pure: the chart writes `sessionPropertiesConfig` into the coordinator's ConfigMap without
Helm's `tpl` (templates/configmap-coordinator.yaml), so the JSON needs no escaping.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.session_defaults.document import SessionDefaults
from trinogen.model.session_defaults import chart_values
from trinogen.settings import Settings


def values(part: SessionDefaults, s: Settings) -> dict[str, Any] | None:
    """The template variable `session_defaults`: {type: configmap, sessionPropertiesConfig},
    or None when the cluster has no entries."""
    del s
    return chart_values(part.entries) or None
