"""Named options: what the platform offers and a document picks by name.

The platform names the options in the settings file, one top-level key per kind
(`storage: {lake-eu: {...}}`, `placement: {spot: {...}}`...); a document chooses one by name and
supplies only its own data. Each kind has a parser, `parse` in `trinogen.kinds.<kind>.options`
(`trinogen.settings.options.<kind>` for the kinds not yet moved there), that turns one raw entry
into a frozen value or raises ConfigError naming `<kind>.<name>.<field>`; `trinogen.kinds.KINDS`
lists them. A kind's module is imported when a settings file first names the kind, so a run whose
settings offer no options of a kind never loads its parser (start-up time of `sync`, measured in
docs/benchmarks.md). Pure: no I/O.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, cast

from trinogen import kinds
from trinogen.errors import ConfigError

# (where, raw entry) -> a frozen value; `where` is "<file>: <kind>.<name>" for messages.
Parser = Callable[[str, Mapping[str, Any]], Any]

# The file's top-level key -> the module whose `parse(where, raw)` reads one entry: a kind
# registers its name in `trinogen.kinds.KINDS` (docs/development.md, "Option kinds").
KINDS: dict[str, str] = {kind: kinds.module(kind, "options") for kind in kinds.KINDS}


def parser(kind: str) -> Parser:
    """The parser of one kind, its module imported on first use."""
    return cast(Parser, importlib.import_module(KINDS[kind]).parse)


def parse_kind(kind: str, values: Any, where: str) -> dict[str, Any]:
    """All entries of one kind: {name: parsed value}; names are Kubernetes-style words."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where}: {kind} must be a mapping of names to options")
    out: dict[str, Any] = {}
    parse = parser(kind)
    for name, raw in values.items():
        at = f"{where}: {kind}.{name}"
        if not isinstance(name, str) or not name or len(name) > 63:
            raise ConfigError(f"{where}: {kind}: option names are strings of 1 to 63 characters")
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{at} must be a mapping")
        out[name] = parse(at, raw)
    return out
