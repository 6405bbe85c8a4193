"""Desired files vs the files in the GitOps repository -> a Plan. Pure.

The plan is a value: `sync --dry-run` prints it and stops; an empty plan means no commit. The
pruning rules live here, because pruning an Application file deletes a production cluster
through Argo CD's finalizer:

* only files under the output roots that carry trinogen's header are ever touched;
* a cluster's files go when its document says `enabled: false`, is gone, or was renamed;
* a cluster whose document failed (validation, secrets, rendering) keeps its files exactly;
* an empty source, or a prune larger than both limits, refuses the whole run.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from trinogen.errors import Problem
from trinogen.model import Disabled, Failed
from trinogen.render import FileHeader


class CurrentFile(NamedTuple):  # NamedTuples: a no-op of 10,000 clusters makes 63,586 of each
    """A file under the output roots as it is in the working copy."""

    blob: str  # git blob id of its content
    header: FileHeader | None  # None: not written by trinogen, never touched


class DesiredFile(NamedTuple):
    """A file the repository should hold."""

    blob: str
    content: bytes | None  # None: already in the repository (a render-cache hit), not loaded

    @classmethod
    def of(cls, content: bytes) -> DesiredFile:
        return cls(blob_id(content), content)


@dataclass(frozen=True)
class Layout:
    """Where clusters live in the repository."""

    clusters_dir: str
    applications_dir: str
    root_app: str = ""

    def cluster_of(self, path: str) -> str | None:
        """The cluster a path (as git lists it: relative, '/'-separated) belongs to, or None.

        `<clusters_dir>/<id>/...` and `<applications_dir>/<id>.yaml`; the directories may have
        several segments (`gitops/trino-clusters`).
        """
        clusters, apps = self.clusters_dir + "/", self.applications_dir + "/"
        if path.startswith(clusters):
            cid, sep, _ = path[len(clusters):].partition("/")
            return cid if sep and cid else None
        if path.startswith(apps):
            name = path[len(apps):]
            # A '.' is never in a clusterId: such a file (an AppProject) is no cluster's.
            if "/" not in name and name.endswith(".yaml") and "." not in name[:-len(".yaml")]:
                return name[: -len(".yaml")] or None
        return None

    def files_by_cluster(self, tree: Mapping[str, str]) -> dict[str, dict[str, str]]:
        """A tree's files (path -> blob) grouped by the cluster each belongs to."""
        out: dict[str, dict[str, str]] = {}
        for path, blob in tree.items():
            if (cid := self.cluster_of(path)) is not None:
                out.setdefault(cid, {})[path] = blob
        return out


@dataclass(frozen=True, slots=True)  # one per file written: 63,586 at 10,000 clusters
class FileChange:
    path: str
    action: str  # add | update | delete
    cluster: str | None
    content: bytes | None = None  # None for deletions, and once written (publish.handed_over)


@dataclass(frozen=True)
class ClusterChange:
    cluster_id: str
    action: str  # add | update | prune | unchanged | failed | disabled
    doc_id: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Guards:
    full_run: bool  # False for --cluster / watch batches
    documents_read: int
    allow_empty: bool = False
    allow_mass_prune: bool = False
    max_prune_count: int = 5
    max_prune_share: float = 0.25
    # False when part of the source could not be read: a missing document may only be unread,
    # so nothing is pruned as deleted (disabled documents were read and still prune).
    source_complete: bool = True
    # No rollout waves: changing more running clusters than both limits is refused (issue 20)
    allow_fleet_change: bool = False
    max_fleet_change_count: int = 20
    max_fleet_change_share: float = 0.5
    waves: bool = False


@dataclass(frozen=True)
class Plan:
    files: tuple[FileChange, ...]
    clusters: tuple[ClusterChange, ...]
    problems: tuple[Problem, ...] = ()  # conflicts found while planning (cluster kept)
    refusal: str | None = None  # set when a guard refuses the run

    @property
    def empty(self) -> bool:
        return not self.files

    def by_action(self, action: str) -> list[ClusterChange]:
        return [c for c in self.clusters if c.action == action]

    def counts(self) -> dict[str, int]:
        counts = Counter(c.action for c in self.clusters)
        return {k: counts.get(k, 0) for k in ("add", "update", "prune", "unchanged", "failed")}


