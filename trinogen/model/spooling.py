"""`spooling`: a document turns on Trino's client spooling protocol on a storage option (issue 21
item 4).

`{"spooling": {"storage": "lake-eu", "inlining": {"maxRows": 1000, "maxSize": "128kB"}}}` picks
a storage option whose settings have a `spooling` block (trinogen.settings.options.spooling: the
location, the Vault key, the retrieval mode). It becomes, on both roles:

- config.properties: `protocol.spooling.enabled=true`, `protocol.spooling.shared-secret-key`
  (the Vault key as `${ENV:...}` from the cluster's env Secret), the retrieval mode, and the
  document's inlining limits (`inlining: false` spools every result);
- etc/spooling-manager.properties: `spooling-manager.name=filesystem`, the cluster's
  `fs.location`, the store's file system (`fs.s3.enabled` and its `s3.*` lines, credentials as
  `${ENV:...}`) and the platform's segment settings.

A document never writes `protocol.spooling.*` in `properties` (trinogen.trino.companions refuses
every such key and points here): the key, the manager and the protocol come together or not at
all. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from trinogen.model.checker import Checker, show
from trinogen.model.secret_values import SPOOLING_KEY
from trinogen.model.server_secrets import env_reference
from trinogen.model.types import Identity, ServerSecret
from trinogen.model.units import DATA_SIZE, data_size_bytes
from trinogen.secrets import BoundSegment, PlaceholderError, SecretUse, settings_ref, settings_use

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.storage.options import Storage
    from trinogen.settings.options.spooling import Spooling

FIELDS = {"storage", "inlining"}
INLINING_FIELDS = {"maxRows", "maxSize"}
MANAGER_FILE = "spooling-manager.properties"  # read from etc/ by SpoolingManagerRegistry
SECRET_KEY = SPOOLING_KEY  # its Vault value is checked when read (model.secret_values)
# SpoolingConfig's bounds (Trino 476): @Min(1) @Max(1000000) rows, @MinDataSize("1kB")
# @MaxDataSize("3MB") bytes; Trino refuses to start outside them.
FIRST_VERSION = 466  # the release that brought the protocol and its spooling-filesystem plugin
MAX_ROWS = 1_000_000
MIN_SIZE, MAX_SIZE = 1024, 3 * 1024 * 1024

# The switch that turns a store's file system on in spooling-manager.properties: the plugin's
# own names, not the catalogs' fs.native-* (FileSystemSpoolingConfig, Trino 476).
SWITCHES = {"s3": "fs.s3.enabled", "gcs": "fs.gcs.enabled", "azure": "fs.azure.enabled"}

Entry = tuple[str, tuple[BoundSegment, ...]]


class Inlining(NamedTuple):
    """How much of a result Trino may still send inline: off, or per-worker limits."""

    enabled: bool = True
    max_rows: int | None = None
    max_size: str | None = None


DEFAULTS = Inlining()  # Trino's own limits


class SpoolingProtocol(NamedTuple):
    """What a document's `spooling` adds to both roles."""

    config: tuple[Entry, ...]  # config.properties lines
    manager: tuple[Entry, ...]  # spooling-manager.properties lines

    @property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        return tuple(s for _, v in (*self.config, *self.manager) for s in v
                     if isinstance(s, SecretUse))


class SpoolingLines(NamedTuple):
    """The protocol as the cluster carries it: both files' lines with every Vault value as
    `${ENV:...}`, and those values as server secrets (the env Secret, the pods' checksum)."""

    config: tuple[tuple[str, str], ...] = ()
    manager: tuple[tuple[str, str], ...] = ()
    secrets: tuple[ServerSecret, ...] = ()


NONE = SpoolingLines()


def spooling_lines(protocol: SpoolingProtocol | None) -> SpoolingLines:
    """What `build` puts into the Cluster. Every value stays `${ENV:...}` in both files, inline
    mode or not: they are read from values.yaml, where a diff could not hide a value."""
    if protocol is None:
        return NONE
    secrets = tuple(ServerSecret("spooling.storage", key, seg)
                    for key, segments in (*protocol.config, *protocol.manager)
                    for seg in segments if isinstance(seg, SecretUse))
    return SpoolingLines(_texts(protocol.config), _texts(protocol.manager), secrets)


def _texts(entries: tuple[Entry, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, "".join(env_reference(s) if isinstance(s, SecretUse) else s for s in v))
                 for k, v in entries)


def spooling(value: Any, stores: Mapping[str, Storage], who: Identity, version: str | None,
             c: Checker) -> SpoolingProtocol | None:
    """Read a document's `spooling`; None when absent or refused (reported). `version` is the
    document's trinoVersion (None when invalid: reported already)."""
    doc = c.mapping(value, "spooling", required=False)
    if doc is None:
        return None
    if _too_old(version, c):
        return None
    c.fields(doc, "spooling", FIELDS)
    store: Storage | None = c.pick(doc.get("storage"), "spooling.storage", stores, "storage",
                                   required=True)
    inlining = _inlining(doc.get("inlining"), c)
    if store is None or inlining is None:
        return None
    if store.spooling is None:
        spooled = sorted(n for n, s in stores.items() if s.spooling is not None)
        c.error("spooling.storage", f"the storage option {show(doc['storage'])} has no spooling "
                "location in the settings; pick one that has (" +
                (", ".join(spooled) or "the settings offer none") + ")")
        return None
    return protocol(store, store.spooling, who, inlining)


