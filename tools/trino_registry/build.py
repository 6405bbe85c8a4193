"""Turn the facts of each unit into the registry's property sets, and write the data file."""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.trino_registry import roles
from tools.trino_registry.scan import JarScan, UnitFacts, scan_jar, unit_facts
from tools.trino_registry.sets import SetTable
from tools.trino_registry.sources import VersionSource

# 2: one file per version and an index (1: one file holding every version)
FORMAT = 2

# Read by the server for every catalog before the connector sees the rest (CatalogManager /
# the catalog store), so never bound through @Config in a plugin.
CATALOG_PROPERTIES = ("connector.name",)

# node.properties keys that bin/launcher itself reads (the launcher binary names them; Trino's
# own NodeConfig does not bind them). Reviewed by hand: the chart writes node.data-dir.
LAUNCHER_NODE_PROPERTIES = ("node.data-dir",)


@dataclass
class PropertySet:
    known: set[str] = field(default_factory=set)
    legacy: dict[str, str] = field(default_factory=dict)
    defunct: set[str] = field(default_factory=set)
    families: set[str] = field(default_factory=set)  # accepted prefixes, each ending in "."
    # switch property -> {"default": value, "binds": {property: [values]}} (conditional.py)
    conditional: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        legacy = {k: v for k, v in sorted(self.legacy.items()) if k not in self.known}
        body: dict[str, Any] = {
            "known": sorted(self.known),
            "legacy": legacy,
            "defunct": sorted(self.defunct - self.known - set(legacy)),
            "families": sorted(self.families),
        }
        # only where there is something: the sets of connectors without switches stay as they were
        conditional = {}
        for switch, entry in sorted(self.conditional.items()):
            # a name a prefix family also accepts may be bound there too: never conditional
            binds = {n: v for n, v in entry["binds"].items()
                     if not n.startswith(tuple(self.families))}
            if binds:
                conditional[switch] = {"default": entry["default"], "binds": binds}
        if conditional:
            body["conditional"] = conditional
        return body


def property_set(facts: UnitFacts) -> PropertySet:
    """The names a unit accepts: plain @Config names, plus every prefixed binding."""
    out = PropertySet()
    for config in facts.configs.values():
        out.known |= config.names
        out.legacy.update(config.legacy)
        out.defunct |= config.defunct
    for config_class, prefix in facts.bindings:
        bound = facts.configs.get(config_class) if config_class else None
        if bound is None:
            out.families.add(prefix + ".")
            continue
        out.known |= {f"{prefix}.{n}" for n in bound.names}
        out.legacy.update({f"{prefix}.{k}": f"{prefix}.{v}" for k, v in bound.legacy.items()})
        out.defunct |= {f"{prefix}.{n}" for n in bound.defunct}
    out.conditional = facts.conditional
    return out


@dataclass
class VersionData:
    version: str
    complete: bool
    server: PropertySet | None
    coordinator_only: list[str]
    connectors: dict[str, PropertySet]
    plugins_without_connector: list[str]
    unavailable: list[str]
    origin: list[str]
    log_levels: list[str]
    # {"system": {property: spec} or None, "connectors": {name: {...}}, "bound_when":
    # {switch: {...}}, "query_types": [...]} for session.json.gz (tools/trino_registry/session.py)
    session: dict[str, Any] = field(default_factory=dict)


def _own_classes(unit: str, keys: list[str], jar_scans: dict[str, JarScan],
                 version: str) -> list[str]:
    """The classes of the unit's own artifact jar (`trino-<unit>-<v>.jar`, as Maven copies it)."""
    own = f"!trino-{unit}-{version}.jar"
    return [c for k in keys if k.endswith(own) and k in jar_scans for c in jar_scans[k].classes]


