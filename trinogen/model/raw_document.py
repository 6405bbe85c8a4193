"""A cluster document as read from MongoDB (`RawDocument`): its _id, its body (decoded when first
asked for) and what the render cache reads of it without decoding (`head`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

# The top-level fields read of a document the render cache serves (its label, its claim,
# whether it is disabled or stopped, its wave's facts, the shared catalogs it may use): a
# `RawDocument.head` holds them, and only them, until its body is decoded (issue 22);
# `connectors` only when an entry names a shared catalog (`bsonread.Undecoded`).
HEAD_FIELDS = frozenset({"_id", "clusterId", "enabled", "stopped", "profile", "owner",
                         "connectors"})


class Undecoded(Protocol):
    """A document's bytes as read, not decoded yet (`trinogen.bsonread.Undecoded`)."""

    def head(self) -> Mapping[str, Any]:
        """The HEAD_FIELDS the document holds, decoded as the whole document would decode them
        (`connectors` left out when no entry names a shared catalog)."""

    def decode(self) -> tuple[Mapping[str, Any], str | None]:
        """The body, or what names the document and why it cannot be decoded."""


class RawDocument:
    """A document as read from MongoDB, with its _id in canonical Extended JSON.

    Read as BSON, its body is decoded when first asked for (issue 22): a no-op sync serves
    ~every document from the render cache, which reads only a few top-level fields (`head`),
    so those documents never become dicts (~7 kB each, and the CPU to build them). A value
    Python cannot decode is found then, and the document is `unreadable` as if found at the
    read: the cache never serves such a document (its bytes never rendered)."""

    __slots__ = ("_body", "_head", "_undecoded", "_unreadable", "digest", "doc_id")

    def __init__(self, doc_id: str, body: Mapping[str, Any] | None = None,
                 unreadable: str | None = None, digest: bytes | None = None, *,
                 undecoded: Undecoded | None = None) -> None:
        self.doc_id = doc_id
        self._body = {} if body is None and undecoded is None else body
        # Set when the document could not be read as stored (the embedded database refused a
        # seed document, a value cannot be decoded): it fails, and its cluster keeps its files.
        self._unreadable = unreadable
        # A hash of its BSON bytes as read, when the source measured them (the render cache's
        # key then needs no second encoding of the document).
        self.digest = digest
        self._undecoded = undecoded
        self._head: Mapping[str, Any] | None = None

    @property
    def body(self) -> Mapping[str, Any]:
        if self._body is None:
            assert self._undecoded is not None
            self._body, self._unreadable = self._undecoded.decode()
            self._undecoded = self._head = None  # the bytes and the head are not needed now
        return self._body

    @property
    def unreadable(self) -> str | None:
        if self._body is None:
            self.body  # noqa: B018 - decoded now: a value that cannot be is found here
        return self._unreadable

    @property
    def unread(self) -> str | None:
        """`unreadable` as far as known without decoding: why the read refused the document
        (too large, refused by the embedded database); a value that cannot be decoded is only
        found when its body is asked for."""
        return self._unreadable

    @property
    def head(self) -> Mapping[str, Any]:
        """The HEAD_FIELDS of the body (the body itself, once decoded): what is read of a
        document the render cache serves."""
        if self._body is not None:
            return self._body
        if self._head is None:
            assert self._undecoded is not None
            self._head = self._undecoded.head()
        return self._head

    def __eq__(self, other: object) -> bool:
        if type(other) is not RawDocument:
            return NotImplemented
        return (self.doc_id, self.body, self.unreadable) == (
            other.doc_id, other.body, other.unreadable)

    __hash__ = None  # type: ignore[assignment]  # as the frozen dataclass it was: a dict body

    def __repr__(self) -> str:
        return (f"RawDocument(doc_id={self.doc_id!r}, body={self.body!r}, "
                f"unreadable={self.unreadable!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled decoded, never with the read's shared state (the pool forks and pickles no
        document; this keeps any other pickle of one whole)."""
        return (RawDocument, (self.doc_id, self.body, self.unreadable, self.digest))

    def let_go(self) -> None:
        """Once judged (`trinogen.ahead`: its outcome recorded, the clusterIds it may contest
        noted), the body is read no more: it becomes an empty mapping, and the decoded
        document is freed (issue 22: at 10,000 documents they held ~50 MiB beside the
        rendered files; in a pooled sync the workers decoded it, so its bytes go). The source's
        own mapping is left as it is."""
        self._body, self._undecoded, self._head = JUDGED, None, None


JUDGED: Mapping[str, Any] = MappingProxyType({})  # the body of a document let go
