"""Tenants: the teams a platform serves from one collection, and what each may pick and use.

The settings file names them under `tenants`, keyed by the `owner` a document declares:

    tenants:
      growth_team:
        options:                     # the platform options it may pick, per kind
          storage: [lake-growth]     #   by name,
          placement: all             #   or every option of the kind; a kind not listed: none
        require: [authentication]    # kinds every one of its clusters must pick (no `null`)
        quotas: {clusters: 10, workers: 40, cpu: "160", memory: 640Gi}
        project: growth              # its Argo CD AppProject (argocd.tenant_projects)
    profile_requirements:
      secure: [authentication]       # kinds a document on this profile must pick

`options: all` lets a tenant pick every option of every kind (a platform team's own clusters).
With no tenants declared, every document may pick every option and no quota applies (what
trinogen did before tenants existed). Read from the file only, never from `--set` or the
environment. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from trinogen.errors import ConfigError
from trinogen.kinds import HOMED
from trinogen.settings.quantity import quantity_value

ALL = "all"
# A tenant is an `owner`: a Kubernetes label value (the document's owner label).
_TENANT = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
# An AppProject name: a DNS-1123 subdomain; trinogen keeps it to one label of 63 characters.
_PROJECT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# Kinds picked once per cluster (or once per role), which a platform can require. A storage
# option is picked per catalog: "every catalog must pick one" is not a rule a platform writes.
# Every kind in its own home (`trinogen.kinds.HOMED`, one field per cluster) is requirable; the
# names listed here keep the order the messages have always listed them in.
REQUIRABLE = tuple(dict.fromkeys((
    "authentication", "opa", "service_accounts", "ingress", "placement", "disruption", "exchange",
    *HOMED)))
_FIELDS = {"options", "require", "quotas", "project"}
_QUOTAS = {"clusters", "workers", "cpu", "memory"}
MAX_COUNT = 1_000_000


@dataclass(frozen=True)
class Quotas:
    """Limits across all of one tenant's enabled clusters; None = no limit.

    `cpu` and `memory` bound the sum of the pods' requests at the clusters' largest size
    (autoscaling maximum, else replicas), coordinator included; `workers` the sum of worker counts
    at that size. The texts are kept as written, for messages.
    """

    clusters: int | None = None
    workers: int | None = None
    cpu: Decimal | None = None  # cores
    memory: Decimal | None = None  # bytes
    cpu_text: str | None = None
    memory_text: str | None = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.clusters, self.workers, self.cpu, self.memory))


@dataclass(frozen=True)
class Tenant:
    name: str
    # kind -> the option names it may pick; a kind absent here: none. `every` = all of all kinds.
    options: Mapping[str, frozenset[str]] = field(default_factory=dict)
    every: bool = False
    require: tuple[str, ...] = ()
    quotas: Quotas = Quotas()
    project: str = ""

    def may_pick(self, kind: str, name: str) -> bool:
        return self.every or name in self.options.get(kind, frozenset())

    def identity(self) -> dict[str, Any]:
        """A stable, JSON-friendly form (the render cache's fingerprint; sets are unordered).

        Quotas are left out: they shape no file (trinogen.admission judges every run's changes
        against git after the cache), so a new quota re-renders nothing."""
        return {"options": {k: sorted(v) for k, v in sorted(self.options.items())},
                "every": self.every, "require": list(self.require), "project": self.project}

    def offered(self, kind: str, known: Mapping[str, Any]) -> list[str]:
        """The names of the kind's options this tenant may pick, sorted (for messages)."""
        return sorted(n for n in known if self.may_pick(kind, n))


def project_name(tenant: str) -> str:
    """The default AppProject name of a tenant: `trino-` and its name as a DNS label."""
    return "trino-" + re.sub(r"[^a-z0-9-]", "-", tenant.lower())


def parse_tenants(where: str, raw: Any, named: Mapping[str, Mapping[str, Any]]) -> dict[str, Tenant]:
    """The `tenants` section: {owner: Tenant}; every option named must exist in `named`."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: tenants must be a mapping of owners to tenants")
    if not raw:
        raise ConfigError(f"{where}: tenants declares no tenant; declare at least one, or remove "
                          "the key to run without tenants (then any owner may pick any option)")
    tenants: dict[str, Tenant] = {}
    for name, entry in raw.items():
        at = f"{where}: tenants.{name}"
        if type(name) is not str or len(name) > 63 or not _TENANT.fullmatch(name):
            raise ConfigError(f"{where}: tenants: {name!r} is not an owner a document can "
                              "declare (a Kubernetes label value: letters, digits, '-', '_', '.', "
                              "at most 63 characters)")
        tenants[name] = _tenant(at, name, entry, named)
    _unique_projects(where, tenants)
    return tenants


def parse_profile_requirements(where: str, raw: Any, profiles: Mapping[str, Any]
                               ) -> dict[str, tuple[str, ...]]:
    """The `profile_requirements` section: {profile: kinds a document on it must pick}."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: profile_requirements must be a mapping of profiles to kinds")
    out: dict[str, tuple[str, ...]] = {}
    for name, kinds in raw.items():
        if name not in profiles:
            known = ", ".join(sorted(profiles)) or "none are configured"
            raise ConfigError(f"{where}: profile_requirements.{name}: no such profile ({known})")
        out[name] = _kinds(f"{where}: profile_requirements.{name}", kinds)
    return out


