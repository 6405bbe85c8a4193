"""A small pool of forked processes for the pure, per-cluster part of a sync (issue 22).

Classify, render and self-check cost 60-65% of a full sync's instructions, all per cluster and
pure (docs/benchmarks-stages.md). `ForkPool` shares that work between this process and
`sync.workers - 1` forked ones, in chunks, and gives the results back in the order of the
items, so nothing downstream can tell the difference (tests/test_pool.py).

Forked, not spawned: the workers inherit the imported code, the settings and the items, so
neither the work nor its input is pickled; only a forked worker's results travel back, over a
pipe. This process works too (from the last chunk down, the workers from the first chunk up):
its own share is never pickled, and `sync.workers: 2` forks one process, not two beside a
parent that only waits and unpickles (measured at 10,000 documents: the same wall time as that
design, about 3% less CPU, 12 MiB less peak memory; the gain left on the table is the ~25% the
parallel work costs over the serial one: pickling the results back, copy-on-write faults after
the fork). The pool lives for one call (nothing is kept between syncs) and starts only for at
least `sync.parallel_min_clusters` items, so a no-op or one-change sync never forks.

No cluster is ever lost: a chunk a worker did not deliver (it died, raised, sent what does not
pickle, or took longer than `sync.worker_timeout_seconds` for one chunk and was killed) is
computed here afterwards, and a warning says so in one line (never a message that could quote
a document). A result is taken only whole: a worker's chunk arrives in one message or not at all.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from trinogen.ports import Landed

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

log = logging.getLogger(__name__)

MAX_AUTO_WORKERS = 4  # `sync.workers: 0`: one per usable CPU, at most this many
CHUNK = 100  # items per chunk: small enough that the last chunks keep every process busy
TIMEOUT = 60.0  # `sync.worker_timeout_seconds`: a chunk normally takes a tenth of a second
LOCK_WAIT = 5.0  # seconds this process waits for the chunk counter (a worker killed holding it)

PIPE_MAX = 4 * 1024 * 1024  # bytes: the most of a worker's results a pipe holds unread

CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"

Work = Callable[[Sequence[Any]], list[Any]]


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


@dataclass(frozen=True)
class ForkPool:
    """A `ports.FanOut` over `workers` processes (this one and `workers - 1` forked), for
    `min_items` items or more; a worker silent for `timeout` seconds is killed."""

    workers: int
    min_items: int
    chunk: int = CHUNK
    timeout: float = TIMEOUT

    def wants(self, count: int) -> bool:
        return self.workers >= 2 and count >= max(self.min_items, 2)

    def __call__(self, work: Work, items: Sequence[Any],
                 landed: Landed | None = None) -> list[Any] | None:
        if not self.wants(len(items)) or not hasattr(os, "fork"):
            return None  # a small sync, or no fork on this platform: serial
        # What the workers inherit is never collected there: a collection in a child would
        # walk (and so copy, page by page) the whole inherited heap. And no collection at all
        # while the work runs, here or there: classify and render make next to no cyclic
        # garbage (peak memory unchanged at 10,000 documents, valid or all refused), while
        # collecting cost 12-13% of their CPU time, most of it walking the results as they
        # accumulate. The workers end with the call; here collections resume after it.
        enabled = gc.isenabled()
        gc.disable()
        gc.freeze()
        try:
            return _Run(work, items, self, landed).results()
        except Exception as e:  # noqa: BLE001 - any failure of the pool: the caller works serially
            # The type only: a message could quote a document's content.
            log.warning("parallel render failed (%s); rendering serially", type(e).__name__)
            return None
        finally:
            gc.unfreeze()
            if enabled:
                gc.enable()


class _Run:
    """One fan-out: the chunks, the forked workers, and what each chunk gave."""

    def __init__(self, work: Work, items: Sequence[Any], pool: ForkPool,
                 landed: Landed | None = None) -> None:
        import multiprocessing

        size = max(1, min(pool.chunk, -(-len(items) // (pool.workers * 4))))
        self.work, self.items, self.timeout, self.landed = work, items, pool.timeout, landed
        self.forked = pool.workers - 1  # this process is the first worker
        self.bounds = [(s, min(s + size, len(items))) for s in range(0, len(items), size)]
        # [next chunk from the front, one past the last chunk not taken], in shared memory
        self.next = multiprocessing.get_context("fork").Array("l", [0, len(self.bounds)])
        self.got: dict[int, list[Any]] = {}
        self.children: dict[Connection, int] = {}  # the read end of a worker's pipe -> its pid
        self.seen: dict[Connection, float] = {}  # a worker still sending -> when it last sent
        self.lost = 0  # workers that died, failed or were killed before their last chunk

    def results(self) -> list[Any]:
        own, waited = 0, 0.0
        try:
            self._fork(min(self.forked, len(self.bounds) - 1))
            self.seen = dict.fromkeys(self.children, time.monotonic())
            while (i := self._take(last=True)) is not None:  # this process's share
                self._got(i, self._chunk(i))
                own += 1
                self._collect(until_done=False)  # what arrived meanwhile: the pipes drained
            waited = time.monotonic()
            self._collect(until_done=True)
            waited = time.monotonic() - waited
        finally:
            self._end()
        missing = [i for i in range(len(self.bounds)) if i not in self.got]
        if missing or self.lost:
            log.warning("%d of %d workers lost; %d of %d chunks computed here instead",
                        self.lost, len(self.children), len(missing), len(self.bounds))
        for i in missing:
            self._got(i, self._chunk(i))
        log.debug("fanned out %d items in %d chunks over %d processes (%d chunks here, then "
                  "%.3f s waiting for the workers)", len(self.items), len(self.bounds),
                  len(self.children) + 1, own, waited)
        return [r for i in range(len(self.bounds)) for r in self.got.pop(i)]

    def _got(self, i: int, part: list[Any]) -> None:
        """Chunk `i`'s results, final: kept for the answer, and the caller told (`landed`)."""
        self.got[i] = part
        if self.landed is not None:
            self.landed(self.bounds[i][0], part)

    def _chunk(self, i: int) -> list[Any]:
        start, end = self.bounds[i]
        return self.work(self.items[start:end])

    def _take(self, *, last: bool) -> int | None:
        """The next chunk nobody took: the lowest for a worker, the highest for this process."""
        lock = self.next.get_lock()
        if not lock.acquire(timeout=LOCK_WAIT):
            return None  # a worker died holding it: what is left is computed afterwards
        try:
            if self.next[0] >= self.next[1]:
                return None
            if last:
                self.next[1] -= 1
                return int(self.next[1])
            self.next[0] += 1
            return int(self.next[0] - 1)
        finally:
            lock.release()

    def _fork(self, count: int) -> None:
        import multiprocessing

        for _ in range(count):
            reader, writer = multiprocessing.Pipe(duplex=False)
            _widen(writer.fileno())
            pid = os.fork()
            if pid == 0:  # the worker: never returns into the caller's code
                reader.close()
                self._serve(writer)
            writer.close()
            self.children[reader] = pid

    def _serve(self, conn: Connection) -> None:
        code = 1
        try:
            # The sync's own handlers are not the worker's: a signal ends it (its chunk is
            # then computed by the parent, or the parent is being stopped too).
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            while (i := self._take(last=False)) is not None:
                part = self._chunk(i)
                start, end = self.bounds[i]
                if len(part) != end - start:
                    break  # never a partial result: the parent computes this chunk
                conn.send((i, part))
            else:
                code = 0
        except BaseException:  # noqa: BLE001 - the parent computes what did not arrive
            code = 1
        finally:
            os._exit(code)

    def _collect(self, *, until_done: bool) -> None:
        """The chunks the workers sent, into `got`: those already here, or (`until_done`)
        every one until each worker has ended. A worker silent for longer than the timeout
        since its last chunk is killed; what it had not sent is computed here later."""
        from multiprocessing.connection import wait

        while self.seen:
            ready = wait(list(self.seen), timeout=min(1.0, self.timeout) if until_done else 0)
            for conn in cast("list[Connection]", ready):
                try:
                    i, part = conn.recv()
                except Exception:  # noqa: BLE001 - EOF (the worker is done or dead) or a bad message
                    del self.seen[conn]
                    continue
                self._got(i, part)
                self.seen[conn] = time.monotonic()
            now = time.monotonic()
            for conn in [c for c, t in self.seen.items() if now - t > self.timeout]:
                _kill(self.children[conn])
                del self.seen[conn]
            if not until_done and not ready:
                return

    def _end(self) -> None:
        """Every worker stopped and reaped, whatever happened (one still working when this
        process failed is killed); `lost` counts those that did not finish cleanly."""
        for conn, pid in self.children.items():
            if conn in self.seen:
                _kill(pid)
            conn.close()
            _, status = os.waitpid(pid, 0)
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                self.lost += 1


def _widen(fd: int) -> None:
    """A pipe as large as Linux allows an unprivileged process (1 MiB by default, instead of
    64 KiB): a worker's chunk fits whole, so it goes on working while this process, busy with
    its own chunk, has not read it yet."""
    try:
        import fcntl

        with open("/proc/sys/fs/pipe-max-size", encoding="ascii") as f:
            size = min(int(f.read()), PIPE_MAX)
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (OSError, ValueError, ImportError):
        pass  # another platform or a smaller limit: the worker waits a little more


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def from_settings(workers: int, min_items: int, timeout: float = TIMEOUT) -> ForkPool:
    """The pool `sync.workers`, `sync.parallel_min_clusters` and `sync.worker_timeout_seconds`
    ask for on this machine."""
    count = workers if workers > 0 else worker_count(0, usable_cpus())  # no cgroup read when set
    return ForkPool(count, min_items, timeout=timeout)
