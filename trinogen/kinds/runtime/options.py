"""`runtime:` options: extra environment variables and JVM flags (issue 21, item 6).

    runtime:
      otel:
        env:                                    # on both roles' Trino containers
          OTEL_SERVICE_NAME: "trino-{cluster}"  # {cluster} and {owner} may be used
        jvm: ["-javaagent:/usr/lib/trino/otel/opentelemetry-javaagent.jar"]   # both roles
        coordinator_jvm: ["-XX:MaxDirectMemorySize=4G"]                         # one role
        worker_jvm: []

Checked when the settings load: names valid as environment variable names (a C identifier),
none that carries a secret trinogen binds (`TRINO_SECRET_*`, `TRINO_VAULT_*`: a container's `env`
entry would replace the env Secret's value of that name) and none that hands the JVM options
past these checks (`JAVA_TOOL_OPTIONS`...); JVM flags as `trinogen.kinds.runtime.jvm` judges them,
no key twice in one role.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from trinogen.errors import ConfigError
from trinogen.kinds.runtime import jvm
from trinogen.settings.options import metadata

FIELDS = ("env", "jvm", "coordinator_jvm", "worker_jvm")
ROLES = ("coordinator", "worker")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# trinogen.secrets.env_name: the variables of the cluster's env Secret (envFrom).
SECRET_PREFIXES = ("TRINO_SECRET_", "TRINO_VAULT_")
# Every JVM reads these at start: flags in them would skip the JVM checks.
JVM_OPTION_VARIABLES = frozenset({"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"})
MAX_VALUE = 32 * 1024


@dataclass(frozen=True)
class RuntimeOption:
    env: tuple[tuple[str, str], ...] = ()  # (name, value pattern), sorted by name
    jvm: tuple[str, ...] = ()  # both roles, in order
    coordinator_jvm: tuple[str, ...] = ()
    worker_jvm: tuple[str, ...] = ()

    def flags(self, role: str) -> tuple[str, ...]:
        """The extra flags of one role, as jvm.config gets them (both roles' first)."""
        return self.jvm + (self.coordinator_jvm if role == "coordinator" else self.worker_jvm)


def parse(where: str, raw: Mapping[str, Any]) -> RuntimeOption:
    """One entry of `runtime:`; ConfigError names `runtime.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    option = RuntimeOption(
        env=_env(f"{where}.env", raw.get("env")),
        jvm=_flags(f"{where}.jvm", raw.get("jvm")),
        coordinator_jvm=_flags(f"{where}.coordinator_jvm", raw.get("coordinator_jvm")),
        worker_jvm=_flags(f"{where}.worker_jvm", raw.get("worker_jvm")))
    for role in ROLES:
        twice = jvm.duplicate(option.flags(role))
        if twice is not None:
            raise ConfigError(f"{where}: {twice} is given twice for the {role} (the JVM keeps "
                              "only the last)")
    return option


def env_problem(name: object) -> str | None:
    """Why `name` cannot be an extra environment variable, or None."""
    if type(name) is not str or not _ENV_NAME.fullmatch(name):
        return "an environment variable name is letters, digits and '_', not starting with a digit"
    if name.startswith(SECRET_PREFIXES):
        return (f"{name} would replace a secret trinogen binds (its env Secret's variables are "
                f"named {SECRET_PREFIXES[0]}* and {SECRET_PREFIXES[1]}*)")
    if name in JVM_OPTION_VARIABLES:
        return f"{name} passes options to the JVM: give JVM flags as jvm (they are checked)"
    return None


def _env(where: str, raw: Any) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a mapping of variable names to text")
    out = []
    for name, value in raw.items():
        wrong = env_problem(name)
        if wrong:
            raise ConfigError(f"{where}: {name!r}: {wrong}")
        if type(value) is not str or len(value) > MAX_VALUE or "\x00" in value:
            raise ConfigError(f"{where}.{name} must be a string (at most 32 KiB, no NUL)")
        out.append((name, metadata.check_pattern(f"{where}.{name}", value, literal_braces=True)))
    return tuple(sorted(out))


def _flags(where: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where} must be a list of JVM flags")
    for i, flag in enumerate(raw):
        wrong = jvm.problem(flag, trino_reads)
        if wrong:
            raise ConfigError(f"{where}[{i}]: {flag!r}: {wrong}")
    return tuple(raw)


def trino_reads(name: str) -> bool:
    """Trino of some version the registry covers reads a property of this name (server,
    node or any connector's): such a name may not be set as a system property."""
    names, families = _trino_names()
    return name in names or name.startswith(families)


@cache
def _trino_names() -> tuple[frozenset[str], tuple[str, ...]]:
    from trinogen.trino.registry import covered_versions, registry_for

    names: set[str] = set()
    families: set[str] = set()
    for version in covered_versions():
        reg = registry_for(version)
        assert reg is not None
        sets = [reg.server("coordinator"), *(reg.connector(n) for n in reg.connector_names)]
        for s in sets:
            if s is not None:
                names.update(s.names, s.legacy_names)
                families.update(s.families)
    return frozenset(names), tuple(sorted(families))


def env_values(option: RuntimeOption, cluster: str, owner: str) -> list[dict[str, str]]:
    """The chart's `env` (both roles' Trino containers) for one cluster, patterns filled."""
    return [{"name": n, "value": metadata.fill(v, cluster, owner)} for n, v in option.env]


def jvm_values(option: RuntimeOption, role: str, written: tuple[str, ...] = ()) -> list[str]:
    """The chart's `<role>.additionalJVMConfig`: the flags trinogen writes itself (`written`,
    e.g. the image's pinned-region pair) then the option's."""
    return [*written, *option.flags(role)]
