"""`service_accounts:` options: the workload identities a cluster may run as (issue 13, item 4).

    service_accounts:
      aws-lake:
        name: "{cluster}-trino"          # default; {cluster} and {owner} are substituted
        annotations:
          eks.amazonaws.com/role-arn: "arn:aws:iam::123456789012:role/trino-{cluster}"
      azure-lake:
        annotations: {azure.workload.identity/client-id: "00000000-0000-0000-0000-000000000000"}
        pod_labels: {azure.workload.identity/use: "true"}

The annotations go on the ServiceAccount the chart creates (IRSA, GKE and Azure workload
identity read them there); `pod_labels` go on both roles' pods (Azure's webhook selects pods by
label). Only the platform names a role or identity: a document picks a profile by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("name", "annotations", "pod_labels")
DEFAULT_NAME = "{cluster}-trino"
# Label prefixes the chart and trinogen write on the pods themselves: a profile's label there
# would be a duplicate key in the pod template (the chart's selector labels among them).
RESERVED_LABEL_PREFIXES = ("app.kubernetes.io/", "helm.sh/", "trino.io/", "trinogen.io/")


@dataclass(frozen=True)
class ServiceAccountOption:
    name: str  # a pattern: {cluster}, {owner}
    annotations: tuple[tuple[str, str], ...] = ()  # key -> value pattern
    pod_labels: tuple[tuple[str, str], ...] = ()


def parse(where: str, raw: Mapping[str, Any]) -> ServiceAccountOption:
    """One entry of `service_accounts:`; ConfigError names `service_accounts.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    name = metadata.check_pattern(f"{where}.name", raw.get("name", DEFAULT_NAME))
    wrong = metadata.object_name(metadata.fill(name, **metadata.SAMPLE))
    if wrong:
        raise ConfigError(f"{where}.name: {name!r} is not a ServiceAccount name: {wrong}")
    if name == "default":  # every namespace has its own; the chart would try to create it
        raise ConfigError(f"{where}.name: \"default\" is the namespace's own ServiceAccount; "
                          "name another")
    labels = metadata.pairs(f"{where}.pod_labels", raw.get("pod_labels"), labels=True)
    for key, _ in labels:
        if key.startswith(RESERVED_LABEL_PREFIXES):
            raise ConfigError(f"{where}.pod_labels.{key}: the chart and trinogen set the labels "
                              f"under {', '.join(RESERVED_LABEL_PREFIXES)} themselves")
    annotations = metadata.pairs(f"{where}.annotations", raw.get("annotations"), labels=False)
    for key, value in annotations:  # a cloud role per cluster is that cluster's alone
        metadata.check_one_per_cluster(f"{where}.annotations.{key}", value, "identity")
    return ServiceAccountOption(name, annotations, labels)
