"""The registry across Trino versions 470..480 (issue 21, item 7), held to the jars themselves.

The independent reader is the JDK's `javap -v`, run on io.trino:trino-main:<v>.jar from Maven
Central (downloaded once into the Maven cache the generator and the real-Trino tests share,
sha1-checked; a second run is offline). For each row it says whether the config class carries
the property as @Config, lists it in @DefunctConfig, or has neither; the registry of that
version must say the same. The rows were picked where 470 and 480 differ (found by comparing
the two versions' registry data, then confirmed with javap and Trino's release notes: 480
removed the small/large dynamic filtering split and the CPU timer switch of task statistics,
and added the write-size limit and the retry-policy list).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from tests import trino_server as ts
from tests.conftest import SHARED
from tools.trino_registry import maven
from trinogen.trino.registry import covered_versions, registry_for

CHART = SHARED / "charts" / "trino" / "Chart.yaml"
FIRST, LAST = 470, 480  # the range: 470 to the chart's default appVersion

# (property, config class in trino-main, what 470's class says, what 480's says)
ROWS = [
    ("query.max-write-physical-size", "io.trino.execution.QueryManagerConfig", "absent", "config"),
    ("retry-policy.allowed", "io.trino.execution.QueryManagerConfig", "absent", "config"),
    ("enable-large-dynamic-filters", "io.trino.execution.DynamicFilterConfig", "config",
     "defunct"),
    ("task.statistics-cpu-timer-enabled", "io.trino.execution.TaskManagerConfig", "config",
     "defunct"),
]

# Versions whose trino-main jar this machine's Maven Central does not serve (477: neither the
# jar nor anything else of the release but its parent POM): the registry says why it has none.
NOT_SERVED = {"477"}


@pytest.fixture(autouse=True)
def _maven_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # conftest points HOME at a temporary directory; the cache is the account's, as for Trino
    monkeypatch.setenv("TRINOGEN_MAVEN_CACHE", str(ts.CACHE_DIR / "maven"))


@cache
def _trino_main(version: str) -> Path:
    return maven.fetch(maven.artifact_path("io.trino", "trino-main", version, "jar"))


@cache
def _javap(version: str) -> dict[str, str]:
    """javap -v of every class of ROWS in one JVM start: class name -> its listing."""
    javap = shutil.which("javap") or str(ts.JAVA_HOME / "bin" / "javap")
    classes = sorted({row[1] for row in ROWS})
    out = subprocess.run([javap, "-v", "-cp", str(_trino_main(version)), *classes],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    # each listing starts with "Classfile jar:file:...!/io/trino/execution/X.class"
    parts = re.split(r"^Classfile .*!/(\S+)\.class$", out, flags=re.MULTILINE)
    return {name.replace("/", "."): text for name, text in zip(parts[1::2], parts[2::2])}


def javap_state(version: str, config_class: str, prop: str) -> str:
    """'config', 'defunct' or 'absent': what javap shows of `prop` in the class's annotations."""
    out = _javap(version)[config_class]
    if re.search(r'io\.airlift\.configuration\.Config\(\s*value="' + re.escape(prop) + '"', out):
        return "config"
    for listing in re.findall(r"io\.airlift\.configuration\.DefunctConfig\(\s*value=\[([^\]]*)\]",
                              out):
        if f'"{prop}"' in listing.split(","):
            return "defunct"
    return "absent"


def registry_state(version: str, prop: str) -> str:
    registry = registry_for(version)
    assert registry is not None
    server = registry.server("coordinator")
    assert server is not None, f"{version}: no server data"
    if server.known(prop):
        return "config"
    return "defunct" if server.defunct(prop) else "absent"


@pytest.mark.parametrize(("prop", "config_class", "in_470", "in_480"), ROWS,
                         ids=[r[0] for r in ROWS])
def test_470_and_480_differ_as_their_jars_do(prop: str, config_class: str, in_470: str,
                                             in_480: str) -> None:
    """A property one of 470 and 480 binds and the other does not (or refuses as defunct) is
    so in javap's reading of trino-main and in the registry of each version."""
    assert in_470 != in_480
    for version, expected in (("470", in_470), ("480", in_480)):
        assert javap_state(version, config_class, prop) == expected, version
        assert registry_state(version, prop) == expected, version


@pytest.mark.parametrize("version", [str(v) for v in range(FIRST, LAST + 1)
                                     if str(v) not in NOT_SERVED])
@pytest.mark.parametrize(("prop", "config_class"), [r[:2] for r in ROWS], ids=[r[0] for r in ROWS])
def test_every_version_agrees_with_its_trino_main(version: str, prop: str,
                                                  config_class: str) -> None:
    """For every version from 470 to 480 with a trino-main jar, the registry's server set says
    of each row's property what javap reads in that version's config class."""
    assert registry_state(version, prop) == javap_state(version, config_class, prop)


def test_every_version_to_the_charts_default_is_covered_or_explained() -> None:
    """Each version from 470 to the chart's default appVersion has registry data, but those
    this mirror serves nothing to build it from."""
    app_version = re.search(r'^appVersion:\s*"?(\d+)', CHART.read_text(), re.MULTILINE)
    assert app_version is not None and int(app_version.group(1)) == LAST
    wanted = {str(v) for v in range(FIRST, LAST + 1)}
    assert wanted - set(covered_versions()) == NOT_SERVED
