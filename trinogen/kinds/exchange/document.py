"""`faultTolerance: {exchange: "<name>"}`: the exchange a cluster's fault-tolerant execution
spools to, filled for the cluster: its base directories (`{cluster}`, `{owner}` substituted)
and exchange-manager.properties (the store's settings; its Vault credentials as placeholders,
rendered as `${ENV:...}` from the cluster's env Secret, or inline).

Picked by the `faultTolerance` reader (model/fault_tolerance.py: only with a valid retry
policy), which fills it at once. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.kinds.storage.document import vault_uses
from trinogen.model.checker import Checker
from trinogen.model.types import Identity
from trinogen.secrets import BoundSegment, SecretUse
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.exchange.options import Exchange
    from trinogen.kinds.storage.options import Storage

FIELD = "faultTolerance.exchange"
Lines = tuple[tuple[str, str], ...]
# Trino's exchange-manager property for each Vault-held credential of a store.
# (Azure's access key goes into a connection string instead, see exchange_lines.)
EXCHANGE_CREDENTIALS = {"access_key": {"s3": "exchange.s3.aws-access-key"},
                        "secret_key": {"s3": "exchange.s3.aws-secret-key"},
                        "json_key": {"gcs": "exchange.gcs.json-key"}}
AZURE_CONNECTION = "exchange.azure.connection-string"




@dataclass(frozen=True)
class ExchangeManager:
    """Fault-tolerant execution's exchange: the chart's `server.exchangeManager` (filesystem)
    and `additionalExchangeManagerProperties` (exchange-manager.properties on every pod)."""

    base_directories: tuple[str, ...]
    # storage and tuning lines; Vault credentials split out as in a catalog
    properties: tuple[tuple[str, tuple[BoundSegment, ...]], ...]
    config: Lines = ()  # retry-policy is faultTolerance's own; no files
    coordinator: Lines = ()
    files: Lines = ()

    @property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        return tuple(s for _, v in self.properties for s in v if isinstance(s, SecretUse))


def fill(option: Exchange, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> ExchangeManager | None:
    """The cluster's exchange manager, or None when the store's Vault paths cannot be filled in
    for this cluster (its clusterId and owner were reported invalid already)."""
    del d, c
    who = Identity(cluster_id, owner)
    store: Storage = s.options("storage")[option.storage]  # checked with the settings
    uses = vault_uses(store, who)
    if uses is None:
        return None
    lines = exchange_lines(store, uses)
    lines += [(k, (v,)) for k, v in option.properties]
    return ExchangeManager(option.for_cluster(cluster_id, owner), tuple(sorted(lines)))


def exchange_lines(store: Storage, uses: Mapping[str, SecretUse]
                   ) -> list[tuple[str, tuple[BoundSegment, ...]]]:
    """exchange-manager.properties lines of a store (Trino 476's ExchangeS3Config and friends)."""
    lines: list[tuple[str, tuple[BoundSegment, ...]]] = []
    if store.type == "s3":
        optional = [("exchange.s3.region", store.region),
                    ("exchange.s3.endpoint", store.endpoint),
                    ("exchange.s3.sse.type", store.sse_type),
                    ("exchange.s3.sse.kms-key-id", store.sse_kms_key_id),
                    ("exchange.s3.iam-role", store.iam_role)]
        if store.path_style_access is not None:
            optional.append(("exchange.s3.path-style-access",
                             str(store.path_style_access).lower()))
        lines += [(k, (v,)) for k, v in optional if v is not None]
    if store.type == "azure":
        # The exchange takes an account key only inside a connection string (the settings
        # check requires the account then); without one, Azure's default credential chain
        # (workload identity among it) is used: the exchange has no auth-type switch.
        if "access_key" in uses:
            lines.append((AZURE_CONNECTION, (
                f"DefaultEndpointsProtocol=https;AccountName={store.account};AccountKey=",
                uses["access_key"], ";EndpointSuffix=core.windows.net")))
        return lines
    # gcs: the project comes with the credentials (the key, or the pod's identity)
    lines += [(EXCHANGE_CREDENTIALS[credential][store.type], (use,))
              for credential, use in uses.items()]
    return lines
