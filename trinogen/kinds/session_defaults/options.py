"""`session_defaults:` options: entries of session property defaults a platform names.

    session_defaults:
      standard:
        entries:                      # Trino's file session property manager entries, in order
          - user: ".*"                # match keys: user, source, group (Java regexes),
            sessionProperties:        # clientTags (list), queryType
              query_max_execution_time: 4h
          - source: "airflow.*"
            sessionProperties: {spill_enabled: "true"}

Only system session properties: the platform does not know a document's catalogs, so
`catalogSessionProperties` is refused here. The shape is checked now; the names and values are
checked against each document's Trino version when a document picks the option (the version is
the document's), by `trinogen.model.session_defaults`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("entries",)
ENTRY_FIELDS = ("user", "source", "group", "clientTags", "queryType", "sessionProperties")
MAX_ENTRIES = 50  # as for a document (trinogen.model.session_defaults.MAX_ENTRIES)
_SCALARS = (str, bool, int)


@dataclass(frozen=True)
class SessionDefaultsOption:
    entries_json: str  # the entries as JSON: frozen, with a stable repr for the fingerprint

    @property
    def entries(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = json.loads(self.entries_json)
        return entries


def parse(where: str, raw: Mapping[str, Any]) -> SessionDefaultsOption:
    """One entry of `session_defaults:`; ConfigError names `session_defaults.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    entries = raw.get("entries")
    if not isinstance(entries, list) or not entries or len(entries) > MAX_ENTRIES:
        raise ConfigError(f"{where}.entries: must be a list of 1 to {MAX_ENTRIES} entries")
    for i, entry in enumerate(entries):
        _entry(f"{where}.entries[{i}]", entry)
    return SessionDefaultsOption(json.dumps(entries, sort_keys=True))


def _entry(where: str, entry: Any) -> None:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: must be a mapping")
    if "catalogSessionProperties" in entry:
        raise ConfigError(f"{where}.catalogSessionProperties: a platform option sets system "
                          "session properties only (catalog names are each document's)")
    metadata.known_fields(where, entry, ENTRY_FIELDS)
    _properties(f"{where}.sessionProperties", entry.get("sessionProperties"))
    for key in ("user", "source", "group", "queryType"):
        if key in entry and not isinstance(entry[key], str):
            raise ConfigError(f"{where}.{key}: must be a string")
    tags = entry.get("clientTags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ConfigError(f"{where}.clientTags: must be a list of strings")


def _properties(where: str, props: Any) -> None:
    if not isinstance(props, Mapping) or not props:
        raise ConfigError(f"{where}: must map session property names to values")
    for key, value in props.items():
        if not isinstance(key, str) or not isinstance(value, _SCALARS):
            raise ConfigError(f"{where}: {key!r} must be a name with a string, boolean or "
                              "integer value")
