"""Maven Central downloads through a shared cache in Maven's repository layout.

The cache (default ``~/.cache/trinogen/maven``, or ``$TRINOGEN_MAVEN_CACHE``) is shared with the
real-Trino test harness: a file is downloaded to a unique temporary name beside its final path,
checked against the ``.sha1`` Maven Central publishes, and renamed into place, so concurrent
users never see a partial file and a second run is offline.
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

CENTRAL = "https://repo1.maven.org/maven2"


def cache_dir() -> Path:
    return Path(os.environ.get("TRINOGEN_MAVEN_CACHE", Path.home() / ".cache/trinogen/maven"))


def artifact_path(group: str, artifact: str, version: str, ext: str,
                  classifier: str = "") -> str:
    suffix = f"-{classifier}" if classifier else ""
    return f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}{suffix}.{ext}"


class NotServed(Exception):
    """Maven Central (or this mirror of it) does not serve the artifact."""


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise NotServed(url) from e
        raise


def fetch(relative: str, *, offline: bool = False) -> Path:
    """The cached file for `relative` (a Maven layout path), downloading it if needed."""
    target = cache_dir() / relative
    if target.exists():
        return target
    if offline:
        raise NotServed(f"{relative} (offline, not in {cache_dir()})")
    target.parent.mkdir(parents=True, exist_ok=True)
    expected = _get(f"{CENTRAL}/{relative}.sha1").decode().split()[0].strip()
    temp = target.with_name(f"{target.name}.part.{os.getpid()}")
    digest = hashlib.sha1()
    try:
        with urllib.request.urlopen(f"{CENTRAL}/{relative}", timeout=600) as response, \
                temp.open("wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            raise OSError(f"{relative}: sha1 {digest.hexdigest()} != published {expected}")
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target


def served_versions(group: str, artifact: str, *, offline: bool = False) -> list[str]:
    """Versions listed in the artifact's maven-metadata.xml (what this mirror serves)."""
    relative = f"{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    target = cache_dir() / relative
    if not offline or not target.exists():
        try:
            data = _get(f"{CENTRAL}/{relative}")
        except (NotServed, urllib.error.URLError):
            if not target.exists():
                return []
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = target.with_name(f"{target.name}.part.{os.getpid()}")
            temp.write_bytes(data)
            os.replace(temp, target)
    return re.findall(r"<version>([^<]+)</version>", target.read_text())
