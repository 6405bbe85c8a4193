"""Read the session properties of a unit (system ones from the server, catalog ones from a
connector's plugin) from its bytecode, and write them as trinogen/trino/data/session.json.gz.

Where Trino declares them (read from trino-main-476 and the plugins with javap):
- system session properties: the classes implementing ``io.trino.SystemSessionPropertiesProvider``
  (SystemSessionProperties, and SpoolingSessionProperties, bound when the spooling protocol is
  on); the ``io/trino/server/testing/`` ones are the test server's and left out;
- catalog session properties: the classes of a plugin implementing
  ``io.trino.plugin.base.session.SessionPropertiesProvider`` (HiveSessionProperties, the JDBC
  plugins' JdbcMetadataSessionProperties, ...) that the plugin binds: a Guice module reachable
  from the plugin's ``Plugin`` class loads the provider's class constant (``newSetBinder(...)
  .addBinding().to(X.class)``). The iceberg plugin carries the hive jar, whose
  HiveSessionProperties only HiveModule binds, and no class reachable from IcebergPlugin loads
  it (the start is the Plugin class the plugin's ``META-INF/services/io.trino.spi.Plugin``
  names, as Trino's ServiceLoader finds it; a plugin read from Maven as its jar and dependencies
  has no ``-services`` jar, so its own artifact's Plugin class: scan.unit_facts). Also the
  ``getSessionProperties()`` of a reachable class implementing
  ``io.trino.spi.connector.Connector`` (connectors that list them inline).

Each property is a call that returns a ``io.trino.spi.session.PropertyMetadata``: its name is
the first string constant loaded after the previous such call in the same method (Java passes
the name first, and a name is a compile-time constant, so ``ldc`` loads it). The factory gives
the value's type: ``booleanProperty`` boolean, ``integerProperty`` integer, ``longProperty``
bigint, ``doubleProperty`` double, ``stringProperty`` varchar, ``enumProperty`` one of the enum
class's constants (Trino upper-cases the value first), ``durationProperty`` / ``dataSizeProperty``
(plugin toolkit) an airlift Duration / DataSize; ``new PropertyMetadata(...)`` takes its type
from the Java class it names (Duration, DataSize, a boxed Integer...), else (an enum with its
own decoder, a JDK enum) it is left unchecked ("any").
A string that is not a plain lower-case name is not taken (a description loaded first would be
a misreading): the property is missed rather than invented, and the real-Trino test
(tests/test_trino_real_session_properties.py) compares the result with Trino's SHOW SESSION.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tools.trino_registry import classfile
from tools.trino_registry.sets import SetTable

FORMAT = 1
PROPERTY_METADATA = "io/trino/spi/session/PropertyMetadata"
SYSTEM_PROVIDER = "io/trino/SystemSessionPropertiesProvider"
CATALOG_PROVIDER = "io/trino/plugin/base/session/SessionPropertiesProvider"
CONNECTOR = "io/trino/spi/connector/Connector"
PLUGIN = "io/trino/spi/Plugin"
QUERY_TYPE = "io/trino/spi/resourcegroups/QueryType"
# System session property providers that the server binds only under a configuration switch,
# reviewed by hand: SpoolingServerModule (installed when protocol.spooling.enabled=true, javap
# of trino-main-476) binds SpoolingSessionProperties. Without the switch Trino says "Session
# property ... does not exist" (tests/test_trino_real_session_properties.py).
BOUND_WHEN = {
    "io/trino/server/protocol/spooling/SpoolingSessionProperties": "protocol.spooling.enabled=true",
}
TESTING = "io/trino/server/testing/"
_NAME = re.compile(r"[a-z][a-z0-9_]*")

# factory method -> the type of the value it decodes
FACTORIES = {
    "booleanProperty": "boolean",
    "integerProperty": "integer",
    "longProperty": "bigint",
    "doubleProperty": "double",
    "stringProperty": "varchar",
    "enumProperty": "enum",
    "durationProperty": "duration",
    "dataSizeProperty": "data_size",
}
# `new PropertyMetadata(name, description, sqlType, javaType, ...)`: Trino reads the value as
# the SQL type (Integer.valueOf for INTEGER...) before the decoder; the boxed class tells which.
JAVA_TYPES = {"io/airlift/units/Duration": "duration", "io/airlift/units/DataSize": "data_size",
              "java/lang/Boolean": "boolean", "java/lang/Integer": "integer",
              "java/lang/Long": "bigint", "java/lang/Double": "double",
              "java/lang/String": "varchar"}

# A property's spec: a type name, or the list of an enum's constants.
Spec = str | list[str]


def _implements(classes: Mapping[str, classfile.ClassFile], name: str, interface: str,
                depth: int = 0) -> bool:
    cls = classes.get(name)
    if cls is None or depth > 8:
        return False
    if interface in cls.interfaces:
        return True
    parents = [*cls.interfaces, *([cls.super_name] if cls.super_name else [])]
    return any(_implements(classes, p, interface, depth + 1) for p in parents)


def _spec(owner: str, method: str, loaded_classes: list[str],
          enums: Mapping[str, list[str]]) -> Spec:
    if owner == PROPERTY_METADATA and method == "<init>":
        return next((JAVA_TYPES[c] for c in loaded_classes if c in JAVA_TYPES), "any")
    kind = FACTORIES.get(method, "any")
    if kind == "enum":
        constants = next((enums[c] for c in reversed(loaded_classes) if c in enums), None)
        return sorted(constants) if constants else "any"
    return kind


def _method_properties(cls: classfile.ClassFile, method: classfile.Method,
                       enums: Mapping[str, list[str]], out: dict[str, Spec]) -> None:
    strings: list[str] = []
    loaded_classes: list[str] = []
    for kind, a, b, descriptor in classfile.constants_and_invokes(cls, method):
        if kind == "string":
            strings.append(a)
        elif kind == "class":
            loaded_classes.append(a)
        elif (a == PROPERTY_METADATA and b == "<init>") or descriptor.endswith(
                f")L{PROPERTY_METADATA};"):
            if strings and _NAME.fullmatch(strings[0]):
                out.setdefault(strings[0], _spec(a, b, loaded_classes, enums))
            strings, loaded_classes = [], []


def _reachable(classes: Mapping[str, classfile.ClassFile],
               plugins: list[str]) -> tuple[set[str], set[str]]:
    """The classes reachable from the unit's Plugin classes (those its services file names,
    else every implementation) through the classes each names, and the class constants those
    load (what Guice modules bind)."""
    seen: set[str] = set()
    todo = list(plugins) or [c for c in classes if _implements(classes, c, PLUGIN)]
    while todo:
        name = todo.pop()
        if name in seen or name not in classes:
            continue
        seen.add(name)
        todo.extend(classes[name].class_refs)
    loaded = {a for name in seen for method in classes[name].methods
              for kind, a, _, _ in classfile.constants_and_invokes(classes[name], method)
              if kind == "class"}
    return seen, loaded


def plugin_classes(classes: Mapping[str, classfile.ClassFile], names: Iterable[str]) -> list[str]:
    """The classes among `names` implementing Trino's Plugin."""
    return sorted(n for n in names if _implements(classes, n, PLUGIN))


