"""The one decision of the loop (pure): sync now (what, and why), or read the next event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trinogen.settings import WatchSettings
from trinogen.watch.batching import Batch
from trinogen.watch.position import StreamPosition

Kind = Literal["batch", "full"]


@dataclass
class Work:
    """A sync to run (and retry while it fails); `position` is saved after its push."""

    kind: Kind
    reason: str
    position: StreamPosition | None
    batch: Batch | None = None
    attempts: int = 0

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The documents to sync; none (a full sync) when a shared catalog changed: its users
        are every cluster that references it, which only a full read can tell."""
        if self.batch is None or self.batch.catalog_ids:
            return ()
        return tuple(sorted(self.batch.doc_ids))

    @property
    def what(self) -> str:
        """The sync as a log line names it."""
        if self.kind == "batch":
            return f"the batch of {len(self.doc_ids)} document(s)"
        return f"a full sync ({self.reason})"


def batch_work(batch: Batch | None, reason: str, position: StreamPosition | None) -> Work:
    """The sync of a due batch: a full one when a shared catalog changed (see `doc_ids`), and
    then counted, logged and scheduled as one (its success pushes back the next reconcile and
    resolves a refusal)."""
    if batch is not None and batch.catalog_ids:
        return Work("full", f"shared catalog changed ({reason})", position, batch)
    return Work("batch", reason, position, batch)


@dataclass(frozen=True)
class Sync:
    """Run a sync: a retry of `pending`, or a new one of `kind` for `reason`."""

    kind: Kind
    reason: str
    retry: bool = False


READ = None  # nothing to sync: read the next event


def decide(now: float, w: WatchSettings, *, pending: Work | None, need_full: bool,
           batch: Batch | None, next_reconcile: float) -> Sync | None:
    """What the leader does next, with its stream open.

    In order: a failed sync is retried before anything else (its position must be saved
    first); a stream opened without a usable position needs a full sync; a due batch is synced;
    an idle leader reconciles every `reconcile_seconds`; otherwise it reads on.
    """
    if pending is not None:
        return Sync(pending.kind, pending.reason, retry=True)
    if need_full:
        return Sync("full", "no usable resume token")
    if batch is not None:
        reason = batch.due(now, w)
        return Sync("batch", reason) if reason else READ
    if now >= next_reconcile:
        return Sync("full", "periodic reconcile")
    return READ
