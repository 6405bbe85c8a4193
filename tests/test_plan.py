"""trinogen.plan: desired files vs the repository's files -> a Plan; the prune guards."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from tests.fakes import git_blob_id, header
from trinogen.errors import Problem
from trinogen.model import Disabled, Failed
from trinogen.plan import (
    CurrentFile,
    DesiredFile,
    Documents,
    Guards,
    Layout,
    Plan,
    kept,
    make_plan,
)
from trinogen.publish import commit_message
from trinogen.render import FileHeader

LAYOUT = Layout("trino-clusters", "trino-applications")


def app(cid: str) -> str:
    return f"trino-applications/{cid}.yaml"


def values(cid: str) -> str:
    return f"trino-clusters/{cid}/values.yaml"


def content(cid: str, doc: str, body: str = "v: 1\n") -> bytes:
    return header(cid, doc) + body.encode()


def current(files: Mapping[str, bytes | None]) -> dict[str, CurrentFile]:
    """Repository files; content None stands for a file without trinogen's header."""
    out = {}
    for path, data in files.items():
        if data is None:
            out[path] = CurrentFile(git_blob_id(b"foreign\n"), None)
        else:
            lines = data.decode().splitlines()
            cid = lines[0].split(" for cluster ")[1].split(" ")[0]
            doc = lines[1].split("Document _id: ")[1]
            out[path] = CurrentFile(git_blob_id(data), FileHeader(cid, doc))
    return out


def wanted(files: Mapping[str, bytes]) -> dict[str, DesiredFile]:
    return {p: DesiredFile(git_blob_id(c), c) for p, c in files.items()}


def plan_for(
    repo: Mapping[str, bytes | None], desired: Mapping[str, Mapping[str, bytes]] = (),
    docs: Mapping[str, str] = (), *, failed: tuple[Failed, ...] = (),
    disabled: tuple[Disabled, ...] = (), guards: Guards | None = None,
    targets: set[str] | None = None,
) -> Plan:
    return make_plan(
        layout=LAYOUT, current=current(repo),
        desired={cid: wanted(f) for cid, f in dict(desired).items()},
        desired_docs=dict(docs), failed=failed, disabled=disabled,
        guards=guards or Guards(full_run=True, documents_read=max(1, len(dict(docs)))),
        targets=targets,
    )


# --- the mass-prune guard ------------------------------------------------------------------


def repo_of(n: int) -> dict[str, bytes | None]:
    return {app(f"c{i:03}"): content(f"c{i:03}", f"d{i}") for i in range(n)}


def prune_plan(total: int, pruned: int, **limits: object) -> Plan:
    """`total` clusters in the repository; the documents of the first `pruned` are deleted."""
    repo = repo_of(total)
    keep = {f"c{i:03}": {app(f"c{i:03}"): content(f"c{i:03}", f"d{i}")}
            for i in range(pruned, total)}
    docs = {cid: f"d{int(cid[1:])}" for cid in keep}
    guards = Guards(full_run=True, documents_read=len(keep) or 1, **limits)  # type: ignore[arg-type]
    return plan_for(repo, keep, docs, guards=guards)


@pytest.mark.parametrize(
    ("total", "pruned", "limits", "refused"),
    [
        # Defaults: refused only above BOTH 5 clusters and 25% of the repository's clusters.
        (10, 5, {}, False),  # at the count limit
        (10, 6, {}, True),  # one above the count limit, above the share (2.5)
        (100, 6, {}, False),  # above the count, below the share (25)
        (100, 25, {}, False),  # at the share limit
        (100, 26, {}, True),  # one above the share limit
        (24, 6, {}, False),  # 6 is exactly 25% of 24
        (20, 6, {}, True),  # 6 is above 25% of 20 (5)
        (10, 6, {"allow_mass_prune": True}, False),
        # Other limits.
        (10, 3, {"max_prune_count": 2, "max_prune_share": 0.2}, True),
        (10, 2, {"max_prune_count": 2, "max_prune_share": 0.0}, False),
        (10, 1, {"max_prune_count": 0, "max_prune_share": 0.0}, True),
        (10, 10, {"max_prune_count": 10, "max_prune_share": 0.5}, False),
        (10, 6, {"max_prune_count": 5, "max_prune_share": 0.6}, False),
        (10, 7, {"max_prune_count": 5, "max_prune_share": 0.6}, True),
    ],
)
def test_mass_prune_guard_boundaries(total: int, pruned: int, limits: dict[str, object],
                                     refused: bool) -> None:
    """A plan is refused exactly when its prunes exceed both the count and the share limit."""
    plan = prune_plan(total, pruned, **limits)
    assert len(plan.by_action("prune")) == pruned
    assert (plan.refusal is not None) == refused
    if refused:
        assert f"prune {pruned} of {total} clusters" in (plan.refusal or "")


