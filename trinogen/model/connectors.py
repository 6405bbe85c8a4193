"""`connectors`: one Trino catalog each, its name checked and its values bound to secrets.

`catalog_properties()` is the one place where a catalog's properties are judged; a rule about a
catalog property (e.g. what a given connector accepts) belongs there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model import kinds
from trinogen.model.checker import PROPERTY_KEY_RULE, Checker, field_path, property_key_ok, show
from trinogen.model.jdbc_options import is_jdbc_url
from trinogen.model.library import NO_LIBRARY, Library, resolve
from trinogen.model.local_files import local_file_problem
from trinogen.model.properties import segments
from trinogen.model.rules import (
    CONNECTOR_NAME,
    MAX_CONNECTOR_NAME,
    MAX_CONNECTORS,
    RESERVED_CATALOGS,
)
from trinogen.model.trino import TrinoCheck
from trinogen.model.types import Connector, Identity
from trinogen.secrets import BoundSegment, PlaceholderError, bind
from trinogen.settings import SecretSettings, Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.storage.options import Storage

# A key that takes a connection URL (`connection-url`, `iceberg.jdbc-catalog.connection-url`,
# `mongodb.connection-url`): when a placeholder comes before the scheme the document wrote,
# the value may be a JDBC URL that only Vault knows.
URL_KEY = "connection-url"
_SCHEME = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*:")

CatalogEntries = tuple[tuple[str, tuple[BoundSegment, ...]], ...]


@dataclass(frozen=True)
class Binding:
    """What a placeholder is bound with: the cluster's identity and the secret settings.

    `cluster_id` or `owner` is None when the document's own was invalid (reported already):
    then a placeholder's scope cannot be decided, and its value is dropped.
    """

    cluster_id: str | None
    owner: str | None
    secrets: SecretSettings
    settings: Settings  # the options a catalog picks (`storage`: trinogen.kinds.PER_CATALOG)

    def bind(self, text: str, path: str, c: Checker) -> tuple[BoundSegment, ...] | None:
        """Split a value around its placeholders and bind each to a Vault reference."""
        found = segments(text, path, c, instead="write a {{ NAME }} placeholder instead")
        if found is None:
            return None
        out: list[BoundSegment] = []
        for seg in found:
            if isinstance(seg, str):
                out.append(seg)
                continue
            if self.cluster_id is None or self.owner is None:
                return None  # reported already; scope cannot be decided without them
            try:
                out.append(bind(seg, cluster=self.cluster_id, owner=self.owner,
                                refs=self.secrets.refs, default_ref=self.secrets.default_ref,
                                scope=self.secrets.scope))
            except PlaceholderError as e:
                c.error(path, str(e))
                return None
        return tuple(out)


def connectors(value: Any, binding: Binding, trino: TrinoCheck, c: Checker,
               library: Library = NO_LIBRARY) -> tuple[Connector, ...] | None:
    """Every connector of a document; None when the list itself is unusable."""
    entries = c.entries(value, "connectors", MAX_CONNECTORS,
                        " (all catalogs share one ConfigMap, limited to 1 MiB)")
    if entries is None:
        return None
    out: list[Connector] = []
    seen: dict[str, int] = {}  # lowercased name -> index of its first connector
    for i, raw in enumerate(entries):
        found = _connector(raw, i, seen, binding, trino, c, library)
        if found is not None:
            out.append(found)
    # The catalogs share one ConfigMap: its size is measured as written (render.limits).
    return tuple(out)


def _connector(raw: Any, i: int, seen: dict[str, int], binding: Binding, trino: TrinoCheck,
               c: Checker, library: Library) -> Connector | None:
    """One entry: its Connector (None: unusable, reported)."""
    path = f"connectors[{i}]"
    conn = c.mapping(raw, path)
    shared = None
    if conn is not None and "shared" in conn:  # a shared catalog's reference (model.library)
        shared = library.catalogs.get(conn["shared"]) if type(conn["shared"]) is str else None
        conn = resolve(conn, path, binding.owner, library, c)
    if conn is None:
        return None
    c.fields(conn, path, {"name", "properties", "storage"})
    name = _connector_name(conn.get("name"), path, c)
    if name is not None:
        _check_unique(name, i, seen, path, c)
        path = f"connectors[{json.dumps(name)}]"
    props = c.mapping(conn.get("properties"), f"{path}.properties")
    if props is None:
        return None
    entries = catalog_properties(props, path, binding, trino, c, storage=conn.get("storage"))
    origin = (shared.name, shared.doc_id) if shared is not None else None
    return None if name is None else Connector(name, entries, origin)


def _connector_name(value: Any, path: str, c: Checker) -> str | None:
    name = c.string(value, f"{path}.name", pattern=CONNECTOR_NAME, max_len=MAX_CONNECTOR_NAME,
                    rule="use letters, digits, '-', '_' and '.' (it names the catalog, its "
                    "file and its ConfigMap key)")
    if name is None:
        return None
    if name.startswith(".") or name.endswith(".") or ".." in name:
        # a trailing dot makes "<name>..properties" and collides with <name> on filesystems
        # that drop trailing dots
        c.error(f"{path}.name", f"{show(name)} may not start or end with '.' or contain "
                "'..'; rename the connector")
        return None
    if name.lower() in RESERVED_CATALOGS:
        c.error(f"{path}.name", f"{show(name)} is reserved by Trino for its internal catalog "
                "(Trino refuses to start); rename the connector")
        return None
    if name != name.lower():
        c.warn(f"{path}.name", f"{show(name)} has uppercase letters: Trino matches catalog "
               "names in SQL in lowercase, so prefer a lowercase name")
    return name


def _check_unique(name: str, index: int, seen: dict[str, int], path: str, c: Checker) -> None:
    folded = name.lower()
    if folded in seen:
        c.error(f"{path}.name", f"{show(name)} repeats connectors[{seen[folded]}].name "
                "(names must be unique, ignoring case)")
    seen.setdefault(folded, index)


def catalog_properties(
    props: Mapping[str, Any], path: str, binding: Binding, trino: TrinoCheck, c: Checker,
    *, storage: Any = None,
) -> CatalogEntries:
    """Judge one catalog's properties: its entries (connector.name first, the rest sorted). The
    registry of the document's Trino version
    judges the names (and the file systems their values switch on) once each is plain text,
    those a picked storage option adds (`trinogen.kinds.storage`) included."""
    if "connector.name" not in props:
        c.error(f"{path}.properties", "needs \"connector.name\" (e.g. \"hive\", \"mysql\")")
    entries: list[tuple[str, tuple[BoundSegment, ...]]] = []
    texts: dict[str, tuple[str, str]] = {}
    for key, raw_value in props.items():
        kpath = field_path(path, "properties", key)
        text = _property_text(key, raw_value, kpath, c)
        if text is None:
            continue
        texts[key] = (text, kpath)
        bound = binding.bind(text, kpath, c)
        if bound is not None and (len(bound) == 1 and type(bound[0]) is str  # most values
                                  or not _secret_in_url(key, text, bound, kpath, c)):
            entries.append((key, bound))
    if storage is not None:  # a store picked: its file-system properties join the catalog
        for key, bound in _storage_lines(storage, path, props, binding, trino, c):
            entries.append((key, bound))
            texts[key] = (_env_text(bound), f"{path}.storage")
    trino.catalog(f"{path}.properties", texts)
    entries.sort(key=lambda kv: (kv[0] != "connector.name", kv[0]))
    return tuple(entries)


def _storage_lines(value: Any, path: str, props: Mapping[str, Any], binding: Binding,
                   trino: TrinoCheck, c: Checker) -> list[tuple[str, tuple[BoundSegment, ...]]]:
    """The entries of the storage option the catalog at `path` picks (none when it picks none
    or its pick is refused: reported); the kind's document module is loaded only for a pick."""
    store: Storage | None = kinds.option_of("storage", value, binding.settings, c, catalog=path)
    if store is None:
        return []
    from trinogen.kinds.storage.document import storage_properties  # a catalog picked a store

    return storage_properties(store, value, path, props,
                              Identity(binding.cluster_id, binding.owner), trino, c)


