"""Which server properties Trino binds on the coordinator only, derived from trino-main's bytecode.

Trino's server installs ``CoordinatorModule`` on a coordinator and ``WorkerModule`` on a worker
(from ``ServerMainModule``). A Guice module installs others by naming them (``new X()``,
``conditionalModule(..., new X())``), so the modules a role installs are those reachable by class
references from its module. The rule:

- coordinator side: io.trino classes reachable from ``CoordinatorModule``;
- shared side: io.trino classes reachable from the server's entry points (``Server``,
  ``ServerMainModule`` and every other class of trino-main) without passing through
  ``CoordinatorModule`` or ``WorkerModule``;
- a binding (``bindConfig``, ``bindHttpClient``, also prefixed) is coordinator-only when every
  class that makes it is on the coordinator side and none is on the shared side;
- a property is coordinator-only when every binding that gives it is.

It errs towards "both roles": a class reference that is not an install only widens the shared
side, which can miss a coordinator-only property but never marks a shared one as
coordinator-only. The real-Trino cross-check (crosscheck.py) compares the result with the
properties a coordinator and a worker actually log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tools.trino_registry.scan import UnitFacts

if TYPE_CHECKING:
    from tools.trino_registry.build import PropertySet

COORDINATOR = "io/trino/server/CoordinatorModule"
WORKER = "io/trino/server/WorkerModule"
ROOTS = ("io/trino/server/Server", "io/trino/server/ServerMainModule", "io/trino/server/TrinoServer")


def _reachable(graph: dict[str, frozenset[str]], starts: Iterable[str],
               stop: frozenset[str]) -> set[str]:
    seen: set[str] = set()
    todo = [s for s in starts if s in graph and s not in stop]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(r for r in graph.get(name, ()) if r in graph and r not in seen and r not in stop)
    return seen


def _family(graph: dict[str, frozenset[str]], module: str) -> set[str]:
    """A class and its nested and synthetic classes (lambdas live in the class itself)."""
    return {name for name in graph if name == module or name.startswith(module + "$")}


def coordinator_only(facts: UnitFacts, server: PropertySet) -> list[str]:
    graph = {name: refs for name, (_super, refs) in facts.server_classes.items()}
    if COORDINATOR not in graph:
        return []
    role_modules = frozenset(_family(graph, COORDINATOR) | _family(graph, WORKER))
    coordinator = _reachable(graph, _family(graph, COORDINATOR), frozenset(_family(graph, WORKER)))
    roots = [n for root in ROOTS for n in _family(graph, root)]
    shared = _reachable(graph, roots, role_modules)

    names_by_binding: dict[tuple[str | None, str], set[str]] = {}
    for config_class, prefix in facts.binding_sites:
        config = facts.configs.get(config_class) if config_class else None
        if config is None:
            continue
        names = config.names | set(config.legacy)
        names_by_binding[config_class, prefix] = {f"{prefix}.{n}" if prefix else n for n in names}

    only: set[str] = set()
    anywhere_else: set[str] = set()
    for key, names in names_by_binding.items():
        sites = facts.binding_sites[key]
        if sites <= coordinator and not sites & shared:
            only |= names
        else:
            anywhere_else |= names
    # A config class never seen in a bindConfig call (bound by a helper the scan does not follow)
    # counts as shared.
    bound = {c for c, _ in facts.binding_sites}
    for name, config in facts.configs.items():
        if name not in bound:
            anywhere_else |= config.names | set(config.legacy)
    return sorted(n for n in only - anywhere_else if n in server.known or n in server.legacy)
