"""Planning against the repository's tree, and publishing the plan: commit, push, retries.

A push the remote rejects because it moved on is not an error: the working copy is refreshed,
the documents are read again and the plan is made again against the new tree, then pushed
again, up to `git.push_retries` times. Nothing is ever merged.

Reading again is what keeps several writers from losing an update (issue 11, item 1): the
commit that beat us was pushed by a writer whose read of the source came before its push, and
our new read comes after our fetch of that commit, so it is at least as new. Re-planning with
the documents of the first read could replace a newer state with an older one (a resize
undone, a pruned cluster brought back). The new read also drops render-cache hits whose files
the other writer changed, so they are rendered instead of planned without content.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

from trinogen.desired import Desired
from trinogen.errors import GitUnavailable, Problem, SafetyRefusal
from trinogen.model import Failed
from trinogen.plan import CurrentFile, DesiredFile, FileChange, Guards, Layout, Plan, make_plan
from trinogen.ports import CacheEntry, PushOutcome, Repository
from trinogen.render import HEAD_BYTES, FileHeader, parse_header

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Planner:
    """Makes the plan for one repository tree; a plan a guard refuses raises SafetyRefusal."""

    layout: Layout
    desired: Desired
    guards: Guards
    repo: Repository
    targets: set[str] | None = None
    # Adds the tenants' AppProjects to the plan (trinogen.appprojects); None: no projects.
    projects: Callable[[Plan, Mapping[str, str], Mapping[str, CurrentFile]], Plan] | None = None
    # Blob id -> the render-cache entry that rendered it (a targeted run: other clusters'
    # headers are known without reading their files; issue 22). None: read them.
    owners: Mapping[str, CacheEntry] | None = None

    def __call__(self, tree: Mapping[str, str]) -> Plan:
        d = self.desired
        current: Mapping[str, CurrentFile]
        if self.targets is None:
            current, held = current_files(tree, d, self.repo), None
        else:  # a targeted run (a watch batch) looks at its clusters' files, not the fleet's
            current = TreeFiles(tree, d, self.repo, self.owners)
            held = {p: current[p] for p in files_of(self.layout, tree, self.targets)}
        plan = make_plan(layout=self.layout, current=current, held=held,
                         desired=d.files, desired_docs=d.docs, failed=d.failed,
                         disabled=d.disabled, guards=self.guards, targets=self.targets,
                         extra=d.extra)
        if plan.refusal:
            raise SafetyRefusal(plan.refusal)
        return self.projects(plan, tree, current) if self.projects is not None else plan


def current_files(
    tree: Mapping[str, str], desired: Desired, repo: Repository
) -> dict[str, CurrentFile]:
    """The repository's files with their headers; only files unlike any desired one are read.
    A file is made once per blob and the tree's paths only look it up (issue 22)."""
    known = _desired_heads(desired)
    unknown = {b for b in tree.values() if b not in known}
    heads = repo.heads(unknown)
    known.update({b: CurrentFile(b, parse_header(heads.get(b, b""))) for b in unknown})
    return {path: known[blob] for path, blob in tree.items()}


