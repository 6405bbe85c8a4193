"""The catalog library: shared catalogs from their own collection, referenced by name from a
cluster's `connectors`, with per-cluster overrides of single properties. Pure.

A catalog document is `{_id, name, owner, properties: {...}, shareWith?: [owner | "*"] | "*"}`. A
cluster document uses one with `{"name": "hive", "shared": "lake-hive", "properties": {...}}`:
the entry's properties override the catalog's one by one, `null` removes one. The merged result
is then judged exactly like a catalog written in the document (`connectors.catalog_properties`,
against the cluster's Trino version), and its placeholders are bound with the USING cluster's
secret scope: a shared catalog grants no secret its user could not name itself.

Who may use a catalog: its owner, an owner listed in `shareWith`, or everyone with `"*"`.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trinogen.errors import Problem
from trinogen.model.checker import (
    MAPS,
    MAX_PROBLEMS,
    PROPERTY_KEY_RULE,
    Checker,
    field_path,
    property_key_ok,
    show,
    type_name,
)
from trinogen.model.claims import UNREAD, keeper
from trinogen.model.raw_document import RawDocument
from trinogen.model.rules import (
    CONNECTOR_NAME,
    LABEL_VALUE,
    MAX_CONNECTOR_NAME,
    METADATA_FIELDS,
)
from trinogen.model.substitution import refusal, trino_substitution
from trinogen.model.types import Failed

SHARE_ALL = "*"
CATALOG_FIELDS = frozenset({"name", "owner", "properties", "shareWith"}) | METADATA_FIELDS
MAX_SHARES = 1000
# A Failed of a catalog document is recorded under this prefix: its _id lives in another
# collection and must never be mistaken for a cluster document's _id (whose files it would keep).
CATALOG_DOC = "catalog:"


@dataclass(frozen=True)
class SharedCatalog:
    """One valid catalog of the library."""

    doc_id: str
    name: str
    owner: str
    properties: Mapping[str, str]
    share_with: frozenset[str] = frozenset()

    def may_use(self, owner: str) -> bool:
        return owner == self.owner or SHARE_ALL in self.share_with or owner in self.share_with


@dataclass(frozen=True)
class Library:
    """The catalogs read in one run, by name; the names that cannot be used, and why."""

    catalogs: Mapping[str, SharedCatalog] = field(default_factory=dict)
    broken: Mapping[str, str] = field(default_factory=dict)  # name -> why it cannot be used
    failed: tuple[Failed, ...] = ()  # each invalid catalog document, reported once
    # name -> the documents claiming it, as stored: what a cluster's render-cache key covers
    sources: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    collection: str = "trino_catalogs"

    def why_unusable(self, name: str) -> str:
        """The message for a reference to a name that is not a valid catalog."""
        if name in self.broken:
            return f"shared catalog {show(name)} {self.broken[name]}"
        return (f"shared catalog {show(name)} does not exist in {self.collection} (deleted or "
                "renamed?); restore it or remove the reference")


NO_LIBRARY = Library()


# --- reading the catalog documents ------------------------------------------------------------


def parse_library(raws: Iterable[RawDocument], *, unknown_fields: str = "error",
                  collection: str = "trino_catalogs",
                  max_problems: int = MAX_PROBLEMS,
                  held: Mapping[str, Collection[str]] | None = None) -> Library:
    """Every catalog document judged on its own. A name several documents claim stays with the
    one the repository holds it for (`held`: name -> the catalog _ids its catalog copies record;
    None when the repository was not read), and each newcomer fails naming it; a name held for
    none of them is unusable for all (`model.claims`)."""
    raws = list(raws)
    kept, newcomers = _split_claims(raws, held or {}, unknown_fields, max_problems)
    library = _parse(kept, unknown_fields, collection, max_problems, unread=held is None)
    return dataclasses.replace(library, failed=(*library.failed, *newcomers))


def contested_names(raws: Iterable[RawDocument]) -> set[str]:
    """The catalog names more than one catalog document claims (only these ask the repository)."""
    counts = Counter(n for r in raws if (n := _claimed_name(r)) is not None)
    return {n for n, k in counts.items() if k > 1}


def _split_claims(raws: list[RawDocument], held: Mapping[str, Collection[str]],
                  unknown_fields: str, max_problems: int
                  ) -> tuple[list[RawDocument], list[Failed]]:
    """The documents that keep their names, and a failure for each newcomer to a held name."""
    claims: dict[str, list[str]] = {}
    for raw in raws:
        if (name := _claimed_name(raw)) is not None:
            claims.setdefault(name, []).append(raw.doc_id)
    holders = {name: holder for name, ids in claims.items() if len(ids) > 1
               and (holder := keeper(ids, held.get(name, ()))) is not None}
    kept, failed = [], []
    for raw in raws:
        name = _claimed_name(raw)
        if name is None or name not in holders or holders[name] == raw.doc_id:
            kept.append(raw)
            continue
        _, own = _catalog(raw, name, unknown_fields, max_problems)  # its own problems too
        failed.append(Failed(CATALOG_DOC + raw.doc_id, None, (*own, Problem(
            f"catalog {name}", "name", f"{show(name)} belongs to the catalog document _id "
            f"{holders[name]}, which the GitOps repository's catalogs were rendered from (the "
            "first create wins); choose another name")), "catalog"))
    return kept, failed


def _parse(raws: Iterable[RawDocument], unknown_fields: str, collection: str,
           max_problems: int, *, unread: bool) -> Library:
    """The library of documents whose names are settled; a name still claimed twice is unusable
    for both."""
    found: dict[str, list[SharedCatalog]] = {}
    failed: list[Failed] = []
    broken: dict[str, str] = {}
    sources: dict[str, list[Mapping[str, Any]]] = {}
    claims: dict[str, list[str]] = {}  # name -> _ids of every document claiming it
    for raw in raws:
        name = _claimed_name(raw)
        if name is not None:
            sources.setdefault(name, []).append(raw.body)
            claims.setdefault(name, []).append(raw.doc_id)
        catalog, problems = _catalog(raw, name, unknown_fields, max_problems)
        if catalog is not None:
            found.setdefault(catalog.name, []).append(catalog)
            continue
        failed.append(Failed(CATALOG_DOC + raw.doc_id, None, problems, "catalog"))
        if name is not None:
            broken[name] = (f"is invalid (its document _id={raw.doc_id} in {collection} is "
                            "reported on its own); fix the catalog")
    catalogs: dict[str, SharedCatalog] = {}
    why = UNREAD if unread else "the GitOps repository holds it for none of them"
    for name, same in found.items():
        if len(claims[name]) > 1:
            ids = ", ".join(sorted(claims[name]))
            broken[name] = (f"is claimed by more than one document in {collection} ({ids}); "
                            "give each catalog its own name")
            failed.extend(Failed(CATALOG_DOC + c.doc_id, None, (Problem(
                f"catalog {name}", "name", f"{show(name)} is used by more than one catalog "
                f"document ({ids}); {why}: make it unique"),), "catalog") for c in same)
        else:
            catalogs[name] = same[0]
    return Library(MappingProxyType(catalogs), MappingProxyType(broken), tuple(failed),
                   MappingProxyType({k: tuple(v) for k, v in sources.items()}), collection)


def _claimed_name(raw: RawDocument) -> str | None:
    name = raw.body.get("name") if isinstance(raw.body, MAPS) else None
    return name if type(name) is str and CONNECTOR_NAME.fullmatch(name) else None


def _catalog(raw: RawDocument, name: str | None, unknown_fields: str,
             max_problems: int) -> tuple[SharedCatalog | None, tuple[Problem, ...]]:
    label = f"catalog {name}" if name else f"catalog _id={raw.doc_id}"
    c = Checker(label, unknown_fields, max_problems)
    if raw.unreadable:
        c.error("", raw.unreadable)
        return None, c.listed()
    if not isinstance(raw.body, MAPS):
        c.error("", "the catalog document is not an object")
        return None, c.listed()
    catalog = c.run(lambda: _read_catalog(raw, raw.body, c))
    return (catalog, ()) if catalog is not None and not c.problems else (None, c.listed())


def _read_catalog(raw: RawDocument, d: Mapping[str, Any], c: Checker) -> SharedCatalog | None:
    c.fields(d, "", CATALOG_FIELDS)
    checked_name = c.string(d.get("name"), "name", pattern=CONNECTOR_NAME,
                            max_len=MAX_CONNECTOR_NAME,
                            rule="use letters, digits, '-', '_' and '.' (documents use it in "
                            "connectors[].shared)")
    owner = c.string(d.get("owner"), "owner", pattern=LABEL_VALUE, max_len=63,
                     rule="an owner as cluster documents write it (a Kubernetes label value)")
    props = _properties(d.get("properties"), c)
    shares = _shares(d.get("shareWith"), c)
    if c.problems or checked_name is None or owner is None or props is None or shares is None:
        return None
    return SharedCatalog(raw.doc_id, checked_name, owner, MappingProxyType(props), shares)


def _properties(value: Any, c: Checker) -> dict[str, str] | None:
    """The catalog's properties as text; each is judged again by every cluster using it."""
    props = c.mapping(value, "properties")
    if props is None:
        return None
    if "connector.name" not in props:
        c.error("properties", "needs \"connector.name\" (e.g. \"hive\", \"postgresql\")")
    out: dict[str, str] = {}
    for key, raw_value in props.items():
        kpath = field_path("properties", key)
        if not property_key_ok(key):  # the rule every using cluster judges it by again
            c.error(kpath, PROPERTY_KEY_RULE)
            continue
        text = c.string(raw_value, kpath)
        found = None if text is None else trino_substitution(text)
        if found is not None:  # its author would read the environment of every using cluster
            c.error(kpath, f"{refusal(found)}; write a {{{{ NAME }}}} placeholder instead")
        elif text is not None:
            out[key] = text
    return out


