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

from trinogen.errors import Problem
from trinogen.model import Disabled, Failed
from trinogen.render import FileHeader


@dataclass(frozen=True)
class CurrentFile:
    """A file under the output roots as it is in the working copy."""

    blob: str  # git blob id of its content
    header: FileHeader | None  # None: not written by trinogen, never touched


@dataclass(frozen=True)
class DesiredFile:
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
            if "/" not in name and name.endswith(".yaml") and len(name) > len(".yaml"):
                return name[: -len(".yaml")]
        return None


@dataclass(frozen=True)
class FileChange:
    path: str
    action: str  # add | update | delete
    cluster: str | None
    content: bytes | None = None  # None for deletions


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


@dataclass(frozen=True)
class Plan:
    files: tuple[FileChange, ...]
    clusters: tuple[ClusterChange, ...]
    problems: tuple[Problem, ...] = ()  # conflicts found while planning (cluster kept)
    refusal: str | None = None  # set when a guard refuses the run
    repo_clusters: int = 0

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
) -> Plan:
    repo: dict[str, _RepoCluster] = {}
    for path, cur in current.items():
        cid = layout.cluster_of(path)
        if cid is not None and cur.header is not None:
            repo.setdefault(cid, _RepoCluster()).files[path] = cur
    failed = list(failed)
    disabled = list(disabled)
    failed_ids = {f.cluster_id for f in failed if f.cluster_id}
    failed_docs = {f.doc_id for f in failed}
    disabled_ids = {d.cluster_id for d in disabled if d.cluster_id}
    disabled_docs = {d.doc_id for d in disabled}
    renamed = {doc: cid for cid, doc in desired_docs.items()}

    scope = set(repo) | set(desired) | failed_ids
    if targets is not None:
        scope &= targets
    files: list[FileChange] = []
    clusters: list[ClusterChange] = []
    problems: list[Problem] = []
    for cid in sorted(scope):
        have = repo.get(cid, _RepoCluster())
        if cid in desired:
            changes, conflicts = _diff_cluster(cid, desired[cid], have, current)
            doc = desired_docs.get(cid)
            if conflicts:
                problems.extend(conflicts)
                clusters.append(ClusterChange(cid, "failed", doc, "; ".join(p.message for p in conflicts)))
            elif not changes:
                clusters.append(ClusterChange(cid, "unchanged", doc))
            else:
                files.extend(changes)
                clusters.append(ClusterChange(cid, "update" if have.files else "add", doc))
            continue
        doc = have.doc_id
        if cid in failed_ids or (doc is not None and doc in failed_docs):
            clusters.append(ClusterChange(cid, "failed", doc, "document failed; files kept as they are"))
            continue
        if not have.files:
            continue
        if cid in disabled_ids or (doc is not None and doc in disabled_docs):
            reason = "disabled (enabled: false)"
        elif doc is not None and doc in renamed:
            reason = f"document now has clusterId {renamed[doc]}"
        elif doc is None:
            problems.append(Problem(cid, "", "its files carry no document _id in their header, so "
                                    "trinogen cannot tell whether the document is gone; kept"))
            clusters.append(ClusterChange(cid, "failed", None, "no document _id in the files"))
            continue
        else:
            reason = "document deleted"
        if not guards.source_complete and not reason.startswith("disabled"):
            clusters.append(ClusterChange(cid, "failed", doc, "the source was not read completely; "
                                          "kept rather than pruned as " + reason))
            continue
        clusters.append(ClusterChange(cid, "prune", doc, reason))
        files.extend(FileChange(p, "delete", cid) for p in sorted(have.files))

    for path, file in sorted((extra or {}).items()):
        found = current.get(path)
        if found is not None and found.header is None:
            problems.append(Problem("-", path, "exists and was not written by trinogen; not replaced"))
        elif found is None or found.blob != file.blob:
            if file.content is None:  # cached only when the repository holds exactly this blob
                raise AssertionError(f"{path}: no content for a changed file")
            files.append(FileChange(path, "update" if found else "add", None, file.content))

    refusal = _refusal(clusters, guards, len(repo))
    return Plan(tuple(files), tuple(clusters), tuple(problems), refusal, len(repo))


def _diff_cluster(
    cid: str, want: Mapping[str, DesiredFile], have: _RepoCluster,
    current: Mapping[str, CurrentFile],
) -> tuple[list[FileChange], list[Problem]]:
    changes: list[FileChange] = []
    conflicts: list[Problem] = []
    for path in sorted(want):
        file = want[path]
        cur = current.get(path)
        if cur is not None and cur.header is None:
            conflicts.append(Problem(cid, path, "exists and was not written by trinogen (no header); "
                                     "move it away so trinogen can manage it"))
        elif cur is None or cur.blob != file.blob:
            if file.content is None:  # a cache hit is only used when the blobs match
                raise AssertionError(f"{path}: no content for a changed file")
            changes.append(FileChange(path, "update" if cur else "add", cid, file.content))
    for path in sorted(set(have.files) - set(want)):
        changes.append(FileChange(path, "delete", cid))
    return ([] if conflicts else changes), conflicts


def _refusal(clusters: list[ClusterChange], g: Guards, repo_count: int) -> str | None:
    if g.full_run and g.documents_read == 0 and repo_count > 0 and not g.allow_empty:
        return (
            f"the source returned no documents at all, while the repository holds {repo_count} "
            "clusters; refusing to prune them all. If the collection really is empty, run again "
            "with --allow-empty"
        )
    prunes = [c for c in clusters if c.action == "prune"]
    limit_share = g.max_prune_share * repo_count
    if (
        not g.allow_mass_prune
        and len(prunes) > g.max_prune_count
        and len(prunes) > limit_share
    ):
        names = ", ".join(c.cluster_id for c in prunes[:10]) + (" ..." if len(prunes) > 10 else "")
        return (
            f"the run would prune {len(prunes)} of {repo_count} clusters ({names}), more than "
            f"sync.max_prune_count ({g.max_prune_count}) and sync.max_prune_share "
            f"({g.max_prune_share:.0%}); check the source, then run again with --allow-mass-prune"
        )
    return None


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


def commit_message(plan: Plan) -> str:
    counts = plan.counts()
    parts = [f"{counts[a]} {w}" for a, w in (("add", "added"), ("update", "updated"),
                                                ("prune", "pruned")) if counts[a]]
    changed = counts["add"] + counts["update"] + counts["prune"]
    title = f"trinogen: sync {changed} cluster{'s' if changed != 1 else ''} ({', '.join(parts) or 'shared files'})"
    lines = [title, ""]
    for action, word in (("add", "added"), ("update", "updated"), ("prune", "pruned")):
        for c in plan.by_action(action):
            why = f", {c.reason}" if c.reason else ""
            lines.append(f"{word}: {c.cluster_id} (_id {c.doc_id or 'unknown'}{why})")
    if any(ch.cluster is None for ch in plan.files):
        lines.append("also: the app-of-apps Application")
    return "\n".join(lines) + "\n"
