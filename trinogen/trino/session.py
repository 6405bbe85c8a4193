"""The session properties each Trino version declares: system ones, and each connector's catalog
session properties, with the type of their values. Pure facts.

Generated with the registry by ``python -m tools.trino_registry`` (tools/trino_registry/
session.py reads them from the jars) into ``data/session.json.gz``, a file of its own: only a
document that sets session property defaults loads it (``session_properties_for``), so the
registry's load and every other document pay nothing for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).with_name("data") / "session.json.gz"

# The types a property's value is read as (tools/trino_registry/session.py FACTORIES); an enum
# is the tuple of its constants; ANY: not known, not checked.
BOOLEAN, INTEGER, BIGINT, DOUBLE, VARCHAR = "boolean", "integer", "bigint", "double", "varchar"
DURATION, DATA_SIZE, ANY = "duration", "data_size", "any"
Spec = str | tuple[str, ...]


@dataclass(frozen=True)
class SessionProperties:
    """The session properties of one Trino version."""

    version: str
    system: Mapping[str, Spec] | None  # None: the server's jars were not had
    _connectors: Mapping[str, Mapping[str, Spec]]
    query_types: tuple[str, ...]  # io.trino.spi.resourcegroups.QueryType's constants
    # system session properties Trino binds only under a switch ("protocol.spooling.enabled=
    # true" -> the spooling ones), which `system` leaves out
    bound_when: Mapping[str, Mapping[str, Spec]]
    # connectors whose plugin was read without some of its jars (Maven Central did not serve
    # them): a name missing from their data may still be Trino's
    partial: frozenset[str] = frozenset()

    def connector(self, name: str) -> Mapping[str, Spec] | None:
        """The catalog session properties of a connector name; None: not in the data (the
        version has no such connector, or its plugin could not be had for this version)."""
        return self._connectors.get(name)

    def connector_names(self) -> tuple[str, ...]:
        return tuple(sorted(self._connectors))


def _specs(raw: Mapping[str, Any]) -> dict[str, Spec]:
    return {k: v if isinstance(v, str) else tuple(v) for k, v in raw.items()}


@cache
def _data() -> Mapping[str, Any]:
    import gzip
    import json

    data: Mapping[str, Any] = json.loads(gzip.decompress(DATA_FILE.read_bytes()))
    return data


@cache
def data_digest() -> bytes:
    """A hash of the data file as shipped (for a render cache's fingerprint)."""
    import hashlib

    return hashlib.sha256(DATA_FILE.read_bytes()).digest()


@cache
def session_properties_for(version: str) -> SessionProperties | None:
    """The session properties of a Trino version, or None when the data does not cover it."""
    data = _data()
    entry = data["versions"].get(str(version))
    if entry is None:
        return None
    sets = data["sets"]
    system = None if entry["system"] is None else _specs(sets[entry["system"]])
    connectors = {name: _specs(sets[i]) for name, i in entry["connectors"].items()}
    bound_when = {switch: _specs(sets[i]) for switch, i in entry["bound_when"].items()}
    return SessionProperties(str(version), system, connectors, tuple(entry["query_types"]),
                             bound_when, frozenset(entry.get("partial", ())))


def covered_versions() -> tuple[str, ...]:
    return tuple(sorted(_data()["versions"], key=int))
