"""The session-property reader of tools/trino_registry (session.py), on classes compiled here.

The stand-ins have the names and shapes of Trino's (PropertyMetadata's static factories, the
two provider interfaces, a Plugin whose Guice-like module binds a provider by its class); what
the reader must find is what Java would bind. The data it wrote for 476 is held to a real
Trino's SHOW SESSION by tests/test_trino_real_session_properties.py.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile

import pytest

from tools.trino_registry import scan, session

STAND_INS = {
    "io/trino/spi/session/PropertyMetadata.java": """
        package io.trino.spi.session;
        public class PropertyMetadata<T> {
            public PropertyMetadata(String name, String description, Object sqlType,
                                    Class<T> javaType, T defaultValue, boolean hidden) {}
            public static PropertyMetadata<Boolean> booleanProperty(
                String name, String description, Boolean defaultValue, boolean hidden) {
                return null; }
            public static PropertyMetadata<Integer> integerProperty(
                String name, String description, Integer defaultValue, boolean hidden) {
                return null; }
            public static <T extends Enum<T>> PropertyMetadata<T> enumProperty(
                String name, String description, Class<T> type, T defaultValue, boolean hidden) {
                return null; }
        }""",
    "io/airlift/units/Duration.java": """
        package io.airlift.units;
        public class Duration {}""",
    "io/trino/SystemSessionPropertiesProvider.java": """
        package io.trino;
        public interface SystemSessionPropertiesProvider {}""",
    "io/trino/plugin/base/session/SessionPropertiesProvider.java": """
        package io.trino.plugin.base.session;
        public interface SessionPropertiesProvider {}""",
    "io/trino/spi/Plugin.java": """
        package io.trino.spi;
        public interface Plugin {}""",
    "demo/Mode.java": """
        package demo;
        public enum Mode { FAST, SAFE }""",
    "demo/DemoSystemProperties.java": """
        package demo;
        import io.trino.spi.session.PropertyMetadata;
        import java.util.List;
        public class DemoSystemProperties implements io.trino.SystemSessionPropertiesProvider {
            public static final String SPILL = "demo_spill_enabled";
            private final List<PropertyMetadata<?>> properties;
            public DemoSystemProperties(int parts) {
                properties = List.of(
                    PropertyMetadata.booleanProperty(SPILL, "Spill " + parts, Boolean.valueOf(
                        parts > 1), false),
                    PropertyMetadata.integerProperty("demo_parts", "How many parts", parts, true),
                    PropertyMetadata.enumProperty("demo_mode", "Mode", Mode.class, Mode.FAST,
                                                  false),
                    new PropertyMetadata<>("demo_timeout", "Timeout", null,
                                           io.airlift.units.Duration.class, null, false));
            }
        }""",
    "demo/BoundProperties.java": """
        package demo;
        import io.trino.spi.session.PropertyMetadata;
        public class BoundProperties
                implements io.trino.plugin.base.session.SessionPropertiesProvider {
            Object p = PropertyMetadata.booleanProperty("bound_flag", "d", true, false);
        }""",
    "demo/UnboundProperties.java": """
        package demo;
        import io.trino.spi.session.PropertyMetadata;
        public class UnboundProperties
                implements io.trino.plugin.base.session.SessionPropertiesProvider {
            Object p = PropertyMetadata.booleanProperty("unbound_flag", "d", true, false);
        }""",
    "com/google/inject/Module.java": """
        package com.google.inject;
        public interface Module {}""",
    "demo/DemoModule.java": """
        package demo;
        public class DemoModule implements com.google.inject.Module {
            public Class<?> configure() { return BoundProperties.class; }
        }""",
    "demo/DemoPlugin.java": """
        package demo;
        public class DemoPlugin implements io.trino.spi.Plugin {
            public Object module() { return new DemoModule(); }
        }""",
    # a dependency's own plugin (as the hive jar iceberg depends on carries HivePlugin)
    "other/OtherModule.java": """
        package other;
        public class OtherModule implements com.google.inject.Module {
            public Class<?> configure() { return demo.UnboundProperties.class; }
        }""",
    "other/OtherPlugin.java": """
        package other;
        public class OtherPlugin implements io.trino.spi.Plugin {
            public Object module() { return new OtherModule(); }
        }""",
}


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> scan.JarScan:
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
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in out.rglob("*.class"):
            archive.write(path, path.relative_to(out).as_posix())
        archive.writestr(scan.SERVICES, "demo.DemoPlugin\n")
    return scan.scan_jar(buffer.getvalue())


def test_system_properties_with_the_type_of_their_factory(classes: scan.JarScan) -> None:
    """A system provider's properties: each name, its type from the factory (or the Java class
    of `new PropertyMetadata`), an enum's constants, hidden ones too."""
    found = session.properties(classes.classes, classes.enums, classes.plugins, system=True)
    assert found == {"demo_mode": ["FAST", "SAFE"], "demo_parts": "integer",
                     "demo_spill_enabled": "boolean", "demo_timeout": "duration"}


def test_catalog_properties_only_of_providers_the_plugin_binds(classes: scan.JarScan) -> None:
    """A catalog provider counts when a class the plugin reaches loads it by its class (Guice's
    binding); one nothing binds is left out."""
    assert classes.plugins == ["demo/DemoPlugin"]
    found = session.properties(classes.classes, classes.enums, classes.plugins, system=False)
    assert found == {"bound_flag": "boolean"}


def test_without_a_services_file_the_own_artifacts_plugin_is_the_start(
        classes: scan.JarScan) -> None:
    """A plugin read from Maven has no -services jar naming its Plugin: the Plugin classes of
    its own artifact start the walk, so a dependency's Plugin (and what its module binds) lends
    it nothing; starting from every Plugin would take the dependency's provider too."""
    own = [c for c in classes.classes if c.startswith("demo/")]
    starts = session.plugin_classes(classes.classes, own)
    assert starts == ["demo/DemoPlugin"]
    assert session.properties(classes.classes, classes.enums, starts, system=False) == {
        "bound_flag": "boolean"}
    every = session.properties(classes.classes, classes.enums, [], system=False)
    assert every == {"bound_flag": "boolean", "unbound_flag": "boolean"}
