"""The chart's `env` (templates/values/runtime.yaml.j2) and each role's extra JVM flags
(values.yaml.j2's additionalJVMConfig) of a cluster's runtime option.

Pure. The chart writes `env` and additionalJVMConfig without Helm's tpl: nothing to escape.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.runtime.document import Runtime
from trinogen.settings import Settings


def values(part: Runtime, s: Settings) -> dict[str, Any]:
    """The template variable `runtime`."""
    del s
    return {"env": [{"name": n, "value": v} for n, v in part.env],
            "jvm": {"coordinator": list(part.coordinator_jvm), "worker": list(part.worker_jvm)}}
