"""The `spooling` block of a storage option: where Trino's client spooling protocol keeps results.

    storage:
      lake-eu:
        type: s3
        region: eu-west-1
        spooling:
          location: s3://trino-spool/{cluster}/      # one prefix per cluster
          shared_secret_key: secret/trino/{cluster}/spooling#key   # Vault: base64, 256 bits
          retrieval_mode: STORAGE                    # optional, Trino's default
          segment_ttl: 12h                           # optional, Trino's default
          properties: {fs.segment.pruning.interval: 5m}

With the protocol on (Trino 466+, issue 21 item 4) a large result leaves the cluster as segments
that the workers write to object storage and the client downloads; only small results stay
inline. A document opts in with `spooling: {storage: lake-eu}` (trinogen.model.spooling), and
trinogen writes `etc/spooling-manager.properties` on every node plus the protocol's lines in
config.properties. Pure.

Facts from Trino 476's spooling-filesystem plugin (FileSystemSpoolingModule,
FileSystemSpoolingConfig, javap): it binds file systems for the schemes `s3`, `gs` and `abfs`
only (not `abfss`, not `file`: a local disk cannot hold spooled segments, and neither can HDFS),
switched on with `fs.s3.enabled`, `fs.gcs.enabled`, `fs.azure.enabled` (not the catalogs'
`fs.native-*` names), and `fs.location` must end with a slash (added here when missing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.secrets import PlaceholderError, settings_ref
from trinogen.settings.options.fields import property_lines
from trinogen.settings.options.metadata import SAMPLE, check_one_per_cluster

# The location scheme the plugin serves for each store type (FileSystemSpoolingModule binds
# exactly these three, Trino 476).
SCHEMES = {"s3": "s3", "gcs": "gs", "azure": "abfs"}
# SpoolingConfig.SegmentRetrievalMode: how a client fetches a segment (Trino 476).
RETRIEVAL_MODES = ("STORAGE", "COORDINATOR_STORAGE_REDIRECT", "COORDINATOR_PROXY",
                   "WORKER_PROXY")
FIELDS = {"location", "shared_secret_key", "retrieval_mode", "segment_ttl", "properties"}
# Letters a location may hold: a bucket, an account host, a path; no `{{` (the chart passes
# additionalConfigFiles through Helm's tpl), no spaces, no `${` (nothing is substituted in it).
_LOCATION = re.compile(r"(?P<scheme>[a-z0-9]+)://(?P<authority>[-A-Za-z0-9_.@]+)"
                       r"(?P<path>/[-A-Za-z0-9_.~/=]*)?")
_DURATION = re.compile(r"\d+(\.\d+)?(ns|us|ms|s|m|h|d)")  # io.airlift.units.Duration
# What `properties` may tune: the segments' handling and the layout (FileSystemSpoolingConfig,
# PartitionedLayoutConfig); the rest of the file comes from the fields and the store.
_TUNING = re.compile(r"fs\.(segment\.[-a-z0-9.]+|layout(\.[-a-z0-9.]+)?)")
_OWNED = frozenset({"fs.segment.ttl"})


@dataclass(frozen=True)
class Spooling:
    """Where one storage option spools results, and the Vault key that signs segment ids."""

    location: str  # with {cluster} and {owner} still in it; ends with "/"
    shared_secret_key: str  # a Vault reference template <mount>/<path>#<key>
    retrieval_mode: str | None = None
    segment_ttl: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    def for_cluster(self, cluster: str, owner: str) -> str:
        """The fs.location of one cluster."""
        return self.location.format(cluster=cluster, owner=owner)


def parse(where: str, raw: Any, store_type: str, account: str | None) -> Spooling:
    """A storage option's `spooling` block; ConfigError naming `<where>.<field>`."""
    if store_type not in SCHEMES:
        raise ConfigError(f"{where} is not available on a {store_type} store: Trino's spooling "
                          "file system serves s3, gcs and azure stores only")
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a mapping with location and shared_secret_key")
    unknown = sorted(str(k) for k in raw if k not in FIELDS)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]} is not a field of spooling (fields: "
                          f"{', '.join(sorted(FIELDS))})")
    return Spooling(_location(where, raw.get("location"), store_type, account),
                    _secret(where, raw.get("shared_secret_key")),
                    _mode(where, raw.get("retrieval_mode")), _ttl(where, raw.get("segment_ttl")),
                    _properties(where, raw.get("properties")))


