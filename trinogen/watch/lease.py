"""Leadership among watch replicas, and the saved stream position, in one MongoDB document."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from trinogen.errors import LeaseLost, SourceUnavailable
from trinogen.watch.position import StreamPosition

WallClock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class LeaseUnavailable(SourceUnavailable):
    """MongoDB could not be asked about the lease (unreachable, unauthorized, ...)."""


@contextmanager
def _mongo(what: str) -> Iterator[None]:
    from pymongo.errors import PyMongoError

    try:
        yield
    except PyMongoError as e:
        raise LeaseUnavailable(f"cannot {what} ({type(e).__name__}: {str(e)[:300]})") from e


class Lease:
    """`{_id: "watch:<db>.<collection>", owner, acquiredAt, heartbeatAt, expiresAt, resumeToken,
    tokenSavedAt}` in the state collection.

    Ownership is `owner == me`: only an acquisition changes `owner`, and it succeeds only once
    `expiresAt` has passed, so a replica that still finds itself the owner may keep going (and
    renew) even after a pause. The position lives in the same document, so "save the position if
    I still hold the lease" is a single atomic conditional update.

    Expiry compares the replicas' wall clocks: keep their skew well below lease_seconds.
    Every MongoDB failure comes out as LeaseUnavailable.
    """

    def __init__(self, state: Any, key: str, seconds: float, *, owner: str | None = None,
                 wall: WallClock = utcnow) -> None:
        self.state = state
        self.key = key
        self.seconds = seconds
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.wall = wall
        self.held = False

    def acquire(self) -> bool:
        """Become (or stay) the owner if the lease is free, expired or already ours."""
        from pymongo import ReturnDocument
        from pymongo.errors import DuplicateKeyError

        now = self.wall()
        fields: dict[str, Any] = {"owner": self.owner, "heartbeatAt": now,
                                  "expiresAt": now + timedelta(seconds=self.seconds)}
        if not self.held:
            fields["acquiredAt"] = now
        with _mongo("take the watch lease"):
            try:
                doc = self.state.find_one_and_update(
                    {"_id": self.key, "$or": [{"owner": self.owner}, {"owner": None},
                                              {"expiresAt": {"$lte": now}}]},
                    {"$set": fields}, upsert=True, return_document=ReturnDocument.AFTER,
                )
            except DuplicateKeyError:  # the document exists and someone else holds it
                doc = None
        self.held = bool(doc and doc.get("owner") == self.owner)
        return self.held

    def renew(self) -> bool:
        """Extend the lease if it is still ours; False (and no longer held) if it is not."""
        now = self.wall()
        with _mongo("renew the watch lease"):
            result = self.state.update_one(
                {"_id": self.key, "owner": self.owner},
                {"$set": {"heartbeatAt": now, "expiresAt": now + timedelta(seconds=self.seconds)}},
            )
        self.held = result.matched_count == 1
        return self.held

    def confirm(self) -> None:
        """Right before a push: renew, or raise LeaseLost (also when MongoDB cannot tell)."""
        try:
            ok = self.renew()
        except LeaseUnavailable as e:
            raise LeaseLost(f"{e}; not pushing") from e
        if not ok:
            raise LeaseLost(f"the watch lease {self.key} is held by {self.holder() or 'nobody'} "
                            "now; not pushing")

    def holder(self) -> str | None:
        with _mongo("read the watch lease"):
            doc = self.state.find_one({"_id": self.key}, {"owner": 1})
        return doc.get("owner") if doc else None

    def position(self) -> StreamPosition | None:
        """The saved position (None: none saved, or not a usable token)."""
        with _mongo("read the saved resume token"):
            doc = self.state.find_one({"_id": self.key}, {"resumeToken": 1})
        return StreamPosition.of(doc.get("resumeToken") if doc else None)

    def save(self, position: StreamPosition) -> None:
        """Persist the position only while still the owner (one atomic update)."""
        with _mongo("save the resume token"):
            result = self.state.update_one(
                {"_id": self.key, "owner": self.owner},
                {"$set": {"resumeToken": position.document(), "tokenSavedAt": self.wall()}},
            )
        if result.matched_count != 1:
            self.held = False
            raise LeaseLost(f"the watch lease {self.key} was taken over; resume token not saved")

    def release(self) -> None:
        """On a clean stop: let a standby take over now instead of after expiry."""
        now = self.wall()
        with _mongo("release the watch lease"):
            self.state.update_one({"_id": self.key, "owner": self.owner},
                                  {"$set": {"expiresAt": now, "heartbeatAt": now}})
        self.held = False
