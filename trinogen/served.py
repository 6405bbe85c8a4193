"""The render cache around the desired-tree path: which documents it can answer, and recording
what this run rendered.

A document is served from the cache only when its entry exists (same document bytes, same
renderer fingerprint), the repository holds exactly the entry's blobs at its paths (or a waiting
rollout wave keeps git's files for the cluster, `pending`: the entry then says only what the
cluster would render to), no other
enabled document claims its clusterId, and Vault still reports the secret versions it was
rendered with. Everything else takes the path (`trinogen.desired`). With no cache (or inline
secrets, whose values the cache cannot see) nothing is served.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeGuard

from trinogen.cache import document_key
from trinogen.errors import Problem
from trinogen.model import Cluster, Failed, Outcome, RawDocument, enabled_claims
from trinogen.plan import DesiredFile
from trinogen.ports import CachedFailure, CacheEntry, RenderCacheStore

# What else a document's output depends on, beyond its bytes (the shared catalogs it may use),
# as a digest (`cache.value_digest`); None when nothing, b"" when it cannot be told (not cached).
Dependencies = Callable[[Mapping[str, Any]], bytes | None]
# Whether a rollout holds this cluster's files this run whatever it renders to (clusterId, the
# document): its entry then answers though git does not hold its blobs (trinogen.rollout.step).
Pending = Callable[[str, RawDocument], bool]


class Made(NamedTuple):
    """What a run needs of a cluster it rendered, once its files are made: the `Cluster`
    itself is then let go (issue 22: at 10,000 clusters they held ~60 MB beside the files)."""

    cluster_id: str
    doc_id: str
    stopped: bool
    secret_paths: tuple[str, ...]  # sorted; a tuple: 9,000 frozensets took 2 MiB more
    warnings: tuple[Problem, ...]

    @classmethod
    def of(cls, cluster: Cluster) -> Made:
        return cls(cluster.cluster_id, cluster.doc_id, cluster.stopped,
                   tuple(sorted({u.ref.secret_path for u in cluster.vault_uses})),
                   cluster.warnings)


# A document's own outcome; a `Made` when a worker rendered its cluster (`trinogen.ahead`).
Judged = Outcome | Made
Judge = Callable[[RawDocument], Judged]


@dataclass
class Served:
    """What the cache answers in one run; `misses` take the path."""

    cache: RenderCacheStore | None
    tree: Mapping[str, str] | None
    misses: list[RawDocument]
    keys: dict[str, str | None] = field(default_factory=dict)  # doc _id -> cache key
    hits: dict[str, tuple[RawDocument, str, CacheEntry]] = field(default_factory=dict)  # by doc _id

    @classmethod
    def select(
        cls, raws: list[RawDocument], fingerprint: str, cache: RenderCacheStore | None,
        tree: Mapping[str, str] | None, *, inline: bool = False,
        dependencies: Dependencies | None = None, pending: Pending | None = None,
    ) -> Served:
        """Split the documents into cache hits and the rest. A `pending` cluster's entry is a
        hit though git holds other files: a rollout's wave holds them, so this run keeps git's
        files whatever it renders, and needs to know only what it would render (the blobs)."""
        if cache is None or inline:
            return cls(cache, tree, raws)
        # Each document's key, computed once (BSON-encoding every document is not free).
        keys = {r.doc_id: _key(r, fingerprint, dependencies) for r in raws}
        hits = _hits(raws, keys, cache, tree, pending) if tree is not None else {}
        misses = [r for r in raws if r.doc_id not in hits] if hits else raws
        return cls(cache, tree, misses, keys, hits)

    def pending(self) -> set[str]:
        """The clusters answered for a rollout's held wave (git holds other files)."""
        held = (self.tree or {}).items()
        return {e.cluster_id for _, _, e in self.hits.values() if not e.files.items() <= held}

    def secret_paths(self) -> set[str]:
        """The secret paths the hits were rendered with (their versions must still match)."""
        return {p for _, _, entry in self.hits.values() for p in entry.versions}

    def drop_stale(
        self, versions: Mapping[str, int | None], errors: Mapping[str, str]
    ) -> list[RawDocument]:
        """Forget the hits whose secrets rotated or vanished; they must be rendered again."""
        stale = [doc_id for doc_id, (_, _, entry) in self.hits.items()
                 if any(p in errors or versions.get(p) != v for p, v in entry.versions.items())]
        return [self.hits.pop(doc_id)[0] for doc_id in stale]

    def entries(self) -> list[CacheEntry]:
        """The hits' entries, each kept for the next run."""
        if self.cache is not None:
            for _, key, entry in self.hits.values():
                self.cache.keep(key, entry)
        return [entry for _, _, entry in self.hits.values()]

    def record(
        self, rendered: Iterable[tuple[Made, Mapping[str, str]]],
        versions: Mapping[str, int | None],
    ) -> None:
        """Keep an entry for each cluster rendered in this run (files as blob ids)."""
        if self.cache is None:
            return
        for cluster, blobs in rendered:
            key = self.keys.get(cluster.doc_id)
            if not key:
                continue
            used = sorted(cluster.secret_paths)
            self.cache.keep(key, CacheEntry(
                cluster_id=cluster.cluster_id, doc_id=cluster.doc_id, files=dict(blobs),
                versions={p: versions.get(p) for p in used},
                warnings=tuple((w.cluster, w.field, w.message) for w in cluster.warnings),
            ))

    def judge(self, classify: Judge) -> Judge:
        """`classify` (one document on its own), but a document that failed before with the
        same key (same bytes, renderer fingerprint and shared catalogs) gets its recorded
        problems without being validated again; a new failure is recorded (issue 19).

        Only a document's own outcome passes through here: what spans documents (a clusterId
        claimed twice) is judged afresh by the caller on every run, and never recorded."""
        cache = self.cache
        if cache is None:
            return classify

        def judged(raw: RawDocument) -> Judged:
            key = self.keys.get(raw.doc_id)
            known = cache.failure(key) if key else None
            if key and known is not None and known.doc_id == raw.doc_id:
                cache.keep_failure(key, known)
                return Failed(raw.doc_id, known.cluster_id, tuple(Problem(*p) for p in known.problems))
            outcome = classify(raw)
            if key and _recorded(outcome, raw):
                cache.keep_failure(key, CachedFailure(raw.doc_id, outcome.cluster_id, tuple(
                    (p.cluster, p.field, p.message) for p in outcome.problems)))
            return outcome

        return judged

    def root_app(self, render: Callable[[], Mapping[str, bytes]]) -> dict[str, DesiredFile]:
        """The app-of-apps: from the cache when the repository holds exactly the cached blobs."""
        cache, tree = self.cache, self.tree
        if cache is not None and tree is not None and cache.extra and (
            cache.extra.items() <= tree.items()
        ):
            files = {p: DesiredFile(b, None) for p, b in cache.extra.items()}
        else:
            files = {p: DesiredFile.of(c) for p, c in render().items()}
        if cache is not None:
            cache.used_extra = {p: f.blob for p, f in files.items()}
        return files


