"""System session property names across the Trino versions the session data covers (issue 21,
item 2), held to the jars themselves.

The independent reader is the JDK's `javap -v`, run on io/trino/SystemSessionProperties.class
of io.trino:trino-main:<v>.jar from Maven Central (downloaded once into the Maven cache the
generator and the real-Trino tests share, sha1-checked; a second run is offline): a session
property's name is a string constant of that class (Java passes it to the PropertyMetadata
factory), so a name in its constant pool is declared there and one absent is not. The rows were
picked where 470 and 480 differ (found by comparing the two versions' session data, then
confirmed in each jar's constant pool): 480 removed the large dynamic filter switch, the CPU
timer of task statistics and prefer_streaming_operators, and added the write-size limit and the
adaptive planner's debug switch. `spill_enabled` is in every version.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache

import pytest

from tests import trino_server as ts

# the account's Maven cache (an autouse fixture) and the trino-main jar of a version, as there
from tests.test_trino_versions import _maven_cache, _trino_main  # noqa: F401
from trinogen.trino import session as facts
from trinogen.trino.registry import covered_versions

SYSTEM_CLASS = "io.trino.SystemSessionProperties"

# (system session property, in 470's trino-main, in 480's)
ROWS = [
    ("query_max_write_physical_size", False, True),
    ("debug_adaptive_planner", False, True),
    ("enable_large_dynamic_filters", True, False),
    ("statistics_cpu_timer_enabled", True, False),
    ("prefer_streaming_operators", True, False),
    ("spill_enabled", True, True),
]


@cache
def javap_strings(version: str) -> frozenset[str]:
    """The string constants of SystemSessionProperties in that version's trino-main jar."""
    javap = shutil.which("javap") or str(ts.JAVA_HOME / "bin" / "javap")
    out = subprocess.run([javap, "-v", "-cp", str(_trino_main(version)), SYSTEM_CLASS],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    # constant pool lines: "   #12 = String             #13            // spill_enabled"
    return frozenset(re.findall(r"^\s*#\d+ = String\s+#\d+\s+// (.*)$", out, re.MULTILINE))


def _system(version: str) -> Mapping[str, facts.Spec]:
    known = facts.session_properties_for(version)
    assert known is not None and known.system is not None, f"{version}: no system data"
    return known.system


@pytest.mark.parametrize(("prop", "in_470", "in_480"), ROWS, ids=[r[0] for r in ROWS])
def test_470_and_480_as_their_jars_say(prop: str, in_470: bool, in_480: bool) -> None:
    """A row's property is a system session property of 470 and of 480 exactly where javap
    finds its name in that version's SystemSessionProperties, and where the session data says."""
    for version, expected in (("470", in_470), ("480", in_480)):
        assert (prop in javap_strings(version)) == expected, version
        assert (prop in _system(version)) == expected, version


@pytest.mark.parametrize("version", facts.covered_versions())
@pytest.mark.parametrize("prop", [r[0] for r in ROWS])
def test_every_covered_version_agrees_with_its_trino_main(version: str, prop: str) -> None:
    """For every version the session data covers (each has a trino-main jar), the data's system
    session properties hold a row's property exactly where javap finds it in the class."""
    assert (prop in _system(version)) == (prop in javap_strings(version))


def test_every_registry_version_has_session_data() -> None:
    """The session data covers the versions the registry covers, each with its system ones."""
    assert facts.covered_versions() == covered_versions()
    assert all(_system(v) for v in covered_versions())
