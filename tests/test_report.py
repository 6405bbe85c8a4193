"""trinogen.report: the text people read after a command, built from small fakes of the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from trinogen.errors import Problem
from trinogen.report import LIST_LIMIT, colour_diff, format_text


@dataclass
class Change:
    cluster_id: str
    reason: str = ""


@dataclass
class FakePlan:
    changes: dict[str, list[Change]]
    unchanged: int = 0
    files: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.files

    def counts(self) -> dict[str, int]:
        return {**{a: len(self.changes.get(a, [])) for a in ("add", "update", "prune")},
                "unchanged": self.unchanged}

    def by_action(self, action: str) -> list[Change]:
        return self.changes.get(action, [])


@dataclass
class FakeFailed:
    cluster_id: str | None
    doc_id: str
    stage: str
    problems: tuple[Problem, ...]


@dataclass
class FakeReport:
    command: str
    plan: FakePlan | None = None
    diff: str = ""
    dry_run: bool = False
    pushed: bool = False
    commit: str = ""
    failed: list[FakeFailed] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rendered: list[Any] = field(default_factory=list)
    disabled: list[Any] = field(default_factory=list)
    out_dir: str | None = None


PLAN = FakePlan({"add": [Change("a")], "update": [Change("b", "values.yaml")],
                 "prune": [Change("c", "disabled")]}, unchanged=4, files=("x", "y"))


@pytest.mark.parametrize(("report", "first_line"), [
    (FakeReport("sync", PLAN, pushed=True, commit="0123456789abcdef"),
     "trinogen sync: 1 added, 1 updated, 1 pruned, 4 unchanged, 0 failed; commit 0123456789ab pushed"),
    (FakeReport("sync", PLAN, dry_run=True),
     "trinogen sync: 1 added, 1 updated, 1 pruned, 4 unchanged, 0 failed; "
     "dry run: nothing changed (2 files would change)"),
    (FakeReport("sync", FakePlan({}), dry_run=True),
     "trinogen sync: 0 added, 0 updated, 0 pruned, 0 unchanged, 0 failed; dry run: nothing changed"),
    (FakeReport("sync", FakePlan({}, unchanged=3)),
     "trinogen sync: 0 added, 0 updated, 0 pruned, 3 unchanged, 0 failed; nothing to commit"),
    (FakeReport("validate", rendered=[1, 2], disabled=[3]),
     "trinogen validate: 2 valid, 1 disabled, 0 failed"),
    (FakeReport("render", rendered=[1], out_dir="/tmp/out"),
     "trinogen render: 1 rendered, 0 disabled, 0 failed; written to /tmp/out"),
])
def test_summary_line(report: FakeReport, first_line: str) -> None:
    """The summary line counts each action and says what happened to the commit."""
    assert format_text(report).splitlines()[0] == first_line


def test_clusters_are_listed_per_action_with_their_reason() -> None:
    """Each changed cluster is listed under its action, with the reason when there is one."""
    lines = format_text(FakeReport("sync", PLAN)).splitlines()[1:]
    assert lines == ["  added    a", "  updated  b (values.yaml)", "  pruned   c (disabled)"]


def test_long_lists_are_cut_with_a_pointer_to_json() -> None:
    """Beyond LIST_LIMIT clusters per action, one line says how many more there are."""
    many = FakePlan({"add": [Change(f"c{i}") for i in range(LIST_LIMIT + 3)]})
    lines = format_text(FakeReport("sync", many)).splitlines()
    assert len(lines) == 1 + LIST_LIMIT + 1
    assert lines[-1] == "  added    ... and 3 more (--output json lists all)"


@pytest.mark.parametrize(("command", "suffix"), [
    ("sync", "; its files in git are kept as they are"),
    ("validate", ""),
])
def test_failures_name_the_cluster_stage_and_problems(command: str, suffix: str) -> None:
    """A failed document is named (by _id without a clusterId) with each problem's field."""
    failed = [FakeFailed(None, '{"$oid": "x"}', "validate",
                         (Problem("l", "owner", "is required"), Problem("l", "", "whole")))]
    plan = FakePlan({}) if command == "sync" else None
    lines = format_text(FakeReport(command, plan, failed=failed)).splitlines()
    assert lines[1:] == [f'  FAILED   _id={{"$oid": "x"}} (validate){suffix}',
                         "    owner: is required", "    whole"]


def test_diff_and_warnings_frame_the_summary() -> None:
    """A diff comes first, then a blank line and the summary; warnings come last."""
    out = format_text(FakeReport("sync", FakePlan({}), diff="+a\n", warnings=["careful"]))
    assert out == ("+a\n\ntrinogen sync: 0 added, 0 updated, 0 pruned, 0 unchanged, 0 failed; "
                   "nothing to commit\n  warning  careful\n")


def test_colours_only_when_asked() -> None:
    """ANSI colours appear with color=True and never otherwise."""
    diff = "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n same\n"
    assert colour_diff(diff, False) == diff
    coloured = colour_diff(diff, True)
    assert "\x1b[32m+new\x1b[0m" in coloured and "\x1b[31m-old\x1b[0m" in coloured
    assert coloured.endswith(" same\n")
    assert "\x1b[" not in format_text(FakeReport("sync", FakePlan({}), diff=diff))


def _real_plan(files: list[tuple[str, str, str]], clusters: list[tuple[str, str]]) -> Any:
    from trinogen.plan import ClusterChange, FileChange, Plan

    return Plan(tuple(FileChange(p, a, c) for p, a, c in files),
                tuple(ClusterChange(c, a) for c, a in clusters))


def test_stat_lists_files_per_cluster_and_no_diff() -> None:
    """--stat: no diff; each changed cluster with its file count split by action."""
    plan = _real_plan(
        [("t/a/values.yaml", "add", "a"), ("t/a/cat.properties", "add", "a"),
         ("t/b/values.yaml", "update", "b"), ("t/b/old.properties", "delete", "b"),
         ("t/c/values.yaml", "delete", "c")],
        [("a", "add"), ("b", "update"), ("c", "prune")])
    report = FakeReport("sync", plan, diff="--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n", dry_run=True)
    lines = format_text(report, stat=True).splitlines()
    assert lines[1:] == ["  added    a: 2 files (2 added)",
                         "  updated  b: 2 files (1 updated, 1 deleted)",
                         "  pruned   c: 1 files (1 deleted)"]


def test_stat_lists_every_cluster() -> None:
    """--stat is not cut at LIST_LIMIT: a first dry run shows every cluster it adds."""
    n = LIST_LIMIT + 5
    plan = _real_plan([(f"t/c{i}/v", "add", f"c{i}") for i in range(n)],
                      [(f"c{i}", "add") for i in range(n)])
    text = format_text(FakeReport("sync", plan, dry_run=True), stat=True)
    assert text.count("  added ") == n and "more" not in text


def test_a_template_error_shared_by_clusters_is_told_once() -> None:
    """Render failures with the same problems are one entry with the count of clusters."""
    bug = (Problem("x", "", "values.yaml.j2:12: 'dict object' has no attribute 'nope'"),)
    failed = [FakeFailed(c, f"d{c}", "render", bug) for c in ("a", "b", "c")]
    failed.append(FakeFailed("v", "dv", "validate", (Problem("v", "owner", "required"),)))
    text = format_text(FakeReport("sync", _real_plan([], []), failed=failed))
    assert text.count("values.yaml.j2:12") == 1
    assert "FAILED   3 clusters: a, b, c (render)" in text
    assert "FAILED   v (validate)" in text
