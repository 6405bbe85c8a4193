"""Conditional bindings: catalog properties a connector binds only under one value of a switch.

Trino's connectors pick modules by a property's value: ``iceberg.catalog.type=rest`` installs
the REST catalog module and with it ``IcebergRestCatalogConfig``; under any other type
``iceberg.rest-catalog.uri`` is bound by nothing and Trino refuses to start ("Configuration
property ... was not used"). The registry therefore records, per connector property set::

    "conditional": {"iceberg.catalog.type": {"default": "HIVE_METASTORE",
                                              "binds": {"iceberg.rest-catalog.uri": ["REST"], ...}}}

one entry per switch property: the value Trino takes when the property is unset, and each
property bound only under the listed values (enum constant names, or the strings a switch
compares to). A property absent from "binds" is not conditional on that switch.

Half of this is a hand table and half is read from the bytecode (issue 21, item 7):
- SWITCHES (hand-written, reviewed against the 476 jars) says which class chooses the modules,
  which config setter holds the switch, its default, and which module each value installs.
  tests/test_trino_conditional.py reads each row back from the 476 bytecode (the constant that
  selects each module, the setter's @Config name, the default in the config's constructor). The
  choosing code has three shapes (an airlift ``conditionalModule`` predicate comparing a getter
  with a constant, a Java ``switch`` over an enum, an ``if`` on a boolean getter); a general reader
  of all three is future work.
- The properties behind each module are read from the bytecode: the switch's property name
  (the @Config on the setter, so a renamed switch follows), and every config class that only
  modules owned by some values load (``X.class`` constants). A class is owned by a value when
  every class that instantiates it (``new``) or extends it is owned, and the chooser's own
  ``new`` of a row's module counts as that row's value. Choosers that read one property (hive's
  and delta_lake's metastore modules, both in the delta_lake plugin) are taken together; a
  chooser nothing in the unit builds (another connector's, in a shared jar) builds nothing. Anything reached any other way (a module
  built by a static factory, a config class loaded by a class nobody owns, a prefixed binding)
  is not conditional: as in scan.py, the registry would rather miss a refusal than invent one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tools.trino_registry import classfile

CONFIG = "io/airlift/configuration/Config"
_ICE = "io/trino/plugin/iceberg/"
_HIVE = "io/trino/plugin/hive/"
_META = f"{_HIVE}metastore/"
_DELTA = "io/trino/plugin/deltalake/metastore/"
_KAFKA = "io/trino/plugin/kafka/"
_FS = "io/trino/filesystem/"
_BASE = "io/trino/plugin/base/"


@dataclass(frozen=True)
class Switch:
    """One module switch, as read by hand from the jars (checked by a test per row)."""

    chooser: str  # the class whose setup installs a module by the switch's value
    config: str  # the config class holding the switch
    setter: str  # its setter, carrying @Config("<switch property>")
    default: str  # the value when the property is unset
    modules: Mapping[str, str]  # value -> the module class installed for it


SWITCHES = (
    Switch(f"{_ICE}catalog/IcebergCatalogModule", f"{_ICE}IcebergConfig", "setCatalogType",
           "HIVE_METASTORE", {
               "HIVE_METASTORE": f"{_ICE}catalog/hms/IcebergHiveMetastoreCatalogModule",
               "TESTING_FILE_METASTORE": f"{_ICE}catalog/file/IcebergFileMetastoreCatalogModule",
               "GLUE": f"{_ICE}catalog/glue/IcebergGlueCatalogModule",
               "REST": f"{_ICE}catalog/rest/IcebergRestCatalogModule",
               "JDBC": f"{_ICE}catalog/jdbc/IcebergJdbcCatalogModule",
               "NESSIE": f"{_ICE}catalog/nessie/IcebergNessieCatalogModule",
               "SNOWFLAKE": f"{_ICE}catalog/snowflake/IcebergSnowflakeCatalogModule",
           }),
    # hive and hudi (which installs hive's HiveMetastoreModule)
    Switch(f"{_META}HiveMetastoreModule", f"{_META}MetastoreTypeConfig", "setMetastoreType",
           "THRIFT", {
               "THRIFT": f"{_META}thrift/ThriftMetastoreModule",
               "FILE": f"{_META}file/FileMetastoreModule",
               "GLUE": f"{_META}glue/GlueMetastoreModule",
           }),
    Switch(f"{_DELTA}DeltaLakeMetastoreModule", f"{_META}MetastoreTypeConfig", "setMetastoreType",
           "THRIFT", {
               "THRIFT": f"{_DELTA}thrift/DeltaLakeThriftMetastoreModule",
               "FILE": f"{_DELTA}file/DeltaLakeFileMetastoreModule",
               "GLUE": f"{_DELTA}glue/DeltaLakeGlueMetastoreModule",
           }),
    # hive.security: a Java switch over the enum's ordinal (SYSTEM installs no module of its own)
    Switch(f"{_HIVE}security/HiveSecurityModule", f"{_HIVE}security/SecurityConfig",
           "setSecuritySystem", "ALLOW_ALL", {
               "ALLOW_ALL": f"{_BASE}security/AllowAllSecurityModule",
               "READ_ONLY": f"{_BASE}security/ReadOnlySecurityModule",
               "FILE": f"{_BASE}security/FileBasedAccessControlModule",
               "SQL_STANDARD": f"{_HIVE}security/SqlStandardSecurityModule",
           }),
    Switch(f"{_KAFKA}KafkaConnectorModule", f"{_KAFKA}KafkaConfig", "setTableDescriptionSupplier",
           "FILE", {
               "FILE": f"{_KAFKA}schema/file/FileTableDescriptionSupplierModule",
               "CONFLUENT": f"{_KAFKA}schema/confluent/ConfluentModule",
           }),
    # the lake connectors' native file systems (FileSystemModule: if (config.isXEnabled()) ...)
    *(Switch(f"{_FS}manager/FileSystemModule", f"{_FS}manager/FileSystemConfig", setter,
             "FALSE", {"TRUE": module})
      for setter, module in (
          ("setNativeS3Enabled", f"{_FS}s3/S3FileSystemModule"),
          ("setNativeGcsEnabled", f"{_FS}gcs/GcsFileSystemModule"),
          ("setNativeAzureEnabled", f"{_FS}azure/AzureFileSystemModule"),
          ("setAlluxioEnabled", f"{_FS}alluxio/AlluxioFileSystemModule"),
      )),
)


def switch_property(classes: Mapping[str, classfile.ClassFile], switch: Switch) -> str | None:
    """The property name on the switch's setter (@Config), or None when this version lacks it."""
    config = classes.get(switch.config)
    for method in config.methods if config else ():
        if method.name == switch.setter:
            for ann in method.annotations:
                if ann.type == CONFIG and isinstance(ann.values.get("value"), str):
                    return str(ann.values["value"])
    return None


