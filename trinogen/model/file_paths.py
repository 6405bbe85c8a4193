"""Properties that name files: each must name a file the cluster's pods mount.

`mounted_files()` lists what the pods see besides Trino's own configuration, from the
cluster's mounts (every feature's: attached files, keystores, ...); `check_file_paths()` holds
every property in the table of path-valued properties (`trinogen.trino.paths`) to that list, in
catalogs, in `properties` and in each role's properties, and refuses the properties that would
let a document configure what the platform decides.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from trinogen.model.checker import Checker, field_path, show
from trinogen.model.files import FILES_DIR, SECRET_FILES_DIR
from trinogen.model.jdbc_options import is_jdbc_url, jdbc_files
from trinogen.model.local_files import HADOOP_SWITCH
from trinogen.model.properties import Props
from trinogen.model.rules import CHART_CONFIG_KEYS
from trinogen.model.types import Connector, FileConfigMap, FileSecret, Mount, Role
from trinogen.secrets import BoundSegment
from trinogen.trino.checks import HADOOP_RESOURCES
from trinogen.trino.paths import REFUSED, file_paths, names_files


class Mounted(NamedTuple):
    """The files a cluster's pods see besides Trino's own configuration."""

    files: frozenset[str]  # exact paths (a file of a known ConfigMap or Secret, or a subPath)
    dirs: tuple[str, ...] = ()  # mounted directories whose keys trinogen does not know

    def holds(self, path: str) -> bool:
        if path in self.files:
            return True
        clean = posixpath.normpath(path) == path
        return clean and any(path.startswith(d.rstrip("/") + "/") for d in self.dirs)

    def listing(self) -> str:
        shown = sorted(self.files) + [f"{d.rstrip('/')}/*" for d in sorted(self.dirs)]
        return ", ".join(shown[:20]) + (f" and {len(shown) - 20} more" if len(shown) > 20 else "")


def mounted_files(mounts: Iterable[Mount], config_maps: Iterable[FileConfigMap],
                  file_secrets: Iterable[FileSecret]) -> Mounted:
    """Every mounted file: a known source's keys under its mount, a subPath, else a directory."""
    keys: dict[tuple[bool, str], list[str]] = {}
    for cm in config_maps:
        keys[(False, cm.name)] = [k for k, _ in cm.files]
    for fs in file_secrets:
        keys[(True, fs.name)] = [k for k, _ in fs.files]
    files: set[str] = set()
    dirs: list[str] = []
    for m in mounts:
        known = keys.get((m.secret, m.source))
        if m.sub_path:
            files.add(m.path)
        elif known is not None:
            files.update(f"{m.path.rstrip('/')}/{k}" for k in known)
        else:
            dirs.append(m.path)
    return Mounted(frozenset(files), tuple(dirs))


def check_file_paths(props: Props, roles: Mapping[str, Role | None],
                     connectors: Iterable[Connector], mounted: Mounted, c: Checker) -> None:
    """Every property naming a file must name one the pods mount (Trino fails otherwise:
    `file does not exist`, at startup or on the first query that needs it)."""
    for key, (value, path) in sorted(props.items()):
        if key not in CHART_CONFIG_KEYS:  # those are refused already
            _judge(key, value, path, mounted, c)
    for name, role in sorted(roles.items()):
        for key, value in role.extra_properties if role is not None else ():
            if key in REFUSED or names_files(key):
                _judge(key, value, field_path(f"clusterConfig.{name}.properties", key),
                       mounted, c)
    for conn in connectors:
        _judge_catalog(conn, mounted, c)


def _judge_catalog(conn: Connector, mounted: Mounted, c: Checker) -> None:
    """Judge one catalog's properties, each placeholder read as the text the document wrote."""
    _judge_jdbc_urls(conn, mounted, c)
    keys = [key for key, _ in conn.properties if key in REFUSED or names_files(key)]
    if not keys:  # most catalogs: no property names a file
        return
    base = _base(conn)
    texts = {key: _text(segments) for key, segments in conn.properties}
    for key in keys:
        # Without legacy Hadoop Trino does not read hive.config.resources at all (the
        # registry check says so); its files matter only with fs.hadoop.enabled=true, which
        # only an hdfs storage option writes (its lines are among the catalog's properties).
        if key == HADOOP_RESOURCES and texts.get(HADOOP_SWITCH, "").strip().lower() != "true":
            continue
        _judge(key, texts[key], field_path(base, "properties", key), mounted, c)


def _base(conn: Connector) -> str:
    return f"connectors[{json.dumps(conn.name)}]"


def _judge_jdbc_urls(conn: Connector, mounted: Mounted, c: Checker) -> None:
    for key, segments in conn.properties:
        if segments and isinstance(segments[0], str) and is_jdbc_url(segments[0]):
            _judge_jdbc(_text(segments), field_path(_base(conn), "properties", key), mounted, c)


def _judge_jdbc(url: str, path: str, mounted: Mounted, c: Checker) -> None:
    """A JDBC driver reads only files the document attached: never the platform's mounts, the
    service-account token or anything else of the pod (trinogen.model.jdbc_options)."""
    for option, file in jdbc_files(url):
        if _attached(file, mounted):
            continue
        c.error(path, f"the JDBC driver option {show(option)} names {show(file)}, which is not "
                f"a file attached under files (a driver may read only those: a text file at "
                f"{FILES_DIR}/<name>, a secret file at {SECRET_FILES_DIR}/<name>, or either "
                "directory itself)")


def _attached(file: str, mounted: Mounted) -> bool:
    if file.rstrip("/") in (FILES_DIR, SECRET_FILES_DIR):
        return True  # a directory option (Oracle's TNS_ADMIN, wallet_location)
    clean = posixpath.normpath(file) == file
    return clean and file.startswith((FILES_DIR + "/", SECRET_FILES_DIR + "/")) \
        and mounted.holds(file)


def _text(segments: tuple[BoundSegment, ...]) -> str:
    return "".join(s if isinstance(s, str) else s.placeholder.text for s in segments)


def _judge(key: str, value: str, path: str, mounted: Mounted, c: Checker) -> None:
    if key in REFUSED:
        c.error(path, f"may not be set from a document: {REFUSED[key]}")
        return
    for file in file_paths(key, value) or ():
        if mounted.holds(file):
            continue
        if mounted.files or mounted.dirs:
            where = f"the mounted files are {mounted.listing()}"
        else:
            where = "this cluster mounts no files"
        c.error(path, f"{key} names {show(file)}, which is not a file the pods mount ({where}); "
                f"attach it under files: a text file appears at {FILES_DIR}/<name>, a secret "
                f"file at {SECRET_FILES_DIR}/<name>")
