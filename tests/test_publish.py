"""trinogen.publish: what is kept of a plan once git holds its files."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from tests.fakes import FakeRepo
from trinogen.desired import Desired
from trinogen.plan import DesiredFile, FileChange, Layout, Plan, blob_id
from trinogen.publish import RELEASE_AFTER, give_back_freed_memory, handed_over, publish


def test_a_written_plan_keeps_paths_and_blob_ids_but_no_bytes() -> None:
    """Once written, the plan and the desired tree keep every path, action and blob id, and
    none of the rendered bytes."""
    values, app = b"values: 1\n", b"kind: Application\n"
    desired = Desired(files={"alpha": {"c/alpha/values.yaml": DesiredFile.of(values),
                                       "c/alpha/old.yaml": DesiredFile(blob_id(b"old"), None)}},
                      extra={"apps/root.yaml": DesiredFile.of(app)})
    plan = Plan(files=(FileChange("c/alpha/values.yaml", "add", "alpha", values),
                       FileChange("c/beta/values.yaml", "delete", "beta"),
                       FileChange("apps/root.yaml", "update", None, app)),
                clusters=())
    kept = handed_over(plan, desired)
    assert [(ch.path, ch.action, ch.cluster, ch.content) for ch in kept.files] == [
        ("c/alpha/values.yaml", "add", "alpha", None), ("c/beta/values.yaml", "delete", "beta", None),
        ("apps/root.yaml", "update", None, None)]
    assert {p: (f.blob, f.content) for p, f in desired.files["alpha"].items()} == {
        "c/alpha/values.yaml": (blob_id(values), None), "c/alpha/old.yaml": (blob_id(b"old"), None)}
    assert {p: (f.blob, f.content) for p, f in desired.extra.items()} == {
        "apps/root.yaml": (blob_id(app), None)}


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_memory_freed_after_the_write_goes_back_to_the_system() -> None:
    """Pages freed in the middle of the heap (the rendered bytes, with live objects after them)
    leave the process's resident memory once given back."""
    rendered = [os.urandom(1000) for _ in range(60_000)]  # ~60 MB, each from malloc's heap
    after = [os.urandom(1000) for _ in range(100)]  # still alive: the heap's top stays up
    before = _rss_mib()
    del rendered
    give_back_freed_memory()
    assert before - _rss_mib() > 40
    assert len(after) == 100


@dataclass
class _Planner:
    """Stands in for publish.Planner: always the same plan over one desired tree."""

    desired: Desired
    plan: Plan

    def __call__(self, tree: object) -> Plan:
        return self.plan


@pytest.mark.parametrize(("size", "kept"), [(1000, True), (RELEASE_AFTER, False)])
def test_only_a_large_commit_releases_its_bytes_after_the_write(size: int, kept: bool) -> None:
    """A commit of many bytes drops them once written; a small one keeps them (not worth it);
    both are pushed whole."""
    content = b"x" * size
    desired = Desired(files={"alpha": {"c/alpha/values.yaml": DesiredFile.of(content)}})
    plan = Plan(files=(FileChange("c/alpha/values.yaml", "add", "alpha", content),), clusters=())
    repo = FakeRepo()
    done = publish(repo, _Planner(desired, plan), {}, Layout("c", "apps"),  # type: ignore[arg-type]
                   retries=0, reread=lambda tree: None)  # type: ignore[arg-type,return-value]
    assert done.pushed and repo.files == {"c/alpha/values.yaml": content}
    assert (desired.files["alpha"]["c/alpha/values.yaml"].content is not None) is kept
    assert (done.plan.files[0].content is not None) is kept
