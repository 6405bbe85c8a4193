"""The chart values of a cluster's workload options: pod labels (with the ServiceAccount's), JMX
exporter, ServiceMonitors (the option kinds' values are render/kinds.py's). Pure: Cluster and
settings in, plain values for the template out.

Where the chart runs a value through Helm's `tpl` it is escaped here (`configProperties`); the
other values are names and labels that were checked to hold no `{{` (model/workload.py).
"""

from __future__ import annotations

from typing import Any

from trinogen.model import Cluster
from trinogen.render.escape import Constant, helm_escape
from trinogen.settings import Settings

# The chart's own ports for the JVM's RMI registry and server (values.yaml `jmx.*Port`), written
# out so the exporter's hostPort below and the Trino side agree by construction.
JMX_REGISTRY_PORT = 9080
JMX_SERVER_PORT = 9081
# jmx_exporter reads the Trino JVM's MBeans through the RMI registry in the same pod and
# exports every one of them (no rules): the platform narrows it with monitoring.exporter_config.
BUILTIN_EXPORTER_CONFIG = (
    f"hostPort: localhost:{JMX_REGISTRY_PORT}\n"
    "startDelaySeconds: 0\n"
    "ssl: false\n"
    "lowercaseOutputName: false\n"
    "lowercaseOutputLabelNames: false\n"
)
# The sidecar's container securityContext: what Pod Security `restricted` asks of every container
# (the chart's default is {}, which a namespace enforcing `restricted` refuses). bitnami's image
# runs as a non-root user.
EXPORTER_SECURITY_CONTEXT = Constant({
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
})
# Labels the chart's values.yaml gives every ServiceMonitor; Helm merges maps, so one the
# settings do not name is set to null (removed) to give the ServiceMonitor exactly theirs.
CHART_SERVICE_MONITOR_LABELS = ("prometheus",)


def workload_values(cluster: Cluster, s: Settings) -> dict[str, Any]:
    """The template's variables for these features (None = the chart's default, not written)."""
    return {
        "pod_labels": pod_labels(cluster),
        "jmx": _jmx(cluster, s) if cluster.jmx_exporter else None,
        "service_monitor": _service_monitor(s) if cluster.service_monitor else None,
    }


def pod_labels(cluster: Cluster) -> Constant:
    """The labels on both roles' pods: who owns them (cost allocation), and the identity's
    (a Constant: both roles write the same YAML)."""
    labels = {"trinogen.io/cluster": cluster.cluster_id, "trinogen.io/owner": cluster.owner}
    if cluster.service_account:
        labels.update(cluster.service_account.pod_labels)
    return Constant(labels)


def _jmx(cluster: Cluster, s: Settings) -> dict[str, Any]:
    m = s.monitoring
    return {
        "registryPort": JMX_REGISTRY_PORT,
        "serverPort": JMX_SERVER_PORT,
        "image": f"{m.exporter_image}:{m.exporter_tag}",
        "pullPolicy": m.exporter_pull_policy,
        "securityContext": EXPORTER_SECURITY_CONTEXT,
        # The chart runs configProperties through tpl: written so it arrives as given.
        "configProperties": helm_escape(exporter_config(s)),
    }


def exporter_config(s: Settings) -> str:
    """The JMX exporter's configuration: the settings', else trinogen's."""
    return s.monitoring.exporter_config or BUILTIN_EXPORTER_CONFIG


def _service_monitor(s: Settings) -> dict[str, Any]:
    labels: dict[str, str | None] = {k: None for k in CHART_SERVICE_MONITOR_LABELS}
    labels.update(s.monitoring.service_monitor_labels)
    return {"labels": labels, "interval": s.monitoring.scrape_interval}
