"""Vault values Trino itself checks at startup, checked when Vault is read instead.

`VALUE_CHECKS` maps a server property to a check of the Vault value that fills it
(trinogen.desired.secret_problems): a bad value then fails the sync for that cluster, naming the
field, instead of every pod failing to start. Messages never quote the value. Kept apart from
the feature readers (trinogen.model.spooling) so that a sync the render cache serves loads no
validator (tests/test_startup.py). Pure.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

SPOOLING_KEY = "protocol.spooling.shared-secret-key"


def spooling_key_problem(value: str) -> str | None:
    """Why a value cannot be the spooling protocol's shared secret key, or None. Trino 476
    refuses to start unless it decodes (java.util.Base64's basic decoder, padding optional) to
    256 bits (SpoolingConfig: "must be 256 bits long")."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or len(raw) != 32:
        return ("Vault holds no base64-encoded 256-bit key there (Trino refuses to start "
                "without one): store 32 random bytes, base64-encoded (openssl rand -base64 32)")
    return None


VALUE_CHECKS: dict[str, Callable[[str], str | None]] = {SPOOLING_KEY: spooling_key_problem}
