"""Quotas per tenant: what a tenant's clusters use, and which changed clusters still fit.

A cluster's usage is read from its Helm values, the file Argo CD deploys (what the repository
holds, or what this run rendered), so the old and the new side of a change are measured alike:
1 cluster; workers at the largest size (the autoscaling maximum, else `server.workers`; a
stopped cluster has 0); CPU and memory requests of the coordinator plus each worker's times the
workers. A role without a request for a resource is charged its limit (Kubernetes' default).

Changes are admitted one by one in a fixed order: clusters the repository already holds first,
by clusterId, then new ones by document `_id` (an ObjectId's order is its creation time: the
first one created wins). A change is refused only for a quota whose usage it increases past the
limit; what it does not increase is never held against it (a platform that lowers a quota below
today's usage still lets its tenants shrink, stop, or edit catalogs). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from trinogen.errors import Problem
from trinogen.settings.quantity import quantity_value

if TYPE_CHECKING:
    from trinogen.settings.tenants import Quotas

OWNER_LABEL = "trinogen.io/owner"
ROLES = ("coordinator", "worker")
DIMENSIONS = ("clusters", "workers", "cpu", "memory")
_ZERO = Decimal(0)


@dataclass(frozen=True)
class Usage:
    clusters: int = 0
    workers: int = 0
    cpu: Decimal = _ZERO  # cores
    memory: Decimal = _ZERO  # bytes

    def __add__(self, o: Usage) -> Usage:
        return Usage(self.clusters + o.clusters, self.workers + o.workers, self.cpu + o.cpu,
                     self.memory + o.memory)

    def __sub__(self, o: Usage) -> Usage:
        return Usage(self.clusters - o.clusters, self.workers - o.workers, self.cpu - o.cpu,
                     self.memory - o.memory)


NONE = Usage()


@dataclass(frozen=True)
class Measured:
    """One cluster as its values say: its owner, its usage, and the requests it does not set."""

    owner: str | None
    usage: Usage
    unrequested: tuple[str, ...] = ()  # "worker.cpu": neither a request nor a limit


def measure(values: Any) -> Measured:
    """The usage of a cluster from its parsed values.yaml (malformed parts count as 0)."""
    doc = values if isinstance(values, Mapping) else {}
    server = _mapping(doc.get("server"))
    workers = _workers(server)
    usage, unrequested = Usage(clusters=1, workers=workers), []
    for role in ROLES:
        part = _mapping(doc.get(role))
        res = _mapping(part.get("resources"))
        requests, limits = _mapping(res.get("requests")), _mapping(res.get("limits"))
        pods = 1 if role == "coordinator" else workers
        amounts = {}
        for name in ("cpu", "memory"):
            amount = _quantity(requests.get(name, limits.get(name)))
            if amount is None:
                unrequested.append(f"{role}.{name}")
            amounts[name] = (amount or _ZERO) * pods
        usage += Usage(cpu=amounts["cpu"], memory=amounts["memory"])
    labels = _mapping(_mapping(doc.get("coordinator")).get("labels"))
    owner = labels.get(OWNER_LABEL)
    return Measured(owner if isinstance(owner, str) else None, usage, tuple(unrequested))


def _workers(server: Mapping[str, Any]) -> int:
    hpa, keda = _mapping(server.get("autoscaling")), _mapping(server.get("keda"))
    if hpa.get("enabled") is True:
        return _count(hpa.get("maxReplicas"))
    if keda.get("enabled") is True:
        return _count(keda.get("maxReplicaCount"))
    return _count(server.get("workers"))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _quantity(value: Any) -> Decimal | None:
    if type(value) in (int, float):
        value = str(value)
    return quantity_value(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class Change:
    """A cluster whose files this run would change: what it would use, and what it replaces."""

    cluster_id: str
    doc_id: str
    new: Measured
    old: Usage = NONE  # what the repository holds for it (NONE: a new cluster)
    old_owner: str | None = None
    held: bool = False  # the repository holds the cluster: admitted before new ones

    @property
    def owner(self) -> str | None:
        return self.new.owner


def order(changes: Iterable[Change]) -> list[Change]:
    """Held clusters by clusterId, then new ones by document _id."""
    return sorted(changes, key=lambda c: (not c.held, c.cluster_id if c.held else c.doc_id,
                                          c.cluster_id))


def admit(
    limits: Mapping[str, Quotas], base: Mapping[str, Usage], changes: Iterable[Change]
) -> dict[str, tuple[Problem, ...]]:
    """The refused changes (clusterId -> problems); `base` is each owner's usage as the
    repository holds it after this run's prunes, each change's old usage included."""
    totals = dict(base)
    refused: dict[str, tuple[Problem, ...]] = {}
    for ch in order(changes):
        problems = _step(limits, totals, ch)
        if problems:
            refused[ch.cluster_id] = problems
    return refused


def _step(limits: Mapping[str, Quotas], totals: dict[str, Usage], ch: Change
          ) -> tuple[Problem, ...]:
    """Judge one change against its owner's totals; an admitted one updates them."""
    owner = ch.owner or ""
    before = totals.get(owner, NONE)
    after = before - (ch.old if ch.old_owner == ch.owner else NONE) + ch.new.usage
    quotas = limits.get(owner)
    problems = tuple(_over(ch, owner, quotas, before, after)) if quotas is not None else ()
    if not problems:
        totals[owner] = after
        if ch.old_owner is not None and ch.old_owner != ch.owner:
            totals[ch.old_owner] = totals.get(ch.old_owner, NONE) - ch.old
    return problems


def _over(ch: Change, owner: str, q: Quotas, before: Usage, after: Usage) -> list[Problem]:
    problems = [_unrequested(ch.cluster_id, owner, name) for name in ch.new.unrequested
                if getattr(q, name.split(".")[1]) is not None]
    for dim in DIMENSIONS:
        limit = getattr(q, dim)
        now, then = getattr(before, dim), getattr(after, dim)
        if limit is not None and then > now and then > limit:
            problems.append(Problem(
                ch.cluster_id, f"tenants.{owner}.quotas.{dim}",
                f"tenant {owner} is at {_show(dim, now)} of its {dim} quota {_limit(q, dim)}; "
                f"this {'change' if ch.held else 'cluster'} would bring it to {_show(dim, then)}"))
    return problems


def _unrequested(cluster_id: str, owner: str, name: str) -> Problem:
    role, resource = name.split(".")
    return Problem(cluster_id, f"tenants.{owner}.quotas.{resource}",
                   f"the {role} sets no {resource} request (nor a limit), and tenant {owner}'s "
                   f"{resource} quota counts every pod's requests: set "
                   f"clusterConfig.{role}.resources.requests.{resource}")


def _limit(q: Quotas, dim: str) -> str:
    text = {"cpu": q.cpu_text, "memory": q.memory_text}.get(dim)
    return text if text is not None else _show(dim, getattr(q, dim))


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20),
           ("Ki", 2**10))


def _show(dim: str, value: Any) -> str:
    """A usage as a person reads it: counts, cores, memory in the largest exact binary unit."""
    if dim == "memory":
        for unit, size in _BINARY:
            if value and value % size == 0:
                return f"{value // size}{unit}"
        return f"{value.normalize():f} bytes" if isinstance(value, Decimal) else f"{value} bytes"
    if isinstance(value, Decimal):
        return f"{value.normalize():f}"
    return str(value)
