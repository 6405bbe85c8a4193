"""Conditional bindings (issue 21, item 7): the hand table of module switches read back from the
Trino 476 bytecode, and the check that refuses a property its catalog's switch does not bind.

The switch table (tools/trino_registry/conditional.py) is hand-written; each row is checked here
against the jars of the real 476 distribution (the tarball the real-Trino tests use): the
setter's @Config name, the default in the config's constructor, and the constant that selects
each module in the choosing class. The check rows' expectations come from Trino: the real-Trino
test (test_trino_real_conditional.py) shows 476 refusing the two tried catalogs, and the rest
follow the modules named in Trino's connector documentation (iceberg catalog types, hive
metastore types, kafka table description suppliers).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

import pytest

from tests import trino_server as ts
from tools.trino_registry import classfile, conditional, maven
from tools.trino_registry.conditional import SWITCHES, Switch
from trinogen.trino import checks
from trinogen.trino.checks import Finding
from trinogen.trino.registry import Registry, covered_versions, registry_for

_R = registry_for("476")
assert _R is not None
R476: Registry = _R

# --- the hand table, read back from the bytecode --------------------------------------------

# chooser -> the plugin directory of the 476 tarball whose jars hold it
PLUGIN_OF = {
    "io/trino/plugin/iceberg/catalog/IcebergCatalogModule": "iceberg",
    "io/trino/plugin/hive/metastore/HiveMetastoreModule": "hive",
    "io/trino/plugin/hive/security/HiveSecurityModule": "hive",
    "io/trino/plugin/deltalake/metastore/DeltaLakeMetastoreModule": "delta-lake",
    "io/trino/plugin/kafka/KafkaConnectorModule": "kafka",
    "io/trino/filesystem/manager/FileSystemModule": "hive",
}
# (chooser, setter) -> the property as Trino's documentation names it
PROPERTY_OF = {
    ("IcebergCatalogModule", "setCatalogType"): "iceberg.catalog.type",
    ("HiveMetastoreModule", "setMetastoreType"): "hive.metastore",
    ("HiveSecurityModule", "setSecuritySystem"): "hive.security",
    ("DeltaLakeMetastoreModule", "setMetastoreType"): "hive.metastore",
    ("KafkaConnectorModule", "setTableDescriptionSupplier"): "kafka.table-description-supplier",
    ("FileSystemModule", "setNativeS3Enabled"): "fs.native-s3.enabled",
    ("FileSystemModule", "setNativeGcsEnabled"): "fs.native-gcs.enabled",
    ("FileSystemModule", "setNativeAzureEnabled"): "fs.native-azure.enabled",
    ("FileSystemModule", "setAlluxioEnabled"): "fs.alluxio.enabled",
}


class _Classes(Mapping[str, classfile.ClassFile]):
    """The io/trino classes of some jars (given as bytes), each parsed when first asked for."""

    def __init__(self, jars: Iterable[bytes]) -> None:
        self.where: dict[str, tuple[zipfile.ZipFile, str]] = {}
        self.parsed: dict[str, classfile.ClassFile] = {}
        for data in jars:
            archive = zipfile.ZipFile(io.BytesIO(data))
            for entry in archive.namelist():
                if entry.startswith("io/trino/") and entry.endswith(".class"):
                    self.where.setdefault(entry[:-6], (archive, entry))

    def __getitem__(self, name: str) -> classfile.ClassFile:
        if name not in self.parsed:
            archive, entry = self.where[name]
            self.parsed[name] = classfile.parse(archive.read(entry))
        return self.parsed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.where)

    def __len__(self) -> int:
        return len(self.where)


# Where a version without a served server tarball has its choosers' classes: the plugin's ZIP
# where the registry was built from it, else the plugin's jar and the io.trino jars it takes
# the switch classes from (each fetched into the Maven cache when served).
_BESIDE = ("trino-hive", "trino-metastore", "trino-filesystem-manager")


def _artifact_jars(plugin: str, version: str) -> Iterator[bytes]:
    registry = registry_for(version)
    assert registry is not None
    if f"trino-{plugin}-{version}.zip" in registry.origin:
        path = maven.fetch(maven.artifact_path("io.trino", f"trino-{plugin}", version, "zip"))
        with zipfile.ZipFile(path) as archive:
            yield from (archive.read(n) for n in archive.namelist() if n.endswith(".jar"))
        return
    for artifact in dict.fromkeys((f"trino-{plugin}", *_BESIDE)):
        try:
            yield maven.fetch(maven.artifact_path("io.trino", artifact, version, "jar")).read_bytes()
        except maven.NotServed:
            continue


@cache
def _plugin_classes(plugin: str, version: str = "476") -> Mapping[str, classfile.ClassFile]:
    """The classes of one plugin directory of a version: the real distribution's where its
    tarball is served (470, 476), else what the registry of that version was built from."""
    registry = registry_for(version)
    assert registry is not None
    if f"trino-server-{version}.tar.gz" in registry.origin:
        return _Classes(jar.read_bytes() for jar in
                        sorted(Path(ts.distribution(version), "plugin", plugin).glob("*.jar")))
    return _Classes(_artifact_jars(plugin, version))


def _events(cls: classfile.ClassFile) -> list[list[tuple[str, str]]]:
    return [classfile.events(cls, m) for m in cls.methods]


def _selector(events: list[tuple[str, str]], at: int, getters: set[str]) -> str:
    """The nearest instruction before `at` that can choose a module: an enum constant, a string
    constant, or a call of the switch's getter."""
    for kind, text in reversed(events[:at]):
        if kind in ("static", "string") and "$SwitchMap$" not in text or text in getters:
            return text
    return ""