def blob_id(content: bytes) -> str:
    """git's object id for a blob with this content (what `git hash-object` prints)."""
    h = hashlib.sha1(b"blob %d\0" % len(content))
    h.update(content)
    return h.hexdigest()


@dataclass
class _RepoCluster:
    files: dict[str, CurrentFile] = field(default_factory=dict)

    @property
    def doc_id(self) -> str | None:
        ids = Counter(f.header.doc_id for f in self.files.values() if f.header and f.header.doc_id)
        return ids.most_common(1)[0][0] if ids else None

    def holds(self, want: Mapping[str, DesiredFile]) -> bool:
        """Exactly these files, each with its blob: unchanged, as most clusters of a no-op."""
        return want.keys() == self.files.keys() and all(
            self.files[p].blob == f.blob for p, f in want.items())


@dataclass(frozen=True)
class Documents:
    """What the documents read say about clusters that were not rendered (`kept`)."""

    failed_ids: frozenset[str]
    failed_docs: frozenset[str]
    disabled_ids: frozenset[str]
    disabled_docs: frozenset[str]
    renamed: Mapping[str, str]  # document _id -> the clusterId it renders now

    @classmethod
    def of(cls, failed: Iterable[Failed], disabled: Iterable[Disabled],
           desired_docs: Mapping[str, str]) -> Documents:
        failed, disabled = list(failed), list(disabled)
        return cls(frozenset(f.cluster_id for f in failed if f.cluster_id),
                   frozenset(f.doc_id for f in failed),
                   frozenset(d.cluster_id for d in disabled if d.cluster_id),
                   frozenset(d.doc_id for d in disabled),
                   {doc: cid for cid, doc in desired_docs.items()})


DISABLED = "disabled (enabled: false)"
FAILED = "document failed; files kept as they are"
NO_ID = "no document _id in the files"


def absent_fate(cid: str, doc: str | None, docs: Documents, source_complete: bool
                ) -> tuple[str, str]:
    """("keep" | "prune", why) for a cluster the repository holds and nothing was rendered for.
    The one statement of these rules: the quotas (`trinogen.admission`) count what is kept."""
    if cid in docs.failed_ids or (doc is not None and doc in docs.failed_docs):
        return "keep", FAILED
    if cid in docs.disabled_ids or (doc is not None and doc in docs.disabled_docs):
        return "prune", DISABLED  # a disabled document was read: it prunes even then
    if doc is None:  # whether its document is gone cannot be told
        return "keep", NO_ID
    reason = (f"document now has clusterId {docs.renamed[doc]}" if doc in docs.renamed
              else "document deleted")
    if not source_complete:
        return "keep", "the source was not read completely; kept rather than pruned as " + reason
    return "prune", reason


def kept(cid: str, doc: str | None, docs: Documents, *, source_complete: bool,
         targets: set[str] | None) -> bool:
    """Whether the plan leaves the files of a cluster nothing was rendered for as they are."""
    return ((targets is not None and cid not in targets)
            or absent_fate(cid, doc, docs, source_complete)[0] == "keep")


@dataclass
class _Builder:
    """The plan being assembled, cluster by cluster."""

    files: list[FileChange] = field(default_factory=list)
    clusters: list[ClusterChange] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def keep(self, cid: str, doc: str | None, reason: str) -> None:
        self.clusters.append(ClusterChange(cid, "failed", doc, reason))


