"""The chart values of the option kinds in `trinogen.kinds.HOMED`: one template variable each,
and `coordinator_files`, the files they add (coordinator.additionalConfigFiles), with the
authentication option's LDAP password-authenticator.properties (not homed yet); `role_files`
adds the spooling manager to both roles (`worker_files`).

Every homed kind's variable is set (None when the cluster picked none of it, which its template
fragment skips); a kind's `values` module is imported only for a cluster that picked it.
Pure: Cluster and settings in, plain values for the template out.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, module
from trinogen.model import Cluster
from trinogen.render.escape import helm_escape, prop_key, prop_value
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import ValuesModule


def kind_values(cluster: Cluster, s: Settings) -> dict[str, Any]:
    """`{kind: its template variable}` for every homed kind, and `coordinator_files`."""
    out: dict[str, Any] = dict.fromkeys(HOMED)
    for kind, part in cluster.kinds:
        values = cast("ValuesModule", importlib.import_module(module(kind, "values")))
        out[kind] = values.values(part, s)
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
    if role == "coordinator" and auth is not None and auth.password_authenticator:
        # LDAP: the chart writes its file authenticator unless this file is given
        text = "".join(f"{prop_key(k)}={prop_value(v)}\n" for k, v in auth.password_authenticator)
        out.append(("authentication", "password-authenticator.properties", text))
    return out


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


def kind_manifests(cluster: Cluster) -> dict[str, dict[str, Any]]:
    """Plain manifests the option kinds add under manifests/ (name -> the object): the
    coordinator's client NetworkPolicy of a `network_policies` pick that lets anyone in."""
    part = cluster.kind("network_policies")
    if part is None:
        return {}
    from trinogen.kinds.network_policies.values import manifest

    policy = manifest(part, cluster.cluster_id, cluster.namespace, cluster.owner)
    return {"networkpolicy-coordinator": policy} if policy is not None else {}


def kind_objects(cluster: Cluster, full: str) -> list[tuple[str, str, str, str]]:
    """(kind, name, maker, field) of the objects the hatch kinds make the chart or trinogen
    create (render/objects.py lists them with the others, so no other object takes a name)."""
    if cluster.kind("network_policies") is None:
        return []
    out = [("NetworkPolicy", full, "the chart", "networkPolicy"),
           ("Pod", f"{full}-test-networkpolicy", "the chart (a helm test hook)", "networkPolicy")]
    out += [("NetworkPolicy", str(policy["metadata"]["name"]), "trinogen (networkPolicy)",
             "networkPolicy") for policy in kind_manifests(cluster).values()]
    return out


def kind_texts(cluster: Cluster) -> list[str]:
    """The texts the kinds put into the coordinator's ConfigMap through the chart (its
    resource-groups JSON, its session property defaults), for `objects.size_bound`."""
    groups = cluster.kind("resource_groups")
    return ([groups.text] if groups is not None else []) + session_lines(cluster)


def session_lines(cluster: Cluster) -> list[str]:
    """The session_defaults kind's JSON, as lines (ASCII), or none."""
    return [] if (part := cluster.kind("session_defaults")) is None else part.json_lines()
