"""`faultTolerance`: Trino's retry policy and the exchange it spools to (issue 14 item 4).

`{"retryPolicy": "TASK"|"QUERY", "exchange": "<name>"}` picks an `exchange` option of the
settings (a storage option plus base locations with `{cluster}`/`{owner}`: the `exchange` kind,
trinogen/kinds/exchange/, picked and filled here), and becomes
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
from typing import Any, NamedTuple

from trinogen.model import kinds
from trinogen.model.checker import Checker, show
from trinogen.model.types import Identity
from trinogen.settings import Settings

RETRY_POLICY = "retry-policy"
POLICIES = ("TASK", "QUERY")
FIELDS = {"retryPolicy", "exchange"}


class FaultTolerance(NamedTuple):
    """What a document's faultTolerance adds: config lines and the exchange manager."""

    config: tuple[tuple[str, str], ...] = ()  # retry-policy, for additionalConfigProperties
    kinds: kinds.Parts = ()  # the `exchange` kind's value (its exchange manager), if picked


def fault_tolerance(value: Any, server: Mapping[str, tuple[str, str]], s: Settings,
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
    picked = kinds.pick_one("exchange", ft.get("exchange"), s, c)
    if ft.get("exchange") is None:
        _without_exchange(policy, c)
    if policy is None:
        return FaultTolerance()
    parts: kinds.Parts = ()
    if picked:
        if who.cluster_id is None or who.owner is None:
            return FaultTolerance()  # the cluster's identity was invalid (reported already)
        parts = kinds.fill(picked, who.cluster_id, who.owner, {}, s, c)
        if not parts:
            return FaultTolerance()  # the store's Vault paths could not be filled in
    return FaultTolerance(((RETRY_POLICY, policy),), parts)


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