class TreeFiles(Mapping[str, CurrentFile]):
    """The repository's files with their headers, as `current_files` gives them, each made
    when it is looked up: a targeted run looks up its clusters' files, the app-of-apps and the
    Applications, not the ~70,000 files of 10,000 clusters on every watch batch (issue 22).
    The headers no render-cache entry and no desired file tells are read from git in one batch,
    when the first of them is looked up (in a steady watch: never)."""

    def __init__(self, tree: Mapping[str, str], desired: Desired, repo: Repository,
                 owners: Mapping[str, CacheEntry] | None) -> None:
        self.tree, self.owners, self.repo = tree, owners or {}, repo
        self.known = _desired_heads(desired)
        self._read = False  # the unknown headers were read
        self._headers: dict[int, FileHeader] = {}  # one per cache entry, shared by its files

    def __getitem__(self, path: str) -> CurrentFile:
        blob = self.tree[path]
        found = self.known.get(blob)
        if found is not None:
            return found
        entry = self.owners.get(blob)
        if entry is None:
            self._read_unknown()
            return self.known[blob]
        header = self._headers.get(id(entry))
        if header is None:
            header = self._headers[id(entry)] = FileHeader(entry.cluster_id, entry.doc_id)
        return CurrentFile(blob, header)

    def _read_unknown(self) -> None:
        if self._read:
            return
        self._read = True
        unknown = {b for b in self.tree.values() if b not in self.known and b not in self.owners}
        heads = self.repo.heads(unknown)
        self.known.update({b: CurrentFile(b, parse_header(heads.get(b, b""))) for b in unknown})

    def __iter__(self) -> Iterator[str]:
        return iter(self.tree)

    def __len__(self) -> int:
        return len(self.tree)


def files_of(layout: Layout, tree: Mapping[str, str], clusters: Collection[str]) -> list[str]:
    """The paths of these clusters' files (`Layout.cluster_of`), found by prefix when they are
    few (one C-level test per path instead of a split)."""
    if len(clusters) > 64:
        return [p for p in tree if layout.cluster_of(p) in clusters]
    heads = tuple(f"{layout.clusters_dir}/{c}/" for c in clusters)
    apps = {f"{layout.applications_dir}/{c}.yaml" for c in clusters}
    return [p for p in tree
            if (p in apps or p.startswith(heads)) and layout.cluster_of(p) in clusters]


def _desired_heads(desired: Desired) -> dict[str, CurrentFile]:
    """The desired files' blobs with their headers, known without reading git."""
    known: dict[str, CurrentFile] = {}
    for cid, files in desired.files.items():
        hit = FileHeader(cid, desired.docs[cid])
        for file in files.values():
            # a cache hit's blob carries this cluster's header; otherwise read it from the content
            known[file.blob] = CurrentFile(file.blob, hit if file.content is None
                                           else parse_header(file.content[:HEAD_BYTES]))
    for file in desired.extra.values():
        known[file.blob] = CurrentFile(file.blob, FileHeader(None, None) if file.content is None
                                       else parse_header(file.content[:HEAD_BYTES]))
    return known


@dataclass(frozen=True)
class Published:
    """What publishing did: the last plan (and the planner, with the read, that made it), and
    the commit when it was pushed."""

    plan: Plan
    planner: Planner
    commit: str | None = None
    pushed: bool = False
    attempts: int = 0  # commits pushed or tried
    written: int = 0  # files added or updated, over every attempt


# Reads the source again for a tree the remote moved on to, and returns its planner.
Reread = Callable[[Mapping[str, str]], Planner]


def publish(
    repo: Repository, planner: Planner, tree: Mapping[str, str], layout: Layout, *,
    retries: int, reread: Reread, before_push: Callable[[], None] | None = None,
) -> Published:
    """Plan, commit and push once; read again, re-plan and retry while the remote moves on."""
    attempts = written = 0
    while True:
        plan = planner(tree)
        if plan.empty:
            return Published(plan, planner, attempts=attempts, written=written)
        attempts += 1
        written += sum(1 for ch in plan.files if ch.action != "delete")
        repo.apply(plan.files, commit_message(plan))
        # git holds the files now: their bytes (57 MB at 10,000 clusters) go before the push,
        # the status write-back and the report, which need only paths and blob ids.
        if sum(len(ch.content) for ch in plan.files if ch.content is not None) >= RELEASE_AFTER:
            plan = handed_over(plan, planner.desired)
            give_back_freed_memory()
        sha, outcome = _commit_and_push(repo, before_push)
        if outcome.pushed:
            checkpoint("after-push")
            return Published(plan, planner, sha, True, attempts, written)
        if attempts > retries:
            raise GitUnavailable(
                f"the push was rejected {attempts} times because the remote kept moving on; "
                "nothing was lost, run again"
            )
        log.info("push rejected (%s): the remote moved on; reading the documents again and "
                 "re-planning (attempt %d)", outcome.summary, attempts + 1)
        repo.refresh()
        tree = repo.tree(layout)
        planner = reread(tree)