def _switch_order(classes: Mapping[str, classfile.ClassFile], switch: Switch) -> list[str]:
    """The enum constants in the order a Java switch numbers its cases: the synthetic $1 class's
    $SwitchMap where there is one, else (a switch on ordinal()) the enum's declaration order."""
    if f"{switch.chooser}$1" in classes:
        outer = classes[f"{switch.chooser}$1"]
        clinit = next(m for m in outer.methods if m.name == "<clinit>")
        return [t.rsplit(".", 1)[1] for k, t in classfile.events(outer, clinit)
                if k == "static" and "$SwitchMap$" not in t]
    setter = next(m for m in classes[switch.config].methods if m.name == switch.setter)
    enum = setter.descriptor[2:setter.descriptor.index(";")]
    return [name for name, desc in classes[enum].fields if desc == f"L{enum};"]


def _check_module(classes: Mapping[str, classfile.ClassFile], switch: Switch, value: str,
                  module: str) -> None:
    getter_stem = switch.setter.removeprefix("set")
    getters = {f"{switch.config}.get{getter_stem}", f"{switch.config}.is{getter_stem}"}
    for events in _events(classes[switch.chooser]):
        if ("new", module) not in events:
            continue
        at = events.index(("new", module))
        if ("switch", "") in events[:at]:  # a Java switch over the enum: case order
            rows = set(switch.modules.values())
            after = list(dict.fromkeys(t for k, t in events[events.index(("switch", "")):]
                                       if k == "new" and t in rows))
            order = [v for v in _switch_order(classes, switch) if v in switch.modules]
            assert after.index(module) == order.index(value), (after, order)
            return
        text = _selector(events, at, getters)
        if value == "TRUE":  # if (config.isXEnabled()) install(new XModule())
            assert text in getters, (module, text)
        else:  # conditionalModule(..., VALUE, new Module()) or ("value", new Module())
            assert text.endswith(f".{value}") or text.upper() == value, (module, text)
        return
    raise AssertionError(f"{switch.chooser} never builds {module}")


def _switches_in_data(version: str) -> list[Switch]:
    """The rows behind the conditional bindings a version's data holds: each switch whose
    property some connector's set of that version records and whose plugin was scanned."""
    registry = registry_for(version)
    assert registry is not None
    recorded: set[str] = set()
    for name in registry.connector_names:
        props = registry.connector(name)
        recorded |= set(props.conditional) if props is not None else set()
    # whole units not had ("hive"); "hive (without trino-orc)" was scanned, partly
    unscanned = {u for u in registry.unavailable if " " not in u}
    return [s for s in SWITCHES
            if PROPERTY_OF[s.chooser.rsplit("/", 1)[1], s.setter] in recorded
            and PLUGIN_OF[s.chooser] not in unscanned]