def _tenant(at: str, name: str, entry: Any, named: Mapping[str, Mapping[str, Any]]) -> Tenant:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{at} must be a mapping (fields: {', '.join(sorted(_FIELDS))})")
    for key in entry:
        if key not in _FIELDS:
            raise ConfigError(f"{at}.{key}: unknown field (known: {', '.join(sorted(_FIELDS))})")
    raw_options = entry.get("options")
    every = raw_options == ALL
    options = {} if every or raw_options is None else _options(f"{at}.options", raw_options, named)
    tenant = Tenant(name=name, options=options, every=every,
                    require=_kinds(f"{at}.require", entry.get("require", [])),
                    quotas=_quotas(f"{at}.quotas", entry.get("quotas")),
                    project=_project(f"{at}.project", entry.get("project"), name))
    for kind in tenant.require:
        if not tenant.offered(kind, named.get(kind, {})):
            raise ConfigError(f"{at}.require: {kind} is required but the tenant may pick no "
                              f"{kind} option (add one to {at.split(': ', 1)[1]}.options.{kind})")
    return tenant


def _options(at: str, raw: Any, named: Mapping[str, Mapping[str, Any]]
             ) -> dict[str, frozenset[str]]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{at} must be '{ALL}' or a mapping of option kinds to names or '{ALL}'")
    out: dict[str, frozenset[str]] = {}
    for kind, names in raw.items():
        known = named.get(kind)
        if known is None:
            offered = ", ".join(sorted(named)) or "the settings name no options"
            raise ConfigError(f"{at}.{kind}: the settings offer no {kind} options ({offered})")
        out[kind] = frozenset(known) if names == ALL else _names(f"{at}.{kind}", names, kind, known)
    return out


def _names(at: str, names: Any, kind: str, known: Mapping[str, Any]) -> frozenset[str]:
    if not isinstance(names, list) or not all(type(n) is str for n in names):
        raise ConfigError(f"{at} must be '{ALL}' or a list of {kind} option names")
    for n in names:
        if n not in known:
            raise ConfigError(f"{at}: no {kind} option is named {n!r} "
                              f"(the settings name: {', '.join(sorted(known))})")
    return frozenset(names)


def _kinds(at: str, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(type(k) is str for k in raw):
        raise ConfigError(f"{at} must be a list of option kinds ({', '.join(REQUIRABLE)})")
    for kind in raw:
        if kind not in REQUIRABLE:
            raise ConfigError(f"{at}: {kind!r} cannot be required (choose from: "
                              f"{', '.join(REQUIRABLE)})")
    return tuple(dict.fromkeys(raw))


def _quotas(at: str, raw: Any) -> Quotas:
    if raw is None:
        return Quotas()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{at} must be a mapping ({', '.join(sorted(_QUOTAS))})")
    for key in raw:
        if key not in _QUOTAS:
            raise ConfigError(f"{at}.{key}: unknown quota (known: {', '.join(sorted(_QUOTAS))})")
    cpu, memory = (_quantity(f"{at}.{k}", raw.get(k)) for k in ("cpu", "memory"))
    return Quotas(clusters=_count(f"{at}.clusters", raw.get("clusters")),
                  workers=_count(f"{at}.workers", raw.get("workers")),
                  cpu=cpu, memory=memory,
                  cpu_text=None if cpu is None else str(raw["cpu"]),
                  memory_text=None if memory is None else str(raw["memory"]))


def _count(at: str, value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise ConfigError(f"{at} must be a whole number from 0 to {MAX_COUNT}")
    return value


def _quantity(at: str, value: Any) -> Decimal | None:
    if value is None:
        return None
    text = str(value) if type(value) in (int, float) else value
    parsed = quantity_value(text) if type(text) is str else None
    if parsed is None:
        raise ConfigError(f"{at} must be a Kubernetes quantity such as \"160\", \"500m\" or "
                          "\"640Gi\"")
    return parsed


def _project(at: str, value: Any, tenant: str) -> str:
    if value is None:
        return project_name(tenant)
    if type(value) is not str or len(value) > 63 or not _PROJECT.fullmatch(value):
        raise ConfigError(f"{at} must be a DNS label (lowercase letters, digits and '-', at most "
                          "63 characters): it names the tenant's Argo CD AppProject")
    return value


def _unique_projects(where: str, tenants: Mapping[str, Tenant]) -> None:
    seen: dict[str, str] = {}
    for name, t in tenants.items():
        if t.project in seen:
            raise ConfigError(f"{where}: tenants.{name}.project: {t.project!r} is also the "
                              f"project of tenant {seen[t.project]!r}; give each its own")
        seen[t.project] = name
