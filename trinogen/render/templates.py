"""The edge of rendering: template files read from disk, and where compiled templates are kept.

The renderer itself reads nothing: it is handed a `Templates` (the sources, read here once) and,
optionally, a bytecode-cache factory. Neither imports Jinja: a run that renders nothing (every
document served from the render cache) never pays for importing or compiling templates.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trinogen.errors import ConfigError
from trinogen.kinds import HOMED, fragment
from trinogen.settings import OutputSettings

TEMPLATE_NAMES = (
    "values.yaml.j2",
    "catalog.properties.j2",
    "application.yaml.j2",
    "externalsecret.yaml.j2",
    "root-application.yaml.j2",
    "configmap.yaml.j2",
    "poddisruptionbudget.yaml.j2",
    "networkpolicy.yaml.j2",
    "appproject.yaml.j2",
    # each option kind's part of values.yaml.j2: read up front like the others, so the render
    # cache's fingerprint changes with them (an override in templates_dir included)
    *(fragment(kind) for kind in HOMED),
    fragment("authentication"),  # picked outside HOMED (model/document.py)
)

# () -> a jinja2.BytecodeCache; called only when templates are first compiled
BytecodeCacheFactory = Callable[[], Any]


def builtin_templates_dir(package_dir: Path | None = None) -> Path:
    """The built-in templates: inside the package in a wheel, else the repository's templates/."""
    here = package_dir or Path(__file__).resolve().parent.parent
    packaged = here / "_templates"  # inside a wheel
    return packaged if packaged.is_dir() else here.parent / "templates"


def template_dirs(output: OutputSettings) -> list[Path]:
    """The user's template directory (when set) before the built-in one."""
    dirs = [builtin_templates_dir()]
    if output.templates_dir:
        user = Path(output.templates_dir)
        if not user.is_dir():
            raise ConfigError(f"output.templates_dir {user} is not a directory")
        dirs.insert(0, user)
    return dirs


@dataclass(frozen=True)
class TemplateSource:
    name: str
    data: bytes  # as stored (hashed for caches)
    filename: str  # where it was read from: named in template errors, keys the bytecode cache

    @property
    def text(self) -> str:
        # as a text-mode read gives it (universal newlines), which is what Jinja compiled before
        return self.data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


class Templates:
    """The template sources, looked up the way Jinja's FileSystemLoader would (first dir wins).

    The built-in names are read when the object is made; any other name (a user template's
    `{% include %}`) is read from the same directories on first use.
    """

    def __init__(self, dirs: Sequence[Path]) -> None:
        self._dirs = [str(d) for d in dirs]
        self._sources: dict[str, TemplateSource | None] = {}
        for name in TEMPLATE_NAMES:
            self.source(name)

    def source(self, name: str) -> TemplateSource | None:
        if name not in self._sources:
            self._sources[name] = self._read(name)
        return self._sources[name]

    def _read(self, name: str) -> TemplateSource | None:
        pieces = _split_name(name)
        if pieces is None:
            return None
        for d in self._dirs:
            filename = posixpath.join(d, *pieces)
            if os.path.isfile(filename):
                return TemplateSource(name, Path(filename).read_bytes(), os.path.normpath(filename))
        return None

    def identity(self) -> bytes:
        """The built-in names and their sources, for the render cache's fingerprint."""
        parts = []
        for name in TEMPLATE_NAMES:
            source = self.source(name)
            parts.append(name.encode() + b"\0" + (source.data if source else b"") + b"\0")
        return b"".join(parts)


def _split_name(name: str) -> list[str] | None:
    """A template name's path pieces; None when it would leave its directory (as Jinja's
    FileSystemLoader decides)."""
    pieces = name.split("/")
    if any(os.sep in p or (os.altsep and os.altsep in p) or p == ".." for p in pieces):
        return None
    return [p for p in pieces if p and p != "."]


def load_templates(output: OutputSettings) -> Templates:
    """Read the templates the settings choose (ConfigError for a missing templates_dir)."""
    return Templates(template_dirs(output))


def bytecode_cache(directory: Path) -> BytecodeCacheFactory:
    """Compiled templates kept in `directory` between runs (trinogen's cache)."""

    def make() -> Any:
        import jinja2

        directory.mkdir(parents=True, exist_ok=True)
        return jinja2.FileSystemBytecodeCache(str(directory))

    return make
