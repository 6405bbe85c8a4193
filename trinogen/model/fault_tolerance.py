"""`faultTolerance`: Trino's retry policy and the exchange it spools to (issue 14 item 4).

`{"retryPolicy": "TASK"|"QUERY", "exchange": "<name>"}` picks an `exchange` option of the
settings (a storage option plus base locations with `{cluster}`/`{owner}`), and becomes
`retry-policy=<policy>` in config.properties of both roles (Trino reads it on every node) plus the
chart's `server.exchangeManager` (`exchange-manager.name=filesystem`, `exchange.base-directories`)
and `additionalExchangeManagerProperties` (the storage's `exchange.s3.*`, `exchange.gcs.*` or
`exchange.azure.*` settings; Vault credentials as `${ENV:...}` from the cluster's env Secret).

Refused: `retry-policy` also set in `properties` (one place), TASK without an exchange, and a
hand-set `retry-policy=TASK` without `faultTolerance` (Trino starts, but queries fail: TASK
retries need spooled task output; tests/test_trino_real_fte.py shows it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from trinogen.model.checker import Checker, show
from trinogen.model.storage import Identity, vault_uses
from trinogen.model.types import ExchangeManager
from trinogen.secrets import BoundSegment, SecretUse

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.settings.options.exchange import Exchange
    from trinogen.settings.options.storage import Storage

RETRY_POLICY = "retry-policy"
POLICIES = ("TASK", "QUERY")
FIELDS = {"retryPolicy", "exchange"}
# Trino's exchange-manager property for each Vault-held credential of a store.
# (Azure's access key goes into a connection string instead, see exchange_lines.)
EXCHANGE_CREDENTIALS = {"access_key": {"s3": "exchange.s3.aws-access-key"},
                        "secret_key": {"s3": "exchange.s3.aws-secret-key"},
                        "json_key": {"gcs": "exchange.gcs.json-key"}}
AZURE_CONNECTION = "exchange.azure.connection-string"


class FaultTolerance(NamedTuple):
    """What a document's faultTolerance adds: config lines and the exchange manager."""

    config: tuple[tuple[str, str], ...] = ()  # retry-policy, for additionalConfigProperties
    exchange: ExchangeManager | None = None


def fault_tolerance(value: Any, server: Mapping[str, tuple[str, str]],
                    options: Mapping[str, Exchange], stores: Mapping[str, Storage],
                    who: Identity, c: Checker) -> FaultTolerance:
    """Read `faultTolerance`; `server` is the document's flat `properties` (key -> value, path)."""
    by_hand = server.get(RETRY_POLICY)
    ft = c.mapping(value, "faultTolerance", required=False)
    if ft is None:
        _check_by_hand(by_hand, c)
        return FaultTolerance()
    c.fields(ft, "faultTolerance", FIELDS)
    if by_hand is not None:
        c.error(by_hand[1], "retry-policy is set by faultTolerance.retryPolicy; set it in one "
                "place (remove it here)")
    policy = _policy(ft.get("retryPolicy"), c)
    exchange: Exchange | None = c.pick(ft.get("exchange"), "faultTolerance.exchange", options,
                                       "exchange")
    if ft.get("exchange") is None:
        _without_exchange(policy, c)
    if policy is None:
        return FaultTolerance()
    manager = None
    if exchange is not None:
        manager = exchange_manager(exchange, stores[exchange.storage], who)
        if manager is None:
            return FaultTolerance()  # the cluster's identity was invalid (reported already)
    return FaultTolerance(((RETRY_POLICY, policy),), manager)


def _check_by_hand(by_hand: tuple[str, str] | None, c: Checker) -> None:
    """A hand-set retry-policy without faultTolerance stays a plain server property (checked by
    the registry), except TASK: no exchange manager can be had that way, and Trino 476 then
    starts but fails every query (tests/test_trino_real_fte.py). Airlift reads enum values in
    any case, so `task` is TASK too."""
    if by_hand is not None and by_hand[0].strip().upper() == "TASK":
        c.error(by_hand[1], "retry-policy TASK needs an exchange manager, which only "
                'faultTolerance gives: write "faultTolerance": {"retryPolicy": "TASK", '
                '"exchange": "<an exchange option>"} instead (without one Trino fails every '
                "query)")


def _policy(value: Any, c: Checker) -> str | None:
    """`retryPolicy`: TASK or QUERY (else reported)."""
    policy = c.string(value, "faultTolerance.retryPolicy", max_len=16)
    if policy is not None and policy not in POLICIES:
        c.error("faultTolerance.retryPolicy", f"{show(policy)} is not a retry policy: choose "
                "TASK or QUERY (leave faultTolerance out for none)")
        return None
    return policy


def _without_exchange(policy: str | None, c: Checker) -> None:
    """TASK needs an exchange; QUERY works without one, for small results only."""
    if policy == "TASK":
        c.error("faultTolerance.exchange", "is required with retryPolicy TASK: Trino retries "
                "tasks from their spooled output, and without an exchange manager every "
                "query fails")
    elif policy == "QUERY":
        c.warn("faultTolerance.exchange", "without an exchange, Trino retries only queries "
               "whose output fits its deduplication buffer (exchange.deduplication-buffer-size, "
               "32MB by default); name an exchange to retry any query")


def exchange_manager(exchange: Exchange, store: Storage, who: Identity) -> ExchangeManager | None:
    """The exchange manager of one cluster: its base directories and properties."""
    uses = vault_uses(store, who)
    if uses is None or who.cluster_id is None or who.owner is None:
        return None
    lines = exchange_lines(store, uses)
    lines += [(k, (v,)) for k, v in exchange.properties]
    return ExchangeManager(exchange.for_cluster(who.cluster_id, who.owner), tuple(sorted(lines)))


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
