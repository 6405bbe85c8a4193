"""Which documents a run reads: all of them, or for a targeted run (`--cluster`, a watch batch)
every document that can affect the targets.

A targeted run must see, for each target cluster, the document it was rendered from (found
through the `_id` recorded in the cluster's Application file: a deleted or renamed document no
longer names the cluster) and every other document claiming the same clusterId (of several
claimants, the one the repository holds keeps it: `model.claims`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from trinogen.applications import Applications
from trinogen.errors import ConfigError
from trinogen.model import RawDocument, claimed_cluster_id
from trinogen.model.library import (
    NO_LIBRARY,
    Library,
    contested_names,
    needs_library,
    parse_library,
)
from trinogen.model.raw import contested_claims
from trinogen.plan import Layout
from trinogen.ports import DocumentSource, Repository
from trinogen.render import parse_header, parse_shared_catalog
from trinogen.settings import Settings


@dataclass(frozen=True)
class Targets:
    """What a run was asked about; both empty means everything."""

    clusters: tuple[str, ...] = ()  # --cluster
    doc_ids: tuple[str, ...] = ()  # watch: documents that changed (canonical _id JSON)

    @property
    def targeted(self) -> bool:
        return bool(self.clusters or self.doc_ids)


def read_documents(
    source: DocumentSource, targets: Targets, tree: Mapping[str, str], repo: Repository,
    layout: Layout, apps: Applications | None = None,
) -> tuple[list[RawDocument], set[str] | None]:
    """The documents to plan with, and the cluster ids the plan is limited to (None: all);
    `apps`: the run's read of the tree's Application files (None: one of its own)."""
    if not targets.targeted:
        return source.read_all(), None
    repo_docs = (apps or Applications(tree, repo, layout)).recorded()
    doc_ids = set(targets.doc_ids)
    cluster_ids = set(targets.clusters) | {c for c, d in repo_docs.items() if d in doc_ids}
    doc_ids |= {repo_docs[c] for c in cluster_ids if c in repo_docs}
    raws = source.read_targeted(doc_ids, cluster_ids)
    require_known(targets.clusters, raws, repo_docs)
    return _with_claimants(source, raws, cluster_ids)


def read_library(source: DocumentSource, raws: Sequence[RawDocument], settings: Settings, *,
                 always: bool = False, holdings: Holdings | None = None) -> Library:
    """The catalog library, read in one query when a document read may use it (or `always`):
    a platform that uses no shared catalog never pays for the collection. `holdings` tells who
    keeps a name two catalog documents claim (None: the repository is not read)."""
    if not always and not needs_library(raws, settings.defaults, settings.profiles):
        return NO_LIBRARY
    docs = source.read_catalogs()
    held = holdings.catalogs(contested_names(docs)) if holdings is not None else None
    return parse_library(docs, unknown_fields=settings.validation.unknown_fields,
                         collection=settings.mongodb.catalog_collection,
                         max_problems=settings.validation.max_problems, held=held)


def unknown_clusters(
    requested: Iterable[str], raws: Iterable[RawDocument], recorded: Iterable[str]
) -> list[str]:
    """The requested cluster ids that no document claims and the repository does not hold."""
    return sorted(set(requested) - _claims(raws) - set(recorded))


def require_known(
    requested: Iterable[str], raws: Iterable[RawDocument], recorded: Iterable[str] = ()
) -> None:
    """Refuse a `--cluster` that names nothing: a typo must not pass a drift gate as "no change"."""
    unknown = unknown_clusters(requested, raws, recorded)
    if unknown:
        raise ConfigError(
            f"--cluster {', '.join(unknown)}: no document has this clusterId and the GitOps "
            "repository holds no such cluster; check the spelling (trinogen validate lists the "
            "documents)"
        )


def recorded_documents(tree: Mapping[str, str], repo: Repository, layout: Layout) -> dict[str, str]:
    """Cluster id -> the document _id recorded in its Application file's header."""
    return Applications(tree, repo, layout).recorded()


@dataclass(frozen=True)
class Holdings:
    """What the repository holds, asked only about names several documents claim (the first
    create wins: `model.claims`); an ordinary run, where no name is contested, reads nothing.
    `apps`: the run's read of the Application files (None: one of its own)."""

    tree: Mapping[str, str]
    repo: Repository
    layout: Layout
    apps: Applications | None = None

    def clusters(self, raws: Sequence[RawDocument]) -> dict[str, str]:
        """For each clusterId several enabled documents claim, the _id its Application file's
        header records."""
        contested = _contested(raws)
        if not contested:
            return {}
        return (self.apps or Applications(self.tree, self.repo, self.layout)).recorded(contested)

    def catalogs(self, names: Collection[str]) -> dict[str, frozenset[str]]:
        """For each contested catalog name, the library _ids the clusters' catalog copies record
        (`render.headers.shared_catalog_line`); every copy is read, whatever the documents read
        this run, so a targeted run decides as a full one does."""
        if not names:
            return {}
        found: dict[str, set[str]] = {}
        for content in self.repo.blobs(_catalog_copies(self.tree, self.layout)).values():
            # only trinogen's own copies count (a hand-written file is no record)
            origin = parse_shared_catalog(content) if parse_header(content) else None
            if origin is not None and origin[0] in names:
                found.setdefault(origin[0], set()).add(origin[1])
        return {name: frozenset(ids) for name, ids in found.items()}


def _contested(raws: Sequence[RawDocument]) -> list[str]:
    """The clusterIds more than one enabled document claims."""
    # A count of the raw values first: an ordinary run (no clusterId repeated at all) pays no
    # second reading of every label on top of the render cache's own.
    seen = Counter(v for r in raws if isinstance(r.head, Mapping)
                   and type(v := r.head.get("clusterId")) is str)
    if all(n == 1 for n in seen.values()):
        return []
    return list(contested_claims(raws))


def _catalog_copies(tree: Mapping[str, str], layout: Layout) -> list[str]:
    """The blobs of every cluster's catalog copies (`<clusters_dir>/<id>/catalog/<name>.properties`)."""
    prefix = layout.clusters_dir + "/"
    return [b for p, b in tree.items() if p.startswith(prefix) and p.endswith(".properties")
            and p.rsplit("/", 2)[-2] == "catalog"]


def _with_claimants(
    source: DocumentSource, raws: list[RawDocument], cluster_ids: set[str]
) -> tuple[list[RawDocument], set[str]]:
    """Add the other documents claiming the clusterIds these claim (rivals for the name)."""
    claimed = _claims(raws) - cluster_ids
    if not claimed:
        return raws, cluster_ids
    seen = {r.doc_id for r in raws}
    more = [r for r in source.read_targeted((), claimed) if r.doc_id not in seen]
    return raws + more, cluster_ids | claimed


def _claims(raws: Iterable[RawDocument]) -> set[str]:
    return {cid for r in raws if (cid := claimed_cluster_id(r))}
