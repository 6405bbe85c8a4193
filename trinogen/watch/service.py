"""Wiring: a Watcher from a Source, a watched collection and a working copy; run it as a service.

The CLI builds the real clients (pymongo through trinogen.source.connect, the working copy, the
Vault factory) and hands them here; tests hand in mongomock, mockupdb and fakes instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings import Settings
from trinogen.watch.claimants import IndexedClaims
from trinogen.watch.feed import ChangeFeed, watched_pipeline
from trinogen.watch.health import HealthServer
from trinogen.watch.lease import Lease, WallClock, utcnow
from trinogen.watch.loop import Watcher
from trinogen.watch.signals import signal_handlers
from trinogen.watch.syncing import pipeline_syncer

log = logging.getLogger("trinogen.watch")


def require_change_streams(settings: Settings) -> None:
    """The embedded mongomock:// database has no change streams: refuse it as a usage error."""
    if settings.mongodb.uri.startswith("mongomock://"):
        raise ConfigError("trinogen watch needs MongoDB change streams (a replica set); the "
                          "embedded mongomock:// database has none: use `trinogen sync`")


def compose(settings: Settings, source: Any, stream_collection: Any, repo: Any, *,
            reader_factory: Callable[[], Any] | None = None, wall: WallClock = utcnow,
            **loop: Any) -> Watcher:
    """A Watcher over `source` (documents, status, state) and the database of
    `stream_collection` (one stream for the cluster and the catalog collections).

    In production both come from one client (`source.collection`); `loop` passes test knobs
    (clock, sleep, poll_seconds, metrics) to the Watcher. One stream on the database rather than
    one per collection: one resume token covers both, saved after each push as before.
    """
    from trinogen.pipeline import require_repo_url

    require_repo_url(settings)
    w, m = settings.watch, settings.mongodb
    lease = Lease(source.state, f"watch:{m.database}.{m.collection}", w.lease_seconds, wall=wall)
    claims = IndexedClaims(source)
    return Watcher(
        w, lease=lease, feed=ChangeFeed(
            stream_collection.database, w.max_await_ms, library=m.catalog_collection,
            pipeline=watched_pipeline([stream_collection.name, m.catalog_collection]),
            probe=stream_collection),
        # The syncs read through the watcher's own index of claimants (issue 22): a batch asks
        # `_id` equality only; the lease and the status go to `source` as before. The index
        # is trusted only for what this replica saw as leader: each election forgets it.
        syncer=pipeline_syncer(settings, claims, repo, reader_factory),
        where=f"{m.database}.{m.collection}", wall=wall,
        stale_after=max(60.0, 2 * w.lease_seconds, settings.git.timeout),
        on_elected=claims.index.forget, **loop,
    )


def health_server(watcher: Watcher) -> HealthServer:
    """The /healthz and /metrics server on watch.health_port / watch.metrics_port."""
    w = watcher.w
    if w.metrics_port is not None and not watcher.metrics.available:
        log.warning("watch.metrics_port is set but prometheus_client is not installed "
                    "(install trinogen[metrics]); /metrics is not served")
    ports = {p for p in (w.health_port, w.metrics_port) if p is not None}
    return HealthServer(ports, watcher.health, watcher.metrics)


def run(settings: Settings, watcher: Watcher) -> int:
    """Serve health and metrics, handle SIGTERM/SIGINT, loop until stopped; the exit code.

    0 on a clean stop; a dependency that stays unavailable raises UnavailableError (exit 4).
    """
    w, m = settings.watch, settings.mongodb
    log.info("watching %s.%s (debounce %.2fs, max batch %d, max wait %.1fs, reconcile every "
             "%.0fs, lease %.0fs, give up after %d failures in a row) as %s", m.database,
             m.collection, w.debounce_seconds, w.max_batch, w.max_wait_seconds,
             w.reconcile_seconds, w.lease_seconds, w.max_reconnects, watcher.lease.owner,
             extra={"watch": "start"})
    with health_server(watcher).serving(), signal_handlers(watcher.request_stop):
        return watcher.run()
