"""Where one Trino version's jars come from, in order of preference.

1. ``io.trino:trino-server:<v>:tar.gz``: the full distribution, ``lib/`` for the server and
   ``plugin/<dir>/`` for every plugin. Complete by construction.
2. Otherwise ``io.trino:trino-server-core:<v>:tar.gz`` for the server (``lib/``), or failing
   that ``trino-main`` (plus ``trino-server-main``) and their io.trino / io.airlift runtime
   dependencies, resolved by Maven from the published POMs (the trino-root parent pins the
   versions). Per plugin: ``io.trino:trino-<dir>:<v>:zip`` where served, else the plugin jar and
   its io.trino / io.airlift runtime dependencies the same way. Only those groups carry airlift
   config annotations (in 476's lib/, every jar with a @Config class is io.trino or io.airlift);
   the tarball route scans every jar. For 476 the server-core route and the full tarball give
   the same server properties; the trino-main route could not be compared on 476 or 470, whose
   dependencies this mirror does not serve whole. Whatever cannot be had
   is recorded as unavailable, so the version is marked incomplete.
3. A dependency this mirror does not serve (Maven names it) is excluded and the rest resolved
   again; the unit is scanned without it and recorded as partial ("server (without
   trino-cache, ...)"), which also marks the version incomplete. Where Maven cannot read the
   dependency tree at all (473: the parent POM trino-root-473 is not served), the artifact's
   own jar is scanned alone, "without every dependency".

A unit is a name ("server" or a plugin directory); its jars arrive as (unit, key, bytes), where
bytes is None for a jar whose key was already given with its bytes (a hard link in a tarball).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tools.trino_registry import maven

GROUP = "io.trino"


@dataclass
class VersionSource:
    version: str
    # (unit, jar name, bytes), read lazily; units arrive grouped.
    jars: Callable[[], Iterator[tuple[str, str, bytes | None]]] = lambda: iter(())
    units: list[str] = field(default_factory=list)  # when read artifact by artifact
    unavailable: list[str] = field(default_factory=list)
    # unit -> io.trino/io.airlift artifacts of its dependency tree not served: scanned without them
    missing: dict[str, list[str]] = field(default_factory=dict)
    origin: list[str] = field(default_factory=list)  # artifacts read, for the report


def _tarball_units(path: str, only: str = "") -> Iterator[tuple[str, str, bytes | None]]:
    """(unit, jar name, bytes) for every jar of lib/ and plugin/*/ in a server tarball."""
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not parts[-1].endswith(".jar") or len(parts) < 3:
                continue
            if parts[1] == "lib" and len(parts) == 3:
                unit = "server"
            elif parts[1] == "plugin" and len(parts) >= 4:
                # Jars in a plugin's subdirectory (hive/hdfs/) join its class path when the
                # feature is enabled (fs.hadoop.enabled), so they count for the plugin.
                unit = parts[2]
            else:
                continue
            if only and unit != only:
                continue
            if member.islnk():
                # The distribution hard-links a jar shared by several plugins to its first copy.
                yield unit, member.linkname, None
            elif member.isfile() and (handle := tar.extractfile(member)) is not None:
                yield unit, member.name, handle.read()


def _zip_jars(unit: str, path: str) -> Iterator[tuple[str, str, bytes | None]]:
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.endswith(".jar"):
                yield unit, f"{path}!{name}", archive.read(name)


_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>trinogen.registry</groupId><artifactId>resolve</artifactId><version>1</version>
<packaging>pom</packaging><dependencies>{deps}</dependencies></project>
"""

# Maven's summary of a failed resolution: "The following artifacts could not be resolved:
# io.trino:trino-cache:jar:480, io.trino:trino-parser:jar:480: Cannot access ..."
# The listing ends at the first ": " (a coordinate has colons, never a colon and a space).
_UNRESOLVED = re.compile(r"could not be resolved: ([^\n]*?): ")
# "The POM for io.trino:trino-cache:jar:480 is missing, no dependency information available":
# the jar may still come, but what it depends on is unknown to Maven, so it is lost too.
# "Failed to collect dependencies at a -> b: Failed to read artifact descriptor for g:a:jar:v"
_NO_DESCRIPTOR = re.compile(r"Failed to read artifact descriptor for ([\w.-]+):([\w.-]+):")
_NO_POM = re.compile(r"The POM for ([\w.-]+):([\w.-]+):\S+ is missing")
_COORDINATE = re.compile(r"([\w.-]+):([\w.-]+):[\w.-]+(?::[\w.-]+)?:[\w.-]+")
# Config annotations live in these groups alone (scan.py): a jar of another group that is not
# served changes nothing the scan reads, so leaving it out does not make the unit partial.
CONFIG_GROUPS = ("io.trino", "io.airlift")


def unresolved(maven_output: str) -> list[tuple[str, str]]:
    """(group, artifact) of each artifact a failed Maven run names as not resolvable."""
    found: list[tuple[str, str]] = []
    for listing in _UNRESOLVED.findall(maven_output):
        for group, artifact in _COORDINATE.findall(listing):
            if (group, artifact) not in found:
                found.append((group, artifact))
    for group, artifact in _NO_DESCRIPTOR.findall(maven_output):
        if (group, artifact) not in found:
            found.append((group, artifact))
    return found


def _pom(artifacts: list[str], version: str, excluded: list[tuple[str, str]]) -> str:
    exclusions = "".join(f"<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId>"
                         f"</exclusion>" for g, a in excluded)
    deps = "".join(f"<dependency><groupId>{GROUP}</groupId><artifactId>{a}</artifactId>"
                   f"<version>{version}</version><exclusions>{exclusions}</exclusions>"
                   f"</dependency>" for a in artifacts)
    return _POM.format(deps=deps)


def _mvn_jars(unit: str, artifacts: list[str], version: str, offline: bool,
              missing: dict[str, list[str]]) -> Iterator[tuple[str, str, bytes | None]]:
    """The jars of io.trino:<artifact>:<version> and their io.trino/io.airlift runtime deps.

    A dependency this mirror does not serve is left out (an exclusion, and Maven resolves the
    rest again); the io.trino / io.airlift ones among them go to `missing[unit]`, so the unit is
    scanned but marked partial. An artifact of `artifacts` itself not served: NotServed."""
    work = Path(tempfile.mkdtemp(prefix="trino-registry-"))
    excluded: list[tuple[str, str]] = []
    try:
        for _attempt in range(4):
            (work / "pom.xml").write_text(_pom(artifacts, version, excluded))
            command = ["mvn", "-B", f"-Dmaven.repo.local={maven.cache_dir()}",
                       "dependency:copy-dependencies", "-DincludeScope=runtime",
                       f"-DincludeGroupIds={','.join(CONFIG_GROUPS)}",
                       f"-DoutputDirectory={work / 'out'}"]
            if offline:
                command.insert(1, "-o")
            done = subprocess.run(command, cwd=work, capture_output=True, text=True,
                                  timeout=1200, check=False)
            if done.returncode == 0:
                break
            more = [c for c in unresolved(done.stdout) if c not in excluded]
            if not more or any(g == GROUP and a in artifacts for g, a in more):
                # Maven cannot read the dependency tree at all (trino-root-473.pom, the parent
                # of every 473 POM, is not served): the artifacts' own jars, scanned alone.
                yield from _own_jars(unit, artifacts, version, offline, missing)
                return
            excluded += more
        else:
            raise maven.NotServed(f"{unit} {version}: maven could not resolve {artifacts}")
        lost = [a for g, a in [*excluded, *_NO_POM.findall(done.stdout)]
                if g in CONFIG_GROUPS and a not in artifacts]
        lost = sorted(set(lost))
        if lost:
            missing[unit] = lost
        for jar in sorted((work / "out").glob("*.jar")):
            yield unit, f"{unit}!{jar.name}", jar.read_bytes()
    finally:
        shutil.rmtree(work, ignore_errors=True)


_ALONE = "every dependency (Maven cannot read their POMs)"


def _own_jars(unit: str, artifacts: list[str], version: str, offline: bool,
              missing: dict[str, list[str]]) -> Iterator[tuple[str, str, bytes | None]]:
    """The served jars of `artifacts` without any dependency; the unit is partial."""
    served = [a for a in artifacts if _served(a, version, "jar", offline)]
    if not served:
        raise maven.NotServed(f"{unit} {version}: maven could not resolve {artifacts}")
    missing[unit] = [*(a for a in artifacts if a not in served), _ALONE]
    for artifact in served:
        path = maven.fetch(maven.artifact_path(GROUP, artifact, version, "jar"), offline=offline)
        yield unit, f"{unit}!{path.name}", path.read_bytes()


def _served(artifact: str, version: str, ext: str, offline: bool) -> bool:
    try:
        maven.fetch(maven.artifact_path(GROUP, artifact, version, ext), offline=offline)
    except maven.NotServed:
        return False
    return True


def load(version: str, plugin_dirs: list[str], *, offline: bool = False,
         full_tarball: bool = True) -> VersionSource:
    """The jars of one version; `plugin_dirs` names the plugins to look for when no full
    tarball is served (the full tarball's own plugin/ listing wins where it exists)."""
    source = VersionSource(version)
    full = None
    if full_tarball:
        try:
            full = maven.fetch(maven.artifact_path(GROUP, "trino-server", version, "tar.gz"),
                               offline=offline)
        except maven.NotServed:
            pass
    if full is not None:
        source.jars = lambda: _tarball_units(str(full))
        source.origin.append(f"trino-server-{version}.tar.gz")
        return source
    # (unit, artifact label for the report, reader)
    readers: list[tuple[str, str, Callable[[], Iterator[tuple[str, str, bytes | None]]]]] = []
    try:
        core = maven.fetch(maven.artifact_path(GROUP, "trino-server-core", version, "tar.gz"),
                           offline=offline)
        readers.append(("server", f"trino-server-core-{version}.tar.gz",
                        partial(_tarball_units, str(core), only="server")))
    except maven.NotServed:
        if _served("trino-main", version, "pom", offline):
            server = ["trino-main"] + (["trino-server-main"] if _served(
                "trino-server-main", version, "pom", offline) else [])
            readers.append(("server", f"{'+'.join(server)}-{version} jars with dependencies",
                            partial(_mvn_jars, "server", server, version, offline, source.missing)))
        else:
            source.unavailable.append("server")
    for plugin in plugin_dirs:
        artifact = f"trino-{plugin}"
        if _served(artifact, version, "zip", offline):
            path = str(maven.fetch(maven.artifact_path(GROUP, artifact, version, "zip"),
                                   offline=offline))
            readers.append((plugin, f"{artifact}-{version}.zip", partial(_zip_jars, plugin, path)))
        elif _served(artifact, version, "pom", offline) and _served(artifact, version, "jar",
                                                                     offline):
            readers.append((plugin, f"{artifact}-{version} jar with dependencies",
                            partial(_mvn_jars, plugin, [artifact], version, offline,
                                    source.missing)))
        else:
            source.unavailable.append(plugin)
    source.units = [unit for unit, _label, _reader in readers]

    def jars() -> Iterator[tuple[str, str, bytes | None]]:
        for unit, label, reader in readers:
            try:
                yield from reader()
            except maven.NotServed as e:
                # Some of the unit's dependencies are not served: the unit cannot be had.
                print(f"  unavailable: {e}")
                source.unavailable.append(unit)
            else:
                if _ALONE in source.missing.get(unit, ()):
                    label = label.replace("with dependencies", "alone")
                source.origin.append(label)
    source.jars = jars
    return source
