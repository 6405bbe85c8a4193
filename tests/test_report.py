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