def _edges(classes: Mapping[str, classfile.ClassFile]) -> tuple[dict[str, set[str]],
                                                                  dict[str, set[str]]]:
    """class -> the classes that instantiate or extend it; config class -> classes loading it."""
    makers: dict[str, set[str]] = {}
    loaders: dict[str, set[str]] = {}
    for cls in classes.values():
        if cls.super_name:
            makers.setdefault(cls.super_name, set()).add(cls.name)
        for method in cls.methods:
            for call in classfile.calls(cls, method):
                for loaded in call.classes:
                    loaders.setdefault(loaded, set()).add(cls.name)
                super_call = method.name == "<init>" and call.owner in (cls.name, cls.super_name)
                if call.name == "<init>" and call.owner != cls.name and not super_call:
                    makers.setdefault(call.owner, set()).add(cls.name)
    return makers, loaders


class _Owners:
    """Which switch values a class is installed under (None: reachable some other way).

    `switches` share one property (hive's and delta_lake's metastore choosers both read
    MetastoreTypeConfig): a module either chooser builds for a value is owned by that value."""

    def __init__(self, switches: list[Switch], makers: Mapping[str, set[str]]) -> None:
        self.makers = makers
        self.rows: dict[str, list[tuple[str, str]]] = {}  # module -> (value, chooser)
        for switch in switches:
            for value, module in switch.modules.items():
                self.rows.setdefault(module, []).append((value, switch.chooser))
        self.memo: dict[str, frozenset[str] | None] = {}

    def of(self, name: str, path: frozenset[str] = frozenset()) -> frozenset[str] | None:
        if name in self.memo:
            return self.memo[name]
        rows = self.rows.get(name, [])
        values = {value for value, _ in rows}
        parents = self.makers.get(name, set()) - {chooser for _, chooser in rows}
        result: frozenset[str] | None = frozenset(values) if values or parents else None
        for parent in sorted(parents):
            got = None if parent in path else self.of(parent, path | {name})
            if got is None or result is None:
                result = None
                break
            result |= got
        self.memo[name] = result
        return result


def _groups(classes: Mapping[str, classfile.ClassFile]) -> dict[str, list[Switch]]:
    """The switches present in a unit, by the property they read."""
    out: dict[str, list[Switch]] = {}
    for switch in SWITCHES:
        prop = switch_property(classes, switch)
        if prop is not None and switch.chooser in classes:
            out.setdefault(prop, []).append(switch)
    return out


def derive(classes: Mapping[str, classfile.ClassFile], names: Mapping[str, set[str]],
           prefixed: set[str | None]) -> dict[str, dict[str, Any]]:
    """The "conditional" entry of one unit (see the module docstring).

    `names`: config class -> the property names it declares (current and legacy); `prefixed`:
    config classes bound under a prefix somewhere (never conditional here).
    """
    makers, loaders = _edges(classes)
    # A chooser nothing in the unit builds is another connector's, carried in a shared jar:
    # the modules it builds are not built by it here.
    for dead in {s.chooser for s in SWITCHES} - set(makers):
        for made in makers.values():
            made.discard(dead)
    out: dict[str, dict[str, Any]] = {}
    for prop, switches in sorted(_groups(classes).items()):
        owners = _Owners(switches, makers)
        every = {v for s in switches for v in s.modules}
        binds = {}
        for name, values in sorted(_by_name(names, prefixed, loaders, owners).items()):
            # bound under every value the table knows: not a condition worth a refusal
            if values and name != prop and (len(every) == 1 or values != every):
                binds[name] = sorted(values)
        if binds:
            out[prop] = {"default": switches[0].default, "binds": binds}
    return out


def _by_name(names: Mapping[str, set[str]], prefixed: set[str | None],
             loaders: Mapping[str, set[str]], owners: _Owners) -> dict[str, set[str] | None]:
    """Each declared property -> the values under which alone it is bound (None: unconditional)."""
    by_name: dict[str, set[str] | None] = {}
    for config, declared in names.items():
        values: set[str] | None = None
        sites = loaders.get(config, set()) - {config}
        if sites and config not in prefixed:
            values = set()
            for site in sites:
                got = owners.of(site)
                if got is None:
                    values = None
                    break
                values |= got
        for name in declared:
            seen = by_name.get(name, set())
            by_name[name] = None if seen is None or values is None else seen | values
    return by_name
