"""The chart values of the option kinds in `trinogen.kinds.HOMED`: one template variable each,
and `coordinator_files`, the files they add (coordinator.additionalConfigFiles); and the
objects of their own they add under manifests/ (`kind_manifests`).

Every homed kind's variable is set (None when the cluster picked none of it, which its template
fragment skips, or writes the values of no pick: `disruption`); a kind's `values` module is
imported only for a cluster that picked it. Pure: Cluster and settings in, plain values for the
template out.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, ROLES, module
from trinogen.model import AccessControl, Cluster
from trinogen.render.escape import helm_escape
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import Manifest, ManifestsModule, ValuesModule


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


def kind_manifests(cluster: Cluster, s: Settings) -> tuple[tuple[str, Manifest], ...]:
    """(kind, object) of each object the picked kinds add under manifests/, kind by kind: what
    their `values` modules' `manifests` return (a kind without one adds none)."""
    out: tuple[tuple[str, Manifest], ...] = ()
    for kind, part in cluster.kinds:
        values = importlib.import_module(module(kind, "values"))
        if hasattr(values, "manifests"):
            out += tuple((kind, m) for m in
                         cast("ManifestsModule", values).manifests(part, cluster, s))
    return out


def legacy_values(kinds: dict[str, Any]) -> dict[str, Any]:
    """The variables a values.yaml.j2 written before issue 21 reads (an override in
    output.templates_dir): `service_account`, `placement` (for every cluster: the kind's
    variable, or {role: {}} without a pick), `coordinator_strategy` and
    `coordinator_deployment_annotations`, and for an OPA pick an `access_control` without
    rules (its `elif access_control` branch) with the properties' text in `access_properties`."""
    opa, disruption = kinds["opa"], kinds["disruption"]
    out: dict[str, Any] = {"service_account": kinds["service_accounts"],
                           # role -> its chart keys, {} for a role without a placement
                           "placement": kinds["placement"] or {role: {} for role in ROLES},
                           "access_properties": opa["properties"] if opa else None,
                           # what values/disruption.yaml.j2 writes, read by the role loop
                           "coordinator_strategy": (disruption["strategy"] if disruption
                                                    else {"type": "RollingUpdate"}),
                           "coordinator_deployment_annotations": (disruption["annotations"]
                                                                  if disruption else None)}
    if opa:  # the rules and an OPA pick exclude each other (model/access.py): no rules here
        out["access_control"] = AccessControl()
    return out
