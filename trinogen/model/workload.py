"""How a cluster's pods run and are reached: the platform options a document picks by name.

- `serviceAccount: "<name>"` picks a `service_accounts` option (issue 13, item 4): the identity
  annotations and pod labels come from the settings, never from the document;
- `ingress: "<name>"` picks an `ingress` option (issue 14, item 6): host and TLS Secret patterns
  filled with the clusterId (and owner);
- `monitoring: {jmx, serviceMonitor}` switches the chart's JMX exporter and ServiceMonitors on
  (issue 14, item 5); image, labels and interval are the settings' `monitoring` section.

Pure: the values are checked and filled here, rendered by the templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from trinogen.model.checker import Checker, show
from trinogen.model.types import Ingress, ServiceAccount
from trinogen.settings import Settings
from trinogen.settings.options import metadata

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.settings.options.authentication import AuthOption
    from trinogen.settings.options.ingress import IngressOption
    from trinogen.settings.options.service_accounts import ServiceAccountOption

MONITORING_FIELDS = ("jmx", "serviceMonitor")


class Workload(NamedTuple):
    service_account: ServiceAccount | None = None
    ingress: Ingress | None = None
    jmx_exporter: bool = False
    service_monitor: bool = False


def workload(d: Mapping[str, Any], cluster_id: str | None, owner: str | None, s: Settings,
             c: Checker) -> Workload:
    """The document's picks, checked; problems are recorded on `c`."""
    sa_option = c.pick(d.get("serviceAccount"), "serviceAccount", s.options("service_accounts"),
                       "service_accounts")
    ingress_option = c.pick(d.get("ingress"), "ingress", s.options("ingress"), "ingress")
    jmx, monitor = _monitoring(d.get("monitoring"), c)
    if cluster_id is None or owner is None:  # reported already; nothing to fill the patterns with
        return Workload()
    ingress = _ingress(ingress_option, cluster_id, owner, c)
    if ingress is not None:
        _check_exposure(ingress, d.get("authentication"), s.options("authentication"), c)
    return Workload(
        service_account=_service_account(sa_option, cluster_id, owner, c),
        ingress=ingress,
        jmx_exporter=jmx,
        service_monitor=monitor,
    )


def _service_account(option: ServiceAccountOption | None, cluster_id: str, owner: str,
                     c: Checker) -> ServiceAccount | None:
    if option is None:
        return None
    name = metadata.fill(option.name, cluster_id, owner)
    problems = []
    wrong = metadata.object_name(name)
    if wrong:
        problems.append(f"the ServiceAccount name {show(name)} is not valid: {wrong}")
    annotations, wrong = metadata.filled_pairs(option.annotations, cluster_id, owner, labels=False)
    problems += [f"annotation {wrong}"] if wrong else []
    labels, wrong = metadata.filled_pairs(option.pod_labels, cluster_id, owner, labels=True)
    problems += [f"pod label {wrong}"] if wrong else []
    for problem in problems:
        c.error("serviceAccount", f"{problem} (filled in from this cluster's clusterId and "
                "owner); pick another option or ask the platform team to change it")
    return None if problems else ServiceAccount(name, annotations, labels)


def _ingress(option: IngressOption | None, cluster_id: str, owner: str,
             c: Checker) -> Ingress | None:
    if option is None:
        return None
    host = metadata.fill(option.host, cluster_id, owner)
    tls = metadata.fill(option.tls_secret, cluster_id, owner) if option.tls_secret else None
    problems = [f"the {what} {show(value)} is not valid: {wrong}"
                for what, value, rule in (("host", host, metadata.dns_subdomain),
                                          ("TLS Secret name", tls, metadata.object_name))
                if value is not None and (wrong := rule(value))]
    annotations, wrong = metadata.filled_pairs(option.annotations, cluster_id, owner, labels=False)
    problems += [f"annotation {wrong}"] if wrong else []
    for problem in problems:
        c.error("ingress", f"{problem} (filled in from this cluster's clusterId and owner); "
                "pick another option or ask the platform team to change it")
    if problems:
        return None
    return Ingress(host, option.class_name, tls, annotations, option.path, option.path_type)


def _check_exposure(ingress: Ingress, auth_name: Any, auth_options: Mapping[str, AuthOption],
                    c: Checker) -> None:
    """Warn about an Ingress that hands out what the coordinator does not protect.

    Warnings, not errors: a development cluster may be meant to be open, and TLS may end at a
    load balancer in front of the controller, which this cannot see. An unknown or invalid
    authentication name is reported by the authentication check, not here.
    """
    if auth_name is None:
        c.warn("ingress", f"exposes the coordinator at {ingress.host} without authentication: "
               "anyone who reaches that host can run queries under any user name; pick an "
               "authentication option")
        return
    option = auth_options.get(auth_name) if isinstance(auth_name, str) else None
    if option is not None and option.tls == "ingress" and ingress.tls_secret is None:
        c.warn("ingress", f"authentication {show(auth_name)} expects TLS to end at the ingress, "
               f"but the ingress option gives {ingress.host} no TLS Secret: clients send "
               "their passwords or tokens in plain HTTP to the controller, and Trino refuses "
               "the sign-in unless a proxy in front sends X-Forwarded-Proto: https; use an "
               "ingress option with tls_secret")


def _monitoring(value: Any, c: Checker) -> tuple[bool, bool]:
    m = c.mapping(value, "monitoring", required=False)
    if m is None:
        return False, False
    c.fields(m, "monitoring", MONITORING_FIELDS)
    jmx = c.boolean(m.get("jmx"), "monitoring.jmx", required=False) or False
    monitor = c.boolean(m.get("serviceMonitor"), "monitoring.serviceMonitor",
                        required=False) or False
    if monitor and (m.get("jmx") is None or m.get("jmx") is False):  # not when jmx is invalid
        c.error("monitoring.serviceMonitor", "needs monitoring.jmx: true (the ServiceMonitors "
                "scrape the JMX exporter, which only runs with it)")
        return jmx, False
    return jmx, monitor
