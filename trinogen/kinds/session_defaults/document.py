"""`sessionProperties: [...]` and `sessionDefaults: "<name>"`: a cluster's session property
defaults, the document's own entries and the entries of the platform option it (or its profile)
picks.

Both are checked by `trinogen.model.session_defaults` against the session properties of the
document's `trinoVersion` and the cluster's catalogs. The option's entries are written after the
document's: Trino applies every matching entry in order, a later one overriding, so the
platform's value wins wherever its entry matches. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker, show
from trinogen.model.session_defaults import (
    Entry,
    check_entries,
    combined,
    config_json,
    scope_for,
)
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option module loads with the settings that name it
    from trinogen.kinds.session_defaults.options import SessionDefaultsOption

FIELD = "sessionDefaults"  # picks a platform option
OWN = "sessionProperties"  # the document's own entries
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SessionDefaults:
    """The cluster's entries, the document's first and the platform's last."""

    entries: tuple[Entry, ...]
    config: Lines = ()  # the chart writes the manager's files from its sessionProperties value
    coordinator: Lines = ()
    files: Lines = ()

    def json_lines(self) -> list[str]:
        """The lines of session-property-config.json (ASCII), as the chart writes it into the
        coordinator's ConfigMap: render/objects.py measures them."""
        return config_json(self.entries).splitlines() if self.entries else []


def fill(option: SessionDefaultsOption | None, cluster_id: str, owner: str,
         d: Mapping[str, Any], s: Settings, c: Checker) -> SessionDefaults | None:
    """The cluster's session defaults; None when an entry is refused (reported on `c`).

    `option` is None when the document writes its own entries and picks no option."""
    del cluster_id, owner  # entries hold no patterns
    v = s.validation
    scope = scope_for(_version(d.get("trinoVersion")), v.trino_properties, catalogs(d), c,
                      v.unchecked_connectors, _switches(d))
    own = check_entries(d.get(OWN), OWN, scope, c) if d.get(OWN) is not None else ()
    platform: tuple[Entry, ...] | None = ()
    if option is not None:
        platform = _platform(option, show(d.get(FIELD)), scope, c)
    if own is None or platform is None:
        return None
    return SessionDefaults(combined(platform, own))


def _switches(d: Mapping[str, Any]) -> tuple[str, ...]:
    """The switches the document turns on that bind more session properties: its `spooling`
    field writes protocol.spooling.enabled=true (trinogen/model/spooling.py); a spooling pick
    that fails fails the document there."""
    return ("protocol.spooling.enabled=true",) if isinstance(d.get("spooling"), Mapping) else ()


def _platform(option: SessionDefaultsOption, name: str, scope: Any,
              c: Checker) -> tuple[Entry, ...] | None:
    """The option's entries, checked for this document's version; a refusal names the option
    (the platform's entries are not the document's to fix)."""
    inner = Checker(c.label, "error", c.limit)
    entries = check_entries(option.entries, "entries", scope, inner)
    for p in inner.problems:
        c.error(FIELD, f"the option {name}, {p.field}: {p.message} (for this document's "
                "trinoVersion); pick another option or ask the platform team to change it")
    for w in inner.warnings:
        if w.field != "trinoVersion":  # already said once for the document
            c.warn(FIELD, f"the option {name}, {w.field}: {w.message}")
    return entries


def _version(value: Any) -> str | None:
    """The document's trinoVersion as the registry keys it (its own check reports a bad one)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return str(value).strip()


def catalogs(d: Mapping[str, Any]) -> dict[str, str]:
    """The cluster's catalogs (lower-case, as Trino names them) and each one's connector.name;
    "" for a shared catalog, whose connector is the library's (its session properties are not
    checked by name). Malformed entries are the connectors check's to report."""
    out: dict[str, str] = {}
    items = d.get("connectors")
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, Mapping):
            continue
        name = item.get("name", item.get("shared"))
        props = item.get("properties")
        connector = props.get("connector.name") if isinstance(props, Mapping) else None
        if isinstance(name, str):
            out[name.lower()] = "" if "shared" in item or not isinstance(connector, str) \
                else connector
    return out