def _shares(value: Any, c: Checker) -> frozenset[str] | None:
    if value is None:
        return frozenset()
    if value == SHARE_ALL:  # README's table offers "*" alone as well as inside the list
        return frozenset({SHARE_ALL})
    if not isinstance(value, list):
        c.error("shareWith", f"must be a list of owners, or \"*\" for every owner, not "
                f"{type_name(value)}")
        return None
    if len(value) > MAX_SHARES:
        c.error("shareWith", f"has {len(value)} entries; at most {MAX_SHARES} (use \"*\" to "
                "share with every owner)")
        return None
    out = set()
    for i, item in enumerate(value):
        if item == SHARE_ALL:
            out.add(SHARE_ALL)
            continue
        owner = c.string(item, f"shareWith[{i}]", pattern=LABEL_VALUE, max_len=63,
                         rule="an owner as cluster documents write it, or \"*\" for every owner")
        if owner is not None:
            out.add(owner)
    return frozenset(out)


# --- references from cluster documents --------------------------------------------------------


def references(body: Any, defaults: Mapping[str, Any],
               profiles: Mapping[str, Mapping[str, Any]]) -> frozenset[str]:
    """The shared catalog names a document may use: in its own `connectors`, its profile's and
    the defaults' (lists replace when merged, so this may name more than are used: the render
    cache only needs a superset)."""
    if not isinstance(body, MAPS):
        return frozenset()
    layers: list[Any] = [body.get("connectors"), defaults.get("connectors")]
    profile = body.get("profile")
    if type(profile) is str and isinstance(profiles.get(profile), MAPS):
        layers.append(profiles[profile].get("connectors"))
    names: set[str] = set()
    for layer in layers:
        if isinstance(layer, list):
            names.update(e["shared"] for e in layer
                         if isinstance(e, MAPS) and type(e.get("shared")) is str)
    return frozenset(names)


