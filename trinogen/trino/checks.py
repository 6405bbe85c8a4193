"""Trino-level checks: does the document's Trino version bind each property, in that file?

Pure decisions over the registry (`trinogen.trino.registry`): every function takes the flat
properties of one file with the field path each came from and returns findings. The model calls
them after its own structural checks; nothing here knows about documents or the chart.

A false positive is a bug (a property the real Trino accepts must never be refused), so every
refusal here is one a real Trino of that version refuses at startup (or, for node.properties,
ignores silently); the rules that depend on another property's value are the file systems',
written out below with the reason Trino has, and the module switches the registry read from the
connectors' jars (`_unswitched`: iceberg.catalog.type, hive.metastore, kafka's supplier, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trinogen.trino.registry import Condition, PropertySet, Registry, Role, covered_versions

# flat key -> (value, field path)
Props = Mapping[str, tuple[str, str]]

# Connectors that read tables from a lake file system (Trino >= 458 enables none by default).
LAKE_CONNECTORS = frozenset({"hive", "iceberg", "delta_lake", "hudi"})
# Each native file system's switch and the prefix of the properties Trino binds only under it.
CONDITIONAL_PREFIXES = {
    "fs.native-s3.enabled": "s3.",
    "fs.native-gcs.enabled": "gcs.",
    "fs.native-azure.enabled": "azure.",
}
_SWITCHED_PREFIXES = tuple(CONDITIONAL_PREFIXES.values())
# Every switch that gives a lake catalog a file system for its table locations.
FILE_SYSTEM_SWITCHES = (*CONDITIONAL_PREFIXES, "fs.hadoop.enabled", "fs.native-local.enabled",
                        "fs.alluxio.enabled")
HADOOP_RESOURCES = "hive.config.resources"


@dataclass(frozen=True)
class Finding:
    """One problem with one property: an error unless `warning`."""

    path: str
    message: str
    warning: bool = False


# (names, key) -> closest names: a suggestion costs ~30 ms over a thousand names, and the same
# mistake tends to recur in many documents (a shared profile, a copied catalog).
_CLOSEST: dict[tuple[frozenset[str], str], list[str]] = {}


def _suggest(key: str, known: PropertySet) -> str:
    entry = (known.names, key)
    close = _CLOSEST.get(entry)
    if close is None:
        if len(_CLOSEST) >= 4096:  # a long-running watch meets unboundedly many typos
            _CLOSEST.clear()
        close = _CLOSEST[entry] = known.closest(key)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def _judge(key: str, path: str, known: PropertySet, where: str) -> Finding | None:
    """The verdict shared by every file: current, legacy, defunct or unknown (None = fine)."""
    if known.known(key):
        return None
    if known.defunct(key):
        return Finding(path, f"{key} was removed from Trino ({where}): Trino refuses to start "
                             "with it (Defunct property); remove it")
    replacement = known.legacy(key)
    if replacement is not None:
        instead = f"; write {replacement} instead" if replacement else ""
        return Finding(path, f"{key} is a deprecated name ({where}){instead}", warning=True)
    return Finding(path, f"{key} is not a property of {where}{_suggest(key, known)}: Trino "
                         "refuses to start with it (Configuration property was not used)")


def _owners(registry: Registry, key: str) -> list[str]:
    """The connectors that bind `key` (for a message saying where a property belongs)."""
    return [n for n in registry.connector_names if (s := registry.connector(n)) and s.known(key)]


# --- catalogs ---------------------------------------------------------------------------------


def check_catalog(registry: Registry, path: str, props: Props) -> list[Finding]:
    """The properties of one catalog file (`path`: its properties object), for its connector."""
    name_entry = props.get("connector.name")
    if name_entry is None:
        return []  # the model reports the missing connector.name
    connector, name_path = name_entry
    known = registry.connector(connector)
    if known is None:
        return _unknown_connector(registry, connector, name_path)
    where = f"connector {connector} in Trino {registry.version}"
    findings = []
    for key, (_, kpath) in props.items():
        finding = None if key == "connector.name" else _judge(key, kpath, known, where)
        if finding is not None and not finding.warning:
            finding = _elsewhere(registry, key, kpath, connector) or finding
        if finding is not None:
            findings.append(finding)
    findings += _file_systems(connector, known, path, props)
    return findings + _unswitched(known, props, {f.path for f in findings})


def _unknown_connector(registry: Registry, connector: str, path: str) -> list[Finding]:
    if not registry.complete:  # the plugin may be one the registry could not read
        return []
    close = registry.closest_connectors(connector)
    hint = (f"did you mean {' or '.join(close)}?" if close
            else "known: " + ", ".join(registry.connector_names))
    return [Finding(path, f"{connector!r} is not a connector of Trino {registry.version} "
                          f"({hint}): Trino refuses to start (No factory for connector)")]


def _elsewhere(registry: Registry, key: str, path: str, connector: str) -> Finding | None:
    """An unknown catalog key that belongs to the server or to other connectors."""
    server = registry.server("coordinator")
    if server is not None and server.known(key):
        return Finding(path, f"{key} is a server property (config.properties), not a property "
                             f"of connector {connector}: move it to the document's properties")
    owners = [n for n in _owners(registry, key) if n != connector]
    if owners:
        return Finding(path, f"{key} is a property of connector {', '.join(owners[:5])}, not "
                             f"of {connector}: Trino refuses to start with it")
    return None


def _enabled(props: Props, switch: str, known: PropertySet | None = None) -> bool:
    """The switch is "true" under its name or, given `known`, under its other name (Trino 483
    renamed fs.native-s3.enabled to fs.s3.enabled and keeps the old name as legacy)."""
    names = {switch} if known is None else _aliases(known, switch)
    return any((e := props.get(n)) is not None and e[0].strip().lower() == "true" for n in names)


def _aliases(known: PropertySet, switch: str) -> frozenset[str]:
    """`switch` and the names the connector's legacy mapping ties to it, either way."""
    return known.aliases(switch)


