"""A catalog's pick of a storage option made its file-system properties (issue 13 item 5).

`connectors[].storage: "lake-eu"` (or a catalog-library entry's `storage`) picks a `storage`
option of the settings; the connectors reader picks it (`trinogen.model.kinds.option_of`, the
field `{catalog}.storage` of `trinogen.kinds.PER_CATALOG`) and imports this module only then.
`storage_properties()` turns the pick into the catalog lines the connector needs (the native
file system's switch and its `s3.*`, `gcs.*` or `azure.*` settings), with Vault credentials bound
to `${ENV:...}` like any connector placeholder. The storage lives in one place: a catalog that
names a store may not set that file system's properties itself, and a connector that reads no
file system (jdbc, kafka...) may not name one. The registry of the document's Trino version
judges the generated names like any other catalog property (the caller adds them to the
catalog's texts). `vault_uses` and `catalog_lines` serve the spool and the exchange on a store
too. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker, field_path, show
from trinogen.model.trino import TrinoCheck
from trinogen.model.types import Identity
from trinogen.secrets import BoundSegment, SecretUse, settings_use
from trinogen.trino.checks import LAKE_CONNECTORS

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.storage.options import Storage

# Each store type's file-system switch, as Trino >= 458 names it, and the name Trino 483 gave
# it (the old one stays as a deprecated alias there). Legacy Hadoop kept its name; a document
# may not write it (trinogen.model.local_files), so an `hdfs` store is the only way to it.
SWITCHES = {"s3": ("fs.native-s3.enabled", "fs.s3.enabled"),
            "gcs": ("fs.native-gcs.enabled", "fs.gcs.enabled"),
            "azure": ("fs.native-azure.enabled", "fs.azure.enabled"),
            "hdfs": ("fs.hadoop.enabled", "fs.hadoop.enabled")}
# Trino's catalog property for each Vault-held credential of a store.
CREDENTIAL_KEYS = {"access_key": {"s3": "s3.aws-access-key", "azure": "azure.access-key"},
                   "secret_key": {"s3": "s3.aws-secret-key"},
                   "json_key": {"gcs": "gcs.json-key"}}

Entry = tuple[str, tuple[BoundSegment, ...]]


def storage_properties(store: Storage, value: Any, path: str, props: Mapping[str, Any],
                       who: Identity, trino: TrinoCheck, c: Checker) -> list[Entry]:
    """The catalog entries the store `value` picked adds (empty when it is refused here)."""
    connector = props.get("connector.name")
    spath = f"{path}.storage"
    if not isinstance(connector, str) or not reads_files(trino, connector, store.type):
        c.error(spath, f"connector {show(connector)} reads no file system, so a storage option "
                "does not apply (lake connectors: " + ", ".join(sorted(LAKE_CONNECTORS)) +
                "); remove storage")
        return []
    owned = owned_keys(store.type)
    for key in props:
        if key in owned or key.startswith(store.prefix):
            c.error(field_path(path, "properties", key), f"is written by the storage option "
                    f"{show(value)} ({spath}): storage is set in one place; remove it here "
                    "(the platform tunes the store in the settings)")
    uses = vault_uses(store, who)
    if uses is None:
        return []  # the cluster's identity was invalid (reported already)
    return [(k, (v,)) for k, v in catalog_lines(store, switch_name(trino, connector, store.type),
                                                 uses)]


def reads_files(trino: TrinoCheck, connector: str, kind: str) -> bool:
    """Does this connector take a native file system of this type? The registry knows for the
    document's version; without it (not covered, or checks off) the lake connectors do, and a
    version read without some of its jars (incomplete: 480's hive lacks the file-system jars)
    may not know a lake connector's switch, so its word "no" does not count there."""
    registry = trino.registry
    known = registry.connector(connector) if registry is not None else None
    if known is None:
        return connector in LAKE_CONNECTORS
    if any(known.accepts(s) for s in SWITCHES[kind]):
        return True
    return registry is not None and not registry.complete and connector in LAKE_CONNECTORS


def switch_name(trino: TrinoCheck, connector: str, kind: str) -> str:
    """The switch's current name for the document's version (Trino 483 renamed it)."""
    old, new = SWITCHES[kind]
    known = trino.registry.connector(connector) if trino.registry is not None else None
    return new if known is not None and known.known(new) and not known.known(old) else old


def owned_keys(kind: str) -> frozenset[str]:
    """What a catalog naming a store of this type may not set itself."""
    return frozenset(SWITCHES[kind])


def vault_uses(store: Storage, who: Identity) -> dict[str, SecretUse] | None:
    """Each Vault credential of the store bound for this cluster: credential -> SecretUse.

    The references come from the settings, not the document, so the document's secret scope
    does not apply: the platform chose them (and may put {cluster} or {owner} in them).
    """
    if not store.vault:
        return {}
    if who.cluster_id is None or who.owner is None:
        return None
    out = {}
    for credential, template in store.vault:
        out[credential] = settings_use(template, who.cluster_id, who.owner)
    return out


def catalog_lines(store: Storage, switch: str,
                  uses: Mapping[str, SecretUse]) -> list[tuple[str, str | SecretUse]]:
    """The catalog properties of a store, in a fixed order (the catalog sorts them anyway)."""
    lines: list[tuple[str, str | SecretUse]] = [(switch, "true")]
    if store.type == "s3":
        optional = [("s3.region", store.region), ("s3.endpoint", store.endpoint),
                    ("s3.sse.type", store.sse_type), ("s3.sse.kms-key-id", store.sse_kms_key_id),
                    ("s3.iam-role", store.iam_role)]
        if store.path_style_access is not None:
            optional.append(("s3.path-style-access", str(store.path_style_access).lower()))
        lines += [(k, v) for k, v in optional if v is not None]
    elif store.type == "gcs" and store.project_id is not None:
        lines.append(("gcs.project-id", store.project_id))
    elif store.type == "azure":
        # DEFAULT is Azure's credential chain (workload identity among it); Trino 476 knows
        # ACCESS_KEY, OAUTH and DEFAULT
        lines.append(("azure.auth-type", "DEFAULT" if store.workload_identity else "ACCESS_KEY"))
    lines += [(CREDENTIAL_KEYS[credential][store.type], use)
              for credential, use in uses.items()]
    lines += list(store.properties)
    return lines
