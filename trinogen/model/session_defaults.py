"""Session property defaults: entries of Trino's file-based session property manager, checked.

Trino 476's manager (plugin `session-property-managers`, `SessionMatchSpec`, read with javap)
reads a JSON list of entries with the keys `user`, `source`, `group` (Java regexes matched
against the whole user name, source and resource group id), `clientTags` (all must be among
the query's), `queryType` (compared ignoring case) and `sessionProperties` (name -> value; a name
with a dot is `catalog.property`, split at the first dot). Any other key stops the coordinator
(Jackson's FAIL_ON_UNKNOWN_PROPERTIES). Every matching entry applies, in the file's order, a
later one overriding an earlier one (AbstractSessionPropertyManager: `putAll` per match).

An entry here has the same match keys; its properties are `sessionProperties` (system) and
`catalogSessionProperties` ({catalog: {property: value}}), written as `catalog.property` keys.
Names are checked against the session properties of the document's Trino version
(trinogen.trino.session: the system ones, and the catalog's connector's); values where the
type is known (boolean, integer, bigint, double, duration, data size, enum). What a document
may write is bounded (entries, properties, lengths, the file's size). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trinogen.model.access_rules import strict_fields
from trinogen.model.checker import Checker, closest, field_path, show, type_name
from trinogen.model.units import DATA_SIZE
from trinogen.trino import session as facts

MAX_ENTRIES = 50
MAX_PROPERTIES = 100  # per entry, system and catalog together
MAX_VALUE = 1000  # characters of one value
MAX_REGEX = 1000
MAX_TAGS = 20
MAX_TAG = 100
MAX_BYTES = 64 * 1024  # the rendered file: it shares the coordinator's ConfigMap (1 MiB)

REGEX_FIELDS = ("user", "source", "group")
FIELDS = (*REGEX_FIELDS, "clientTags", "queryType", "sessionProperties",
          "catalogSessionProperties")
_NAME = re.compile(r"[a-z][a-z0-9_]*")
# airlift Duration.valueOf's pattern (units-1.10, javap) and its units; Java's \d and \s are ASCII
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*", re.ASCII)
_DURATION_UNITS = ("ns", "us", "ms", "s", "m", "h", "d")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_RANGES = {facts.INTEGER: 2**31, facts.BIGINT: 2**63}


@dataclass(frozen=True)
class Entry:
    """One entry as Trino's manager reads it: its match keys, then its properties (catalog ones
    as `catalog.property`), each in a stable order."""

    match: tuple[tuple[str, Any], ...]
    properties: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {**{k: list(v) if isinstance(v, tuple) else v for k, v in self.match},
                "sessionProperties": dict(self.properties)}


@dataclass(frozen=True)
class Scope:
    """What an entry is checked against: the Trino version's session properties (None: the
    names are not checked), the cluster's catalogs (name -> connector.name), how a name or
    value Trino would refuse is reported, and the switches the cluster's configuration turns on
    ("protocol.spooling.enabled=true": the system session properties bound only then)."""

    known: facts.SessionProperties | None
    catalogs: Mapping[str, str]
    as_warnings: bool = False
    unchecked_connectors: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()
    # the connectors already warned about (no data for this version): one warning each
    warned: set[str] = field(default_factory=set, compare=False)

    def system(self) -> Mapping[str, facts.Spec] | None:
        if self.known is None or self.known.system is None:
            return None
        bound = [props for switch, props in self.known.bound_when.items()
                 if switch in self.switches]
        return self.known.system if not bound else {
            k: v for props in (self.known.system, *bound) for k, v in props.items()}

    def needs(self, name: str) -> str | None:
        """The switch a system session property is bound under, when the cluster lacks it."""
        if self.known is None:
            return None
        return next((s for s, props in self.known.bound_when.items()
                     if name in props and s not in self.switches), None)


def scope_for(version: str | None, mode: str, catalogs: Mapping[str, str], c: Checker,
              unchecked_connectors: Iterable[str] = (), switches: Iterable[str] = ()) -> Scope:
    """The scope of a document (`mode`: validation.trino_properties); the data file is read
    here, so only documents with session defaults load it."""
    known = None
    if version is not None and mode != "off":
        known = facts.session_properties_for(version)
        if known is None:
            c.warn("trinoVersion", f"trinoVersion {version}: trinogen has no session property "
                   f"list for it (covered: {', '.join(facts.covered_versions())}); session "
                   "property names and values are not checked")
    return Scope(known, catalogs, mode == "warn", frozenset(unchecked_connectors),
                 frozenset(switches))


def check_entries(value: Any, path: str, scope: Scope, c: Checker) -> tuple[Entry, ...] | None:
    """The entries as they will be written, in their order, or None (reported)."""
    items = c.entries(value, path, MAX_ENTRIES)
    if items is None:
        return None
    before = c.count
    out = tuple(_entry(item, field_path(path, i), scope, c) for i, item in enumerate(items))
    if c.count != before:
        return None
    size = len(config_json(out))
    if size > MAX_BYTES:
        c.error(path, f"renders {size:,} bytes of session-property-config.json; at most "
                f"{MAX_BYTES:,} are allowed (the file shares the coordinator's ConfigMap)")
        return None
    return out


def _entry(item: Any, path: str, scope: Scope, c: Checker) -> Entry:
    entry = c.mapping(item, path)
    if entry is None:
        return Entry((), ())
    strict_fields(entry, path, FIELDS, c)
    match: list[tuple[str, Any]] = []
    for name in REGEX_FIELDS:
        if name in entry and _regex(entry[name], field_path(path, name), c):
            match.append((name, entry[name]))
    tags = _tags(entry.get("clientTags"), field_path(path, "clientTags"), c)
    if tags:
        match.append(("clientTags", tags))
    if "queryType" in entry:
        query_type = _query_type(entry["queryType"], field_path(path, "queryType"), scope, c)
        if query_type is not None:
            match.append(("queryType", query_type))
    properties = _properties(entry, path, scope, c)
    return Entry(tuple(match), tuple(properties))


def _regex(value: Any, path: str, c: Checker) -> bool:
    text = c.string(value, path, max_len=MAX_REGEX)
    if text is None:
        return False
    from trinogen.model import javaregex  # only for documents with session defaults

    judgement = javaregex.judge(text)
    if judgement.outcome == javaregex.UNCHECKED:
        c.warn(path, f"{show(text)} uses {judgement.description}, which only Java can judge; "
               "Trino checks it when a query arrives")
    elif judgement.outcome != javaregex.OK:
        c.error(path, f"{show(text)} {javaregex.explain(judgement, text)}")
        return False
    return True


def _tags(value: Any, path: str, c: Checker) -> tuple[str, ...]:
    items = c.entries(value, path, MAX_TAGS)
    if not items:
        return ()
    tags = [c.string(t, field_path(path, i), max_len=MAX_TAG) for i, t in enumerate(items)]
    return tuple(t for t in tags if t is not None)


def _query_type(value: Any, path: str, scope: Scope, c: Checker) -> str | None:
    text = c.string(value, path, max_len=40)
    if text is None:
        return None
    choices = scope.known.query_types if scope.known is not None else ()
    if choices and text.upper() not in choices:
        hint = closest(text.upper(), choices)
        _report(c, scope, path, f"{show(text)} is not a Trino query type"
                f"{f' (did you mean {hint}?)' if hint else ''}; known: {', '.join(choices)}")
        # kept when only warned: dropped, the entry would match every query type
        return text.upper() if scope.as_warnings else None
    return text.upper()


def _report(c: Checker, scope: Scope, path: str, message: str) -> None:
    if scope.as_warnings:
        c.warn(path, message)
    else:
        c.error(path, message)


def _properties(entry: Mapping[str, Any], path: str, scope: Scope,
                c: Checker) -> list[tuple[str, str]]:
    system_at = field_path(path, "sessionProperties")
    system = c.mapping(entry.get("sessionProperties"), system_at, required=False) or {}
    catalogs_at = field_path(path, "catalogSessionProperties")
    catalogs = c.mapping(entry.get("catalogSessionProperties"), catalogs_at, required=False) or {}
    # counted before any is read: a hostile entry of a million names costs one error
    given = len(system) + sum(len(v) if isinstance(v, Mapping) else 1 for v in catalogs.values())
    if not given or given > MAX_PROPERTIES:
        c.error(path, "sets no session property: give sessionProperties or "
                "catalogSessionProperties" if not given else f"sets {given} session "
                f"properties; at most {MAX_PROPERTIES} are allowed per entry")
        return []
    out = _named(system, system_at, scope.system(), "", "a system session property", scope, c)
    for catalog, props in sorted(catalogs.items()):
        out.extend(_catalog(catalog, props, field_path(catalogs_at, catalog), scope, c))
    return out


def _catalog(catalog: str, value: Any, path: str, scope: Scope,
             c: Checker) -> list[tuple[str, str]]:
    props = c.mapping(value, path)
    if props is None:
        return []
    if "." in catalog:
        # the manager splits `catalog.property` at the first dot: the wrong catalog would get it
        c.error(path, f"{show(catalog)}: a catalog whose name holds a dot cannot be given "
                "session defaults (Trino's manager splits catalog.property at the first dot)")
        return []
    connector = scope.catalogs.get(catalog)
    if connector is None:
        hint = closest(catalog, scope.catalogs)
        c.error(path, f"{show(catalog)} is not a catalog of this cluster"
                f"{f' (did you mean {hint}?)' if hint else ''}; its catalogs: "
                f"{', '.join(sorted(scope.catalogs)) or 'none'}")
        return []
    known = None
    if scope.known is not None and connector and connector not in scope.unchecked_connectors:
        known = _connector(connector, path, scope.known, scope, c)
    partial = scope.known is not None and connector in scope.known.partial
    return _named(props, path, known, f"{catalog}.", f"a session property of {connector}",
                  scope, c, partial)


def _connector(connector: str, path: str, known: facts.SessionProperties, scope: Scope,
               c: Checker) -> Mapping[str, facts.Spec] | None:
    """The connector's session properties in this version; without data, one warning (per
    connector and document) that its catalogs' properties go unchecked."""
    props = known.connector(connector)
    if props is None and connector not in scope.warned:
        scope.warned.add(connector)
        c.warn(path, f"trinogen has no session property list for connector {connector} in "
               f"Trino {known.version} (its plugin could not be read for that version; with "
               f"data: {', '.join(known.connector_names()) or 'none'}); its catalog session "
               "property names and values are not checked")
    return props


