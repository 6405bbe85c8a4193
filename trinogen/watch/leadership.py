"""Holding the lease over time: renew it as the leader, try to take it as a follower.

`check()` says, once per loop step, whether this replica leads, and when that changes
(Elected, with the saved position; Deposed, with the reason). Failures to reach MongoDB go to
the `failed` callback (which counts them and may give up), successes to `recovered`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from trinogen.watch.lease import LeaseUnavailable
from trinogen.watch.ports import LeaseLike
from trinogen.watch.position import StreamPosition


@dataclass(frozen=True)
class Elected:
    """This replica has just taken the lease; `position` is the saved one (None: none)."""

    position: StreamPosition | None


@dataclass(frozen=True)
class Deposed:
    """This replica has just lost the lease."""

    why: str


class Leadership:
    """The lease's timing: renew every `poll_seconds`, keep leading until `lease_seconds`."""

    def __init__(self, lease: LeaseLike, *, poll_seconds: float, lease_seconds: float,
                 failed: Callable[[LeaseUnavailable], None],
                 recovered: Callable[[], None]) -> None:
        self.lease = lease
        self.poll_seconds = poll_seconds
        self.lease_seconds = lease_seconds
        self._failed, self._recovered = failed, recovered
        self.renewed_at = float("-inf")
        self.next_renew = float("-inf")
        self.next_acquire = float("-inf")
        self.leading = False

    def check(self, now: float, stopping: bool) -> bool | Elected | Deposed:
        """True while leading, False while following; Elected/Deposed when that changes."""
        if not self.leading:
            return self._take(now, stopping)
        if not self.lease.held:  # found lost elsewhere (a conditional save, confirm)
            self.leading = False
            return Deposed("the lease is held by another replica now")
        return self._keep(now)

    def stepped_down(self, now: float) -> None:
        """The loop gave the lease up (or found it lost): try again after one poll."""
        self.lease.held = self.leading = False
        self.next_acquire = now + self.poll_seconds

    def _keep(self, now: float) -> bool | Deposed:
        if now < self.next_renew:
            return True
        self.next_renew = now + self.poll_seconds
        try:
            renewed = self.lease.renew()
        except LeaseUnavailable as e:
            self._failed(e)
            if now - self.renewed_at < self.lease_seconds:
                return True  # still ours until it expires
            self.leading = False
            return Deposed(f"the lease could not be renewed for {self.lease_seconds:.0f}s")
        self._recovered()
        if renewed:
            self.renewed_at = now
            return True
        self.leading = False
        return Deposed(f"the lease was taken over by {self._holder()}")

    def _take(self, now: float, stopping: bool) -> bool | Elected:
        if now < self.next_acquire or stopping:
            return False
        self.next_acquire = now + self.poll_seconds
        try:
            if not self.lease.acquire():
                self._recovered()
                return False  # another replica leads: normal for a follower
            position = self.lease.position()
        except LeaseUnavailable as e:
            self.lease.held = False
            self._failed(e)
            return False
        self._recovered()
        self.renewed_at, self.next_renew = now, now + self.poll_seconds
        self.leading = True
        return Elected(position)

    def _holder(self) -> str:
        try:
            return self.lease.holder() or "nobody"
        except LeaseUnavailable:
            return "an unknown replica"
