"""One sync as the loop sees it: the pipeline behind a small callable, and its log line."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from trinogen.errors import SafetyRefusal
from trinogen.settings import replace
from trinogen.watch.decision import Work

log = logging.getLogger("trinogen.watch")


@dataclass(frozen=True)
class SyncOutcome:
    """What one sync did."""

    pushed: bool
    commit: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # plan counts: added, updated, ...
    failed: int = 0  # clusters that failed (reported, their files kept)
    stats: dict[str, Any] = field(default_factory=dict)  # the report's stats (cache hits, ...)
    # A rollout waits on Argo CD's health: look again (a full sync) this many seconds from now.
    recheck_seconds: float | None = None


class Syncer(Protocol):
    """Run one sync of `doc_ids` (empty: full); call `before_push` right before pushing.

    Raises TrinogenError subclasses: SafetyRefusal, LeaseLost (from before_push), Interrupted,
    ConfigError, or an UnavailableError.
    """

    def __call__(self, doc_ids: tuple[str, ...], before_push: Callable[[], None]) -> SyncOutcome:
        ...


def pipeline_syncer(settings: Any, source: Any, repo: Any,
                    reader_factory: Callable[[], Any] | None) -> Syncer:
    """The real syncer: `pipeline.sync` with one Renderer (templates compiled once), always
    in this process: `watch` never forks render workers (issue 22). Its threads (the change
    stream, the health server, pymongo's monitors) may hold a lock at the moment of a fork that
    a worker would then wait on forever; a spawned worker would have to be sent the settings,
    the library and the documents. Its full resyncs are mostly cache hits (nothing to render);
    only its first sync of a cold fleet renders everything, on one core."""
    from trinogen import pipeline
    from trinogen.render import Renderer

    settings = replace(settings, sync={"workers": 1})  # the pool never forks
    renderer = Renderer(settings)
    argo = None
    if settings.rollout is not None:  # only a rollout reads Argo CD's view
        from functools import partial

        from trinogen.argocd import argo_view

        argo = partial(argo_view, settings)  # reads nothing until the gate asks

    def sync(doc_ids: tuple[str, ...], before_push: Callable[[], None]) -> SyncOutcome:
        options = pipeline.SyncOptions(doc_ids=doc_ids, before_push=before_push)
        report = pipeline.sync(settings, source, repo, options=options,
                               reader_factory=reader_factory, renderer=renderer, argo_view=argo)
        counts = report.plan.counts() if report.plan else {}
        rolling = report.rollout is not None and report.rollout["state"] == "rolling"
        return SyncOutcome(bool(report.pushed), report.commit, dict(counts), len(report.failed),
                           dict(report.stats),
                           settings.rollout.check_seconds if rolling else None)

    return sync


def describe(work: Work, outcome: SyncOutcome, pushed_at: datetime,
             seconds: float, done: float) -> tuple[str, dict[str, Any], float | None]:
    """The log message and structured fields of a finished sync, and its event-to-push lag."""
    extra: dict[str, Any] = {
        "watch": "sync", "kind": work.kind, "reason": work.reason, "commit": outcome.commit,
        "pushed": outcome.pushed, "syncSeconds": round(seconds, 3),
        "failedClusters": outcome.failed,
        **{f"clusters{k.capitalize()}": v for k, v in outcome.counts.items()},
    }
    b = work.batch
    result = (f"commit {outcome.commit[:12]} pushed" if outcome.pushed and outcome.commit
              else "nothing to commit")
    if b is None:
        return f"full sync ({work.reason}): {result} in {seconds:.3f}s", extra, None
    local = done - b.started
    extra.update({"documents": len(work.doc_ids), "catalogs": len(b.catalog_ids),
                  "events": b.events, "operations": dict(b.operations),
                  "receiveToPushSeconds": round(local, 3)})
    # A batch with a shared-catalog change runs as a full sync (Work.doc_ids): say so.
    what = (f"{len(b.doc_ids)} document(s)" if work.kind == "batch"
            else f"full sync ({work.reason})")
    what += f" from {b.events} event(s): {result} in {seconds:.3f}s"
    if b.oldest_event_at is None:
        return what, extra, None
    lag = (pushed_at - b.oldest_event_at).total_seconds()
    extra["eventToPushSeconds"] = round(lag, 3)
    if b.newest_event_at is not None:
        extra["newestEventToPushSeconds"] = round(
            (pushed_at - b.newest_event_at).total_seconds(), 3)
    return f"{what}; event-to-push {lag:.3f}s (receive-to-push {local:.3f}s)", extra, lag


def log_stats(outcome: SyncOutcome) -> None:
    """What a sync cost (documents read, cache hits, clusters rendered), at DEBUG (issue 22)."""
    if outcome.stats:
        log.debug("sync stats: %s", " ".join(f"{k}={v}" for k, v in outcome.stats.items()),
                  extra={"watch": "stats", "stats": outcome.stats})


def set_aside(e: Exception, *, hint: bool = False) -> str:
    """What happened to a sync the loop does not retry: a guard refused it, or a bug failed it
    (then the log line carries its traceback); with `hint`, what happens next and what to do."""
    if isinstance(e, SafetyRefusal):
        what = f"was refused: {e}"
        todo = "fix the documents, or run `trinogen sync --allow-mass-prune` if the prune is wanted"
    else:
        what = f"failed on an internal error (a bug: {type(e).__name__}: {str(e)[:300]})"
        todo = "please report it with the traceback"
    if not hint:
        return what
    return (f"{what}; it is not retried: its clusters keep their files in git and the watch goes "
            "on (health: degraded until a full sync succeeds, every watch.reconcile_seconds); "
            f"{todo}")