# 476: every row (the table was written from it); other versions: the rows their data uses.
ROW_CASES = [("476", s) for s in SWITCHES] + [
    (v, s) for v in covered_versions() if v != "476" for s in _switches_in_data(v)]


@pytest.mark.parametrize(("version", "switch"), ROW_CASES,
                         ids=[f"{v}-{s.chooser.rsplit('/', 1)[1]}.{s.setter}" for v, s in ROW_CASES])
def test_each_switch_row_is_what_the_bytecode_does(version: str, switch: Switch) -> None:
    """The row's property is its setter's @Config, its default is set in the config's
    constructor, and each value is the constant that selects the row's module, in the jars of
    every version whose registry data records that switch's conditional bindings."""
    classes = _plugin_classes(PLUGIN_OF[switch.chooser], version)
    chooser = switch.chooser.rsplit("/", 1)[1]
    assert conditional.switch_property(classes, switch) == PROPERTY_OF[chooser, switch.setter]
    init = [classfile.events(classes[switch.config], m)
            for m in classes[switch.config].methods if m.name == "<init>"]
    if switch.default != "FALSE":  # a boolean field's Java default needs no instruction
        assert any(t.endswith(f".{switch.default}") or t.upper() == switch.default
                   for events in init for k, t in events if k in ("static", "string"))
    called = {t for events in _events(classes[switch.chooser]) for k, t in events if k == "call"}
    stem = switch.setter.removeprefix("set")
    assert called & {f"{switch.config}.get{stem}", f"{switch.config}.is{stem}",
                     f"{switch.chooser}.buildConfigObject"}
    for value, module in switch.modules.items():
        _check_module(classes, switch, value, module)


# --- the check -------------------------------------------------------------------------------


def catalog(**kv: str) -> Callable[[Registry], list[Finding]]:
    props = {k.replace("__", "."): (v, k.replace("__", ".")) for k, v in kv.items()}
    return lambda r: checks.check_catalog(r, "cat", props)


S3 = {"fs__native-s3__enabled": "true", "s3__region": "us-east-1"}
THRIFT = {"hive__metastore__uri": "thrift://m:9083"}
ICEBERG = {"connector__name": "iceberg", **S3}
KAFKA = {"connector__name": "kafka", "kafka__nodes": "k:9092"}

# (id, catalog, the key refused, fragments of the message)
REFUSED = [
    ("iceberg rest uri under the default type",
     catalog(**ICEBERG, **THRIFT, **{"iceberg__rest-catalog__uri": "http://r"}),
     "iceberg.rest-catalog.uri", ["iceberg.catalog.type=rest", "hive_metastore (the default"]),
    ("iceberg rest uri under hive_metastore",
     catalog(**ICEBERG, **THRIFT, **{"iceberg__catalog__type": "hive_metastore",
                                     "iceberg__rest-catalog__uri": "http://r"}),
     "iceberg.rest-catalog.uri", ["iceberg.catalog.type=rest", "has iceberg.catalog.type=hive_me"]),
    ("iceberg jdbc url under glue",
     catalog(**ICEBERG, iceberg__catalog__type="glue",
             **{"iceberg__jdbc-catalog__connection-url": "jdbc:postgresql://d/x"}),
     "iceberg.jdbc-catalog.connection-url", ["iceberg.catalog.type=jdbc"]),
    ("hive thrift uri under glue",
     catalog(connector__name="hive", hive__metastore="glue", **THRIFT, **S3),
     "hive.metastore.uri", ["hive.metastore=thrift", "has hive.metastore=glue"]),
    ("hive glue region under the default thrift",
     catalog(connector__name="hive", **THRIFT, **S3, hive__metastore__glue__region="eu-west-1"),
     "hive.metastore.glue.region", ["hive.metastore=glue", "thrift (the default"]),
    ("delta_lake thrift uri under glue",
     catalog(connector__name="delta_lake", hive__metastore="glue", **THRIFT, **S3),
     "hive.metastore.uri", ["hive.metastore=thrift", "has hive.metastore=glue"]),
    ("hudi file metastore dir under thrift",
     catalog(connector__name="hudi", **THRIFT, **S3, hive__metastore__catalog__dir="s3://b/"),
     "hive.metastore.catalog.dir", ["hive.metastore=file"]),
    ("kafka table names under confluent",
     catalog(**KAFKA, **{"kafka__table-description-supplier": "confluent",
                         "kafka__confluent-schema-registry-url": "http://r",
                         "kafka__table-names": "t"}),
     "kafka.table-names", ["kafka.table-description-supplier=file"]),
    ("kafka schema registry under the default file",
     catalog(**KAFKA, **{"kafka__confluent-schema-registry-url": "http://r"}),
     "kafka.confluent-schema-registry-url",
     ["kafka.table-description-supplier=confluent", "file (the default"]),
]


