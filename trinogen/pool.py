"""A small pool of forked worker processes for the pure, per-cluster part of a sync (issue 22).

Classify, render and self-check cost 60-65% of a full sync's instructions, all per cluster and
pure, on one core while the other idled (docs/benchmarks-stages.md). `ForkPool` hands that work
to `sync.workers` forked processes, in chunks, and gives the results back in the order of the
items, so nothing downstream can tell the difference (tests/test_pool.py).

Forked, not spawned: the workers inherit the imported code, the settings and the documents, so
neither the work nor its input is pickled; only the results travel back. The pool lives for one
call (a long-running `watch` keeps no processes between syncs) and starts only for at least
`sync.parallel_min_clusters` items, so a no-op or one-change sync never forks. Anything that goes
wrong in the pool (a worker killed, a result that does not pickle) is logged in one line and
answered with None: the caller then does the work itself, serially, and loses nothing.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_AUTO_WORKERS = 4  # `sync.workers: 0`: one per usable CPU, at most this many
CHUNK = 250  # items per task: few enough round trips, small enough to keep both cores busy

# The job of the current fan-out, set before the workers fork (they read it from here; the
# pool is used by one call at a time: `ForkPool.__call__` is not re-entrant).
_job: tuple[Callable[[Sequence[Any]], list[Any]], Sequence[Any]] | None = None


CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"


def usable_cpus(cpu_max: str = CPU_MAX) -> int:
    """The CPUs this process may use: its affinity, and in a container its CPU limit (a pod
    limited to one CPU on a large node gets one, not one per node CPU)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    try:
        with open(cpu_max, encoding="ascii") as f:
            limit = quota_cpus(f.read())
    except OSError:
        limit = None
    return min(cpus, limit) if limit is not None else cpus


def quota_cpus(text: str) -> int | None:
    """CPUs a cgroup v2 `cpu.max` grants, rounded up (None: no limit or unreadable)."""
    parts = text.split()
    if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit() or parts[1] == "0":
        return None
    return max(1, -(-int(parts[0]) // int(parts[1])))


def worker_count(setting: int, cpus: int) -> int:
    """`sync.workers` as a number of processes: 0 picks one per CPU, at most MAX_AUTO_WORKERS."""
    return setting if setting > 0 else max(1, min(cpus, MAX_AUTO_WORKERS))


def _run(start: int, end: int) -> list[Any]:
    """In a worker: the job's work over items[start:end]."""
    assert _job is not None, "a worker runs only inside ForkPool.__call__"
    work, items = _job
    return work(items[start:end])


@dataclass(frozen=True)
class ForkPool:
    """A `ports.FanOut` over `workers` forked processes, for `min_items` items or more."""

    workers: int
    min_items: int
    chunk: int = CHUNK

    def wants(self, count: int) -> bool:
        return self.workers >= 2 and count >= max(self.min_items, 2)

    def __call__(self, work: Callable[[Sequence[Any]], list[Any]],
                 items: Sequence[Any]) -> list[Any] | None:
        if not self.wants(len(items)):
            return None  # before any import: a small sync pays nothing for the pool
        import multiprocessing

        if "fork" not in multiprocessing.get_all_start_methods():
            return None  # not on this platform: serial
        global _job
        _job = (work, items)
        # What the workers inherit is never collected there: a collection in a child would
        # walk (and so copy, page by page) the whole inherited heap.
        gc.freeze()
        try:
            return self._fan_out(len(items))
        except Exception as e:  # noqa: BLE001 - any failure of the pool: the caller works serially
            # The type only: a message could quote a document's content.
            log.warning("parallel render failed (%s); rendering serially", type(e).__name__)
            return None
        finally:
            gc.unfreeze()
            _job = None

    def _fan_out(self, total: int) -> list[Any]:
        # Never more workers than chunks; chunks small enough that each worker gets several.
        size = max(1, min(self.chunk, -(-total // (self.workers * 2))))
        bounds = [(s, min(s + size, total)) for s in range(0, total, size)]
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(self.workers, len(bounds)),
                                 mp_context=context) as pool:
            futures = [pool.submit(_run, start, end) for start, end in bounds]
            results: list[Any] = []
            try:
                for (start, end), future in zip(bounds, futures, strict=True):
                    part = future.result()
                    if len(part) != end - start:
                        raise ValueError(f"{end - start} items gave {len(part)} results")
                    results.extend(part)
            except BaseException:
                pool.shutdown(cancel_futures=True)  # the caller redoes it all: stop early
                raise
        log.debug("fanned out %d items in %d chunks over %d workers", total, len(bounds),
                  min(self.workers, len(bounds)))
        return results


def from_settings(workers: int, min_items: int) -> ForkPool:
    """The pool `sync.workers` and `sync.parallel_min_clusters` ask for on this machine."""
    return ForkPool(worker_count(workers, usable_cpus()), min_items)
