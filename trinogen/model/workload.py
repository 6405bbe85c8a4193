"""How a cluster's pods run and are reached: the platform options a document picks by name.

- the kinds in their own home (`trinogen.kinds`: `serviceAccount`, `ingress`...) are picked and
  filled through `model.kinds`;
- `monitoring: {jmx, serviceMonitor}` switches the chart's JMX exporter and ServiceMonitors on
  (issue 14, item 5); image, labels and interval are the settings' `monitoring` section.

Pure: the values are checked and filled here, rendered by the templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from trinogen.model import kinds
from trinogen.model.checker import Checker
from trinogen.settings import Settings

MONITORING_FIELDS = ("jmx", "serviceMonitor")


class Workload(NamedTuple):
    kinds: kinds.Parts = ()  # the homed kinds' values, in `trinogen.kinds.HOMED` order
    jmx_exporter: bool = False
    service_monitor: bool = False


def workload(d: Mapping[str, Any], cluster_id: str | None, owner: str | None, s: Settings,
             c: Checker, inside: kinds.Picked = ()) -> Workload:
    """The document's picks, checked; problems are recorded on `c`. `inside` are the picks
    another field's reader made (`accessControl.opa`), filled after the top-level ones (the
    order of `trinogen.kinds.HOMED`)."""
    picked = (*kinds.pick(d, s, c), *inside)
    jmx, monitor = _monitoring(d.get("monitoring"), c)
    if cluster_id is None or owner is None:  # reported already; nothing to fill the patterns with
        return Workload()
    parts = kinds.fill(picked, cluster_id, owner, d, s, c)
    return Workload(
        kinds=parts,
        jmx_exporter=jmx,
        service_monitor=monitor,
    )


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