def _mode(where: str, mode: Any) -> str | None:
    if mode is not None and mode not in RETRIEVAL_MODES:
        raise ConfigError(f"{where}.retrieval_mode must be one of {', '.join(RETRIEVAL_MODES)}")
    return str(mode) if mode is not None else None


def _ttl(where: str, ttl: Any) -> str | None:
    if ttl is not None and (type(ttl) is not str or not _DURATION.fullmatch(ttl)):
        raise ConfigError(f"{where}.segment_ttl must be a duration such as 30m or 12h")
    return ttl


def _location(where: str, loc: Any, store_type: str, account: str | None) -> str:
    at = f"{where}.location"
    scheme = SCHEMES[store_type]
    if type(loc) is not str or len(loc) > 1024:
        raise ConfigError(f"{at} must be text such as {scheme}://bucket/{{cluster}}/")
    try:
        sample = loc.format(**SAMPLE)
    except (KeyError, IndexError, ValueError) as e:
        raise ConfigError(f"{at} {loc!r}: only {{cluster}} and {{owner}} are substituted "
                          f"({e})") from e
    m = _LOCATION.fullmatch(sample)
    if m is None:
        raise ConfigError(f"{at} {loc!r} is not a {scheme}://<bucket>/<path> location of "
                          "letters, digits and -_.~/=")
    if m["scheme"] != scheme:
        raise ConfigError(f"{at} {loc!r} is not on a {store_type} store: Trino spools to "
                          f"{scheme}:// locations there")
    if account is not None and not m["authority"].rpartition("@")[2].startswith(f"{account}."):
        raise ConfigError(f"{at} {loc!r} is not in the storage account {account!r}")
    if "{cluster}" not in loc:
        # Two clusters under one prefix would serve and prune each other's segments.
        raise ConfigError(f"{at} {loc!r} must contain {{cluster}}: every cluster needs its own "
                          "spooling prefix")
    check_one_per_cluster(at, loc, "spooling prefix")
    return loc if loc.endswith("/") else f"{loc}/"



def _secret(where: str, ref: Any) -> str:
    at = f"{where}.shared_secret_key"
    if type(ref) is not str:
        raise ConfigError(f"{at} must be a Vault reference <mount>/<path>#<key> holding a "
                          "base64-encoded 256-bit key")
    try:  # checked with stand-ins for what each cluster substitutes
        settings_ref(ref, **SAMPLE)
    except PlaceholderError as e:
        raise ConfigError(f"{at}: {e} (only {{cluster}} and {{owner}} are substituted)") from e
    if "{cluster}" not in ref:
        # The key signs the segment ids a cluster hands out; a key shared by clusters lets one
        # cluster's coordinator accept the ids another minted.
        raise ConfigError(f"{at} {ref!r} must contain {{cluster}}: every cluster needs its own "
                          "key")
    check_one_per_cluster(at, ref, "key")
    return ref


def _properties(where: str, value: Any) -> tuple[tuple[str, str], ...]:
    def check_key(key: Any) -> None:
        if type(key) is not str or not _TUNING.fullmatch(key):
            raise ConfigError(f"{where}.properties: {key!r} is not an fs.segment.* or "
                              "fs.layout* property")
        if key in _OWNED:
            raise ConfigError(f"{where}.properties: {key} comes from segment_ttl; set it there")

    return property_lines(where, value, check_key)
