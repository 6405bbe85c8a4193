"""Batching (pure): collect changed documents until the batch is due."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from trinogen.settings import WatchSettings


@dataclass
class Batch:
    """Documents changed since the last sync, and when their events happened."""

    started: float  # monotonic time of the first event
    last: float  # monotonic time of the latest event
    doc_ids: set[str] = field(default_factory=set)
    # Changed documents of the catalog library: their users are found by a full sync (a delete
    # event names only the _id, and a profile may reference a catalog too).
    catalog_ids: set[str] = field(default_factory=set)
    events: int = 0
    operations: Counter[str] = field(default_factory=Counter)
    oldest_event_at: datetime | None = None  # server time of the first event
    newest_event_at: datetime | None = None

    def add(self, doc_id: str, operation: str, now: float, event_at: datetime | None, *,
            library: bool = False) -> None:
        (self.catalog_ids if library else self.doc_ids).add(doc_id)
        self.events += 1
        self.operations[operation] += 1
        self.last = now
        if event_at is None:
            return
        if self.oldest_event_at is None or event_at < self.oldest_event_at:
            self.oldest_event_at = event_at
        if self.newest_event_at is None or event_at > self.newest_event_at:
            self.newest_event_at = event_at

    def due(self, now: float, w: WatchSettings) -> str | None:
        """Why the batch should be synced now, or None to keep collecting."""
        if len(self.doc_ids) + len(self.catalog_ids) >= w.max_batch:
            return "max_batch"
        if now - self.started >= w.max_wait_seconds:
            return "max_wait"
        if now - self.last >= w.debounce_seconds:
            return "quiet"
        return None
