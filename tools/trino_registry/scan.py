"""Scan the jars of one unit (the server's lib/, or one plugin directory) for airlift config facts.

What counts as a property (the rules docs/document.md states):
- every ``@Config("name")`` on a method of any class in the unit's jars;
- every ``@LegacyConfig`` name, with the ``@Config`` name on the same method (or ``replacedBy``)
  as its replacement;
- every name in a class-level ``@DefunctConfig``;
- prefixed bindings: a call ``ConfigBinder.bindConfig(..., "prefix")`` binds the config class
  under ``prefix.<name>``; ``HttpClientBinder.bindHttpClient("name", ...)`` binds airlift's
  ``HttpClientConfig`` under ``name.<name>``. Helpers that hand a prefix on (a String parameter,
  or a constructor argument kept in a field) are followed (see _resolve_bindings); one binder
  that computes its prefix is a reviewed table entry (COMPUTED_PREFIXES). Where the config
  class is not a constant at the call, the prefix becomes a "prefix family": any ``prefix.*``
  name is accepted, so the registry never refuses what it could not read.

The scan over-approximates on purpose: every ``@Config`` in the unit's jars counts, bound or
not, because a false refusal is worse than a missed typo.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tools.trino_registry import classfile, conditional, session

CONFIG = "io/airlift/configuration/Config"
LEGACY = "io/airlift/configuration/LegacyConfig"
DEFUNCT = "io/airlift/configuration/DefunctConfig"
CONFIG_BINDER = "io/airlift/configuration/ConfigBinder"
HTTP_CLIENT_BINDER = "io/airlift/http/client/HttpClientBinder"
HTTP_CLIENT_CONFIG = "io/airlift/http/client/HttpClientConfig"
CONNECTOR_FACTORY = "io/trino/spi/connector/ConnectorFactory"
PLUGIN = "io/trino/spi/Plugin"
LOG_LEVEL = b"io/airlift/log/Level"
ENUM = b"java/lang/Enum"
SERVICES = "META-INF/services/io.trino.spi.Plugin"

# Binder methods that build their prefix from their argument at run time (string concatenation
# leaves no constant to read): (owner, method) -> (config class, prefix template). Reviewed by
# hand against the airlift classes; the real-Trino cross-check finds any that is missing.
COMPUTED_PREFIXES = {
    # discoveryBinder(binder).bindSelector("trino") binds ServiceSelectorConfig as discovery.trino.*
    ("io/airlift/discovery/client/DiscoveryBinder", "bindSelector"):
        ("io/airlift/discovery/client/ServiceSelectorConfig", "discovery.{}"),
}

# Only classes that mention one of these are parsed: a cheap byte test keeps the scan fast.
# Guice's package is there for conditional.py: a class that builds or installs a module names
# com/google/inject (Module, Binder) even when it binds no config itself, and a class missing
# from the scan would be a way to a module that conditional.py could not see.
_MARKERS = (b"io/airlift/configuration/", b"bindHttpClient", b"io/trino/spi/", b"Plugin",
            b"io/trino/server/", b"com/google/inject/")


@dataclass
class ConfigClass:
    names: set[str] = field(default_factory=set)
    legacy: dict[str, str] = field(default_factory=dict)
    defunct: set[str] = field(default_factory=set)


@dataclass
class UnitFacts:
    """Everything read from one unit's jars."""

    configs: dict[str, ConfigClass] = field(default_factory=dict)
    # (config class or None when not a constant, prefix)
    bindings: set[tuple[str | None, str]] = field(default_factory=set)
    # where each binding is made: (config class, prefix or "") -> classes making the call;
    # the role split (roles.py) reads it, with the class graph below
    binding_sites: dict[tuple[str | None, str], set[str]] = field(default_factory=dict)
    connector_names: set[str] = field(default_factory=set)
    # the constants of airlift's io.airlift.log.Level enum: what a log.properties line may say
    log_levels: list[str] = field(default_factory=list)
    # class -> (super class, classes it names); kept for io/trino/ classes only
    server_classes: dict[str, tuple[str | None, frozenset[str]]] = field(default_factory=dict)
    # switch property -> its default and the properties bound only under some of its values
    # (conditional.py)
    conditional: dict[str, dict[str, Any]] = field(default_factory=dict)
    # session property -> its value's type (session.py): system ones for the server, the
    # connector's catalog session properties for a plugin
    session_properties: dict[str, session.Spec] = field(default_factory=dict)
    # system session properties bound only under a switch (session.BOUND_WHEN), by switch
    session_bound_when: dict[str, dict[str, session.Spec]] = field(default_factory=dict)
    # the constants of io.trino.spi.resourcegroups.QueryType: a session defaults entry's queryType
    query_types: list[str] = field(default_factory=list)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _config_facts(cls: classfile.ClassFile) -> ConfigClass | None:
    facts = ConfigClass()
    for ann in cls.annotations:
        if ann.type == DEFUNCT:
            facts.defunct.update(_strings(ann.values.get("value")))
    for method in cls.methods:
        by_type = {a.type: a for a in method.annotations}
        current = _strings(by_type[CONFIG].values.get("value")) if CONFIG in by_type else []
        facts.names.update(current)
        if LEGACY in by_type:
            legacy = by_type[LEGACY]
            replaced = _strings(legacy.values.get("replacedBy")) or current
            for name in _strings(legacy.values.get("value")):
                facts.legacy[name] = replaced[0] if replaced else ""
    if facts.names or facts.legacy or facts.defunct:
        return facts
    return None