def make_plan(
    *,
    layout: Layout,
    current: Mapping[str, CurrentFile],
    desired: Mapping[str, Mapping[str, DesiredFile]],  # cluster id -> {path: file}
    desired_docs: Mapping[str, str],  # cluster id -> document _id, for rendered clusters
    failed: Iterable[Failed],
    disabled: Iterable[Disabled],
    guards: Guards,
    targets: set[str] | None = None,  # cluster ids of a targeted run; None = all
    extra: Mapping[str, DesiredFile] | None = None,  # files of no cluster (the app-of-apps)
    held: Mapping[str, CurrentFile] | None = None,  # a targeted run: only its clusters' files
) -> Plan:
    repo = _repo_clusters(layout, current if held is None else held)
    docs = Documents.of(failed, disabled, desired_docs)
    scope = set(repo) | set(desired) | docs.failed_ids
    if targets is not None:
        scope &= targets
    plan = _Builder()
    for cid in sorted(scope):
        have = repo.get(cid, _RepoCluster())
        if cid in desired:
            _plan_rendered(plan, cid, desired[cid], desired_docs.get(cid), have, current)
        else:
            _plan_absent(plan, cid, have, docs, guards)
    _plan_extra(plan, extra or {}, current)
    # a targeted run counts the fleet's clusters only when a guard asks (issue 22)
    refusal = refusal_of(plan.clusters, guards, (lambda: len(repo)) if held is None
                         else lambda: len(_repo_clusters(layout, current)))
    return Plan(tuple(plan.files), tuple(plan.clusters), tuple(plan.problems), refusal)


def _repo_clusters(layout: Layout, current: Mapping[str, CurrentFile]) -> dict[str, _RepoCluster]:
    """trinogen's files in the repository, by cluster (files without the header are not ours)."""
    repo: dict[str, _RepoCluster] = {}
    cluster_of = layout.cluster_of
    for path, cur in current.items():
        if cur.header is not None and (cid := cluster_of(path)) is not None:
            (repo.get(cid) or repo.setdefault(cid, _RepoCluster())).files[path] = cur
    return repo


def _plan_rendered(plan: _Builder, cid: str, want: Mapping[str, DesiredFile], doc: str | None,
                   have: _RepoCluster, current: Mapping[str, CurrentFile]) -> None:
    """A rendered cluster: add, update, unchanged, or kept when a foreign file is in the way."""
    changes, conflicts = _diff_cluster(cid, want, have, current)
    if conflicts:
        plan.problems.extend(conflicts)
        plan.keep(cid, doc, "; ".join(p.message for p in conflicts))
    elif not changes:
        plan.clusters.append(ClusterChange(cid, "unchanged", doc))
    else:
        plan.files.extend(changes)
        plan.clusters.append(ClusterChange(cid, "update" if have.files else "add", doc))


def _plan_absent(plan: _Builder, cid: str, have: _RepoCluster, docs: Documents,
                 guards: Guards) -> None:
    """A cluster with nothing rendered: kept (its document failed or is unknown) or pruned."""
    doc = have.doc_id
    fate, reason = absent_fate(cid, doc, docs, guards.source_complete)
    if not have.files and reason != FAILED:
        return
    if fate == "prune":
        plan.clusters.append(ClusterChange(cid, "prune", doc, reason))
        plan.files.extend(FileChange(p, "delete", cid) for p in sorted(have.files))
        return
    if reason == NO_ID:
        plan.problems.append(Problem(cid, "", "its files carry no document _id in their header, "
                                     "so trinogen cannot tell whether the document is gone; kept"))
    plan.keep(cid, doc, reason)


def _plan_extra(plan: _Builder, extra: Mapping[str, DesiredFile],
                current: Mapping[str, CurrentFile]) -> None:
    """Files of no cluster (the app-of-apps): written unless a foreign file is in the way."""
    for path, file in sorted(extra.items()):
        found = current.get(path)
        if found is not None and found.header is None:
            plan.problems.append(Problem("-", path, "exists and was not written by trinogen; "
                                         "not replaced"))
        elif found is None or found.blob != file.blob:
            plan.files.append(FileChange(path, "update" if found else "add", None,
                                         _content(path, file)))


def _content(path: str, file: DesiredFile) -> bytes:
    if file.content is None:  # a cache hit is only used when the repository holds its blob
        raise AssertionError(f"{path}: no content for a changed file")
    return file.content


