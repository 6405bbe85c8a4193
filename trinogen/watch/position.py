"""Where a change stream stands: one small value for the resume token, in every place.

A resume token is an opaque document from the server. The stream reports it, a batch carries it
to its push, the lease document stores it, a restart reads it back: always as a
`StreamPosition`, so there is one form to compare, save and resume from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, eq=False)
class StreamPosition:
    """A resume token, frozen; equal to another position with the same token document."""

    _token: Mapping[str, Any]

    @classmethod
    def of(cls, token: object) -> StreamPosition | None:
        """The position of a token as the server or the state document gives it; None if unusable."""
        if isinstance(token, StreamPosition):
            return token
        if not isinstance(token, Mapping) or not token:
            return None
        return cls(MappingProxyType(dict(token)))

    def document(self) -> dict[str, Any]:
        """The token as a plain document: for `resume_after` and for the state document."""
        return dict(self._token)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StreamPosition) and dict(self._token) == dict(other._token)

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self._token.items())))

    def __repr__(self) -> str:
        return f"StreamPosition({dict(self._token)!r})"


def idle_save_due(position: StreamPosition | None, saved: StreamPosition | None,
                  seconds_since_save: float, interval: float) -> bool:
    """While no batch is pending: save the stream's position when it moved and `interval` passed.

    An idle stream's position still advances with the server's clock; a token saved long ago may
    leave the oplog, and a restart from it would need a full sync.
    """
    return position is not None and position != saved and seconds_since_save >= interval