@dataclass
class JarScan:
    """What one jar contributes; cached per jar, since the same jar sits in many plugins."""

    configs: dict[str, ConfigClass] = field(default_factory=dict)
    server_classes: dict[str, tuple[str | None, frozenset[str]]] = field(default_factory=dict)
    classes: dict[str, classfile.ClassFile] = field(default_factory=dict)
    log_levels: list[str] = field(default_factory=list)
    enums: dict[str, list[str]] = field(default_factory=dict)  # enum class -> its constants
    # the Plugin classes its META-INF/services/io.trino.spi.Plugin names (Trino's ServiceLoader)
    plugins: list[str] = field(default_factory=list)


@dataclass
class _Scan:
    facts: UnitFacts
    # (owner, name, descriptor) of methods that pass a String parameter on as a prefix
    forwarders: dict[tuple[str, str, str], set[str | None]] = field(default_factory=dict)
    # classes whose instances bind config under a prefix given to their constructor (a field)
    class_forwarders: dict[str, set[str | None]] = field(default_factory=dict)
    classes: dict[str, classfile.ClassFile] = field(default_factory=dict)


def _targets(call: classfile.Call, scan: _Scan) -> set[str | None] | None:
    """The config classes a call binds under a string prefix it is given, or None."""
    if call.owner == CONFIG_BINDER and call.name == "bindConfig":
        if "Ljava/lang/String;" not in call.descriptor:
            return None
        if call.descriptor.startswith("(Lcom/google/inject/Key;"):
            return {call.classes[-1] if call.classes else None}
        return {call.classes[0] if call.classes else None}
    if call.owner == HTTP_CLIENT_BINDER and call.name == "bindHttpClient":
        return {HTTP_CLIENT_CONFIG}
    if (call.owner, call.name) in COMPUTED_PREFIXES:
        return {COMPUTED_PREFIXES[call.owner, call.name][0]}
    if call.name == "<init>" and call.owner in scan.class_forwarders:
        return scan.class_forwarders[call.owner]
    return scan.forwarders.get((call.owner, call.name, call.descriptor))


def _scan_class(data: bytes, jar: JarScan) -> None:
    marked = any(marker in data for marker in _MARKERS)
    if not marked and LOG_LEVEL not in data and ENUM not in data:
        return
    cls = classfile.parse(data)
    if cls.super_name == ENUM.decode():
        # the values an enum session property takes (session.py)
        jar.enums[cls.name] = [n for n, d in cls.fields if d == f"L{cls.name};"]
    if cls.name == LOG_LEVEL.decode():
        jar.log_levels = [n for n, d in cls.fields if d == f"L{cls.name};"]
    if not marked and LOG_LEVEL not in data:
        return
    config = _config_facts(cls)
    if config is not None:
        jar.configs[cls.name] = config
    if cls.name.startswith("io/trino/"):
        jar.server_classes[cls.name] = (cls.super_name, frozenset(cls.class_refs))
    jar.classes[cls.name] = cls


def scan_jar(data: bytes) -> JarScan:
    """Parse the classes of one jar that can matter (a cheap byte test skips the rest)."""
    jar = JarScan()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.filename == SERVICES:
                jar.plugins = [line.strip().replace(".", "/") for line in
                               archive.read(info).decode().splitlines()
                               if line.strip() and not line.startswith("#")]
            if info.filename.endswith(".class") and not info.filename.startswith("META-INF/"):
                try:
                    _scan_class(archive.read(info), jar)
                except classfile.ClassFormatError:
                    continue  # a damaged or exotic class cannot carry a binding we can read
    return jar


def _connector_names(scan: _Scan) -> set[str]:
    """Names the unit's ConnectorFactory implementations return from getName().

    A factory whose getName() returns a constant gives it directly. A factory whose name is a
    constructor argument gives the string constant passed to that constructor, or, where the
    factory is built by a shared base plugin (the JDBC plugins: ``super("mysql", ...)`` in the
    Plugin subclass), the first string constant the Plugin subclass's constructor loads.
    """
    classes = scan.classes

    def implements(name: str, interface: str, depth: int = 0) -> bool:
        cls = classes.get(name)
        if cls is None or depth > 8:
            return False
        if interface in cls.interfaces:
            return True
        return cls.super_name is not None and implements(cls.super_name, interface, depth + 1)

    names: set[str] = set()
    unresolved: set[str] = set()
    for cls in classes.values():
        if not implements(cls.name, CONNECTOR_FACTORY):
            continue
        for method in cls.methods:
            if method.name == "getName" and method.descriptor == "()Ljava/lang/String;":
                constant = classfile.returned_constant(cls, method)
                if constant is not None:
                    names.add(constant)
                elif method.code:
                    unresolved.add(cls.name)
    if not unresolved:
        return names
    for cls in classes.values():
        for method in cls.methods:
            for call in classfile.calls(cls, method):
                if call.name != "<init>":
                    continue
                if call.owner in unresolved and call.strings:
                    # new MongoConnectorFactory("mongodb")
                    names.add(call.strings[0])
                elif (method.name == "<init>" and call.method_strings
                      and (call.owner == cls.name
                           or call.owner == cls.super_name != "java/lang/Object")
                      and implements(cls.name, PLUGIN)):
                    # class MySqlPlugin extends JdbcPlugin { MySqlPlugin() { super("mysql", ...) } },
                    # or ThriftPlugin() { this("trino_thrift", ...) }
                    names.add(call.method_strings[0])
    return names


