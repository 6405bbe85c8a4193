"""Tenancy: the platform options a document's tenant may pick, and the kinds it must pick.

Imported only when the settings declare `tenants` or `profile_requirements` (a run without them
never loads this module: tests/test_startup.py). `scope()` runs once per document, on the merged
document (defaults and profile underneath it, so an inherited pick counts like a written one):

- the document's `owner` must name a tenant of the settings (when tenants are declared);
- every option the document picks is then judged by `Checker.pick`, which calls `allowed()`
  below: the one place each kind's reader passes through (storage of own and shared catalogs,
  exchange, authentication, OPA, service account, ingress, placement of each role, disruption);
- each kind its tenant's `require` or its profile's `profile_requirements` names must be picked
  (a `null` that removes an inherited pick fails here).

An exchange option carries its storage: allowing a tenant the exchange allows it that storage
for spooling (the platform chose the pair in the settings). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from trinogen.kinds import HOMED, OWN_VALUE, fields
from trinogen.model.checker import MAPS, Checker, show
from trinogen.settings import Settings
from trinogen.settings.tenants import Tenant

# Where a document picks each requirable kind (settings.tenants.REQUIRABLE): "required" means
# every one of these fields names an option (placement: both roles; opa: file-based rules do
# not count; exchange: faultTolerance with an exchange).
REQUIRED_AT: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "authentication": (("authentication",),),
    # a homed kind's field, or one per role (placement)
    **{kind: tuple(tuple(f.split(".")) for f in fields(kind)) for kind in HOMED},
}
MAX_LISTED = 10  # names listed in a message before "and N more"


def scope(d: Mapping[str, Any], owner: str | None, s: Settings, c: Checker) -> None:
    """Bind the merged document `d` to its tenant: owner, every later pick, required kinds."""
    tenant = s.tenant(owner)
    if s.tenants and tenant is None:
        if owner is not None:  # an invalid owner is reported already
            c.error("owner", f"{show(owner)} is not a tenant of these settings (`tenants` in "
                    f"{s.source}: {_listed(sorted(s.tenants))}); ask the platform to add it")
        return
    if tenant is not None:
        c.allowed = allowed(tenant, s, c)
    _require(d, tenant, s, c)


def allowed(tenant: Tenant, s: Settings, c: Checker) -> Callable[[str, str, str], bool]:
    """The check `Checker.pick` makes of each option name a document picks (existing or not:
    the message is the same, so a tenant cannot probe for other tenants' option names)."""
    def check(kind: str, name: str, path: str) -> bool:
        if tenant.may_pick(kind, name):
            return True
        c.error(path, f"{show(name)} is not {_a(kind)} option tenant {show(tenant.name)} may "
                f"pick ({_offer(tenant, kind, s)})")
        return False
    return check


def _require(d: Mapping[str, Any], tenant: Tenant | None, s: Settings, c: Checker) -> None:
    """Every required kind picked; the message names the settings that require it."""
    by: dict[str, list[str]] = {}
    if tenant is not None:
        for kind in tenant.require:
            by.setdefault(kind, []).append(f"tenant {show(tenant.name)} "
                                           f"(tenants.{tenant.name}.require)")
    profile = d.get("profile")
    if type(profile) is str:
        for kind in s.profile_requirements.get(profile, ()):
            by.setdefault(kind, []).append(f"profile {show(profile)} "
                                           f"(profile_requirements.{profile})")
    for kind, who in by.items():
        for at, instead in _unpicked(d, kind):
            offer = f"; {_offer(tenant, kind, s)}" if tenant is not None else ""
            c.error(at, f"is required by {' and '.join(who)}: pick {_a(kind)} "
                    f"option (a null here or in a layer does not remove it{instead}){offer}")


def _unpicked(d: Mapping[str, Any], kind: str) -> Iterator[tuple[str, str]]:
    """Where a required kind is not picked, and what the message adds: a kind's own value
    (`trinogen.kinds.OWN_VALUE`, the document's own resource groups) is not the platform's."""
    for at in REQUIRED_AT[kind]:
        value = _get(d, at)
        if value in (None, []):  # an empty list (eventListeners) picks nothing
            yield ".".join(at), ""
        elif kind in OWN_VALUE and isinstance(value, MAPS):
            yield ".".join(at), "; the document's own value does not count"


def _get(d: Mapping[str, Any], at: tuple[str, ...]) -> Any:
    value: Any = d
    for key in at:
        if not isinstance(value, MAPS):
            return None
        value = value.get(key)
    return value


def _offer(tenant: Tenant, kind: str, s: Settings) -> str:
    names = tenant.offered(kind, s.options(kind))
    where = f"tenants.{tenant.name}.options.{kind}"
    if not names:
        return f"it may pick no {kind} option: {where} names none"
    return f"{where}: {_listed(names)}"


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind  # an exchange, an opa


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    return shown + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