def _recorded(outcome: Judged, raw: RawDocument) -> TypeGuard[Failed]:
    """Whether a document's outcome is a failure to remember: a validation failure, but not
    a value that cannot be decoded, found only when the body was asked for
    (`RawDocument.body`), as one found at the read is never keyed."""
    return isinstance(outcome, Failed) and outcome.stage == "validate" and not raw.unreadable


def _key(raw: RawDocument, fingerprint: str, dependencies: Dependencies | None) -> str | None:
    if not isinstance(raw.head, Mapping) or raw.unread:
        return None  # a refused document's body is only what names it: never a key
    # A document using shared catalogs is keyed with them too: a change to one of them
    # re-renders exactly its users. Any other document keeps the key of its bytes alone.
    more = dependencies(raw.head) if dependencies is not None else None
    if more == b"":
        return None
    return document_key(raw.head if raw.digest is not None else raw.body, fingerprint,
                        raw.digest, more)


def _hits(
    raws: list[RawDocument], keys: Mapping[str, str | None], cache: RenderCacheStore,
    tree: Mapping[str, str], pending: Pending | None = None,
) -> dict[str, tuple[RawDocument, str, CacheEntry]]:
    """Documents whose cached output is exactly what the repository holds now (or which a
    rollout holds: `pending`).

    Documents sharing a clusterId with another enabled document are never hits: they must be
    validated together to be reported as duplicates.
    """
    claims = enabled_claims(raws)
    held = tree.items()  # a set-like view: `<=` below compares path and blob in C (issue 22)
    hits: dict[str, tuple[RawDocument, str, CacheEntry]] = {}
    for raw in raws:
        key = keys.get(raw.doc_id)
        entry = cache.get(key) if key else None
        if key is not None and entry is not None and entry.doc_id == raw.doc_id and len(
                claims.get(entry.cluster_id, ())) == 1 and (
                entry.files.items() <= held  # the repository holds exactly the entry's blobs
                or (pending is not None and pending(entry.cluster_id, raw))):  # or a rollout
            hits[raw.doc_id] = (raw, key, entry)
    return hits