@pytest.mark.parametrize(("check", "key", "fragments"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])
def test_a_property_its_switch_does_not_bind_is_refused(
    check: Callable[[Registry], list[Finding]], key: str, fragments: list[str]
) -> None:
    """A key bound only under another value of its catalog's switch is one error naming the
    switch and the value that binds it."""
    findings = check(R476)
    assert [(f.path, f.warning) for f in findings] == [(key, False)], findings
    for fragment in [key, "Trino refuses to start", *fragments]:
        assert fragment in findings[0].message, findings[0].message


ACCEPTED = [
    ("iceberg rest uri under rest",
     catalog(**ICEBERG, iceberg__catalog__type="rest",
             **{"iceberg__rest-catalog__uri": "http://r"})),
    ("the switch's value in any case and with dashes",
     catalog(**ICEBERG, **THRIFT, **{"iceberg__catalog__type": "HIVE-METASTORE",
                                     "iceberg__hive-catalog__locking-enabled": "false"})),
    ("hive thrift uri under the default",
     catalog(connector__name="hive", **THRIFT, **S3)),
    ("hive file metastore dir under file",
     catalog(connector__name="hive", hive__metastore="file", **S3,
             hive__metastore__catalog__dir="s3://b/")),
    ("kafka table names under the default supplier",
     catalog(**KAFKA, **{"kafka__table-names": "t"})),
    ("kafka schema registry under CONFLUENT",
     catalog(**KAFKA, **{"kafka__table-description-supplier": "CONFLUENT",
                         "kafka__confluent-schema-registry-url": "http://r"})),
]


@pytest.mark.parametrize("check", [r[1] for r in ACCEPTED], ids=[r[0] for r in ACCEPTED])
def test_a_property_its_switch_binds_is_accepted(
    check: Callable[[Registry], list[Finding]]
) -> None:
    """Under the value that installs its module (set or by default) the key gives no finding."""
    assert check(R476) == []


def test_a_file_system_key_is_refused_once() -> None:
    """s3.region without the S3 switch: the file-system rule's one error, not a second one."""
    findings = catalog(connector__name="hive", **THRIFT, **{"fs__native-gcs__enabled": "true",
                                                            "s3__region": "us-east-1"})(R476)
    assert [f.path for f in findings] == ["s3.region"], findings
    assert "fs.native-s3.enabled=true" in findings[0].message


# --- derive(): which config classes a switch value owns, on made-up classes ---------------------

_K = SWITCHES[[s.chooser for s in SWITCHES].index("io/trino/plugin/kafka/KafkaConnectorModule")]
_FILE, _CONFLUENT = _K.modules["FILE"], _K.modules["CONFLUENT"]
_HIVE_CHOOSER = "io/trino/plugin/hive/metastore/HiveMetastoreModule"


