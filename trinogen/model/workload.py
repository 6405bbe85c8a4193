"""How a cluster's pods run and are reached: the platform options a document picks by name.

- `serviceAccount: "<name>"` picks a `service_accounts` option (issue 13, item 4): the identity
  annotations and pod labels come from the settings, never from the document;
- the kinds in their own home (`trinogen.kinds`, `ingress`...) through `model.kinds`;
- `monitoring: {jmx, serviceMonitor}` switches the chart's JMX exporter and ServiceMonitors on
  (issue 14, item 5); image, labels and interval are the settings' `monitoring` section.

Pure: the values are checked and filled here, rendered by the templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from trinogen.model import kinds
from trinogen.model.checker import Checker, show
from trinogen.model.types import ServiceAccount
from trinogen.settings import Settings
from trinogen.settings.options import metadata

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.settings.options.service_accounts import ServiceAccountOption

MONITORING_FIELDS = ("jmx", "serviceMonitor")


class Workload(NamedTuple):
    service_account: ServiceAccount | None = None
    kinds: kinds.Parts = ()  # the homed kinds' values, in `trinogen.kinds.HOMED` order
    jmx_exporter: bool = False
    service_monitor: bool = False


def workload(d: Mapping[str, Any], cluster_id: str | None, owner: str | None, s: Settings,
             c: Checker) -> Workload:
    """The document's picks, checked; problems are recorded on `c`."""
    sa_option = c.pick(d.get("serviceAccount"), "serviceAccount", s.options("service_accounts"),
                       "service_accounts")
    picked = kinds.pick(d, s, c)
    jmx, monitor = _monitoring(d.get("monitoring"), c)
    if cluster_id is None or owner is None:  # reported already; nothing to fill the patterns with
        return Workload()
    parts = kinds.fill(picked, cluster_id, owner, d, s, c)
    return Workload(
        service_account=_service_account(sa_option, cluster_id, owner, c),
        kinds=parts,
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
