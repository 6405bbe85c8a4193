"""How a cluster is operated: where its pods run, whether it runs, its shutdown budget.

A document picks a placement per role (`clusterConfig.<role>.placement`, the `placement` kind:
trinogen/kinds/placement/) by name from the settings, and may stop its compute (`stopped:
true`); its disruption option is a kind of its own (trinogen/kinds/disruption/). The options are
checked when the settings are loaded; here only the choice is checked, against what the chart
can do for each role, and the two picks are filled as the `placement` kind's value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from trinogen.kinds import ROLES
from trinogen.model import kinds
from trinogen.model.checker import MAPS, Checker, show
from trinogen.model.shutdown import MAX_POLICY_PERIOD_SECONDS, termination_grace
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.placement.options import Placement


class Operation(NamedTuple):
    kinds: kinds.Parts = ()  # the `placement` kind's value, when a role picked one
    stopped: bool = False


def operation(d: Mapping[str, Any], settings: Settings, c: Checker, *, autoscaled: bool,
              grace: int | None, drain: int | None, cluster_id: str | None
              ) -> Operation:
    """The document's placement and stopped choices (problems reported on `c`)."""
    cc = d.get("clusterConfig")
    chosen: list[tuple[str, Placement | None]] = []
    for role in ROLES:
        raw = cc.get(role) if isinstance(cc, MAPS) else None
        value = raw.get("placement") if isinstance(raw, MAPS) else None
        chosen.append((role, _placement(value, role, settings, c)))
    stopped = c.boolean(d.get("stopped"), "stopped", required=False) is True
    if grace is not None and drain is not None:
        budget = termination_grace(grace, drain)
        _check_budget(budget, grace, drain, settings.validation.max_shutdown_seconds, c)
        if autoscaled:
            _check_scale_in(budget, c)
    picked = (("placement", tuple(chosen)),) if any(p for _, p in chosen) else ()
    # the owner does not matter to a placement (nothing in it is filled in)
    parts = kinds.fill(picked, cluster_id, "", d, settings, c) if cluster_id else ()
    return Operation(parts, stopped)


def _placement(value: Any, role: str, settings: Settings, c: Checker) -> Placement | None:
    if value is None:
        return None  # nothing picked (option_of reports nothing for it either)
    path = f"clusterConfig.{role}.placement"
    picked: Placement | None = kinds.option_of("placement", value, settings, c, role=role)
    if picked is not None and role == "coordinator" and picked.topology_spread:
        # The chart writes topologySpreadConstraints for workers only (deployment-worker.yaml);
        # for the coordinator Helm would drop them without a word.
        c.error(path, f"{show(value)} sets topologySpreadConstraints, which the Trino chart applies "
                "to workers only (a single coordinator has nothing to spread); pick a placement "
                "without them for the coordinator")
        return None
    return picked


def _check_budget(budget: int, grace: int, drain: int, cap: int, c: Checker) -> None:
    """A budget above the settings' cap fails, on the field that weighs most in it."""
    if budget <= cap:
        return
    field = "drainSeconds" if drain > 2 * grace else "gracePeriodSeconds"
    c.error(f"clusterConfig.worker.gracefulShutdown.{field}",
            f"gives a worker a shutdown budget of {budget} s (2 x gracePeriodSeconds {grace} + "
            f"drainSeconds {drain} + {budget - 2 * grace - drain} s), above "
            f"validation.max_shutdown_seconds ({cap} s): a node drain would wait that long for "
            "each worker; shorten it, or ask the platform to raise the setting")


def _check_scale_in(budget: int, c: Checker) -> None:
    if budget > MAX_POLICY_PERIOD_SECONDS:
        c.warn("clusterConfig.worker.gracefulShutdown",
               f"a worker's shutdown budget is {budget} s, longer than the longest scale-down "
               f"period an HPA accepts ({MAX_POLICY_PERIOD_SECONDS} s): scale-in may drain two "
               "workers at once")
