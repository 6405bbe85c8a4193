"""The chart's `networkPolicy` (templates/values/network_policies.yaml.j2) and trinogen's
coordinator-only client policy (`coordinator_policy`, written under manifests/ by the renderer).

Pure. The chart writes the rules with toYaml, without tpl: nothing to escape.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.network_policies.document import NetworkPolicy
from trinogen.kinds.network_policies.options import chart_values, coordinator_policy
from trinogen.kinds.protocol import Manifest
from trinogen.model import Cluster
from trinogen.settings import Settings


def values(part: NetworkPolicy, s: Settings) -> dict[str, Any]:
    """The template variable `network_policies`: the chart's networkPolicy section."""
    del s
    return dict(chart_values(part.option, monitoring=part.monitoring)["networkPolicy"])


def manifest(part: NetworkPolicy, release: str, namespace: str, owner: str
             ) -> dict[str, Any] | None:
    """The coordinator's client NetworkPolicy, or None when the option lets nobody in."""
    labels = {"app.kubernetes.io/managed-by": "trinogen", "trinogen.io/cluster": release,
              "trinogen.io/owner": owner}
    return coordinator_policy(part.option, release=release, namespace=namespace,
                              https=part.https, ingress=part.ingress, labels=labels)


def manifests(part: NetworkPolicy, cluster: Cluster, s: Settings) -> tuple[Manifest, ...]:
    """The coordinator's client NetworkPolicy, `manifests/networkpolicy-coordinator.yaml`, when
    the option lets anyone in besides the cluster's own pods."""
    del s
    policy = manifest(part, cluster.cluster_id, cluster.namespace, cluster.owner)
    if policy is None:
        return ()
    return (Manifest("networkpolicy-coordinator.yaml", "networkpolicy.yaml.j2",
                     {"policy": policy}, "NetworkPolicy", str(policy["metadata"]["name"])),)