def _resolve_bindings(scan: _Scan) -> None:
    """Collect prefixed bindings, following prefixes handed through methods and constructors.

    A call to a binder (or to a forwarder) with a string constant binds under that prefix. One
    without a constant takes its prefix from elsewhere: a method with a String parameter
    becomes a forwarder (a string given to it is the prefix); a method without one takes it
    from a field, so its class becomes a forwarder (airlift's ``ReplicatedStoreModule("dynamic",
    ...)``, Trino's ``InternalCommunicationHttpClientModule``): a string given to that class's
    constructor is the prefix. Rounds repeat until nothing new is learnt.
    """
    per_method: list[tuple[classfile.ClassFile, classfile.Method, list[classfile.Call]]] = []
    for cls in scan.classes.values():
        for method in cls.methods:
            if method.code:
                per_method.append((cls, method, classfile.calls(cls, method)))
    for _ in range(6):
        grew = False
        for cls, method, method_calls in per_method:
            for call in method_calls:
                if (call.owner == CONFIG_BINDER and call.name == "bindConfig"
                        and "Ljava/lang/String;" not in call.descriptor and call.classes):
                    plain = call.classes[-1] if "Key;" in call.descriptor else call.classes[0]
                    scan.facts.binding_sites.setdefault((plain, ""), set()).add(cls.name)
                targets = _targets(call, scan)
                if not targets:
                    continue
                strings = call.strings if call.name != "<init>" else call.strings[:1]
                if strings and (call.owner, call.name) in COMPUTED_PREFIXES:
                    strings = (COMPUTED_PREFIXES[call.owner, call.name][1].format(strings[0]),)
                if strings:
                    for target in targets:
                        scan.facts.bindings.add((target, strings[-1]))
                        scan.facts.binding_sites.setdefault((target, strings[-1]), set()).add(
                            cls.name)
                    continue
                params = method.descriptor.split(")")[0]
                if method.name != "<init>" and "Ljava/lang/String;" in params:
                    known = scan.forwarders.setdefault((cls.name, method.name, method.descriptor),
                                                       set())
                else:
                    known = scan.class_forwarders.setdefault(cls.name, set())
                if not targets <= known:
                    known |= targets
                    grew = True
        if not grew:
            break


def unit_facts(jars: Iterable[JarScan], own: Iterable[str] = ()) -> UnitFacts:
    """Merge the jars of one unit and resolve its bindings and connector names.

    `own`: the classes of the unit's own artifact jar, whose Plugin classes start the session
    scan where no jar names one in a services file (a plugin read from Maven as its jar and
    dependencies: the services file is in the `-services` jar, which only the distribution
    carries; without this the hive jar iceberg depends on would lend HivePlugin's session
    properties to iceberg)."""
    scan = _Scan(UnitFacts())
    enums: dict[str, list[str]] = {}
    plugins: list[str] = []
    for jar in jars:
        enums.update(jar.enums)
        plugins.extend(jar.plugins)
        for name, config in jar.configs.items():
            previous = scan.facts.configs.setdefault(name, ConfigClass())
            previous.names |= config.names
            previous.legacy.update(config.legacy)
            previous.defunct |= config.defunct
        scan.facts.server_classes.update(jar.server_classes)
        scan.facts.log_levels = scan.facts.log_levels or jar.log_levels
        scan.classes.update(jar.classes)
    _resolve_bindings(scan)
    scan.facts.connector_names = _connector_names(scan)
    plugins = plugins or session.plugin_classes(scan.classes, own)
    scan.facts.session_properties = session.properties(
        scan.classes, enums, plugins, system=not scan.facts.connector_names)
    scan.facts.query_types = sorted(enums.get(session.QUERY_TYPE, []))
    if not scan.facts.connector_names:
        scan.facts.session_bound_when = session.bound_when(scan.classes, enums)
    if scan.facts.connector_names:
        names = {c: f.names | set(f.legacy) for c, f in scan.facts.configs.items()}
        prefixed = {c for c, prefix in scan.facts.bindings if prefix}
        scan.facts.conditional = conditional.derive(scan.classes, names, prefixed)
    return scan.facts