def _current(known: PropertySet, switch: str) -> str:
    """The name of a switch this connector binds today (for messages)."""
    return next((n for n in sorted(_aliases(known, switch)) if known.known(n)), switch)


def _file_systems(connector: str, known: PropertySet, path: str, props: Props) -> list[Finding]:
    """Properties Trino binds only when a file system is switched on, and lake catalogs with
    none (Trino >= 458 enables no file system by default)."""
    findings = _switched_off(known, props)
    if (HADOOP_RESOURCES in props and known.known(HADOOP_RESOURCES)
            and not _enabled(props, "fs.hadoop.enabled")):
        findings.append(Finding(props[HADOOP_RESOURCES][1], _HADOOP_OFF))
    if connector in LAKE_CONNECTORS and not any(_enabled(props, s, known)
                                                for s in FILE_SYSTEM_SWITCHES):
        switches = ", ".join(_current(known, s) for s in CONDITIONAL_PREFIXES)
        findings.append(Finding(path, "enables no file system: Trino starts, but every table "
                                      "read fails (No factory for location); set one of "
                                      f"{switches} to true", warning=True))
    return findings


def _switched_off(known: PropertySet, props: Props) -> list[Finding]:
    """s3.*, gcs.* and azure.* keys of a connector whose switch for them is not on."""
    findings: list[Finding] = []
    if not any(key.startswith(_SWITCHED_PREFIXES) for key in props):
        return findings  # most catalogs: no s3.*, gcs.* or azure.* key
    for switch, prefix in CONDITIONAL_PREFIXES.items():
        if not any(key.startswith(prefix) for key in props):
            continue  # nothing to refuse (most catalogs): the switch need not be looked up
        name = _current(known, switch)
        if not known.accepts(name) or _enabled(props, switch, known):
            continue
        findings.extend(Finding(kpath, f"{key} is used only with {name}=true: Trino refuses "
                                       f"to start with it otherwise (was not used); set "
                                       f"{name}=true here")
                        for key, (_, kpath) in props.items() if key.startswith(prefix))
    return findings


def _unswitched(known: PropertySet, props: Props, reported: set[str]) -> list[Finding]:
    """Properties Trino binds only when another property selects their module (issue 21): an
    iceberg catalog's iceberg.rest-catalog.uri needs iceberg.catalog.type=rest, a kafka catalog's
    kafka.table-names the FILE supplier. The registry reads these from the connectors' jars
    (tools/trino_registry/conditional.py); a key already refused for another reason is left to
    that finding."""
    findings: list[Finding] = []
    if known.unconditional(props.keys()):
        return findings  # no key of this catalog is bound under a condition
    for key, (_, kpath) in props.items():
        if kpath in reported or not known.known(key):
            continue
        for condition in known.conditions(key):
            value, chosen = _switch_value(known, props, condition)
            if value.strip().upper().replace("-", "_") not in condition.values:
                findings.append(Finding(kpath, _unswitched_message(key, condition, value, chosen)))
                break
    return findings


def _switch_value(known: PropertySet, props: Props, condition: Condition) -> tuple[str, bool]:
    """The switch's value in this catalog (under any of its names), and whether it is set."""
    for name in sorted(_aliases(known, condition.switch)):
        if name in props:
            return props[name][0], True
    return condition.default, False


