"""`ingress: "<name>"`: a document picks an ingress option; its host and TLS Secret patterns are
filled with the cluster's clusterId (and owner) and checked again as DNS names.

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker, show
from trinogen.settings import Settings
from trinogen.settings.options import metadata

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.authentication.options import AuthOption
    from trinogen.kinds.ingress.options import IngressOption

FIELD = "ingress"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Ingress:
    """The coordinator's Ingress: a settings option filled for this cluster."""

    host: str
    class_name: str | None = None
    tls_secret: str | None = None
    annotations: tuple[tuple[str, str], ...] = ()
    path: str = "/"
    path_type: str = "Prefix"
    config: Lines = ()  # no Trino properties, no files
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: IngressOption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Ingress | None:
    """The cluster's Ingress, or None when a filled-in value is invalid (reported on `c`)."""
    host = metadata.fill(option.host, cluster_id, owner)
    tls = metadata.fill(option.tls_secret, cluster_id, owner) if option.tls_secret else None
    problems = [f"the {what} {show(value)} is not valid: {wrong}"
                for what, value, rule in (("host", host, metadata.dns_subdomain),
                                          ("TLS Secret name", tls, metadata.object_name))
                if value is not None and (wrong := rule(value))]
    annotations, wrong = metadata.filled_pairs(option.annotations, cluster_id, owner, labels=False)
    problems += [f"annotation {wrong}"] if wrong else []
    for problem in problems:
        c.error(FIELD, f"{problem} (filled in from this cluster's clusterId and owner); "
                "pick another option or ask the platform team to change it")
    if problems:
        return None
    ingress = Ingress(host, option.class_name, tls, annotations, option.path, option.path_type)
    _check_exposure(ingress, d.get("authentication"), s.options("authentication"), c)
    return ingress


def _check_exposure(ingress: Ingress, auth_name: Any, auth_options: Mapping[str, AuthOption],
                    c: Checker) -> None:
    """Warn about an Ingress that hands out what the coordinator does not protect.

    Warnings, not errors: a development cluster may be meant to be open, and TLS may end at a
    load balancer in front of the controller, which this cannot see. An unknown or invalid
    authentication name is reported by the authentication check, not here.
    """
    if auth_name is None:
        c.warn(FIELD, f"exposes the coordinator at {ingress.host} without authentication: "
               "anyone who reaches that host can run queries under any user name; pick an "
               "authentication option")
        return
    option = auth_options.get(auth_name) if isinstance(auth_name, str) else None
    if option is not None and option.tls == "ingress" and ingress.tls_secret is None:
        c.warn(FIELD, f"authentication {show(auth_name)} expects TLS to end at the ingress, "
               f"but the ingress option gives {ingress.host} no TLS Secret: clients send "
               "their passwords or tokens in plain HTTP to the controller, and Trino refuses "
               "the sign-in unless a proxy in front sends X-Forwarded-Proto: https; use an "
               "ingress option with tls_secret")