def _named(props: Mapping[str, Any], path: str, known: Mapping[str, facts.Spec] | None,
           prefix: str, what: str, scope: Scope, c: Checker,
           partial: bool = False) -> list[tuple[str, str]]:
    """The properties as written; `partial`: the data was read without some of the plugin's
    jars, so an unknown name is only warned about."""
    out = []
    for name, raw in sorted(props.items()):
        where = field_path(path, name)
        text = _value_text(raw, where, c)
        if text is None:
            continue
        if not _NAME.fullmatch(name) or len(name) > 200:
            c.error(where, "is not a session property name (lower-case letters, digits and _)")
            continue
        if known is None or _keeps(name, text, where, known, prefix, what, scope, c, partial):
            out.append((prefix + name, text))
    return out


def _keeps(name: str, text: str, where: str, known: Mapping[str, facts.Spec], prefix: str,
           what: str, scope: Scope, c: Checker, partial: bool) -> bool:
    """Whether the property is written: what Trino would refuse is reported, an error but in
    warn mode, or for an unknown name of a connector read in part (a warning, kept)."""
    problem = _problem(name, text, known, prefix, what, scope, c)
    if problem is None:
        return True
    unknown_partial = partial and name not in known
    if scope.as_warnings or unknown_partial:
        c.warn(where, problem + (_PARTIAL if unknown_partial else ""))
        return True
    c.error(where, problem)
    return False


