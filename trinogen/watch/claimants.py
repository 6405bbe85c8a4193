"""Who claims which clusterId, as the watcher has seen it: a batch's read asks `_id` equality only.

A targeted read must return every document claiming the clusterIds involved (`targets`), which
a server answers with a query on `clusterId`: FerretDB v1 scans every document for it, and so
does a MongoDB where nobody indexed `clusterId` (issue 22). The watcher needs no such query: it
read every document in its last full sync and every changed document since (each change arrives
as an event and is read by its batch), so it can keep clusterId -> the _ids claiming it and read
those by `_id`. `sync --cluster` and a CronJob have no such memory and keep their queries.

What the index cannot know: a document written whose event is not processed yet. A read by
`clusterId` would already return it as a rival; the index returns it with its own batch, which
follows at once (the next batch): until then its claim waits, as it would had its write come a
moment later. A clusterId that is no string (`["x"]`, which a server would match to "x") claims
nothing either way (`model.claimed_cluster_id`); such a document is reported by its own batch and
every full sync. A watcher resumed from a saved token runs no full sync at start: its first
batch reads every document's _id and clusterId once (`read_claims`, one query) to fill the index.
So does its first batch after each election (`forget`): while another replica led, its events
were never seen here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol

from trinogen.model import RawDocument, claimed_cluster_id
from trinogen.ports import DocumentSource, StatusRecord


class ClaimSource(DocumentSource, Protocol):
    """A DocumentSource that can also tell who claims what (`trinogen.source.Source`)."""

    def read_claims(self) -> list[RawDocument]:
        """Every document, with at least its _id and clusterId."""


class ClaimIndex:
    """clusterId -> the _ids (canonical JSON) claiming it, and each _id's claim. Pure."""

    def __init__(self) -> None:
        self.warm = False  # a full read was seen: the index holds every claim
        self._ids: dict[str, set[str]] = {}  # clusterId -> _ids claiming it
        self._claim: dict[str, str] = {}  # _id -> the clusterId it claims

    def rebuild(self, raws: Iterable[RawDocument]) -> None:
        """Every claim, from a read of every document."""
        self._ids, self._claim = {}, {}
        for r in raws:
            self._set(r.doc_id, claimed_cluster_id(r))
        self.warm = True

    def forget(self) -> None:
        """Trust nothing kept: another replica led meanwhile (its events were never seen here),
        so the next targeted read fills the index again (`read_claims`)."""
        self.warm = False
        self._ids, self._claim = {}, {}

    def learn(self, asked: Collection[str], raws: Iterable[RawDocument]) -> None:
        """What a read of the `asked` _ids found: each document's current claim; an _id asked
        and not found was deleted. A document not asked for (one read without a usable _id) says
        nothing of the others: then no claim is forgotten (a stale entry costs one more `_id`
        read; a missing one would hide a rival)."""
        found = {r.doc_id: claimed_cluster_id(r) for r in raws}
        for doc_id, cid in found.items():
            if doc_id in asked:
                self._set(doc_id, cid)
        if found.keys() <= set(asked):
            for doc_id in set(asked) - found.keys():
                self._set(doc_id, None)

    def claimants(self, cluster_ids: Iterable[str]) -> set[str]:
        """The _ids known to claim any of these clusterIds."""
        return {d for cid in cluster_ids for d in self._ids.get(cid, ())}

    def _set(self, doc_id: str, cid: str | None) -> None:
        old = self._claim.pop(doc_id, None)
        if old is not None:
            held = self._ids[old]
            held.discard(doc_id)
            if not held:
                del self._ids[old]
        if cid is not None:
            self._claim[doc_id] = cid
            self._ids.setdefault(cid, set()).add(doc_id)


class IndexedClaims:
    """A DocumentSource whose targeted reads ask `_id` equality only, the claimants of a
    clusterId coming from a ClaimIndex kept warm by its own reads (the watcher's source)."""

    def __init__(self, inner: ClaimSource) -> None:
        self.inner = inner
        self.index = ClaimIndex()

    @property
    def queries(self) -> int:
        return self.inner.queries

    @property
    def complete(self) -> bool:
        return self.inner.complete

    @property
    def ephemeral(self) -> bool:
        return self.inner.ephemeral

    def read_all(self) -> list[RawDocument]:
        raws = self.inner.read_all()
        self.index.rebuild(raws)
        return raws

    def read_targeted(self, doc_ids: Iterable[str], cluster_ids: Iterable[str]
                      ) -> list[RawDocument]:
        """What `inner.read_targeted` returns (the documents with these _ids and every one
        claiming these clusterIds), asked by `_id` only."""
        keys, cids = set(doc_ids), set(cluster_ids)
        if not self.index.warm:  # no full read yet: who claims what, once
            self.index.rebuild(self.inner.read_claims())
        asked = keys | self.index.claimants(cids)
        raws = self.inner.read_targeted(asked, ())
        self.index.learn(asked, raws)
        # A known claimant read with another claim now (its event is on its way) is not one:
        # the answer is the one a query by clusterId gives.
        return [r for r in raws if r.doc_id in keys or claimed_cluster_id(r) in cids]

    def read_catalogs(self) -> list[RawDocument]:
        return self.inner.read_catalogs()

    def read_status(self, keys: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
        return self.inner.read_status(keys)

    def write_status(self, records: Mapping[str, StatusRecord], removed: Iterable[str] = ()
                     ) -> int:
        return self.inner.write_status(records, removed)

    def write_observed(self, fields: Mapping[str, Mapping[str, Any]]) -> int:
        return self.inner.write_observed(fields)