def _declaring(classes: Mapping[str, classfile.ClassFile], plugins: list[str],
               system: bool) -> list[tuple[classfile.ClassFile, list[classfile.Method]]]:
    if system:
        return [(c, c.methods) for c in classes.values()
                if not c.name.startswith(TESTING) and c.name not in BOUND_WHEN
                and _implements(classes, c.name, SYSTEM_PROVIDER)]
    reachable, loaded = _reachable(classes, plugins)
    out = []
    for name in sorted(reachable):
        cls = classes[name]
        if name in loaded and _implements(classes, name, CATALOG_PROVIDER):
            out.append((cls, cls.methods))
        elif _implements(classes, name, CONNECTOR):
            out.append((cls, [m for m in cls.methods if m.name == "getSessionProperties"]))
    return out


def properties(classes: Mapping[str, classfile.ClassFile], enums: Mapping[str, list[str]],
               plugins: list[str], system: bool) -> dict[str, Spec]:
    """The session properties the classes of one unit declare (system ones for the server);
    `plugins`: the Plugin classes the unit's services file names."""
    out: dict[str, Spec] = {}
    for cls, methods in _declaring(classes, plugins, system):
        for method in methods:
            if method.code:
                _method_properties(cls, method, enums, out)
    return dict(sorted(out.items()))


def bound_when(classes: Mapping[str, classfile.ClassFile],
               enums: Mapping[str, list[str]]) -> dict[str, dict[str, Spec]]:
    """The system session properties of the BOUND_WHEN providers, by the switch they need."""
    out: dict[str, dict[str, Spec]] = {}
    for name, switch in sorted(BOUND_WHEN.items()):
        cls = classes.get(name)
        if cls is None:
            continue
        found: dict[str, Spec] = {}
        for method in cls.methods:
            if method.code:
                _method_properties(cls, method, enums, found)
        out.setdefault(switch, {}).update(found)
    return out


def write(versions: Mapping[str, Mapping[str, Any]], out_dir: Path, keep: bool = False) -> Path:
    """One gzipped JSON beside the registry: {"versions": {v: {"system": set index,
    "connectors": {name: set index}, "bound_when": {switch: set index}, "query_types": [...]}},
    "sets": [{property: spec}]}, each distinct set once.

    `versions` maps a version to {"system": {...} or None, "connectors": {name: {...}},
    "bound_when": {switch: {...}}, "query_types": [...]}; `keep`: the versions of an existing
    file not in it stay."""
    target = out_dir / "session.json.gz"
    entries: dict[str, dict[str, Any]] = {}
    if keep and target.is_file():
        old = json.loads(gzip.decompress(target.read_bytes()))
        for version, entry in old["versions"].items():
            if version not in versions:
                entries[version] = {
                    "system": None if entry["system"] is None else old["sets"][entry["system"]],
                    "connectors": {n: old["sets"][i] for n, i in entry["connectors"].items()},
                    "bound_when": {n: old["sets"][i] for n, i in entry["bound_when"].items()},
                    "query_types": entry["query_types"],
                    "partial": entry.get("partial", [])}
    entries.update({v: dict(e) for v, e in versions.items()})
    table = SetTable()
    sets, ref = table.sets, table.ref

    doc: dict[str, Any] = {"format": FORMAT, "versions": {}}
    for version in sorted(entries, key=int):
        entry = entries[version]
        doc["versions"][version] = {
            "system": None if entry["system"] is None else ref(entry["system"]),
            "connectors": {n: ref(body) for n, body in sorted(entry["connectors"].items())},
            "bound_when": {n: ref(body) for n, body in sorted(entry["bound_when"].items())},
            "query_types": entry["query_types"],
            "partial": sorted(entry.get("partial", []))}
    doc["sets"] = sets
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    target.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    return target
