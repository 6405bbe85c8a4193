"""Watch metrics: counters kept always (for logs, health and tests), exported through
prometheus_client when it is installed (the `metrics` extra)."""

from __future__ import annotations

from collections import Counter, deque
from typing import Any

LAG_BUCKETS = (0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600)


class _Prometheus:
    """The exported series; built only when prometheus_client imports."""

    def __init__(self, prom: Any) -> None:
        self.prom = prom
        r = self.registry = prom.CollectorRegistry()
        self.events = prom.Counter("trinogen_watch_events", "Change events received",
                                   ["operation"], registry=r)
        self.batches = prom.Counter("trinogen_watch_batches", "Batches of events synced",
                                    registry=r)
        self.syncs = prom.Counter("trinogen_watch_syncs", "Syncs run by the watcher",
                                  ["kind", "result"], registry=r)
        self.failures = prom.Counter("trinogen_watch_failures", "Failures, by stage",
                                     ["stage"], registry=r)
        self.reconnects = prom.Counter("trinogen_watch_reconnects",
                                       "Change stream reconnects beyond pymongo's own resume",
                                       registry=r)
        self.lag = prom.Histogram("trinogen_watch_event_to_push_seconds",
                                  "From a batch's oldest change event (server time) to its push",
                                  buckets=LAG_BUCKETS, registry=r)
        self.leader = prom.Gauge("trinogen_watch_leader", "1 while this replica holds the lease",
                                 registry=r)
        self.last_push = prom.Gauge("trinogen_watch_last_push_timestamp_seconds",
                                    "Unix time of the last push", registry=r)
        self.failing = prom.Gauge("trinogen_watch_failures_in_a_row",
                                  "Failures in a row, by stage (lease, stream, sync); the "
                                  "watcher exits 4 beyond watch.max_reconnects",
                                  ["stage"], registry=r)
        self.refused = prom.Counter("trinogen_watch_refused",
                                    "Syncs refused by a prune guard (not retried)", ["kind"],
                                    registry=r)
        self.degraded = prom.Gauge("trinogen_watch_degraded",
                                   "1 while a refused sync awaits a successful full sync",
                                   registry=r)


class Metrics:
    """The watcher's counters; `counts` is the always-present, in-process view."""

    def __init__(self, enabled: bool = True) -> None:
        self.counts: Counter[str] = Counter()
        # The most recent event-to-push lags; bounded, since a watcher runs for weeks.
        self.lags: deque[float] = deque(maxlen=1024)
        self._p: _Prometheus | None = None
        if enabled:
            try:
                import prometheus_client
            except ImportError:
                return
            self._p = _Prometheus(prometheus_client)

    @property
    def available(self) -> bool:
        return self._p is not None

    def event(self, operation: str) -> None:
        self.counts["events"] += 1
        if self._p:
            self._p.events.labels(operation).inc()

    def batch(self) -> None:
        self.counts["batches"] += 1
        if self._p:
            self._p.batches.inc()

    def sync(self, kind: str, result: str) -> None:
        """One sync ended: pushed, unchanged, failed, refused or abandoned."""
        self.counts["syncs"] += 1
        self.counts[f"syncs_{kind}_{result}"] += 1
        if result == "pushed":
            self.counts["commits"] += 1
        if self._p:
            self._p.syncs.labels(kind, result).inc()
            if result == "pushed":
                self._p.last_push.set_to_current_time()

    def failure(self, stage: str) -> None:
        self.counts["failures"] += 1
        self.counts[f"failures_{stage}"] += 1
        if self._p:
            self._p.failures.labels(stage).inc()

    def failing(self, stage: str, in_a_row: int) -> None:
        if self._p:
            self._p.failing.labels(stage).set(in_a_row)

    def reconnect(self) -> None:
        self.counts["reconnects"] += 1
        if self._p:
            self._p.reconnects.inc()

    def refused(self, kind: str) -> None:
        self.counts["refused"] += 1
        if self._p:
            self._p.refused.labels(kind).inc()

    def degraded(self, on: bool) -> None:
        if self._p:
            self._p.degraded.set(1 if on else 0)

    def lag(self, seconds: float) -> None:
        self.lags.append(seconds)
        if self._p:
            self._p.lag.observe(max(0.0, seconds))

    def leader(self, held: bool) -> None:
        if self._p:
            self._p.leader.set(1 if held else 0)

    def exposition(self) -> tuple[bytes, str] | None:
        if self._p is None:
            return None
        return self._p.prom.generate_latest(self._p.registry), self._p.prom.CONTENT_TYPE_LATEST
