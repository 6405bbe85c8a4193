"""`services:` options: the coordinator Service's type and the Services' annotations (issue 21,
item 6).

    services:
      internal-lb:
        type: LoadBalancer                  # ClusterIP (the chart's), NodePort or LoadBalancer
        annotations:
          service.beta.kubernetes.io/aws-load-balancer-scheme: internal

The chart gives `service.type` to the coordinator's Service and `service.annotations` to both
Services (the workers' is headless). Every cluster that picks an option gets the same values,
so nothing in an option may name one address, name or port: no `nodePort` (Kubernetes picks a
free one per Service), and no annotation that pins an address, shares one between Services or
publishes a DNS name (`REFUSED`): the first cluster would take it, and the next would fail or,
with a sharing key, be served on the first one's address. A DNS name for a cluster comes from
an `ingress` option, whose host starts with the clusterId. NodePort opens the coordinator on
every node's address, where no NetworkPolicy reaches (the chart refuses the two together).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("type", "annotations")
TYPES = ("ClusterIP", "NodePort", "LoadBalancer")
# Annotation keys (lower-cased) that pin one address or name, or share an address, per Service.
REFUSED = {
    "metallb.universe.tf/loadbalancerips": "pins an address",
    "metallb.io/loadbalancerips": "pins an address",
    "metallb.universe.tf/allow-shared-ip": "shares an address between Services",
    "metallb.io/allow-shared-ip": "shares an address between Services",
    "io.cilium/lb-ipam-ips": "pins an address",
    "lbipam.cilium.io/ips": "pins an address",
    "lbipam.cilium.io/sharing-key": "shares an address between Services",
    "kube-vip.io/loadbalancerips": "pins an address",
    "service.beta.kubernetes.io/azure-load-balancer-ipv4": "pins an address",
    "service.beta.kubernetes.io/azure-load-balancer-ipv6": "pins an address",
    "service.beta.kubernetes.io/azure-pip-name": "pins a public IP",
    "service.beta.kubernetes.io/azure-pip-name-ipv6": "pins a public IP",
    "service.beta.kubernetes.io/aws-load-balancer-eip-allocations": "pins addresses",
    "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses": "pins addresses",
    "networking.gke.io/load-balancer-ip-addresses": "pins an address",
    "external-dns.alpha.kubernetes.io/hostname":
        "publishes a DNS name (on the headless worker Service too: the workers' addresses)",
    "external-dns.alpha.kubernetes.io/internal-hostname":
        "publishes a DNS name (on the headless worker Service too: the workers' addresses)",
}


@dataclass(frozen=True)
class ServiceOption:
    type: str = "ClusterIP"
    annotations: tuple[tuple[str, str], ...] = ()  # key -> value pattern, sorted


def parse(where: str, raw: Mapping[str, Any]) -> ServiceOption:
    """One entry of `services:`; ConfigError names `services.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    kind = raw.get("type", "ClusterIP")
    if kind not in TYPES:
        raise ConfigError(f"{where}.type: {kind!r}; choose one of: {', '.join(TYPES)} "
                          "(ExternalName does not reach the pods)")
    annotations = metadata.pairs(f"{where}.annotations", raw.get("annotations"), labels=False)
    for key, _ in annotations:
        why = REFUSED.get(key.lower())
        if why is not None:
            raise ConfigError(f"{where}.annotations.{key}: refused: it {why}, and every cluster "
                              "that picks this option would claim the same one")
    return ServiceOption(kind, annotations)


def chart_values(option: ServiceOption, cluster: str, owner: str) -> dict[str, Any]:
    """The chart's `service` for one cluster (annotation patterns filled)."""
    return {"service": {"type": option.type, "annotations": {
        k: metadata.fill(v, cluster, owner) for k, v in option.annotations}}}


def conflicts(option: ServiceOption, *, network_policy: bool, authenticated: bool
              ) -> tuple[list[str], list[str]]:
    """(errors, warnings) of this option with the cluster's other picks."""
    errors, warnings = [], []
    if network_policy and option.type == "NodePort":
        errors.append("a NodePort Service is reached through every node's address, where no "
                      "NetworkPolicy applies (the chart refuses the two together): pick a "
                      "ClusterIP or LoadBalancer service option, or no network policy")
    if option.type != "ClusterIP" and not authenticated:
        warnings.append(f"a {option.type} Service without authentication: anyone who reaches it "
                        "can query under any user name")
    return errors, warnings
