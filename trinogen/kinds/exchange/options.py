"""`exchange:` options: where fault-tolerant execution spools its exchange data (issue 14,
item 4).

`exchange: {fte-eu: {storage: lake-eu, location: "s3://trino-exchange/{cluster}"}}` names a
storage option (its credentials and endpoint) and one or more base locations; `{cluster}` and
`{owner}` are substituted, so every cluster spools under its own prefix. A document picks one with
`faultTolerance.exchange`. Turned into the chart's `server.exchangeManager` and
`additionalExchangeManagerProperties` by `trinogen.kinds.exchange.document`. Pure.

That `storage` names a storage option is checked once all options are loaded
(`trinogen.settings.checks`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options.fields import property_lines
from trinogen.settings.options.metadata import SAMPLE, check_one_per_cluster

# The schemes Trino's filesystem exchange serves, by storage type (FileSystemExchangeModule:
# s3 and gs through its S3 client, gs through GCS's with a JSON key, abfs/abfss through Azure).
SCHEMES = {"s3": ("s3",), "gcs": ("gs",), "azure": ("abfs", "abfss")}
_FIELDS = {"storage", "location", "properties"}
_LOCATION = re.compile(r"(?P<scheme>[a-z0-9]+)://(?P<authority>[^/\s]+)(?P<path>/[^\s,]*)?")
_TUNING = re.compile(r"exchange\.[-a-z0-9.]+")
# Keys the chart or the storage write into exchange-manager.properties.
_OWNED_PREFIXES = ("exchange.s3.", "exchange.gcs.", "exchange.azure.")
_OWNED = frozenset({"exchange-manager.name", "exchange.base-directories",
                    "exchange.base-directory"})


@dataclass(frozen=True)
class Exchange:
    """One named exchange: a storage option and base locations (templates)."""

    storage: str  # a `storage` option name
    locations: tuple[str, ...]  # with {cluster} and {owner} still in them
    properties: tuple[tuple[str, str], ...] = ()  # tuning lines (exchange.sink-buffers-...)

    def for_cluster(self, cluster: str, owner: str) -> tuple[str, ...]:
        """The base directories of one cluster."""
        return tuple(loc.format(cluster=cluster, owner=owner) for loc in self.locations)

    def scheme_problem(self, storage_type: str, account: str | None) -> str | None:
        """Why the locations do not fit a store (wrong scheme or account), or None."""
        schemes = SCHEMES[storage_type]
        for loc in self.locations:
            m = _LOCATION.fullmatch(loc.format(**SAMPLE))
            assert m is not None  # parse() checked it
            if m["scheme"] not in schemes:
                return (f"location {loc!r} is not on a {storage_type} store (use "
                        f"{' or '.join(s + '://' for s in schemes)})")
            host = m["authority"].rpartition("@")[2]
            if account is not None and not host.startswith(f"{account}."):
                return f"location {loc!r} is not in the storage account {account!r}"
        return None


def parse(where: str, raw: Mapping[str, Any]) -> Exchange:
    """One `exchange.<name>` entry; ConfigError naming `exchange.<name>.<field>`."""
    unknown = sorted(str(k) for k in raw if k not in _FIELDS)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]} is not a field of an exchange (fields: "
                          f"{', '.join(sorted(_FIELDS))})")
    storage = raw.get("storage")
    if type(storage) is not str or not storage:
        raise ConfigError(f"{where}.storage must name a storage option")
    value = raw.get("location")
    locations = [value] if isinstance(value, str) else value
    if not isinstance(locations, list) or not locations:
        raise ConfigError(f"{where}.location must be a location or a list of them "
                          "(s3://bucket/{cluster})")
    for loc in locations:
        _location(where, loc)
    return Exchange(storage, tuple(locations), _properties(where, raw.get("properties")))


def _location(where: str, loc: Any) -> None:
    if type(loc) is not str or len(loc) > 1024:
        raise ConfigError(f"{where}.location must be text such as s3://bucket/{{cluster}}")
    try:
        sample = loc.format(**SAMPLE)
    except (KeyError, IndexError, ValueError) as e:
        raise ConfigError(f"{where}.location {loc!r}: only {{cluster}} and {{owner}} are "
                          f"substituted ({e})") from e
    if not _LOCATION.fullmatch(sample):
        raise ConfigError(f"{where}.location {loc!r} is not a <scheme>://<bucket>/<path> "
                          "location without spaces or commas")
    if "{cluster}" not in loc:
        # Two clusters sharing a base directory would read each other's exchange files and
        # delete them when their queries end.
        raise ConfigError(f"{where}.location {loc!r} must contain {{cluster}}: every cluster "
                          "needs its own exchange prefix")
    check_one_per_cluster(f"{where}.location", loc, "exchange prefix")


def _properties(where: str, value: Any) -> tuple[tuple[str, str], ...]:
    def check_key(key: Any) -> None:
        if type(key) is not str or not _TUNING.fullmatch(key):
            raise ConfigError(f"{where}.properties: {key!r} is not an exchange.* property")
        if key in _OWNED or key.startswith(_OWNED_PREFIXES):
            raise ConfigError(f"{where}.properties: {key} comes from the location and the "
                              "storage option; set it there")

    return property_lines(where, value, check_key)
