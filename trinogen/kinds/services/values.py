"""The chart's `service` of a cluster's Service option (templates/values/services.yaml.j2).

Pure. The chart writes the annotations with toYaml, without tpl: nothing to escape.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.services.document import Service
from trinogen.settings import Settings


def values(part: Service, s: Settings) -> dict[str, Any]:
    """The template variable `services`."""
    del s
    return {"type": part.type, "annotations": dict(part.annotations)}