def _property_text(key: str, raw_value: Any, kpath: str, c: Checker) -> str | None:
    """One property a document wrote, as text; None (reported) for a bad name or value, or one
    that would reach the pods' own files (a storage option's, the platform's, is not judged)."""
    if not property_key_ok(key):
        c.error(kpath, PROPERTY_KEY_RULE)
        return None
    text = c.string(raw_value, kpath)
    if text is None:
        return None
    local = local_file_problem(key, text)
    if local is not None:
        c.error(kpath, local)
        return None
    return text


def _secret_in_url(key: str, text: str, bound: tuple[BoundSegment, ...], kpath: str,
                   c: Checker) -> bool:
    """A placeholder inside a JDBC URL, reported: its Vault value would become part of the URL
    Trino hands the driver (`${ENV:...}` is substituted before the driver parses it), where no
    check sees it and `&sslfactory=...` or `;socketFactoryClass=...` would act on the pod.
    Trino's JDBC connectors read the credentials from their own properties instead."""
    if len(bound) == 1 and type(bound[0]) is str or all(isinstance(s, str) for s in bound):
        return False  # most values: one text segment, no placeholder
    if is_jdbc_url(text) or (key.endswith(URL_KEY) and not _SCHEME.match(text)):
        c.error(kpath, "a placeholder may not appear in a JDBC URL (the secret's value would "
                "become part of the URL, where its driver options are never judged): put "
                "credentials in connection-user and connection-password, which the driver "
                "reads separately, and write the rest of the URL as text")
        return True
    return False


def _env_text(bound: tuple[BoundSegment, ...]) -> str:
    """A bound value as the catalog file reads it: each secret as its ${ENV:...} reference."""
    return "".join(s if isinstance(s, str) else f"${{ENV:{s.env}}}" for s in bound)
