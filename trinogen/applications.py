"""The clusters' Application files in one repository tree, each read from git at most once a run.

Several steps of a sync ask the Application files something: which document a cluster was
rendered from (a targeted read, a contested clusterId, the quotas' renames), whose cluster it
is (the quotas), and what it needs from its AppProject (argocd.tenant_projects). One value per
tree, made by the pipeline and passed down, answers them all from one batch of reads; a run that
asks nothing reads nothing (the no-tenant, untargeted sync).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from trinogen.plan import Layout
from trinogen.ports import CacheEntry, Repository
from trinogen.render import HEAD_BYTES, parse_header


class Applications:
    """The tree's cluster Application files (`<applications_dir>/<clusterId>.yaml`).

    A plain class: made on every sync, also without tenants, where a frozen dataclass's creation
    at import would cost the no-tenant run ~4 M instructions (docs/benchmarks.md)."""

    __slots__ = ("_blobs", "_texts", "known", "layout", "repo", "tree")

    def __init__(self, tree: Mapping[str, str], repo: Repository, layout: Layout,
                 known: Mapping[str, CacheEntry] | None = None) -> None:
        self.tree, self.repo, self.layout = tree, repo, layout
        # Blob id -> the render-cache entry that rendered it (RenderCacheStore.owners): its
        # header's document, known without reading the file (a targeted run; issue 22).
        self.known: Mapping[str, CacheEntry] = known or {}
        self._blobs: dict[str, str] | None = None
        self._texts: dict[str, bytes] = {}

    @property
    def blobs(self) -> dict[str, str]:
        """Cluster id -> its Application file's blob id."""
        if self._blobs is None:
            head = self.layout.applications_dir + "/"
            self._blobs = {cid: blob for path, blob in self.tree.items()
                           if path.startswith(head) and (cid := self.layout.cluster_of(path))}
        return self._blobs

    def texts(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """Blob id -> content; only the blobs not read before in this run go to git (one batch)."""
        wanted = set(blobs)
        missing = wanted - self._texts.keys()
        if missing:
            self._texts.update(self.repo.blobs(missing))
        return {b: self._texts[b] for b in wanted if b in self._texts}

    def of(self, clusters: Iterable[str] | None = None) -> dict[str, bytes]:
        """Cluster id -> its Application's content, for these clusters (None: every one)."""
        return self._of(self._ids(clusters))

    def _ids(self, clusters: Iterable[str] | None) -> dict[str, str]:
        if clusters is None:
            return self.blobs
        return {c: self.blobs[c] for c in clusters if c in self.blobs}

    def _of(self, ids: Mapping[str, str]) -> dict[str, bytes]:
        found = self.texts(ids.values())
        return {cid: found[b] for cid, b in ids.items() if b in found}

    def recorded(self, clusters: Iterable[str] | None = None) -> dict[str, str]:
        """Cluster id -> the document _id its Application file's header records."""
        ids = self._ids(clusters)
        out = {cid: e.doc_id for cid, b in ids.items()
               if (e := self.known.get(b)) is not None and e.doc_id}
        unknown = {cid: b for cid, b in ids.items() if b not in self.known}
        for cid, content in self._of(unknown).items():
            header = parse_header(content[:HEAD_BYTES])  # as `Repository.heads` gives it
            if header is not None and header.doc_id:
                out[cid] = header.doc_id
        return out
