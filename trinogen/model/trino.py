"""The model's link to the Trino registry: which checks run for a document, and how they report.

`TrinoCheck.of()` decides once per document (its `trinoVersion`, the settings'
`validation.trino_properties` and `validation.unchecked_connectors`); `properties`, `roles` and
`connectors` then hand it each file's flat properties. The decisions themselves are in
`trinogen.trino.checks`; this module only turns their findings into the checker's errors or
warnings. With `validation.trino_properties: off` the registry is never loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from trinogen.model.checker import Checker, field_path, text_ok
from trinogen.settings import ValidationSettings
from trinogen.trino import checks
from trinogen.trino.checks import Finding, Props, is_logger_name
from trinogen.trino.registry import Registry, Role, registry_for

ROOT_LOGGER = "io.trino"  # the chart writes io.trino=<server.log.trino.level> itself


@dataclass(frozen=True)
class TrinoCheck:
    """The registry checks of one document; `registry` None = nothing is checked."""

    c: Checker
    registry: Registry | None = None
    as_warnings: bool = False
    unchecked_connectors: frozenset[str] = frozenset()

    @classmethod
    def of(cls, version: str | None, v: ValidationSettings, c: Checker) -> TrinoCheck:
        if version is None or v.trino_properties == "off":
            return cls(c)
        registry = registry_for(version)
        if registry is None:
            c.warn("trinoVersion", checks.unchecked(version))
        # Partial data (complete: false) may lack a jar that binds a property: its refusals
        # are warnings, so that an incomplete scan can never fail a document Trino accepts.
        as_warnings = v.trino_properties == "warn" or (registry is not None and not registry.complete)
        return cls(c, registry, as_warnings, frozenset(v.unchecked_connectors))

    @property
    def coordinator_only(self) -> frozenset[str]:
        return frozenset() if self.registry is None else self.registry.coordinator_only

    def _report(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            if f.warning or self.as_warnings:
                self.c.warn(f.path, f.message)
            else:
                self.c.error(f.path, f.message)

    def server(self, props: Props) -> None:
        if self.registry is not None:
            self._report(checks.check_server(self.registry, props))

    def node(self, props: Props) -> None:
        if self.registry is not None:
            self._report(checks.check_node(self.registry, props))

    def role(self, role: Role, props: Props) -> None:
        if self.registry is not None:
            self._report(checks.check_role(self.registry, role, props))

    def catalog(self, path: str, props: Props) -> None:
        connector = props.get("connector.name", ("", ""))[0]
        if self.registry is not None and connector not in self.unchecked_connectors:
            self._report(checks.check_catalog(self.registry, path, props))

    def log_levels(self, value: Any) -> tuple[tuple[str, str], ...]:
        """`logLevels: {logger: level}`, each level upper-cased as log.properties takes it."""
        levels = read_log_levels(value, self.c)
        if self.registry is not None:
            self._report(checks.check_log_levels(self.registry, levels))
        return tuple((k, v.strip().upper()) for k, (v, _) in sorted(levels.items()))


def read_log_levels(value: Any, c: Checker) -> dict[str, tuple[str, str]]:
    """The logLevels field: Java logger names to level text (levels are judged by the registry)."""
    out: dict[str, tuple[str, str]] = {}
    levels = c.mapping(value, "logLevels", required=False)
    for logger, raw in (levels or {}).items():
        path = field_path("logLevels", logger)
        if not (text_ok(logger) and is_logger_name(logger)) or len(logger) > 256:
            c.error(path, "is not a Java logger name: write a package or class name such as "
                    "io.trino.plugin.hive")
            continue
        text = c.string(raw, path, max_len=16)
        if text is not None:
            out[logger] = (text, path)
    return out


def log_lines(levels: Iterable[tuple[str, str]]) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The chart's server.log.trino.level (io.trino) and the other loggers' lines."""
    root = None
    others = []
    for logger, level in levels:
        if logger == ROOT_LOGGER:
            root = level
        else:
            others.append((logger, level))
    return root, tuple(others)
