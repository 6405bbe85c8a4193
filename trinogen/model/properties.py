"""Trino server properties: `{section: {key: value}}` flattened, checked and sorted into files.

`properties()` reads the two-level map (top level or one role's); `server_properties()` is the
one place where the cluster's server properties are judged and routed to the chart's keys,
node.properties or config.properties. A rule about a server property belongs there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trinogen.model.checker import (
    MAPS,
    PROPERTY_KEY_RULE,
    Checker,
    field_path,
    property_key_ok,
    show,
    type_name,
)
from trinogen.model.rules import (
    CHART_CONFIG_KEYS,
    CHART_NODE_KEYS,
    NODE_ENVIRONMENT,
    PER_POD_NODE_KEYS,
)
from trinogen.model.substitution import refusal, trino_substitution
from trinogen.model.trino import TrinoCheck
from trinogen.model.units import data_size_bytes
from trinogen.secrets import Placeholder, PlaceholderError, parse_value
from trinogen.trino.companions import COMPANIONS, missing
from trinogen.trino.companions import refusal as companion_refusal

# flat key ("section.key") -> (value, field path where the document set it)
Props = dict[str, tuple[str, str]]
Pairs = tuple[tuple[str, str], ...]
# (key, text, field path, checker) -> the value with each placeholder as ${ENV:VAR}, or None
# (reported). Given by the document walker, which knows the cluster's identity and secrets.
Bind = Callable[[str, str, str, Checker], str | None]
# What marks a bound placeholder in a value: a document may not write ${ENV: (nor any other
# ${<provider>:) itself (segments), so after segments() it is trinogen's.
BOUND = "${ENV:"


def properties(value: Any, path: str, c: Checker, *, required: bool,
               bind: Bind | None = None) -> Props:
    """Read `properties` into flat keys, every value text.

    A string value is one whole property (`{"retry-policy": "QUERY"}`); a mapping is a section
    whose keys are joined with a dot (`{"query": {"max-memory": "1TB"}}` is query.max-memory).
    With `bind`, secret placeholders are allowed and come back bound (`${ENV:VAR}`); without
    it they are refused.
    """
    out: Props = {}
    sections = c.mapping(value, path, required=required)
    for section, raw_entries in (sections or {}).items():
        spath = field_path(path, section)
        if isinstance(raw_entries, str):
            _read_one(out, section, raw_entries, spath, c, bind)
            continue
        if raw_entries is not None and not isinstance(raw_entries, MAPS):
            # The path names the key, escaped: the message never repeats raw document text.
            c.error(spath, "must be a string (one property) or an object (a section of "
                    f"properties), not {type_name(raw_entries)}")
            continue
        entries = c.mapping(raw_entries, spath)
        for key, raw in (entries or {}).items():
            flat = f"{section}.{key}" if section and key else ""
            _read_one(out, flat, raw, field_path(path, section, key), c, bind)
    return out


def _read_one(out: Props, flat: str, raw: Any, kpath: str, c: Checker,
              bind: Bind | None) -> None:
    if not property_key_ok(flat):
        c.error(kpath, PROPERTY_KEY_RULE + "; write {\"name\": value} or {\"section\": "
                "{\"key\": value}} for section.key")
        return
    if flat in out:  # {"a": {"b.c": ..}}, {"a.b": {"c": ..}} and {"a.b.c": ..} are all a.b.c
        c.error(kpath, f"names the property {flat} again (also {out[flat][1]}); set it once")
        return
    text = c.string(raw, kpath)
    if text is None:
        return
    if bind is None:
        if plain_text(text, kpath, c):
            out[flat] = (text, kpath)
        return
    bound = bind(flat, text, kpath, c)
    if bound is not None:
        out[flat] = (bound, kpath)


def refuse_secret(value: str, path: str, where: str, c: Checker) -> bool:
    """Report a bound placeholder in a property that cannot carry one; True when reported."""
    if BOUND not in value:
        return False
    c.error(path, f"cannot take a secret placeholder: {where}; secret placeholders work in "
            "the other server properties (config.properties) and in connector properties")
    return True


def segments(
    text: str, path: str, c: Checker, *, instead: str
) -> tuple[str | Placeholder, ...] | None:
    """A value split around its placeholders; None (reported) for Trino's `${<provider>:...}`
    (in any case, anywhere in the value) or a bad placeholder.

    `${ENV:...}` is how trinogen wires secrets into Trino, so a document may not write it or any
    other form Trino substitutes (`trinogen.model.substitution`); `instead` says what to write.
    """
    found = trino_substitution(text)
    if found is not None:
        c.error(path, f"{refusal(found)}; {instead}")
        return None
    try:
        return parse_value(text)
    except PlaceholderError as e:
        c.error(path, str(e))
        return None


def plain_text(text: str, path: str, c: Checker) -> bool:
    """Text outside connectors may not carry placeholders or Trino's own ${<provider>:...}."""
    found = segments(text, path, c,
                     instead="use a {{ NAME }} placeholder in a connector property instead")
    if found is None:
        return False
    if any(isinstance(s, Placeholder) for s in found):
        c.error(path, "secret placeholders are resolved only in connector properties")
        return False
    return True