def handed_over(plan: Plan, desired: Desired) -> Plan:
    """The plan and the desired tree once their files are written into the clone: the same
    paths and blob ids, without the rendered bytes (issue 22: a full sync of 10,000 clusters
    held 57 MB of them until it exited)."""
    for files in (*desired.files.values(), desired.extra):
        for path, file in files.items():
            if file.content is not None:
                files[path] = DesiredFile(file.blob, None)  # like a cache hit: git has it
    return dataclasses.replace(plan, files=tuple(
        ch if ch.content is None else FileChange(ch.path, ch.action, ch.cluster)
        for ch in plan.files))


# Rendered bytes written that make releasing them worth its cost: handing over rebuilds one
# object per file (~2% of a full sync's instructions at 1,000 clusters) and malloc_trim walks
# the whole heap (10-40 ms on a large, fragmented one); below this there is little to win.
RELEASE_AFTER = 16 << 20


def give_back_freed_memory() -> None:
    """Return the heap pages `handed_over` freed to the system. glibc keeps freed pages for
    its own later use, and Python's allocator takes new memory elsewhere, so without this the
    render-cache save and the report after the write raised the peak RSS again (issue 22:
    341 -> 319 MiB at 10,000 clusters). Nothing where the C library has no malloc_trim."""
    import ctypes  # only once a commit is written

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _commit_and_push(
    repo: Repository, before_push: Callable[[], None] | None
) -> tuple[str, PushOutcome]:
    checkpoint("after-write")
    sha = repo.commit()
    checkpoint("after-commit")
    if before_push is not None:
        before_push()  # watch: "am I still the leader?"; raising aborts the push
    return sha, repo.push()


_COMMITTED = (("add", "added"), ("update", "updated"), ("prune", "pruned"))


def commit_message(plan: Plan) -> str:
    """A title counting the clusters changed, then one line per cluster with its _id and why."""
    lines = [_commit_title(plan.counts()), ""]
    for action, word in _COMMITTED:
        for c in plan.by_action(action):
            why = f", {c.reason}" if c.reason else ""
            lines.append(f"{word}: {c.cluster_id} (_id {c.doc_id or 'unknown'}{why})")
    shared = [f"{ch.path} ({ch.action})" for ch in plan.files if ch.cluster is None]
    if shared:  # the app-of-apps, the tenants' AppProjects
        lines.append(f"also: {', '.join(shared)}")
    return "\n".join(lines) + "\n"


def _commit_title(counts: Mapping[str, int]) -> str:
    parts = [f"{counts[a]} {w}" for a, w in _COMMITTED if counts[a]]
    changed = counts["add"] + counts["update"] + counts["prune"]
    plural = "s" if changed != 1 else ""
    return f"trinogen: sync {changed} cluster{plural} ({', '.join(parts) or 'shared files'})"


def plan_failures(plan: Plan) -> list[Failed]:
    """Clusters the plan had to keep (a foreign file in the way, no _id in the header)."""
    by_cluster: dict[str, list[Problem]] = {}
    for p in plan.problems:
        by_cluster.setdefault(p.cluster, []).append(p)
    docs = {c.cluster_id: c.doc_id for c in plan.clusters}
    return [Failed(docs.get(cid) or "", cid, tuple(ps), "plan")
            for cid, ps in sorted(by_cluster.items())]


def checkpoint(name: str) -> None:
    """Crash-safety tests kill a real `trinogen sync` here: TRINOGEN_TEST_KILL_AT=<name>.

    Points: after-write, after-commit, after-push (before the status write-back).
    """
    if os.environ.get("TRINOGEN_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