def _problem(name: str, text: str, known: Mapping[str, facts.Spec], prefix: str, what: str,
             scope: Scope, c: Checker) -> str | None:
    """Why Trino would refuse this property (its name, or its value), or None."""
    if name not in known:
        return _unknown(name, known, prefix, what, scope, c)
    wrong = value_problem(known[name], text)
    return None if wrong is None else f"{show(text)} {wrong}"


def _unknown(name: str, known: Mapping[str, facts.Spec], prefix: str, what: str,
             scope: Scope, c: Checker) -> str:
    switch = None if prefix else scope.needs(name)
    version = scope.known.version if scope.known is not None else ""
    if switch is not None:
        return (f"{show(name)} exists only when {switch}: Trino {version} binds it then alone, "
                "and fails every query this entry matches without it")
    hint = None if c.full else closest(name, known)
    return (f"{show(name)} is not {what} in Trino {version}"
            f"{f' (did you mean {hint}?)' if hint else ''}; Trino would fail every query this "
            "entry matches")


_PARTIAL = (" (a warning: trinogen read this connector's session properties without some of "
            "its plugin's jars, which Maven Central did not serve for this version)")


def _value_text(value: Any, path: str, c: Checker) -> str | None:
    """A value as the file holds it: a string; a boolean or an integer written as Trino reads it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        c.error(path, f"must be a string, a boolean or an integer, not {type_name(value)}")
        return None
    return c.string(value, path, max_len=MAX_VALUE)


def value_problem(spec: facts.Spec, text: str) -> str | None:
    """Why Trino would not read `text` as a value of this type, or None."""
    if isinstance(spec, tuple):  # an enum: Trino upper-cases the value (Locale.ENGLISH)
        if text.isascii() and text.upper() in spec:
            return None
        return f"is not one of {', '.join(spec)}"
    check = _CHECKS.get(spec)
    return None if check is None else check(text)


def _boolean(text: str) -> str | None:
    if text.lower() in ("true", "false"):
        return None
    return "is not a boolean: use true or false (Trino reads any other word as false)"


def _whole(text: str, kind: str) -> str | None:
    limit = _RANGES[kind]
    if _INTEGER.fullmatch(text) and -limit <= int(text) < limit:
        return None
    return f"is not {'an integer' if kind == facts.INTEGER else 'a bigint'} " \
           f"(-{limit} to {limit - 1})"


def _double(text: str) -> str | None:
    return None if _DOUBLE.fullmatch(text) else "is not a number"


def _duration(text: str) -> str | None:
    found = _DURATION.fullmatch(text)
    if found and found.group(2) in _DURATION_UNITS:
        return None
    return f"is not a duration: a number and one of {', '.join(_DURATION_UNITS)} (30s, 1.5h)"


def _data_size(text: str) -> str | None:
    if DATA_SIZE.fullmatch(text):
        return None
    return "is not a data size: a number and one of B, kB, MB, GB, TB, PB (512MB, 1.5GB)"


_CHECKS = {
    facts.BOOLEAN: _boolean,
    facts.INTEGER: lambda t: _whole(t, facts.INTEGER),
    facts.BIGINT: lambda t: _whole(t, facts.BIGINT),
    facts.DOUBLE: _double,
    facts.DURATION: _duration,
    facts.DATA_SIZE: _data_size,
}


def combined(platform: Sequence[Entry], document: Sequence[Entry]) -> tuple[Entry, ...]:
    """The document's entries first, the platform's last: Trino applies every matching entry
    in order, a later one overriding, so the platform's value wins wherever its entry matches."""
    return (*document, *platform)


def config_json(entries: Sequence[Entry]) -> str:
    """session-property-config.json: Trino's list of entries, ASCII (other characters as JSON
    escapes, which Trino's Jackson reads back)."""
    return json.dumps([e.to_json() for e in entries], indent=2) + "\n"


def chart_values(entries: Sequence[Entry]) -> dict[str, Any]:
    """The chart's `sessionProperties` value (templates/configmap-coordinator.yaml writes the
    manager's properties file and this JSON into the coordinator's ConfigMap); {} for none."""
    if not entries:
        return {}
    return {"type": "configmap", "sessionPropertiesConfig": config_json(entries)}
