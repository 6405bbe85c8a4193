"""The Trino property registry: its class-file scanner, its loader, and its data.

Expectations about the data come from outside trinogen: upstream Trino source
(HiveConfig's @LegacyConfig/@DefunctConfig), and the properties a real Trino 476 coordinator and
worker logged as bound at startup (tools/trino_registry/crosscheck.py, run when the data was
generated; the figures are in README "What trinogen checks against Trino").
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tools.trino_registry import build, scan, sources
from trinogen.trino.registry import covered_versions, registry_for

# --- the class-file scanner, on classes compiled here ----------------------------------------

STAND_INS = {
    # Same names and shapes as airlift's and Trino's, written for this test.
    "io/airlift/configuration/Config.java": """
        package io.airlift.configuration;
        import java.lang.annotation.*;
        @Retention(RetentionPolicy.RUNTIME) @Target(ElementType.METHOD)
        public @interface Config { String value(); }""",
    "io/airlift/configuration/LegacyConfig.java": """
        package io.airlift.configuration;
        import java.lang.annotation.*;
        @Retention(RetentionPolicy.RUNTIME) @Target(ElementType.METHOD)
        public @interface LegacyConfig { String[] value(); String replacedBy() default ""; }""",
    "io/airlift/configuration/DefunctConfig.java": """
        package io.airlift.configuration;
        import java.lang.annotation.*;
        @Retention(RetentionPolicy.RUNTIME) @Target(ElementType.TYPE)
        public @interface DefunctConfig { String[] value(); }""",
    "io/airlift/configuration/ConfigBinder.java": """
        package io.airlift.configuration;
        public class ConfigBinder {
            public void bindConfig(Class<?> config) {}
            public void bindConfig(Class<?> config, String prefix) {}
        }""",
    "io/trino/spi/connector/ConnectorFactory.java": """
        package io.trino.spi.connector;
        public interface ConnectorFactory { String getName(); }""",
    "demo/DemoConfig.java": """
        package demo;
        import io.airlift.configuration.*;
        @DefunctConfig({"demo.gone", "demo.also-gone"})
        public class DemoConfig {
            @Config("demo.size") @LegacyConfig("demo.old-size")
            public DemoConfig setSize(int size) { return this; }
            @Config("demo.name")
            public DemoConfig setName(String name) { return this; }
            @LegacyConfig(value = "demo.older-name", replacedBy = "demo.name")
            public DemoConfig setOlderName(String name) { return this; }
        }""",
    "demo/DemoModule.java": """
        package demo;
        import io.airlift.configuration.ConfigBinder;
        public class DemoModule {
            static void clientConfig(ConfigBinder binder, String name) {
                binder.bindConfig(DemoConfig.class, name);
            }
            public void configure(ConfigBinder binder) {
                binder.bindConfig(DemoConfig.class);
                binder.bindConfig(DemoConfig.class, "extra");
                clientConfig(binder, "forwarded");
            }
        }""",
    "demo/DemoFactory.java": """
        package demo;
        public class DemoFactory implements io.trino.spi.connector.ConnectorFactory {
            public String getName() { return "demo"; }
        }""",
}


@pytest.fixture(scope="module")
def demo_jar(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not installed")
    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("classes")
    for name, text in STAND_INS.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    subprocess.run([javac, "-d", str(out), *[str(src / n) for n in STAND_INS]], check=True,
                   capture_output=True, timeout=120)
    jar = tmp_path_factory.mktemp("jar") / "demo.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for path in out.rglob("*.class"):
            archive.write(path, path.relative_to(out).as_posix())
    return jar.read_bytes()


def test_scanner_reads_config_legacy_and_defunct_annotations(demo_jar: bytes) -> None:
    """@Config names, @LegacyConfig names with their replacement, @DefunctConfig lists are read."""
    props = build.property_set(scan.unit_facts([scan.scan_jar(demo_jar)]))
    assert {"demo.size", "demo.name"} <= props.known
    assert props.legacy["demo.old-size"] == "demo.size"
    assert props.legacy["demo.older-name"] == "demo.name"
    assert {"demo.gone", "demo.also-gone"} <= props.defunct


def test_scanner_follows_prefixed_bindings(demo_jar: bytes) -> None:
    """bindConfig(X.class, "extra") and a helper handing its String on both bind under a prefix."""
    props = build.property_set(scan.unit_facts([scan.scan_jar(demo_jar)]))
    assert {"extra.demo.size", "forwarded.demo.name"} <= props.known
    assert props.legacy["extra.demo.old-size"] == "extra.demo.size"


def test_scanner_reads_connector_name_from_get_name(demo_jar: bytes) -> None:
    """A ConnectorFactory whose getName() returns a constant gives that connector name."""
    assert scan.unit_facts([scan.scan_jar(demo_jar)]).connector_names == {"demo"}


def test_tarball_jars_hard_linked_into_plugins_count_for_each(demo_jar: bytes,
                                                               tmp_path: Path) -> None:
    """A jar stored once (in a plugin subdirectory) and hard-linked into another plugin counts
    for both plugins, as the server tarball lays them out."""
    tarball = tmp_path / "trino-server-1.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        first = tarfile.TarInfo("trino-server-1/plugin/alpha/hdfs/demo.jar")
        first.size = len(demo_jar)
        tar.addfile(first, io.BytesIO(demo_jar))
        link = tarfile.TarInfo("trino-server-1/plugin/beta/demo.jar")
        link.type, link.linkname = tarfile.LNKTYPE, first.name
        tar.addfile(link)
    source = sources.VersionSource("1", jars=lambda: sources._tarball_units(str(tarball)))
    data = build.scan_version(source, log=lambda _message: None)
    assert set(data.connectors) == {"demo"}
    assert "demo.size" in data.connectors["demo"].known
    assert data.plugins_without_connector == []


# --- the loader ------------------------------------------------------------------------------

def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=True)
    return done.stdout.strip()


def test_importing_trinogen_does_not_read_the_registry() -> None:
    """Neither importing trinogen nor the registry module reads the index or a version file."""
    out = _python("import sys, trinogen, trinogen.cli, trinogen.trino.registry as r; "
                  "print(r._index.cache_info().misses, r.registry_for.cache_info().misses)")
    assert out == "0 0"


def test_one_version_reads_its_own_file_only() -> None:
    """Asking for one version opens the index and that version's file, no other version's."""
    out = _python("import trinogen.trino.registry as r\n"
                  "seen = []\n"
                  "real = r.Path.read_bytes\n"
                  "r.Path.read_bytes = lambda self: seen.append(self.name) or real(self)\n"
                  "r.registry_for('476').connector('hive')\n"
                  "print(' '.join(seen))")
    assert out == "index.json 476.json.gz"


def test_the_index_names_every_version_file_with_its_hash() -> None:
    """index.json lists exactly the version files shipped, each with the sha256 of its bytes
    (the render cache's fingerprint hashes the index alone)."""
    import hashlib
    import json

    from trinogen.trino.registry import DATA_DIR, INDEX_FILE

    index = json.loads(INDEX_FILE.read_text())["versions"]
    files = {f.name for f in DATA_DIR.glob("*.json.gz")}
    assert {entry["file"] for entry in index.values()} == files
    for version, entry in index.items():
        assert entry["file"] == f"{version}.json.gz"
        assert entry["sha256"] == hashlib.sha256((DATA_DIR / entry["file"]).read_bytes()
                                                 ).hexdigest()


def test_uncovered_versions_have_no_registry() -> None:
    """A version the registry does not cover gives None, never an empty registry."""
    assert registry_for("399") is None
    assert registry_for("not-a-version") is None
    assert "476" in covered_versions()


@pytest.mark.parametrize("version", covered_versions())
def test_an_incomplete_version_names_what_is_missing(version: str) -> None:
    """A version is complete exactly when nothing was unavailable."""
    registry = registry_for(version)
    assert registry is not None
    assert registry.complete == (registry.unavailable == ())


def test_476_is_complete() -> None:
    """476 came from the full server tarball: nothing is missing."""
    registry = registry_for("476")
    assert registry is not None and registry.complete and registry.unavailable == ()


# --- the data, against independent facts ------------------------------------------------------

# Each name was logged as bound by the real Trino 476 (crosscheck.py) for that connector.
LOGGED_BY_TRINO_476 = [
    ("postgresql", "connection-password"),
    ("mysql", "connection-password"),
    ("hive", "hive.metastore.uri"),
    ("hive", "fs.native-s3.enabled"),
    ("hive", "s3.region"),
    ("iceberg", "fs.native-s3.enabled"),
    ("iceberg", "iceberg.catalog.type"),
    ("delta_lake", "fs.native-s3.enabled"),
    ("delta_lake", "hive.metastore.uri"),
    ("kafka", "kafka.nodes"),
    ("opensearch", "opensearch.host"),
]


@pytest.mark.parametrize(("connector", "key"), LOGGED_BY_TRINO_476)
def test_catalog_properties_trino_binds_are_known(connector: str, key: str) -> None:
    """A catalog property the real Trino 476 bound is known for that connector."""
    registry = registry_for("476")
    assert registry is not None
    props = registry.connector(connector)
    assert props is not None and props.known(key)


@pytest.mark.parametrize("connector", ["hive", "iceberg", "delta_lake", "postgresql", "mysql",
                                       "kafka", "opensearch", "memory", "blackhole", "tpch",
                                       "tpcds"])
def test_connector_names_trino_loads_are_covered(connector: str) -> None:
    """Each connector name a real Trino 476 loaded a catalog for has a property set."""
    registry = registry_for("476")
    assert registry is not None and connector in registry.connector_names
    props = registry.connector(connector)
    assert props is not None and props.known("connector.name")


@pytest.mark.parametrize(("role", "key"), [
    ("coordinator", "query.max-memory"),
    ("worker", "query.max-memory"),
    ("worker", "discovery.uri"),
    ("worker", "node.environment"),
    # bound with a prefix at bind time (bindHttpClient("exchange", ...)): logged by the worker
    ("worker", "exchange.http-client.max-connections-per-server"),
    # bound by FailureDetectorModule, logged by the coordinator only
    ("coordinator", "failure-detector.enabled"),
    ("coordinator", "web-ui.enabled"),
])
def test_server_properties_trino_binds_are_known(role: str, key: str) -> None:
    """A server property the real Trino 476 bound on a role is known for that role."""
    registry = registry_for("476")
    assert registry is not None
    props = registry.server(role)  # type: ignore[arg-type]
    assert props is not None and props.known(key)


def test_coordinator_only_properties_are_kept_off_workers() -> None:
    """failure-detector.enabled, bound only on the coordinator in Trino 476, is not a worker's."""
    registry = registry_for("476")
    assert registry is not None
    worker = registry.server("worker")
    assert worker is not None and not worker.known("failure-detector.enabled")
    assert "failure-detector.enabled" in registry.coordinator_only


def test_hive_legacy_and_defunct_names_from_hive_config() -> None:
    """HiveConfig's @LegacyConfig and @DefunctConfig names are recorded as such."""
    registry = registry_for("476")
    assert registry is not None
    hive = registry.connector("hive")
    assert hive is not None
    # @LegacyConfig("hive.max-concurrent-file-renames") on hive.max-concurrent-file-system-operations
    assert hive.legacy("hive.max-concurrent-file-renames") == \
        "hive.max-concurrent-file-system-operations"
    assert hive.accepts("hive.max-concurrent-file-renames")
    assert not hive.known("hive.max-concurrent-file-renames")
    # in HiveConfig's @DefunctConfig list
    for key in ("hive.optimized-reader.enabled", "hive.s3select-pushdown.enabled"):
        assert hive.defunct(key) and not hive.accepts(key)


@pytest.mark.parametrize(("scope", "typo", "meant"), [
    ("postgresql", "connection-pasword", "connection-password"),
    ("hive", "hive.metastore.urii", "hive.metastore.uri"),
    ("server", "query.max-memroy", "query.max-memory"),
    ("node", "node.enviroment", "node.environment"),
])
def test_typos_are_unknown_with_the_meant_name_suggested(scope: str, typo: str, meant: str) -> None:
    """A misspelt key is not accepted and the intended name is among the suggestions."""
    registry = registry_for("476")
    assert registry is not None
    if scope == "server":
        props = registry.server("coordinator")
    elif scope == "node":
        props = registry.node
    else:
        props = registry.connector(scope)
    assert props is not None
    assert not props.accepts(typo)
    assert meant in props.closest(typo)


def test_another_connectors_property_is_not_known() -> None:
    """A JDBC property is no hive property, and a hive one no postgresql property."""
    registry = registry_for("476")
    assert registry is not None
    hive, postgresql = registry.connector("hive"), registry.connector("postgresql")
    assert hive is not None and postgresql is not None
    assert not hive.accepts("connection-password")
    assert not postgresql.accepts("hive.metastore.uri")


# The hive.* names an iceberg read from Maven (its jar and dependencies, no -services jar)
# accepts beyond 476's iceberg (read from the distribution, whose plugin/iceberg/ ships
# trino-hive-476 too). Read with `javap -v` from the trino-hive jar of each version:
# io/trino/plugin/hive/HiveConfig declares each (476's does not); no class of the trino-iceberg
# jar of that version declares any. 479's iceberg was read without trino-hive: nothing.
_PROTOBUF = {"hive.protobuf.descriptors.location", "hive.protobuf.descriptors.cache.max-size",
             "hive.protobuf.descriptors.cache.refresh-interval"}
HIVE_CONFIG_NAMES_SINCE_476 = {
    "479": set(),
    "480": _PROTOBUF,
    "482": _PROTOBUF | {"hive.parquet.max-split-size"},
    "483": _PROTOBUF | {"hive.parquet.max-split-size"},
}


@pytest.mark.parametrize("version", sorted(HIVE_CONFIG_NAMES_SINCE_476))
def test_a_maven_read_iceberg_takes_from_the_hive_jar_what_the_distribution_does(
        version: str) -> None:
    """An iceberg read from Maven takes the hive jar's names as 476's distribution does and
    gains only what that jar's HiveConfig added since, no other plugin's."""
    def hive_names(registry_version: str) -> set[str]:
        registry = registry_for(registry_version)
        iceberg = None if registry is None else registry.connector("iceberg")
        assert iceberg is not None
        return {n for n in iceberg.names if n.startswith("hive.")}

    assert hive_names(version) - hive_names("476") == HIVE_CONFIG_NAMES_SINCE_476[version]


def test_unknown_connector_name_has_close_names() -> None:
    """An unknown connector name has no set, and the close real names are offered."""
    registry = registry_for("476")
    assert registry is not None
    assert registry.connector("postgres") is None
    assert "postgresql" in registry.closest_connectors("postgres")


def test_log_levels_are_airlifts() -> None:
    """log.properties levels are airlift's Level constants (javap io.airlift.log.Level, 476)."""
    registry = registry_for("476")
    assert registry is not None
    assert set(registry.log_levels) == {"OFF", "TRACE", "DEBUG", "INFO", "WARN", "ERROR"}


def test_launcher_node_data_dir_is_a_node_property() -> None:
    """node.data-dir, read by bin/launcher and written by the chart, is accepted."""
    registry = registry_for("476")
    assert registry is not None and registry.node is not None
    assert registry.node.known("node.data-dir")


def test_crosscheck_reads_bootstrap_tables_per_catalog() -> None:
    """The cross-check attributes Bootstrap rows to the server or to the catalog loading in that
    thread, and skips the header and Bootstrap's own messages."""
    from tools.trino_registry.crosscheck import parse_log

    log = "\n".join([
        "2026-01-01T00:00:00.000Z\tINFO\tmain\tBootstrap\tPROPERTY   DEFAULT  RUNTIME  DESCRIPTION",
        "2026-01-01T00:00:00.000Z\tINFO\tmain\tBootstrap\tquery.max-memory   20GB  1GB",
        "2026-01-01T00:00:00.000Z\tINFO\tmain\tBootstrap\tLoading configuration",
        "2026-01-01T00:00:00.000Z\tINFO\tloader-1\tio.trino.connector.StaticCatalogManager\t"
        "-- Loading catalog pg --",
        "2026-01-01T00:00:00.000Z\tINFO\tloader-1\tBootstrap\tconnection-url   ----  jdbc:x",
        "2026-01-01T00:00:00.000Z\tINFO\tmain\tBootstrap\tcoordinator   true  true",
    ])
    assert parse_log(log) == {"server": {"query.max-memory", "coordinator"},
                              "pg": {"connection-url"}}


# --- the generator's Maven route: what a failed resolution names --------------------------------

# Maven 3.8's messages, as this machine's Maven printed them for trino-main 480 and 473.
UNRESOLVED = [
    ("offline, jars not served",
     "[ERROR] Failed to execute goal on project resolve: Could not resolve dependencies for "
     "project trinogen.registry:resolve:pom:1: The following artifacts could not be resolved: "
     "io.trino:trino-cache:jar:480, io.trino:trino-parser:jar:480: Cannot access central "
     "(https://repo.maven.apache.org/maven2) in offline mode and the artifact "
     "io.trino:trino-cache:jar:480 has not been downloaded from it before. -> [Help 1]",
     [("io.trino", "trino-cache"), ("io.trino", "trino-parser")]),
    ("online, the failure cached by Maven",
     "[ERROR] Failed to execute goal on project resolve: Could not resolve dependencies for "
     "project trinogen.registry:resolve:pom:1: The following artifacts could not be resolved: "
     "io.trino:trino-cache:jar:480, io.airlift:node:jar:306: io.trino:trino-cache:jar:480 was "
     "not found in https://repo.maven.apache.org/maven2 during a previous attempt.",
     [("io.trino", "trino-cache"), ("io.airlift", "node")]),
    ("a POM whose parent is not served",
     "[ERROR] Failed to execute goal on project resolve: Could not resolve dependencies for "
     "project trinogen.registry:resolve:pom:1: Failed to collect dependencies at "
     "io.trino:trino-main:jar:473: Failed to read artifact descriptor for "
     "io.trino:trino-main:jar:473: io.trino:trino-root:pom:473 was not found",
     [("io.trino", "trino-main")]),
    ("success", "[INFO] BUILD SUCCESS", []),
]


@pytest.mark.parametrize(("output", "expected"), [r[1:] for r in UNRESOLVED],
                         ids=[r[0] for r in UNRESOLVED])
def test_maven_failures_name_the_artifacts_to_leave_out(output: str,
                                                        expected: list[tuple[str, str]]) -> None:
    """Each artifact Maven says it could not resolve (or could not read the POM of) is named
    once, group and artifact, in Maven's order."""
    assert sources.unresolved(output) == expected


@pytest.mark.parametrize("version", covered_versions())
def test_a_partial_unit_names_the_jars_it_was_scanned_without(version: str) -> None:
    """A unit that is not whole is listed as unavailable, alone or with the jars it lacks."""
    registry = registry_for(version)
    assert registry is not None
    for entry in registry.unavailable:
        unit, _, rest = entry.partition(" ")
        assert unit and (rest == "" or (rest.startswith("(without ") and rest.endswith(")")))


def test_a_version_file_that_does_not_match_the_index_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version file whose bytes are not the ones the index hashes is not loaded: the render
    cache's fingerprint (the index's hash) would not have seen the change."""
    import trinogen.trino.registry as r

    (tmp_path / "476.json.gz").write_bytes((r.DATA_DIR / "476.json.gz").read_bytes() + b"\0")
    monkeypatch.setattr(r, "DATA_DIR", tmp_path)
    with pytest.raises(RuntimeError, match="does not match"):
        r._load(r._index()["versions"]["476"])
