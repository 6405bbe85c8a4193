"""Named options: what the platform offers and a document picks by name.

The platform names the options in the settings file, one top-level key per kind
(`storage: {lake-eu: {...}}`, `placement: {spot: {...}}`...); a document chooses one by name and
supplies only its own data. Each kind has a parser in `trinogen.settings.options.<kind>` that turns
one raw entry into a frozen value or raises ConfigError naming `<kind>.<name>.<field>`; `KINDS`
lists them. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import (
    authentication,
    disruption,
    exchange,
    ingress,
    opa,
    placement,
    service_accounts,
    storage,
)

# (where, raw entry) -> a frozen value; `where` is "<file>: <kind>.<name>" for messages.
Parser = Callable[[str, Mapping[str, Any]], Any]

# The file's top-level key -> the parser of one entry. Each kind registers one line here.
KINDS: dict[str, Parser] = {
    "storage": storage.parse,
    "exchange": exchange.parse,
    "authentication": authentication.parse,
    "opa": opa.parse,
    "service_accounts": service_accounts.parse,
    "ingress": ingress.parse,
    "placement": placement.parse,
    "disruption": disruption.parse,
}


def parse_kind(kind: str, values: Any, where: str) -> dict[str, Any]:
    """All entries of one kind: {name: parsed value}; names are Kubernetes-style words."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where}: {kind} must be a mapping of names to options")
    out: dict[str, Any] = {}
    for name, raw in values.items():
        at = f"{where}: {kind}.{name}"
        if not isinstance(name, str) or not name or len(name) > 63:
            raise ConfigError(f"{where}: {kind}: option names are strings of 1 to 63 characters")
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{at} must be a mapping")
        out[name] = KINDS[kind](at, raw)
    return out
