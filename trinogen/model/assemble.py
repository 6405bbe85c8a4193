"""The one place a `Cluster` is built: every feature's reader hands in its part, read and checked.

`document._cluster` reads the parts in the order their problems are reported; `build()` only
combines them, so a feature adds one field here and one reader call there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from trinogen.errors import Problem
from trinogen.model.fault_tolerance import FaultTolerance
from trinogen.model.files import AttachedFiles
from trinogen.model.kinds import Parts as KindParts
from trinogen.model.operation import Operation
from trinogen.model.properties import ServerProperties
from trinogen.model.roles import Sizing
from trinogen.model.server_secrets import ServerBinding
from trinogen.model.spooling import SpoolingProtocol, spooling_lines
from trinogen.model.types import (
    AccessControl,
    Authentication,
    Autoscaling,
    Cluster,
    Connector,
    FileSecret,
    Role,
    ServerSecret,
)
from trinogen.model.workload import Workload

if TYPE_CHECKING:  # annotations only: the kind's module loads for a document that picks one
    from trinogen.kinds.authentication.document import AuthParts

Lines = tuple[tuple[str, str], ...]


class Head(NamedTuple):
    """Who the cluster is: what every feature's reader may need."""

    cluster_id: str | None
    owner: str | None
    version: str | None


class Parts(NamedTuple):
    """Every feature's part of one document, as its reader returned it."""

    bind: ServerBinding
    sizing: Sizing
    server: ServerProperties
    found: tuple[Connector, ...] | None
    fault_tolerance: FaultTolerance
    spooling: SpoolingProtocol | None
    files: AttachedFiles
    auth: AuthParts | None
    log: tuple[str | None, Lines]
    access: AccessControl | None
    workload: Workload
    operation: Operation
    destination: tuple[str | None, str | None]
    profile: object


class _AuthAdds(NamedTuple):
    """What no authentication option adds: `AuthParts`' fields, empty."""

    auth: Authentication | None = None
    config: Lines = ()
    coordinator: Lines = ()
    secrets: tuple[ServerSecret, ...] = ()
    file_secrets: tuple[FileSecret, ...] = ()


NO_AUTH = _AuthAdds()  # AuthParts' fields, all empty


class _Required(NamedTuple):
    cluster_id: str
    owner: str
    version: str
    found: tuple[Connector, ...]
    coordinator: Role
    worker: Role


def _required(head: Head, p: Parts) -> _Required | None:
    """The values a Cluster cannot do without (None: a reader reported why one is missing)."""
    cid, owner, version, found = head.cluster_id, head.owner, head.version, p.found
    coordinator, worker = p.sizing.coordinator, p.sizing.worker
    if cid is None or owner is None or version is None or found is None:
        return None
    if coordinator is None or worker is None:
        return None
    return _Required(cid, owner, version, found, coordinator, worker)


def _worker(worker: Role, kinds: KindParts) -> Role:
    """The worker with a kind's worker lines (event listeners that log splits: an optional
    `worker` of a kind's Part) after the document's own."""
    lines = tuple(line for _, part in kinds for line in getattr(part, "worker", ()))
    if not lines:
        return worker
    return replace(worker, extra_properties=(*worker.extra_properties, *lines))


def _scale(sizing: Sizing, op: Operation) -> tuple[int, Autoscaling | None]:
    """Workers and autoscaling: a stopped cluster keeps none of either."""
    if op.stopped:
        return 0, None
    return sizing.workers, sizing.autoscaling


def build(doc_id: str, head: Head, p: Parts, warnings: tuple[Problem, ...]) -> Cluster | None:
    """The Cluster the parts make, or None when a required part is missing."""
    need = _required(head, p)
    if need is None:
        return None
    auth: AuthParts | _AuthAdds = p.auth or NO_AUTH
    workers, autoscaling = _scale(p.sizing, p.operation)
    server, sizing, op, picked = p.server, p.sizing, p.operation, p.workload
    spool = spooling_lines(p.spooling)
    return Cluster(
        cluster_id=need.cluster_id,
        doc_id=doc_id,
        owner=need.owner,
        trino_version=need.version,
        workers=workers,
        coordinator=replace(need.coordinator, extra_properties=(
            *server.coordinator, *need.coordinator.extra_properties, *auth.coordinator,
            *(line for _, part in picked.kinds for line in part.coordinator))),
        worker=_worker(need.worker, picked.kinds),
        max_memory=server.max_memory,
        node_environment=server.node_environment,
        include_coordinator=server.include_coordinator,
        # the option's lines come after the document's own (sorted: the order is the file's)
        config_properties=tuple(sorted((*server.config, *auth.config,
                                        *p.fault_tolerance.config, *spool.config,
                                        *(line for _, part in picked.kinds
                                          for line in part.config)))),
        node_properties=tuple(server.node),
        connectors=need.found,
        autoscaling=autoscaling,
        grace_period_seconds=sizing.grace_period_seconds,
        destination_name=p.destination[0],
        destination_server=p.destination[1],
        profile=p.profile if isinstance(p.profile, str) else None,
        log_level=p.log[0],
        log_properties=p.log[1],
        mounts=p.files.mounts,
        file_secrets=(*p.files.file_secrets, *auth.file_secrets),
        file_config_maps=p.files.config_maps,
        server_secrets=(*p.bind.found, *auth.secrets, *spool.secrets,
                        *(x for _, part in picked.kinds for x in getattr(part, "secrets", ()))),
        spooling_manager=spool.manager,
        authentication=auth.auth,
        access=p.access,
        # HOMED order: placement, then exchange, are the last
        kinds=(*picked.kinds, *op.kinds, *p.fault_tolerance.kinds),
        jmx_exporter=picked.jmx_exporter,
        service_monitor=picked.service_monitor,
        drain_seconds=sizing.drain_seconds,
        stopped=op.stopped,
        warnings=warnings,
    )