@pytest.mark.parametrize(
    ("full_run", "documents_read", "allow_empty", "refused"),
    [(True, 0, False, True), (True, 0, True, False), (False, 0, False, False),
     (True, 1, False, False)],
)
def test_empty_source_guard(full_run: bool, documents_read: int, allow_empty: bool,
                            refused: bool) -> None:
    """A full run that read no document while the repository holds clusters is refused."""
    guards = Guards(full_run=full_run, documents_read=documents_read, allow_empty=allow_empty,
                    allow_mass_prune=True)
    plan = plan_for(repo_of(3), guards=guards)
    assert (plan.refusal is not None and "no documents" in plan.refusal) == refused


# --- actions per cluster and per file ------------------------------------------------------

A1 = content("a", "doc-a")
A2 = content("a", "doc-a", "v: 2\n")


@pytest.mark.parametrize(
    ("name", "repo", "desired", "docs", "extra", "cluster_action", "files"),
    [
        ("new cluster", {}, {"a": {app("a"): A1, values("a"): A1}}, {"a": "doc-a"}, {},
         "add", [(app("a"), "add"), (values("a"), "add")]),
        ("same files", {app("a"): A1}, {"a": {app("a"): A1}}, {"a": "doc-a"}, {},
         "unchanged", []),
        ("one file changed", {app("a"): A1, values("a"): A1},
         {"a": {app("a"): A1, values("a"): A2}}, {"a": "doc-a"}, {},
         "update", [(values("a"), "update")]),
        ("a file no longer rendered", {app("a"): A1, "trino-clusters/a/catalog/x.properties": A1},
         {"a": {app("a"): A1}}, {"a": "doc-a"}, {},
         "update", [("trino-clusters/a/catalog/x.properties", "delete")]),
        ("document deleted", {app("a"): A1, values("a"): A1}, {}, {}, {},
         "prune", [(app("a"), "delete"), (values("a"), "delete")]),
        ("document disabled", {app("a"): A1}, {}, {},
         {"disabled": (Disabled("doc-a", "a"),)}, "prune", [(app("a"), "delete")]),
        ("document failed", {app("a"): A1}, {}, {},
         {"failed": (Failed("doc-a", "a", (Problem("a", "x", "bad"),)),)}, "failed", []),
        ("failed document without a usable clusterId", {app("a"): A1}, {}, {},
         {"failed": (Failed("doc-a", None, (Problem("_id=doc-a", "", "bad"),)),)}, "failed", []),
        ("a foreign file in the way", {values("a"): None}, {"a": {values("a"): A1}},
         {"a": "doc-a"}, {}, "failed", []),
        ("files without a document _id", {app("a"): header("a", "")}, {}, {}, {}, "failed", []),
    ],
)
def test_plan_actions(name: str, repo: dict[str, bytes | None],
                      desired: dict[str, dict[str, bytes]], docs: dict[str, str],
                      extra: dict[str, tuple[object, ...]], cluster_action: str,
                      files: list[tuple[str, str]]) -> None:
    """Each cluster gets exactly one action, and its files the matching add/update/delete."""
    plan = plan_for(repo, desired, docs, failed=extra.get("failed", ()),  # type: ignore[arg-type]
                    disabled=extra.get("disabled", ()))  # type: ignore[arg-type]
    assert [(c.cluster_id, c.action) for c in plan.clusters] == [("a", cluster_action)], name
    assert [(f.path, f.action) for f in plan.files] == files
    assert plan.refusal is None
    for change in plan.files:  # what is written is the desired content itself
        if change.action != "delete":
            assert change.content == desired["a"][change.path]


def test_renamed_cluster_moves() -> None:
    """A document that now renders another clusterId adds the new cluster and prunes the old."""
    plan = plan_for({app("old"): content("old", "doc-1")}, {"new": {app("new"): content("new", "doc-1")}},
                    {"new": "doc-1"})
    assert [(c.cluster_id, c.action, c.reason) for c in plan.clusters] == [
        ("new", "add", ""), ("old", "prune", "document now has clusterId new")]


