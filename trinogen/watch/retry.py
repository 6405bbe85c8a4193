"""Retrying (pure): back-off delays, and failures in a row per stage of the loop."""

from __future__ import annotations

from collections import Counter

from trinogen.errors import SourceUnavailable, UnavailableError

# Per stage: what failed, the error raised on giving up (exit 4), and what to check.
GIVE_UP: dict[str, tuple[str, type[UnavailableError], str]] = {
    "lease": ("the watch lease", SourceUnavailable, "check MongoDB"),
    "stream": ("the change stream", SourceUnavailable,
               "check MongoDB (a replica set is needed for change streams)"),
    "sync": ("the sync", UnavailableError, "check the dependency named above"),
}


def backoff(attempt: int, cap: float) -> float:
    """0.5 s, 1 s, 2 s, ... up to `cap` (attempt counts from 1)."""
    # The exponent is bounded: 2 ** n for a large n does not fit a float (OverflowError).
    return float(min(cap, 0.5 * 2.0 ** min(max(0, attempt - 1), 64)))


class Failures:
    """How many times in a row each stage (lease, stream, sync) failed; a success resets it.

    Beyond `limit` failures in a row (watch.max_reconnects) the watcher gives up: a dependency
    that stays unavailable must end the process (exit 4), not be retried out of sight.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._in_a_row: Counter[str] = Counter()

    def record(self, stage: str) -> int:
        self._in_a_row[stage] += 1
        return self._in_a_row[stage]

    def clear(self, stage: str) -> None:
        self._in_a_row.pop(stage, None)

    def exhausted(self, stage: str) -> bool:
        return self._in_a_row[stage] > self.limit

    def snapshot(self) -> dict[str, int]:
        return {stage: n for stage, n in self._in_a_row.items() if n > 0}
