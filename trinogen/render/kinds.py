"""The chart values of the option kinds in `trinogen.kinds.HOMED`: one template variable each,
and `coordinator_files`, the files they add (coordinator.additionalConfigFiles), with the
authentication kind's (picked by model/document.py, not through `HOMED`: its variable
`authentication` is set here from `trinogen.kinds.authentication.values`); `role_files`
adds the spooling manager to both roles (`worker_files`); and the
objects of their own they add under manifests/ (`kind_manifests`).

Every homed kind's variable is set (None when the cluster picked none of it, which its template
fragment skips, or writes the values of no pick: `disruption`); a kind's `values` module is
imported only for a cluster that picked it. Pure: Cluster and settings in, plain values for the
template out.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, ROLES, module
from trinogen.model import AccessControl, Authentication, Cluster
from trinogen.render.escape import helm_escape
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import Manifest, ManifestsModule, ValuesModule


def kind_values(cluster: Cluster, s: Settings) -> dict[str, Any]:
    """`{kind: its template variable}` for every homed kind, and `coordinator_files`."""
    out: dict[str, Any] = dict.fromkeys(HOMED)
    for kind, part in cluster.kinds:
        values = cast("ValuesModule", importlib.import_module(module(kind, "values")))
        out[kind] = values.values(part, s)
    out["authentication"] = None
    if cluster.authentication is not None:  # picked by model/document.py, not through HOMED
        out["authentication"] = _authentication().values(cluster.authentication, s)
    # The chart runs each file through Helm's tpl: written so it arrives as given.
    files = {name: helm_escape(text) for _, name, text in added_files(cluster, "coordinator")}
    out["coordinator_files"] = files or None
    return out


def added_files(cluster: Cluster, role: str) -> list[tuple[str, str, str]]:
    """(document field, name, text as Trino reads it) of each file the option kinds add to a
    role's /etc/trino through the chart's additionalConfigFiles, the LDAP authenticator's among
    them (the spooling manager aside: `role_files`). render/objects.py measures them too."""
    out = [(HOMED[kind], name, text) for kind, part in cluster.kinds
           for name, text in (part.files if role == "coordinator"
                              else getattr(part, "worker_files", ()))]
    auth = cluster.authentication
    if role == "coordinator" and auth is not None:  # LDAP's authenticator file, or none
        out += [("authentication", name, text) for name, text in _authentication().files(auth)]
    return out


def _authentication() -> Any:
    """The authentication kind's `values` module, imported only for a cluster that picked an
    option of it."""
    return importlib.import_module("trinogen.kinds.authentication.values")


def added_file_sizes(cluster: Cluster, role: str) -> list[tuple[str, str, int]]:
    """(document field, "file <name>", bytes) of `added_files`, as the API server counts them
    in the role's ConfigMap (the chart writes each as a `|` block: its text as it is)."""
    return [(field, f"file {name}", len(text.encode("utf-8", "surrogatepass")))
            for field, name, text in added_files(cluster, role)]


def role_files(kinds: dict[str, Any], spooling: Sequence[str]) -> dict[str, Any]:
    """Each role's additionalConfigFiles: the kinds' files on the coordinator, and the client
    spooling protocol's manager (trinogen.model.spooling) on both roles (Trino reads
    etc/spooling-manager.properties on every node)."""
    coordinator = dict(kinds["coordinator_files"] or {})
    worker: dict[str, str] = {}
    if spooling:
        from trinogen.model.spooling import MANAGER_FILE  # only for a cluster that spools

        text = helm_escape("\n".join(spooling) + "\n")
        coordinator[MANAGER_FILE] = worker[MANAGER_FILE] = text
    return {"coordinator_files": coordinator or None, "worker_files": worker or None}


def kind_objects(cluster: Cluster, full: str) -> list[tuple[str, str, str, str]]:
    """(kind, name, maker, field) of the objects the hatch kinds make the chart create
    (render/objects.py lists them with the others, so no other object takes a name; a kind's
    own manifests are listed from `kind_manifests`)."""
    if cluster.kind("network_policies") is None:
        return []
    return [("NetworkPolicy", full, "the chart", "networkPolicy"),
            ("Pod", f"{full}-test-networkpolicy", "the chart (a helm test hook)", "networkPolicy")]


def kind_texts(cluster: Cluster) -> list[str]:
    """The texts the kinds put into the coordinator's ConfigMap through the chart (its
    resource-groups JSON, its session property defaults), for `objects.size_bound`."""
    groups = cluster.kind("resource_groups")
    return ([groups.text] if groups is not None else []) + session_lines(cluster)


def session_lines(cluster: Cluster) -> list[str]:
    """The session_defaults kind's JSON, as lines (ASCII), or none."""
    return [] if (part := cluster.kind("session_defaults")) is None else part.json_lines()


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


def legacy_values(kinds: dict[str, Any], auth: Authentication | None) -> dict[str, Any]:
    """The variables a values.yaml.j2 written before issue 21 reads (an override in
    output.templates_dir): `service_account`, `placement` (for every cluster: the kind's
    variable, or {role: {}} without a pick), `coordinator_strategy` and
    `coordinator_deployment_annotations`, and for an OPA pick an `access_control` without
    rules (its `elif access_control` branch) with the properties' text in `access_properties`,
    and `auth`, the cluster's `Authentication` (None without a pick)."""
    opa, disruption = kinds["opa"], kinds["disruption"]
    out: dict[str, Any] = {"service_account": kinds["service_accounts"],
                           # role -> its chart keys, {} for a role without a placement
                           "placement": kinds["placement"] or {role: {} for role in ROLES},
                           "access_properties": opa["properties"] if opa else None,
                           # what values/disruption.yaml.j2 writes, read by the role loop
                           "coordinator_strategy": (disruption["strategy"] if disruption
                                                    else {"type": "RollingUpdate"}),
                           "coordinator_deployment_annotations": (disruption["annotations"]
                                                                  if disruption else None),
                           "auth": auth}
    if opa:  # the rules and an OPA pick exclude each other (model/access.py): no rules here
        out["access_control"] = AccessControl()
    return out
