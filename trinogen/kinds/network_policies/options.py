"""`network_policies:` options: who may reach a cluster's pods (issue 21, item 6).

    network_policies:
      standard:
        clients: [bi-tools, {namespace: airflow, pod_labels: {app: scheduler}}]
        client_cidrs: [10.20.0.0/16]          # e.g. a LoadBalancer's clients
        ingress_controller: ingress-nginx     # or {namespace: ..., pod_labels: {...}}
        monitoring: {namespace: monitoring, pod_labels: {app.kubernetes.io/name: prometheus}}

What must reach a Trino pod, and how each gets in:
- the other pods of the same cluster (discovery, tasks, exchanges): the chart's own rule, written
  whenever its `networkPolicy.enabled` is on (its pods, in its namespace only);
- the kubelet's probes: nothing to write. Traffic from the node a pod runs on is always allowed
  (Kubernetes' NetworkPolicy documentation), which is where the kubelet probes from;
- Argo CD: nothing. It talks to the API server, never to the pods;
- clients and the ingress controller: the coordinator's HTTP port (its HTTPS port instead when
  the coordinator serves TLS), through a second NetworkPolicy that selects the coordinator only
  (a rule in the chart's policy would open the workers' HTTP API too);
- Prometheus, when the cluster runs the JMX exporter: the `jmx-exporter` port of both roles
  (the chart's policy: the pods of both roles carry an exporter).
Namespaces are matched by `kubernetes.io/metadata.name`, which the API server sets to the
namespace's name and nobody can change: a tenant cannot label its way in. Egress is left open
(the chart's default): what a cluster must reach depends on its catalogs, which its document
chooses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("clients", "client_cidrs", "ingress_controller", "monitoring")
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
_PEER_FIELDS = ("namespace", "pod_labels")


@dataclass(frozen=True)
class Peer:
    """Pods of one namespace (all of them when `pod_labels` is empty)."""

    namespace: str
    pod_labels: tuple[tuple[str, str], ...] = ()

    def selector(self) -> dict[str, Any]:
        """A NetworkPolicyPeer: the namespace by name and, if given, its pods by labels."""
        peer: dict[str, Any] = {"namespaceSelector": {"matchLabels": {
            NAMESPACE_LABEL: self.namespace}}}
        if self.pod_labels:
            peer["podSelector"] = {"matchLabels": dict(self.pod_labels)}
        return peer


@dataclass(frozen=True)
class NetworkOption:
    clients: tuple[Peer, ...] = ()
    client_cidrs: tuple[str, ...] = ()
    ingress_controller: Peer | None = None
    monitoring: Peer | None = None


def parse(where: str, raw: Mapping[str, Any]) -> NetworkOption:
    """One entry of `network_policies:`; ConfigError names `network_policies.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    clients = raw.get("clients", [])
    if not isinstance(clients, list):
        raise ConfigError(f"{where}.clients must be a list of namespaces")
    peers = tuple(_peer(f"{where}.clients[{i}]", c) for i, c in enumerate(clients))
    return NetworkOption(
        clients=peers, client_cidrs=_cidrs(f"{where}.client_cidrs", raw.get("client_cidrs")),
        ingress_controller=_optional_peer(f"{where}.ingress_controller",
                                          raw.get("ingress_controller")),
        monitoring=_optional_peer(f"{where}.monitoring", raw.get("monitoring")))


def _optional_peer(where: str, raw: Any) -> Peer | None:
    return None if raw is None else _peer(where, raw)


def _peer(where: str, raw: Any) -> Peer:
    """A namespace name, or {namespace, pod_labels}."""
    if isinstance(raw, str):
        raw = {"namespace": raw}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a namespace name or {{namespace, pod_labels}}")
    metadata.known_fields(where, raw, _PEER_FIELDS)
    namespace = raw.get("namespace")
    if type(namespace) is not str or len(namespace) > 63 or metadata.dns_subdomain(
            namespace) is not None or "." in namespace:
        raise ConfigError(f"{where}.namespace: {namespace!r} is not a namespace name (a DNS "
                          "label: lowercase letters, digits and '-', at most 63 characters)")
    labels = metadata.pairs(f"{where}.pod_labels", raw.get("pod_labels"), labels=True)
    if any("{" in v for _, v in labels):
        raise ConfigError(f"{where}.pod_labels: values are literal (the pods are the platform's)")
    return Peer(namespace, labels)


def _cidrs(where: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where} must be a list of CIDRs")
    out = []
    for value in raw:
        try:
            net = ipaddress.ip_network(value, strict=True) if type(value) is str else None
        except ValueError:
            net = None
        if net is None or "/" not in value:
            raise ConfigError(f"{where}: {value!r} is not a CIDR with its host bits zero "
                              "(such as 10.20.0.0/16)")
        out.append(str(net))
    return tuple(out)


def chart_values(option: NetworkOption, *, monitoring: bool) -> dict[str, Any]:
    """The chart's `networkPolicy`: on (the same-release rule is the chart's), and with the
    JMX exporter, Prometheus on the `jmx-exporter` port of both roles."""
    ingress = []
    if monitoring and option.monitoring is not None:
        ingress.append({"from": [option.monitoring.selector()],
                        "ports": [{"port": "jmx-exporter", "protocol": "TCP"}]})
    return {"networkPolicy": {"enabled": True, "ingress": ingress}}


def coordinator_policy(option: NetworkOption, *, release: str, namespace: str, https: bool,
                       ingress: bool, labels: Mapping[str, str]) -> dict[str, Any] | None:
    """The NetworkPolicy letting clients (and the ingress controller, when the cluster has an
    Ingress) reach the coordinator's serving port; None when nobody is named."""
    peers = [p.selector() for p in option.clients]
    peers += [{"ipBlock": {"cidr": c}} for c in option.client_cidrs]
    if ingress and option.ingress_controller is not None:
        peers.append(option.ingress_controller.selector())
    if not peers:
        return None
    port = "https" if https else "http"  # the chart's container port names
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": f"{release}-trino-coordinator-clients", "namespace": namespace,
                     "labels": dict(labels)},
        "spec": {
            # the chart's selector labels of the coordinator's pods (trino.selectorLabels)
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "trino",
                                            "app.kubernetes.io/instance": release,
                                            "app.kubernetes.io/component": "coordinator"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": peers, "ports": [{"port": port, "protocol": "TCP"}]}],
        },
    }


def gaps(option: NetworkOption, *, ingress: bool, service_monitor: bool) -> list[str]:
    """What the cluster's other picks need that the option lets not in (each a message)."""
    out = []
    if ingress and option.ingress_controller is None:
        out.append("the cluster has an Ingress, but its network policy names no "
                   "ingress_controller: the controller could not reach the coordinator")
    if service_monitor and option.monitoring is None:
        out.append("the cluster has a ServiceMonitor, but its network policy names no "
                   "monitoring namespace: Prometheus could not scrape the exporter")
    return out
