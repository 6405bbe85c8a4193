"""A targeted run's planner (a watch batch, `sync --cluster`) looks up only its clusters' files
(publish.TreeFiles, publish.files_of) and counts the fleet only when a guard asks: its plan is
the plan of every file's header read up front (publish.current_files), and its guards judge the
whole repository's size."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes import FakeRepo, git_blob_id, header
from trinogen.desired import Desired
from trinogen.model import Disabled
from trinogen.plan import DesiredFile, Guards, Layout, make_plan
from trinogen.ports import CacheEntry
from trinogen.publish import Planner, current_files, files_of

LAYOUT = Layout("trino-clusters", "trino-applications", "argocd/root.yaml")
CIDS = [f"c{i:03}" for i in range(70)] + ["ab", "abc"]


def _files(cid: str, doc: str, body: str = "v: 1\n") -> dict[str, bytes]:
    return {f"trino-clusters/{cid}/values.yaml": header(cid, doc) + body.encode(),
            f"trino-clusters/{cid}/catalog/tpch.properties": header(cid, doc) + b"x=1\n",
            f"trino-applications/{cid}.yaml": header(cid, doc) + b"kind: Application\n"}


def _repo() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for cid in CIDS:
        files.update(_files(cid, f"d-{cid}"))
    files["trino-clusters/c001/notes.md"] = b"hand-written\n"  # no header: never touched
    files["trino-applications/team.project.yaml"] = b"kind: AppProject\n"  # no cluster's
    files["argocd/root.yaml"] = header("-", "-") + b"root\n"
    return files


def _owners(files: dict[str, bytes], cached: set[str]) -> dict[str, CacheEntry]:
    """Blob -> the render-cache entry of the cached clusters (their headers are known)."""
    out = {}
    for cid in cached:
        mine = {p: git_blob_id(c) for p, c in _files(cid, f"d-{cid}").items()}
        entry = CacheEntry(cid, f"d-{cid}", mine)
        out.update({b: entry for b in mine.values() if b in {git_blob_id(c) for c in files.values()}})
    return out


def _desired(targets: set[str]) -> Desired:
    """Each target rendered anew (its values change) except c002 (disabled) and "ab" (renamed
    to "ab-new"); c003's _id is read with nothing rendered (deleted: its files pruned)."""
    d = Desired()
    for cid in sorted(targets - {"c002", "ab", "c003"}):
        d.files[cid] = {p: DesiredFile.of(c) for p, c in _files(cid, f"d-{cid}", "v: 2\n").items()}
        d.docs[cid] = f"d-{cid}"
    if "ab" in targets:
        d.files["ab-new"] = {p: DesiredFile.of(c) for p, c in _files("ab-new", "d-ab").items()}
        d.docs["ab-new"] = "d-ab"
    if "c002" in targets:
        d.disabled.append(Disabled("d-c002", "c002"))
    d.extra["argocd/root.yaml"] = DesiredFile.of(header("-", "-") + b"root 2\n")
    return d


TARGETS: list[tuple[set[str], set[str]]] = [  # (targets, clusters the render cache knows)
    ({"ab"}, set(CIDS)),  # "abc" shares the prefix, not the directory
    ({"c001", "c004"}, set(CIDS)),  # c001 holds a hand-written file
    ({"c001", "c002", "c003", "ab"}, set(CIDS) - {"c001", "c050"}),  # headers read from git
    ({"c005"}, set()),  # no render cache: every header read
    (set(CIDS[:66]) | {"ab", "ab-new"}, set(CIDS)),  # many targets: found by cluster, not prefix
]


@pytest.mark.parametrize(("targets", "cached"), TARGETS, ids=range(len(TARGETS)))
def test_a_targeted_plan_is_the_plan_of_every_header_read(targets: set[str],
                                                           cached: set[str]) -> None:
    """Looking up only the targets' files plans the same files, clusters and problems as
    reading every file's header first."""
    files = _repo()
    repo = FakeRepo(files)
    tree = repo.tree(LAYOUT)
    owners = _owners(files, cached) or None
    desired = _desired(targets)
    guards = Guards(full_run=False, documents_read=len(targets), max_prune_count=100,
                    max_fleet_change_count=1000)
    lazy = Planner(LAYOUT, desired, guards, repo, set(targets), owners=owners)(tree)
    full = make_plan(layout=LAYOUT, current=current_files(tree, desired, repo),
                     desired=desired.files, desired_docs=desired.docs, failed=desired.failed,
                     disabled=desired.disabled, guards=guards, targets=set(targets),
                     extra=desired.extra)
    assert lazy == full
    assert {c.cluster_id for c in full.clusters} & targets  # the table plans something


@pytest.mark.parametrize(("limits", "refused"), [
    ({"max_prune_count": 1, "max_prune_share": 0.01}, "would prune 2 of 72 clusters"),
    ({"max_prune_count": 1, "max_prune_share": 0.05}, None),  # 2 is not over 5% of 72
    ({"max_prune_count": 2, "max_prune_share": 0.0}, None),  # not over the count: never counted
    ({"max_fleet_change_count": 1, "max_fleet_change_share": 0.01},
     "would change 2 of 72 running clusters"),
])
def test_a_targeted_plans_guards_count_the_whole_repository(limits: dict[str, Any],
                                                             refused: str | None) -> None:
    """The share a guard allows is of every cluster the repository holds, not of the targets."""
    repo = FakeRepo(_repo())
    targets = {"c002", "c003"} if "max_prune_count" in limits else {"c004", "c005"}
    desired = _desired(targets)
    guards = Guards(full_run=False, documents_read=2, **limits)
    plan = make_plan(layout=LAYOUT, current={}, held={}, desired={}, desired_docs={},
                     failed=(), disabled=(), guards=guards)  # nothing to judge: not refused
    assert plan.refusal is None
    from trinogen.errors import SafetyRefusal

    planner = Planner(LAYOUT, desired, guards, repo, targets)
    if refused is None:
        planner(repo.tree(LAYOUT))
    else:
        with pytest.raises(SafetyRefusal, match=refused):
            planner(repo.tree(LAYOUT))


PATHS = ["trino-clusters/ab/values.yaml", "trino-clusters/abc/values.yaml",
         "trino-clusters/ab", "trino-clusters//x.yaml", "trino-applications/ab.yaml",
         "trino-applications/abc.yaml", "trino-applications/a.b.yaml",
         "trino-applications/sub/ab.yaml", "argocd/root.yaml", "trino-clusters/a.b/v.yaml"]


@pytest.mark.parametrize("clusters", [{"ab"}, {"abc", "a.b"}, {""}, {f"x{i}" for i in range(70)}
                                      | {"ab"}])
def test_files_of_finds_what_cluster_of_says(clusters: set[str]) -> None:
    """The paths found by prefix are those `Layout.cluster_of` assigns to the clusters."""
    tree = {p: "0" * 40 for p in PATHS}
    assert files_of(LAYOUT, tree, clusters) == [p for p in PATHS
                                                if LAYOUT.cluster_of(p) in clusters]
