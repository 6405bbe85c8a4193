"""The seams of the pipeline: what it needs from the document source, the working copy of the
GitOps repository and the secret reader.

The pipeline depends only on these Protocols; `trinogen.source.Source`,
`trinogen.gitops.WorkingCopy` and `trinogen.vault.VaultReader` implement them, and the tests use
small dict-backed fakes (`tests/fakes.py`). No I/O library is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from trinogen.model import RawDocument
from trinogen.plan import FileChange, Layout
from trinogen.secrets import SecretData

# One cluster's status record as stored (field name -> value); the _id is the cluster key.
StatusRecord = Mapping[str, Any]


class DocumentSource(Protocol):
    """Where cluster documents come from, and where per-cluster status goes."""

    @property
    def queries(self) -> int:
        """Queries sent so far (the run's stats.mongoQueries)."""

    @property
    def complete(self) -> bool:
        """False when part of the source could not be read: nothing may be pruned as deleted."""

    @property
    def ephemeral(self) -> bool:
        """True when status records could never be read back (the embedded database)."""

    def read_all(self) -> list[RawDocument]: ...

    def read_targeted(
        self, doc_ids: Iterable[str], cluster_ids: Iterable[str]
    ) -> list[RawDocument]: ...

    def read_catalogs(self) -> list[RawDocument]:
        """Every document of the catalog library, in one query."""

    def read_status(self, keys: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
        """The status rows: every one, or only these keys."""

    def write_status(
        self, records: Mapping[str, StatusRecord], removed: Iterable[str] = ()
    ) -> int: ...

    def write_observed(self, fields: Mapping[str, Mapping[str, Any]]) -> int:
        """Set the `argocd` field of the named existing records only (what `status` read)."""


@dataclass(frozen=True)
class PushOutcome:
    pushed: bool
    rejected: bool = False  # the remote moved on: re-plan and retry
    summary: str = ""


@dataclass(frozen=True)
class CacheEntry:
    """What the render cache recorded for one document: the files it rendered to (blob ids)
    and the secret versions they were rendered with."""

    cluster_id: str
    doc_id: str
    files: Mapping[str, str]  # path -> blob id
    versions: Mapping[str, int | None] = field(default_factory=dict)  # secret path -> version
    warnings: tuple[tuple[str, str, str], ...] = ()  # (cluster, field, message)

    def to_row(self, share: dict[Any, Any]) -> tuple[Any, ...]:
        """The entry as the cache file stores it: a tuple, each warning's text once per file
        (the same field and message, e.g. of a property Trino does not know, are often given to
        thousands of clusters: `share` maps each to its first copy, which marshal writes once)."""
        files = self.files if type(self.files) is dict else dict(self.files)
        versions = self.versions if type(self.versions) is dict else dict(self.versions)
        return (self.cluster_id, self.doc_id, files, versions,
                tuple(tuple(share.setdefault(x, x) for x in w) for w in self.warnings))

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> CacheEntry:
        # The file is trinogen's own (marshal keeps the types it wrote); shapes are checked,
        # not every string, so loading 10,000 entries stays cheap.
        cluster, doc, files, versions, warnings = row
        if not (type(cluster) is str and type(doc) is str and type(files) is dict
                and type(versions) is dict and type(warnings) is tuple):
            raise TypeError("malformed cache entry")
        return cls(cluster, doc, files, versions, warnings)


@dataclass(frozen=True)
class CachedFailure:
    """What the render cache recorded for a document that failed validation on its own: its
    problems, told again on every run until the document (or what it depends on) changes."""

    doc_id: str
    cluster_id: str | None
    problems: tuple[tuple[str, str, str], ...]  # (cluster, field, message)

    def to_json(self) -> dict[str, Any]:
        return {"doc": self.doc_id, "cluster": self.cluster_id,
                "problems": [list(p) for p in self.problems]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CachedFailure:
        problems = data["problems"]
        if not isinstance(problems, list) or not all(
                isinstance(p, list) and len(p) == 3 for p in problems):
            raise TypeError("malformed cached failure")
        cluster = data["cluster"]
        return cls(str(data["doc"]), None if cluster is None else str(cluster),
                   tuple((str(a), str(b), str(c)) for a, b, c in problems))


class RenderCacheStore(Protocol):
    """The render cache as the pipeline uses it (`trinogen.cache.RenderCache`)."""

    extra: dict[str, str]  # files of no single cluster (the app-of-apps) -> blob id, as loaded
    used_extra: dict[str, str]  # the same, as this run used them
    # Application blob id -> what it needs from its project (argocd.tenant_projects), flattened
    apps: dict[str, tuple[Any, ...]]
    used_apps: dict[str, tuple[Any, ...]]

    def get(self, key: str) -> CacheEntry | None: ...

    def owners(self) -> dict[str, CacheEntry]:
        """Blob id -> the loaded entry whose cluster rendered it (its header's cluster and
        document)."""

    def keep(self, key: str, entry: CacheEntry) -> None: ...

    def failure(self, key: str) -> CachedFailure | None: ...

    def keep_failure(self, key: str, failure: CachedFailure) -> None: ...

    def save(self, *, partial: bool = False) -> None:
        """Persist this run's entries; `partial` (not every document was read) keeps the
        others' entries too."""


class Repository(Protocol):
    """A working copy of the GitOps repository: read the tree, write one commit, push it."""

    @property
    def workdir(self) -> Path | None:
        """A private directory trinogen may keep caches in, or None."""

    def locked(self) -> AbstractContextManager[None]: ...

    def refresh(self) -> None: ...

    def tree(self, layout: Layout) -> dict[str, str]:
        """Path -> blob id of every file under the output roots."""

    def heads(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """The first bytes (the header) of each blob."""

    def blobs(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """The whole content of each blob, in one batch."""

    def read(self, path: str) -> bytes | None: ...

    def head_commit(self) -> str | None: ...

    def apply(self, changes: Iterable[FileChange], message: str) -> str: ...

    def commit(self) -> str: ...

    def push(self) -> PushOutcome: ...

    def render_cache(self, fingerprint: str) -> RenderCacheStore | None: ...


class SecretReader(Protocol):
    """Reads secret paths (`<mount>/<path>`); raises SecretProblem for a path it cannot use."""

    @property
    def requests(self) -> int:
        """Reads sent so far (the run's stats.vaultRequests)."""

    def read(self, secret_path: str) -> SecretData: ...


# Built only when a run needs Vault (the login happens then, before anything is written).
ReaderFactory = Callable[[], SecretReader]


@dataclass(frozen=True)
class AppView:
    """What Argo CD reports for one Application, read from its `status` (nothing is written).

    `revision` is the commit of the GitOps repository Argo CD last synced for it (the `ref:
    values` source's entry of `status.sync.revisions`), `operation` the phase of the last sync
    operation (`status.operationState.phase`: Running, Succeeded, Failed, Error, Terminating).
    `cluster_id` and `owner` are the Application's trinogen.io labels (None when absent).
    """

    name: str
    cluster_id: str | None
    owner: str | None
    sync: str  # Synced, OutOfSync, Unknown
    health: str  # Healthy, Progressing, Degraded, Suspended, Missing, Unknown
    message: str | None = None  # status.health.message, or the last operation's message
    revision: str | None = None
    operation: str | None = None
    operation_message: str | None = None
    observed_at: str | None = None  # status.reconciledAt (RFC 3339), as Argo CD wrote it


class ArgoView(Protocol):
    """Read-only view of the Argo CD Applications in `argocd.namespace` (the adapter at the edge)."""

    def applications(self) -> Mapping[str, AppView]:
        """Every Application carrying trinogen's managed-by label, by metadata.name."""


# Built only when a command needs Argo CD's view (status, a rollout); a no-op sync never does.
ArgoViewFactory = Callable[[], ArgoView]


Landed = Callable[[int, list[Any]], None]  # FanOut: a chunk's first index and its results


class FanOut(Protocol):
    """Runs pure work over a sequence in chunks on other cores (`trinogen.pool`, issue 22).

    `work` maps a slice of `items` to one result per item; the answer is every result in
    the order of `items` (what a lost worker did not deliver is computed by the caller's
    process), or None when the work was not fanned out (too few items, one core, the pool
    itself failed): the caller then does it itself, so the outcome never depends on which.
    Neither `work` nor `items` is pickled (the workers are forked with them); only results are.
    `landed(start, results)` is told each chunk's results as soon as they are final (the chunk
    is never computed again; an answer holds them), `start` its first item's index.
    """

    def wants(self, count: int) -> bool:
        """Whether `count` items are worth fanning out (False: the caller works serially)."""

    def __call__(self, work: Callable[[Sequence[Any]], list[Any]], items: Sequence[Any],
                 landed: Landed | None = None) -> list[Any] | None: ...