@dataclass
class ServerProperties:
    """The top-level properties, sorted by the file and chart key they reach."""

    config: list[tuple[str, str]] = field(default_factory=list)  # additionalConfigProperties
    node: list[tuple[str, str]] = field(default_factory=list)  # additionalNodeProperties
    coordinator: list[tuple[str, str]] = field(default_factory=list)  # coordinatorExtraConfig
    node_environment: str | None = None  # server.node.environment
    max_memory: str | None = None  # server.config.query.maxMemory
    include_coordinator: bool | None = None  # coordinator.config.nodeScheduler...


def server_properties(props: Props, trino: TrinoCheck, c: Checker) -> ServerProperties:
    """Judge every top-level server property and route it (see the property table in docs/document.md).

    The chart's own keys are mapped or refused here; every other key is judged against the
    registry of the document's Trino version, as a node or a config.properties line. A key only
    the coordinator binds goes to the coordinator's file alone. The per-node memory keys are
    left to each role (`roles.role`), which reads them with the role's own overrides.
    """
    out = ServerProperties()
    node: Props = {}
    config: Props = {}
    for key, (value, path) in sorted(props.items()):
        if key.startswith("node."):
            if refuse_secret(value, path, "node.properties carries no secrets", c):
                continue
            if _node_property(key, value, path, out, c):
                node[key] = (value, path)
        elif key in CHART_CONFIG_KEYS:
            if not refuse_secret(value, path, "the chart writes it from values.yaml", c):
                _chart_config_property(key, value, path, out, c)
        elif not refuse_companion(key, value, path, c):
            config[key] = (value, path)
    trino.node(node)
    trino.server(config)
    only = trino.coordinator_only
    for key, (value, _) in config.items():
        (out.coordinator if key in only else out.config).append((key, value))
    return out


def refuse_companion(key: str, value: str, path: str, c: Checker) -> bool:
    """Report a property set without the companion file Trino then needs (the table in
    `trinogen.trino.companions`); True when reported. A key not in the table costs one dict
    lookup (the bench's documents set none)."""
    if key not in COMPANIONS:
        return False
    row = missing(key, value)
    if row is None:
        return False
    c.error(path, companion_refusal(key, value, row))
    return True


def _node_property(key: str, value: str, path: str, out: ServerProperties, c: Checker) -> bool:
    """Route one node.* key; True when it is an additionalNodeProperties line to judge."""
    if key == "node.environment":
        if NODE_ENVIRONMENT.fullmatch(value):
            out.node_environment = value
        else:
            c.error(path, f"{show(value)} is not a valid node.environment: Trino accepts "
                    "only lowercase letters, digits and '_', starting with a letter or digit")
    elif key in CHART_NODE_KEYS:
        c.error(path, "is set by the chart and cannot be changed from a document")
    elif key in PER_POD_NODE_KEYS:
        c.error(path, "must differ on every pod, but the chart writes one node.properties "
                "for all pods of a role; leave it out and Trino chooses it per pod")
    else:
        out.node.append((key, value))
        return True
    return False


def _chart_config_property(
    key: str, value: str, path: str, out: ServerProperties, c: Checker
) -> None:
    if CHART_CONFIG_KEYS[key] is None:
        c.error(path, "is set by the chart and cannot be changed from a document")
    elif key == "query.max-memory":
        if data_size_bytes(value) is None:
            c.error(path, f"{show(value)} is not a Trino data size such as \"100GB\"")
        else:
            out.max_memory = value
    elif key == "node-scheduler.include-coordinator":
        if value not in ("true", "false"):
            c.error(path, f"must be \"true\" or \"false\", not {show(value)}")
        else:
            out.include_coordinator = value == "true"