def scan_version(source: VersionSource, log: Any = print) -> VersionData:
    jar_scans: dict[str, JarScan] = {}
    unit_jars: dict[str, list[str]] = {}
    for unit, key, data in source.jars():
        if data is not None and key not in jar_scans:
            jar_scans[key] = scan_jar(data)
        unit_jars.setdefault(unit, []).append(key)
    facts = {unit: unit_facts((jar_scans[k] for k in keys if k in jar_scans),
                              _own_classes(unit, keys, jar_scans, source.version))
             for unit, keys in unit_jars.items()}
    log(f"  {source.version}: {len(jar_scans)} jars in {len(facts)} units")
    # A unit whose jars failed part-way is unavailable, not partly scanned.
    for unit in source.unavailable:
        facts.pop(unit, None)
    server = property_set(facts["server"]) if "server" in facts else None
    if server is not None:
        server.known.update(LAUNCHER_NODE_PROPERTIES)
    coordinator_only: list[str] = []
    if "server" in facts and server is not None:
        coordinator_only = roles.coordinator_only(facts["server"], server)
    connectors: dict[str, PropertySet] = {}
    session_connectors: dict[str, dict[str, Any]] = {}
    own: set[str] = set()
    partial: list[str] = []  # connectors whose plugin was scanned without some of its jars
    without: list[str] = []
    for unit, one in sorted(facts.items()):
        if unit == "server":
            continue
        if not one.connector_names:
            without.append(unit)
            continue
        props = property_set(one)
        props.known.update(CATALOG_PROPERTIES)
        for name in one.connector_names:
            # The iceberg plugin carries the hive jar and so hive's factory too: "hive" is the
            # hive plugin's, whose modules (and switches: conditional.py) are the hive connector's.
            if name not in own:
                connectors[name] = props
                session_connectors[name] = dict(one.session_properties)
                if unit in source.missing:
                    partial.append(name)
            if name == unit.replace("-", "_"):
                own.add(name)
    levels = facts["server"].log_levels if "server" in facts else []
    server_facts = facts.get("server")
    session = {"system": None if server_facts is None else dict(server_facts.session_properties),
               "connectors": session_connectors,
               "bound_when": {} if server_facts is None else server_facts.session_bound_when,
               "query_types": [] if server_facts is None else server_facts.query_types,
               "partial": sorted(partial)}
    # A unit scanned without some of its jars (not served) is partial: named, with what it lacks.
    unavailable = list(source.unavailable) + [
        f"{unit} (without {', '.join(lost)})" for unit, lost in sorted(source.missing.items())
        if unit not in source.unavailable]
    return VersionData(source.version, not unavailable, server, coordinator_only,
                       connectors, without, unavailable, source.origin, levels, session)


def entry(v: VersionData) -> dict[str, Any]:
    """One version's data with its property sets inline (write() stores each distinct one once)."""
    return {
        "complete": v.complete,
        "server": v.server.to_json() if v.server else None,
        "coordinator_only": v.coordinator_only,
        "connectors": {name: p.to_json() for name, p in sorted(v.connectors.items())},
        "plugins_without_connector": v.plugins_without_connector,
        "unavailable": v.unavailable,
        "origin": v.origin,
        "log_levels": v.log_levels,
    }


def version_file(version: str, inline: dict[str, Any]) -> bytes:
    """The gzipped JSON of one version: each distinct property set once, the entry points at it."""
    table = SetTable()
    sets, ref = table.sets, table.ref

    doc = dict(inline)
    doc["format"], doc["version"] = FORMAT, version
    doc["server"] = None if inline["server"] is None else ref(inline["server"])
    doc["connectors"] = {n: ref(body) for n, body in sorted(inline["connectors"].items())}
    doc["sets"] = sets
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    # mtime=0: the same input gives the same bytes, so a regeneration diff shows real changes.
    return gzip.compress(raw, compresslevel=9, mtime=0)


def write(versions: list[VersionData], out_dir: Path, keep: bool = False) -> Path:
    """One file per version, `<out_dir>/registry/<version>.json.gz`, and `index.json` naming
    each with its sha256 (trinogen reads the index alone until a version is asked for, and
    its hash is the render cache's fingerprint of the whole registry).

    `keep`: version files already there that `versions` does not regenerate stay as they are
    (a run that can fetch only some versions refreshes those alone); without it they go."""
    target = out_dir / "registry"
    target.mkdir(parents=True, exist_ok=True)
    fresh = {v.version for v in versions}
    for old in target.glob("*.json.gz"):
        if not keep and old.name.removesuffix(".json.gz") not in fresh:
            old.unlink()
    for v in versions:
        (target / f"{v.version}.json.gz").write_bytes(version_file(v.version, entry(v)))
    write_index(target)
    return target


def write_index(target: Path) -> Path:
    """index.json for the version files in `target`, oldest version first."""
    files = sorted(target.glob("*.json.gz"), key=lambda f: int(f.name.removesuffix(".json.gz")))
    versions = {f.name.removesuffix(".json.gz"): {
        "file": f.name, "sha256": hashlib.sha256(f.read_bytes()).hexdigest()} for f in files}
    index = target / "index.json"
    index.write_text(json.dumps({"format": FORMAT, "versions": versions}, indent=1) + "\n")
    return index