def _diff_cluster(cid: str, want: Mapping[str, DesiredFile], have: _RepoCluster,
                  current: Mapping[str, CurrentFile]) -> tuple[list[FileChange], list[Problem]]:
    if have.holds(want):  # no sorting for what a no-op finds for nearly every cluster (issue 22)
        return [], []
    changes: list[FileChange] = []
    conflicts: list[Problem] = []
    for path in sorted(want):
        file = want[path]
        cur = current.get(path)
        if cur is not None and cur.header is None:
            conflicts.append(Problem(cid, path, "exists and was not written by trinogen (no header); "
                                     "move it away so trinogen can manage it"))
        elif cur is None or cur.blob != file.blob:
            changes.append(FileChange(path, "update" if cur else "add", cid, _content(path, file)))
    for path in sorted(set(have.files) - set(want)):
        changes.append(FileChange(path, "delete", cid))
    return ([] if conflicts else changes), conflicts


def refusal_of(clusters: Iterable[ClusterChange], g: Guards, count: Callable[[], int]) -> str | None:
    """Why the guards refuse a plan with these cluster changes, or None; `count` (the
    repository's clusters) is asked only when the changes are more than a guard's count."""
    changes = list(clusters)
    return _empty_source(g, count) or _mass_prune(
        [c for c in changes if c.action == "prune"], g, count) or _fleet_change(
        [c for c in changes if c.action == "update"], g, count)


def _empty_source(g: Guards, count: Callable[[], int]) -> str | None:
    if g.full_run and g.documents_read == 0 and not g.allow_empty and (repo_count := count()):
        return (
            f"the source returned no documents at all, while the repository holds {repo_count} "
            "clusters; refusing to prune them all. If the collection really is empty, run again "
            "with --allow-empty"
        )
    return None


def _over_both(n: int, count: int, share: float, repo_count: int) -> bool:
    """More than BOTH limits: the count and the share of the repository's clusters."""
    return n > count and n > share * repo_count


def _named(changes: list[ClusterChange]) -> str:  # the first ten, for a refusal's message
    return ", ".join(c.cluster_id for c in changes[:10]) + (" ..." if len(changes) > 10 else "")


def _mass_prune(prunes: list[ClusterChange], g: Guards, count: Callable[[], int]) -> str | None:
    n = len(prunes)  # more than both of the mass-prune limits?
    if g.allow_mass_prune or n <= g.max_prune_count or not _over_both(
            n, g.max_prune_count, g.max_prune_share, repo_count := count()):
        return None
    return (
        f"the run would prune {n} of {repo_count} clusters ({_named(prunes)}), more than "
        f"sync.max_prune_count ({g.max_prune_count}) and sync.max_prune_share "
        f"({g.max_prune_share:.0%}); check the source, then run again with --allow-mass-prune"
    )


def _fleet_change(updates: list[ClusterChange], g: Guards, count: Callable[[], int]) -> str | None:
    """Without waves, an update of more running clusters than both limits goes nowhere (with no
    rollout record a settings change and a mass edit look alike: both count, same blast radius)."""
    n = len(updates)
    if g.allow_fleet_change or g.waves or n <= g.max_fleet_change_count or not _over_both(
            n, g.max_fleet_change_count, g.max_fleet_change_share, repo_count := count()):
        return None
    return (
        f"the run would change {n} of {repo_count} running clusters at once ({_named(updates)}), "
        f"more than sync.max_fleet_change_count ({g.max_fleet_change_count}) and "
        f"sync.max_fleet_change_share ({g.max_fleet_change_share:.0%}); a settings, template or "
        "chart change should go in waves (the `rollout` settings, docs/rollouts.md), or run "
        "again with --allow-fleet-change"
    )


def unified_diff(
    plan: Plan, read_old: Callable[[str], bytes | None], mask: Callable[[str], str] = lambda s: s
) -> str:
    """A unified diff of the whole plan, for `sync --dry-run`; `mask` hides secret values."""
    import difflib

    chunks = []
    for change in plan.files:
        old = read_old(change.path) if change.action != "add" else b""
        new = change.content or b""
        a = mask((old or b"").decode("utf-8", "replace")).splitlines(keepends=True)
        b = mask(new.decode("utf-8", "replace")).splitlines(keepends=True)
        src = "/dev/null" if change.action == "add" else f"a/{change.path}"
        dst = "/dev/null" if change.action == "delete" else f"b/{change.path}"
        text = "".join(difflib.unified_diff(a, b, src, dst))
        if text and not text.endswith("\n"):
            text += "\n"
        chunks.append(text)
    return "".join(chunks)