def _too_old(version: str | None, c: Checker) -> bool:
    if version is not None and version.isdigit() and int(version) < FIRST_VERSION:
        c.error("spooling", f"the client spooling protocol came with Trino {FIRST_VERSION}; "
                f"this document runs {version} (raise trinoVersion or remove spooling)")
        return True
    return False


def _inlining(value: Any, c: Checker) -> Inlining | None:
    """`inlining`: false (spool every result), or limits; absent: Trino's defaults."""
    if value is False:
        return Inlining(enabled=False)
    if value is None:
        return DEFAULTS
    doc = c.mapping(value, "spooling.inlining")
    if doc is None:
        return None
    c.fields(doc, "spooling.inlining", INLINING_FIELDS)
    rows = c.integer(doc.get("maxRows"), "spooling.inlining.maxRows", required=False,
                     minimum=1, maximum=MAX_ROWS)
    size = _max_size(doc.get("maxSize"), c)
    bad = (doc.get("maxRows") is not None and rows is None) or \
        (doc.get("maxSize") is not None and size is None)
    return None if bad else Inlining(True, rows, size)


def _max_size(value: Any, c: Checker) -> str | None:
    size = c.string(value, "spooling.inlining.maxSize", required=False, pattern=DATA_SIZE,
                    rule="a Trino data size such as 128kB or 1MB", max_len=32)
    if size is not None and not MIN_SIZE <= (data_size_bytes(size) or 0) <= MAX_SIZE:
        c.error("spooling.inlining.maxSize", f"{show(size)} is outside Trino's bounds (1kB to "
                "3MB)")
        return None
    return size


def protocol(store: Storage, spool: Spooling, who: Identity,
             inlining: Inlining = DEFAULTS) -> SpoolingProtocol | None:
    """The lines of one cluster; None when its identity is unusable (reported elsewhere)."""
    from trinogen.kinds.storage.document import vault_uses  # a cluster that spools

    uses = vault_uses(store, who)
    if uses is None or who.cluster_id is None or who.owner is None:
        return None
    key = settings_use(spool.shared_secret_key, who.cluster_id, who.owner)
    return SpoolingProtocol(config_lines(spool, key, inlining),
                            manager_lines(store, spool, spool.for_cluster(who.cluster_id,
                                                                          who.owner), uses))


def check_private(stores: Mapping[str, Storage], who: Identity,
                  uses: Iterable[tuple[str, SecretUse]], c: Checker) -> None:
    """Report a document placeholder (field path, use) naming this cluster's spooling key in any
    storage option, picked or not: the key signs the segment ids the coordinator serves (a
    forged id is a read of the spool store with the cluster's credentials), and the platform
    may keep it inside secrets.scope."""
    if who.cluster_id is None or who.owner is None:
        return
    keys = {}
    for name, store in stores.items():
        if store.spooling is not None:
            try:
                keys[settings_ref(store.spooling.shared_secret_key, who.cluster_id,
                                  who.owner)] = name
            except PlaceholderError:  # checked with a sample when the settings loaded
                continue
    if not keys:
        return  # no storage option spools: no key to leak (and `uses` is not listed)
    for path, use in uses:
        if use.ref in keys:
            c.error(path, f"placeholder {use.placeholder.text} names the spooling key of the "
                    f"storage option {keys[use.ref]!r}; documents may not use it")


def config_lines(spool: Spooling, key: SecretUse, inlining: Inlining) -> tuple[Entry, ...]:
    """config.properties of both roles (SpoolingEnabledConfig, SpoolingConfig)."""
    lines: list[Entry] = [("protocol.spooling.enabled", ("true",)), (SECRET_KEY, (key,))]
    if spool.retrieval_mode is not None:
        lines.append(("protocol.spooling.retrieval-mode", (spool.retrieval_mode,)))
    if not inlining.enabled:
        lines.append(("protocol.spooling.inlining.enabled", ("false",)))
    if inlining.max_rows is not None:
        lines.append(("protocol.spooling.inlining.max-rows", (str(inlining.max_rows),)))
    if inlining.max_size is not None:
        lines.append(("protocol.spooling.inlining.max-size", (inlining.max_size,)))
    return tuple(lines)


def manager_lines(store: Storage, spool: Spooling, location: str,
                  uses: Mapping[str, SecretUse]) -> tuple[Entry, ...]:
    """spooling-manager.properties (FileSystemSpoolingConfig and the store's file system)."""
    from trinogen.kinds.storage.document import catalog_lines  # a cluster that spools

    lines: list[Entry] = [("spooling-manager.name", ("filesystem",)), ("fs.location", (location,))]
    lines += [(k, (v,)) for k, v in catalog_lines(store, SWITCHES[store.type], uses)]
    if spool.segment_ttl is not None:
        lines.append(("fs.segment.ttl", (spool.segment_ttl,)))
    lines += [(k, (v,)) for k, v in spool.properties]
    return tuple(lines)
