"""Where one Trino version's jars come from, in order of preference.

1. ``io.trino:trino-server:<v>:tar.gz``: the full distribution, ``lib/`` for the server and
   ``plugin/<dir>/`` for every plugin. Complete by construction.
2. Otherwise ``io.trino:trino-server-core:<v>:tar.gz`` for the server (``lib/``), and per plugin
   ``io.trino:trino-<dir>:<v>:zip`` where served. Plugins that cannot be had are recorded as
   unavailable, so the version is marked incomplete.

A unit is a name ("server" or a plugin directory); its jars arrive as (unit, key, bytes), where
bytes is None for a jar whose key was already given with its bytes (a hard link in a tarball).
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tools.trino_registry import maven

GROUP = "io.trino"


@dataclass
class VersionSource:
    version: str
    # (unit, jar name, bytes), read lazily; units arrive grouped.
    jars: Callable[[], Iterator[tuple[str, str, bytes | None]]] = lambda: iter(())
    units: list[str] = field(default_factory=list)  # when read artifact by artifact
    unavailable: list[str] = field(default_factory=list)
    origin: list[str] = field(default_factory=list)  # artifacts read, for the report


def _tarball_units(path: str) -> Iterator[tuple[str, str, bytes | None]]:
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


def load(version: str, plugin_dirs: list[str], *, offline: bool = False) -> VersionSource:
    """The jars of one version; `plugin_dirs` names the plugins to look for when no full
    tarball is served (the full tarball's own plugin/ listing wins where it exists)."""
    source = VersionSource(version)
    try:
        full = maven.fetch(maven.artifact_path(GROUP, "trino-server", version, "tar.gz"),
                           offline=offline)
    except maven.NotServed:
        full = None
    if full is not None:
        source.jars = lambda: _tarball_units(str(full))
        source.origin.append(f"trino-server-{version}.tar.gz")
        return source
    readers: list[Callable[[], Iterator[tuple[str, str, bytes | None]]]] = []
    try:
        core = maven.fetch(maven.artifact_path(GROUP, "trino-server-core", version, "tar.gz"),
                           offline=offline)
        readers.append(lambda: (j for j in _tarball_units(str(core)) if j[0] == "server"))
        source.units.append("server")
        source.origin.append(f"trino-server-core-{version}.tar.gz")
    except maven.NotServed:
        source.unavailable.append("server")
    for plugin in plugin_dirs:
        try:
            archive = maven.fetch(maven.artifact_path(GROUP, f"trino-{plugin}", version, "zip"),
                                  offline=offline)
        except maven.NotServed:
            source.unavailable.append(plugin)
            continue
        readers.append(lambda p=plugin, a=str(archive): _zip_jars(p, a))
        source.units.append(plugin)
        source.origin.append(f"trino-{plugin}-{version}.zip")
    source.jars = lambda: (j for reader in readers for j in reader())
    return source