@pytest.mark.parametrize(("disabled", "action"), [(False, "failed"), (True, "prune")])
def test_an_incomplete_source_prunes_only_disabled_clusters(disabled: bool, action: str) -> None:
    """With part of the source unread, a missing document keeps its files; a disabled one prunes."""
    guards = Guards(full_run=True, documents_read=1, source_complete=False)
    plan = plan_for({app("a"): A1}, guards=guards,
                    disabled=(Disabled("doc-a", "a"),) if disabled else ())
    assert [c.action for c in plan.clusters] == [action]


def test_targets_limit_the_plan() -> None:
    """A targeted run plans and prunes only among its targets."""
    repo = {app("a"): A1, app("b"): content("b", "doc-b")}
    plan = plan_for(repo, targets={"b"})
    assert [(c.cluster_id, c.action) for c in plan.clusters] == [("b", "prune")]


def test_a_foreign_file_in_the_way_is_a_problem_naming_the_path() -> None:
    """A file without the header where a desired file goes is reported, and nothing is written."""
    plan = plan_for({values("a"): None}, {"a": {values("a"): A1}}, {"a": "doc-a"})
    assert plan.files == () and [p.field for p in plan.problems] == [values("a")]


def test_commit_message_lists_every_changed_cluster() -> None:
    """The title counts the changed clusters; one line per cluster names its _id and reason."""
    plan = plan_for({app("gone"): content("gone", "doc-g")},
                    {"new": {app("new"): content("new", "doc-n")}}, {"new": "doc-n"})
    message = commit_message(plan)
    assert message.splitlines()[0] == "trinogen: sync 2 clusters (1 added, 1 pruned)"
    assert "added: new (_id doc-n)" in message
    assert "pruned: gone (_id doc-g, document deleted)" in message


# (nothing rendered for cluster "c"; its files record document doc) -> does the repository keep it
KEEP_RULES = [
    # doc,   failed,  disabled, renamed, complete, targets, kept
    ("d", set(), set(), {}, True, None, False),                 # document deleted: pruned
    ("d", {"c"}, set(), {}, True, None, True),                  # its document failed (by id)
    ("d", {"d"}, set(), {}, True, None, True),                  # its document failed (by _id)
    ("d", set(), {"c"}, {}, False, None, False),                # disabled prunes, source or not
    (None, set(), {"c"}, {}, True, None, False),                # disabled, even with no _id
    (None, set(), set(), {}, True, None, True),                 # no _id: cannot tell, kept
    ("d", set(), set(), {}, False, None, True),                 # unread source: maybe not gone
    ("d", set(), set(), {"d": "c2"}, True, None, False),        # renamed: the old name goes
    ("d", set(), set(), {"d": "c2"}, False, None, True),        # ... unless the source is partial
    ("d", set(), set(), {}, True, {"other"}, True),             # outside a targeted run
    ("d", set(), set(), {}, True, {"c"}, False),                # inside it: pruned
]


@pytest.mark.parametrize(("doc", "failed", "disabled", "renamed", "complete", "targets", "want"),
                         KEEP_RULES)
def test_kept_states_the_plans_keep_rules(
    doc: str | None, failed: set[str], disabled: set[str], renamed: dict[str, str],
    complete: bool, targets: set[str] | None, want: bool,
) -> None:
    """`kept` says keep exactly when make_plan leaves the cluster's files as they are."""
    fails = [Failed(x if x.startswith("d") else "other-doc", x if x == "c" else None, (), "v")
             for x in failed]
    offs = [Disabled("other-doc", x) for x in disabled]
    docs = Documents.of(fails, offs, {cid: d for d, cid in renamed.items()})
    assert kept("c", doc, docs, source_complete=complete, targets=targets) is want
    current = {"trino-clusters/c/values.yaml": CurrentFile("b1", FileHeader("c", doc))}
    plan = make_plan(layout=LAYOUT, current=current, desired={}, desired_docs={},
                     failed=fails, disabled=offs,
                     guards=Guards(full_run=targets is None, documents_read=5,
                                   source_complete=complete), targets=targets)
    assert (not any(f.action == "delete" for f in plan.files)) is want
