"""The security contexts the chart's pods get: Pod Security Standards `restricted`, or the chart's.

The chart writes `securityContext` on every pod it renders and `containerSecurityContext` on the
Trino container of each (chart 1.42.2: runAsUser/runAsGroup 1000, no privilege escalation, all
capabilities dropped). `restricted` adds what the profile also requires (runAsNonRoot, seccomp
RuntimeDefault) and spells everything out, so the promise does not hang on the chart's defaults.
Pure: values only.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from trinogen.render.escape import Constant, yaml_scalar

# uid/gid 1000 is the `trino` user of the trinodb/trino image (the chart's default as well).
# Constants: the same in every cluster's values.yaml, so their YAML is emitted once.
_POD = Constant({
    "runAsUser": 1000,
    "runAsGroup": 1000,
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
})
_CONTAINER = Constant({
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
})


def security_contexts(mode: str) -> Mapping[str, Mapping[str, Any]]:
    """The chart values for `pods.security`, keys sorted: {} keeps the chart's own ("chart")."""
    if mode == "restricted":
        return {"containerSecurityContext": _CONTAINER, "securityContext": _POD}
    return {}


@functools.cache
def security_values(mode: str) -> str:
    """The same values as top-level YAML lines (no trailing newline; "" for "chart"): one text
    for every cluster of a run."""
    return "\n".join(f"{yaml_scalar(k)}: {yaml_scalar(v)}"
                     for k, v in security_contexts(mode).items())