def resolve(conn: Mapping[str, Any], path: str, owner: str | None, library: Library,
            c: Checker) -> Mapping[str, Any] | None:
    """A connector entry with the shared catalog it names merged in (`{name, properties}`), or
    the entry itself when it names none; None when the reference cannot be used (reported)."""
    if "shared" not in conn:
        return conn
    # `storage` is the using cluster's pick of a platform store (trinogen.kinds.storage), judged
    # with the merged properties: the library holds the catalog, the platform the stores.
    c.fields(conn, path, {"name", "shared", "properties", "storage"})
    ref = c.string(conn.get("shared"), f"{path}.shared", pattern=CONNECTOR_NAME,
                   max_len=MAX_CONNECTOR_NAME, rule="name a catalog of the library")
    overrides = c.mapping(conn.get("properties"), f"{path}.properties", required=False)
    if ref is None or (overrides is None and conn.get("properties") is not None):
        return None
    catalog = _granted(ref, owner, library, path, c)
    if catalog is None:
        return None
    name = conn.get("name", ref)
    where = f"connectors[{json.dumps(name)}]" if type(name) is str else path
    merged = merge_overrides(catalog.properties, overrides or {}, where, c)
    if merged is None:
        return None
    picked = {"storage": conn["storage"]} if "storage" in conn else {}
    return {"name": name, "properties": merged, **picked}


def _granted(ref: str, owner: str | None, library: Library, path: str,
             c: Checker) -> SharedCatalog | None:
    """The shared catalog `ref`, when it is usable and `owner` may use it (else reported)."""
    catalog = library.catalogs.get(ref)
    if catalog is None:
        c.error(f"{path}.shared", f"{library.why_unusable(ref)}; the cluster keeps its files "
                "as they are until then")
        return None
    if owner is None:
        return None  # the owner is invalid (reported already): who may use it is unknown
    if not catalog.may_use(owner):
        c.error(f"{path}.shared", f"shared catalog {show(ref)} belongs to owner "
                f"{show(catalog.owner)} and is not shared with owner {show(owner)}: ask its "
                f"owner to add {show(owner)} to its shareWith")
        return None
    return catalog


def merge_overrides(base: Mapping[str, str], overrides: Mapping[str, Any], path: str,
                    c: Checker) -> dict[str, Any] | None:
    """The shared properties with the cluster's overrides: a value replaces or adds one, null
    removes one; connector.name stays the catalog's. None when an override is refused."""
    out: dict[str, Any] = dict(base)
    ok = True
    for key, value in overrides.items():
        kpath = field_path(path, "properties", key)
        if key == "connector.name":
            c.error(kpath, "the connector of a shared catalog cannot be overridden; write an "
                    "own catalog for another connector")
            ok = False
        elif value is None:
            if key not in out:
                c.error(kpath, f"null removes a property of the shared catalog, which has no "
                        f"{show(key)}; remove this override")
                ok = False
            else:
                del out[key]
        else:
            out[key] = value  # judged with the rest by connectors.catalog_properties
    return out if ok else None


def needs_library(raws: Sequence[RawDocument], defaults: Mapping[str, Any],
                  profiles: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether any document may use the library: only then is its collection read."""
    return any(references(r.head, defaults, profiles) for r in raws)
