"""`networkPolicy: "<name>"`: a document (or its profile) picks a network policy option; what
else it picks decides which rules apply (an Ingress lets the controller in, the exporter lets
Prometheus in, TLS in the pod opens the HTTPS port instead of HTTP), and a pick the option
would shut out is an error.

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.kinds.network_policies.options import NetworkOption, gaps
from trinogen.model.checker import Checker
from trinogen.settings import Settings

FIELD = "networkPolicy"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class NetworkPolicy:
    option: NetworkOption
    ingress: bool  # the cluster has an Ingress
    monitoring: bool  # the JMX exporter runs
    https: bool  # the coordinator serves TLS itself
    config: Lines = ()
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: NetworkOption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> NetworkPolicy | None:
    """The cluster's policies, or None when one of its picks would be shut out (reported)."""
    monitoring = d.get("monitoring")
    jmx = isinstance(monitoring, Mapping) and monitoring.get("jmx") is True
    monitor = isinstance(monitoring, Mapping) and monitoring.get("serviceMonitor") is True
    ingress = d.get("ingress") is not None
    problems = gaps(option, ingress=ingress, service_monitor=monitor)
    for problem in problems:
        c.error(FIELD, problem + "; pick another network policy or ask the platform team")
    if problems:
        return None
    tls = _tls(d, s)
    if tls == "ingress" and (option.clients or option.client_cidrs):
        c.warn(FIELD, "its clients reach the coordinator's HTTP port directly, where Trino "
               "trusts X-Forwarded-Proto (authentication with tls: ingress): they can sign in "
               "over plain HTTP; let them in through the ingress instead")
    return NetworkPolicy(option, ingress, jmx, tls == "pod")


def _tls(d: Mapping[str, Any], s: Settings) -> str | None:
    """Where the picked authentication option ends TLS (`pod`, `ingress`), or None."""
    name = d.get("authentication")
    auth = s.options("authentication").get(name) if isinstance(name, str) else None
    return getattr(auth, "tls", None) if auth is not None else None
