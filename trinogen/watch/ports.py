"""What the loop needs from its collaborators (the real ones: lease.Lease, feed.ChangeFeed)."""

from __future__ import annotations

from typing import Protocol

from trinogen.watch.feed import Event
from trinogen.watch.position import StreamPosition


class LeaseLike(Protocol):
    """The lease (trinogen.watch.lease.Lease); MongoDB failures come out as LeaseUnavailable."""

    owner: str
    held: bool

    def acquire(self) -> bool: ...
    def renew(self) -> bool: ...
    def confirm(self) -> None: ...
    def holder(self) -> str | None: ...
    def position(self) -> StreamPosition | None: ...
    def save(self, position: StreamPosition) -> None: ...
    def release(self) -> None: ...


class Stream(Protocol):
    """One open change stream (trinogen.watch.feed.ChangeStream)."""

    @property
    def position(self) -> StreamPosition | None: ...
    def next(self) -> Event: ...
    def close(self) -> None: ...


class Feed(Protocol):
    """Opens streams (trinogen.watch.feed.ChangeFeed); raises FeedFailed/PositionRejected."""

    def open(self, after: StreamPosition | None) -> Stream: ...
