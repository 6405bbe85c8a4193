"""The chart values of the option kinds in `trinogen.kinds.HOMED`: one template variable each.

Every homed kind's variable is set (None when the cluster picked none of it, which its template
fragment skips); a kind's `values` module is imported only for a cluster that picked it.
Pure: Cluster and settings in, plain values for the template out.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, module
from trinogen.model import Cluster
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import ValuesModule


def kind_values(cluster: Cluster, s: Settings) -> dict[str, Any]:
    """`{kind: its template variable}` for every homed kind."""
    out: dict[str, Any] = dict.fromkeys(HOMED)
    for kind, part in cluster.kinds:
        values = cast("ValuesModule", importlib.import_module(module(kind, "values")))
        out[kind] = values.values(part, s)
    return out