def _cls(name: str, *, news: tuple[str, ...] = (), loads: tuple[str, ...] = (),
         super_name: str = "java/lang/Object") -> classfile.ClassFile:
    """A class whose one method builds `news` and loads `loads` as X.class constants."""
    calls = [classfile.Call(n, "<init>", "()V", (), (), ()) for n in news]
    calls += [classfile.Call("io/airlift/configuration/ConfigBinder", "bindConfig",
                             "(Ljava/lang/Class;)V", (), (c,), ()) for c in loads]
    method = classfile.Method("setup", "(Lcom/google/inject/Binder;)V", [], b"\0", calls)
    return classfile.ClassFile(name, super_name, [], [], [method], [], set(), [])


def _switch_config() -> classfile.ClassFile:
    setter = classfile.Method(_K.setter, "(Ljava/lang/String;)V", [classfile.Annotation(
        conditional.CONFIG, {"value": "kafka.table-description-supplier"})])
    return classfile.ClassFile(_K.config, None, [], [], [setter], [], set(), [])


def _unit(*extra: classfile.ClassFile) -> dict[str, classfile.ClassFile]:
    """The chooser building both modules (itself built by the connector's module), FILE's module
    binding FileCfg, CONFLUENT's binding RegistryCfg, and `extra`."""
    base = [_switch_config(), _cls("Root", news=(_K.chooser,)),
            _cls(_K.chooser, news=(_FILE, _CONFLUENT)),
            _cls(_FILE, loads=("FileCfg",)), _cls(_CONFLUENT, loads=("RegistryCfg",))]
    return {c.name: c for c in [*base, *extra]}


NAMES = {"FileCfg": {"kafka.table-names"}, "RegistryCfg": {"kafka.confluent-schema-registry-url"},
         "SharedCfg": {"kafka.shared"}}
DERIVE = [
    ("each module's config is owned by its value", _unit(), set(),
     {"kafka.table-names": ["FILE"], "kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
    ("a module something unowned also builds is not conditional",
     _unit(_cls("Elsewhere", news=(_FILE,)), _cls("Root2", news=("Elsewhere",))), set(),
     {"kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
    ("a config an unowned class also loads is not conditional",
     _unit(_cls("Probe", loads=("RegistryCfg",))), set(), {"kafka.table-names": ["FILE"]}),
    ("a config bound under a prefix somewhere is not conditional", _unit(), {"FileCfg"},
     {"kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
    ("what an owned module alone builds is owned too",
     _unit(_cls(_FILE, news=("Sub",), loads=("FileCfg",)), _cls("Sub", loads=("SharedCfg",))),
     set(), {"kafka.table-names": ["FILE"], "kafka.shared": ["FILE"],
             "kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
    ("a subclass of a module built unconditionally takes its bindings everywhere",
     _unit(_cls("Wider", super_name=_CONFLUENT), _cls("Root3", news=("Wider",))), set(),
     {"kafka.table-names": ["FILE"]}),
    ("another connector's chooser nothing here builds does not count",
     _unit(_cls(_HIVE_CHOOSER, news=(_FILE,))), set(),
     {"kafka.table-names": ["FILE"], "kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
    ("another chooser this unit builds does count",
     _unit(_cls(_HIVE_CHOOSER, news=(_FILE,)), _cls("Root4", news=(_HIVE_CHOOSER,))), set(),
     {"kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
    ("a config both modules load is bound under every value: no condition",
     _unit(_cls(_FILE, loads=("FileCfg", "SharedCfg")),
           _cls(_CONFLUENT, loads=("RegistryCfg", "SharedCfg"))), set(),
     {"kafka.table-names": ["FILE"], "kafka.confluent-schema-registry-url": ["CONFLUENT"]}),
]


@pytest.mark.parametrize(("classes", "prefixed", "binds"), [r[1:] for r in DERIVE],
                         ids=[r[0] for r in DERIVE])
def test_derive_keeps_only_what_a_value_alone_reaches(
    classes: dict[str, classfile.ClassFile], prefixed: set[str | None],
    binds: dict[str, list[str]]
) -> None:
    """A config class is conditional only when every way to it runs through the switch's
    module for that value; anything reached another way is left unconditional."""
    got = conditional.derive(classes, NAMES, prefixed)
    assert got.get("kafka.table-description-supplier", {"binds": {}})["binds"] == binds
    if binds:
        assert got["kafka.table-description-supplier"]["default"] == "FILE"