def _unswitched_message(key: str, condition: Condition, value: str, chosen: bool) -> str:
    switch = condition.switch
    wanted = " or ".join(f"{switch}={v.lower()}" for v in condition.values)
    has = f"{switch}={value}" if chosen else f"{switch}={value.lower()} (the default, unset)"
    return (f"{key} is bound only with {wanted}, and this catalog has {has}: Trino refuses "
            f"to start with it (was not used); set {wanted.split(' or ')[0]} or remove {key}")


# With fs.hadoop.enabled=true the files it lists must exist in the pods: the model holds every
# property naming a file to the cluster's mounted files (trinogen.model.files).
_HADOOP_OFF = (f"{HADOOP_RESOURCES} is used only with fs.hadoop.enabled=true (Trino >= 458 "
               "refuses to start with it otherwise: was not used); legacy Hadoop comes only "
               "from a storage option of type hdfs (connectors[].storage), with the files it "
               "lists attached under files, so that they are mounted; or use the native file "
               "systems (a storage option of type s3, gcs or azure)")


# --- server, role and node properties -----------------------------------------------------


def check_server(registry: Registry, props: Props) -> list[Finding]:
    """config.properties lines shared by both roles (the caller sends the keys in
    `registry.coordinator_only` to the coordinator alone)."""
    known = registry.server("coordinator")
    if known is None:
        return []
    return _server_findings(registry, props, known, f"the Trino {registry.version} server")


def check_role(registry: Registry, role: Role, props: Props) -> list[Finding]:
    """One role's own config.properties lines (clusterConfig.<role>.properties)."""
    known = registry.server(role)
    if known is None:
        return []
    findings = []
    if role == "worker":
        findings = [Finding(path, f"{key} is bound by the coordinator only: a worker refuses to "
                                  "start with it (was not used); set it in properties or in "
                                  "clusterConfig.coordinator.properties")
                    for key, (_, path) in props.items() if key in registry.coordinator_only]
        props = {k: v for k, v in props.items() if k not in registry.coordinator_only}
    where = f"the Trino {registry.version} {role}"
    return findings + _server_findings(registry, props, known, where)


def _server_findings(registry: Registry, props: Props, known: PropertySet,
                     where: str) -> list[Finding]:
    findings = []
    for key, (value, path) in props.items():
        finding = _judge(key, path, known, where)
        if finding is not None and not finding.warning:
            finding = _misplaced(registry, key, value, path) or finding
        if finding is not None:
            findings.append(finding)
    return findings


def check_node(registry: Registry, props: Props) -> list[Finding]:
    """node.properties: Trino passes them as JVM system properties and ignores an unknown one
    silently, so a typo here has no effect at all: refuse it."""
    known = registry.node
    if known is None:
        return []
    return [Finding(path, f"{key} is not a node property of Trino {registry.version}"
                          f"{_suggest(key, known)}: Trino would ignore it silently")
            for key, (_, path) in props.items() if not known.accepts(key)]


def _misplaced(registry: Registry, key: str, value: str, path: str) -> Finding | None:
    """An unknown server key that is a logger level or a catalog property."""
    if value.strip().upper() in registry.log_levels and is_logger_name(key):
        return Finding(path, f"{key}={value} is a log level, which belongs in log.properties, "
                             "not config.properties: set it under logLevels")
    owners = _owners(registry, key)
    if owners:
        return Finding(path, f"{key} is a catalog property of connector {', '.join(owners[:5])}, "
                             "not a server property: set it in that connector's properties")
    return None


def is_logger_name(name: str) -> bool:
    """Java logger names are package or class names: dotted Java identifiers (letters of any
    script, digits after the first character, '_' and '$' as in inner classes)."""
    return all(p and not p[0].isdigit() and p.replace("_", "a").replace("$", "a").isalnum()
               for p in name.split("."))


def check_log_levels(registry: Registry, levels: Props) -> list[Finding]:
    """log.properties lines: each level must be one airlift knows (case aside)."""
    allowed = ", ".join(registry.log_levels)
    return [Finding(path, f"{value!r} is not a log level of Trino {registry.version} "
                          f"(choose one of {allowed}): Trino refuses to start with it")
            for _, (value, path) in levels.items()
            if value.strip().upper() not in registry.log_levels]


# --- versions -----------------------------------------------------------------------------


def unchecked(version: str) -> str:
    """The warning for a version the registry does not cover."""
    return (f"Trino properties not checked for Trino {version}: trinogen's registry covers "
            f"{', '.join(covered_versions())}")
