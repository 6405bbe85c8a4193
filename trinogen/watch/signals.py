"""Stopping: SIGTERM/SIGINT ask the watcher to stop (a second one abandons the sync in flight)."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

log = logging.getLogger("trinogen.watch")


@contextmanager
def signal_handlers(request_stop: Callable[[str], None]) -> Iterator[None]:
    """While inside: each SIGTERM/SIGINT calls `request_stop(<signal name>)` (it only sets flags)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals can only be handled in the main thread
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        request_stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class StopRequest:
    """A stop asked for by a signal (or a test): flags only, and a sleep that wakes for it.

    First request: finish the sync in flight, then stop. Second: abandon it before its push.
    """

    def __init__(self, sleep: Callable[[float], None] | None = None) -> None:
        self.requested = False
        self.abandon = False
        self._sleep_fn = sleep  # tests pass their own; None: really sleep

    def __call__(self, why: str = "stop requested") -> None:
        """Safe to call from a signal handler: it only sets flags (and logs)."""
        if self.requested:
            self.abandon = True
            log.warning("%s again: abandoning the batch in flight before its push", why)
        else:
            self.requested = True
            log.info("%s: stopping after the sync in flight (events not yet synced are "
                     "replayed by the next leader)", why)

    def sleep(self, seconds: float) -> None:
        """Wait, but wake within 0.2 s of a stop request."""
        if seconds <= 0:
            return
        if self._sleep_fn is not None:
            self._sleep_fn(seconds)
            return
        end = time.monotonic() + seconds
        while not self.requested:
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(0.2, left))
