"""The chart values of the option kinds in `trinogen.kinds.HOMED`: one template variable each,
and `coordinator_files`, the files they add (coordinator.additionalConfigFiles).

Every homed kind's variable is set (None when the cluster picked none of it, which its template
fragment skips); a kind's `values` module is imported only for a cluster that picked it.
Pure: Cluster and settings in, plain values for the template out.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, module
from trinogen.model import AccessControl, Cluster
from trinogen.render.escape import helm_escape
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import ValuesModule


def kind_values(cluster: Cluster, s: Settings) -> dict[str, Any]:
    """`{kind: its template variable}` for every homed kind, and `coordinator_files`."""
    out: dict[str, Any] = dict.fromkeys(HOMED)
    files: dict[str, str] = {}
    for kind, part in cluster.kinds:
        values = cast("ValuesModule", importlib.import_module(module(kind, "values")))
        out[kind] = values.values(part, s)
        # The chart runs each file through Helm's tpl: written so it arrives as given.
        files.update((name, helm_escape(text)) for name, text in part.files)
    out["coordinator_files"] = files or None
    return out


def legacy_values(kinds: dict[str, Any]) -> dict[str, Any]:
    """The variables a values.yaml.j2 written before issue 21 reads (an override in
    output.templates_dir): `service_account`, and for an OPA pick an `access_control` without
    rules (its `elif access_control` branch) with the properties' text in `access_properties`."""
    opa = kinds["opa"]
    out: dict[str, Any] = {"service_account": kinds["service_accounts"],
                           "access_properties": opa["properties"] if opa else None}
    if opa:  # the rules and an OPA pick exclude each other (model/access.py): no rules here
        out["access_control"] = AccessControl()
    return out
