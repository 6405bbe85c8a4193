"""trinogen.status: the status rows written back after a sync (a pure decision), and the write."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.fakes import FakeSource
from trinogen.errors import Problem
from trinogen.model import Failed
from trinogen.plan import ClusterChange, Plan
from trinogen.status import stale_catalog_rows, status_rows, write_status

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
EARLIER = datetime(2025, 12, 31, tzinfo=UTC)
SYNCED = {"documentId": "d", "state": "synced", "commit": "c0", "syncedAt": EARLIER,
          "renderHash": "h1", "lastError": None, "errorAt": None}
BAD = Failed("d", "a", (Problem("a", "owner", "is required"),), "validate")
BAD_TEXT = "cluster a: owner: is required"


def synced(commit: str, render_hash: str) -> dict[str, Any]:
    return {"documentId": "d", "state": "synced", "commit": commit, "syncedAt": NOW,
            "renderHash": render_hash, "lastError": None, "errorAt": None}


@pytest.mark.parametrize(
    ("change", "failed", "previous", "expected"),
    [
        # A cluster written in this commit is synced, whatever it was before.
        (ClusterChange("a", "add", "d"), (), {}, {"a": synced("c1", "h1")}),
        (ClusterChange("a", "update", "d"), (), {"a": SYNCED}, {"a": synced("c1", "h1")}),
        # Unchanged and already recorded as synced with that render: nothing to write.
        (ClusterChange("a", "unchanged", "d"), (), {"a": SYNCED}, {}),
        # Unchanged but recorded differently (another render, a past failure, no record): write.
        (ClusterChange("a", "unchanged", "d"), (), {"a": {**SYNCED, "renderHash": "h0"}},
         {"a": synced("c1", "h1")}),
        (ClusterChange("a", "unchanged", "d"), (), {"a": {**SYNCED, "state": "failed"}},
         {"a": synced("c1", "h1")}),
        (ClusterChange("a", "unchanged", "d"), (), {}, {"a": synced("c1", "h1")}),
        # A pruned cluster says why.
        (ClusterChange("a", "prune", "d", "document deleted"), (), {"a": SYNCED},
         {"a": {"documentId": "d", "state": "pruned", "reason": "document deleted",
                "commit": "c1", "syncedAt": NOW, "renderHash": None, "lastError": None,
                "errorAt": None}}),
        # A failure keeps the last good sync next to the error.
        (ClusterChange("a", "failed", "d"), (BAD,), {"a": {"_id": "a", **SYNCED}},
         {"a": {**SYNCED, "state": "failed", "stage": "validate", "lastError": BAD_TEXT,
                "errorAt": NOW}}),
        # The same failure as last time: nothing to write.
        (ClusterChange("a", "failed", "d"), (BAD,),
         {"a": {**SYNCED, "state": "failed", "lastError": BAD_TEXT}}, {}),
        # A failed document without a usable clusterId is keyed by its _id.
        (None, (Failed("d", None, (Problem("_id=d", "", "not an object"),)),), {},
         {"_id=d": {"documentId": "d", "state": "failed", "stage": "validate",
                    "lastError": "cluster _id=d: not an object", "errorAt": NOW}}),
    ],
)
def test_status_rows(change: ClusterChange | None, failed: tuple[Failed, ...],
                     previous: dict[str, dict[str, Any]], expected: dict[str, Any]) -> None:
    """Each plan action and failure gives the documented row, and unchanged state no row."""
    rows = status_rows([change] if change else [], failed, {"a": "h1"}, previous, "c1", NOW)
    assert rows == expected


def test_rows_for_a_whole_plan_never_raise() -> None:
    """Every action a plan can hold (disabled and failed included) is handled."""
    changes = [ClusterChange(f"c{i}", action, "d")
               for i, action in enumerate(("add", "update", "prune", "unchanged", "failed",
                                           "disabled"))]
    rows = status_rows(changes, (), {}, {}, None, NOW)
    assert sorted(rows) == ["c0", "c1", "c2", "c3"]


def test_write_status_writes_the_rows_in_one_batch() -> None:
    """The rows go to the source; an ephemeral source gets none and nothing is hashed."""
    plan = Plan((), (ClusterChange("a", "add", "d"),))
    source = FakeSource()
    assert write_status(source, plan, (), lambda: {"a": "h1"}, "c1") == 1
    assert source.status["a"]["state"] == "synced" and source.status["a"]["commit"] == "c1"

    def no_hashing() -> dict[str, str]:
        raise AssertionError("hashed for an ephemeral source")

    assert write_status(FakeSource(ephemeral=True), plan, (), no_hashing, "c1") == 0


def test_a_huge_id_is_written_by_its_start() -> None:
    """A failed document with a 10 MiB _id gets a status row named by its start: the whole _id
    (twice, with its problems) would be over MongoDB's 16 MiB and fail every status write."""
    huge = '"' + "x" * 10_000_000 + '"'
    failed = Failed(huge, None, (Problem("_id=" + huge[:100] + "...", "_id", "is too long"),))
    rows = status_rows([], [failed], {}, {}, "c1", NOW)
    [(key, row)] = rows.items()
    assert key == "_id=" + huge[:100] + "..." and len(row["documentId"]) == 103
    assert len(row["lastError"]) < 300


CAT_A, CAT_B = '_id=catalog:"a"', '_id=catalog:"b"'
BAD_CATALOG = Failed('catalog:"b"', None, (Problem("catalog b", "properties", "is required"),),
                     "catalog")


@pytest.mark.parametrize(("previous", "failed", "judged", "expected"), [
    # The library was read: a catalog row whose document no longer fails (fixed or deleted) goes.
    ({CAT_A, CAT_B, "a", '_id="d"'}, (BAD_CATALOG,), True, [CAT_A]),
    ({CAT_A, CAT_B}, (), True, [CAT_A, CAT_B]),
    # Cluster rows and rows of documents without a clusterId are never removed here.
    ({"a", '_id="d"'}, (), True, []),
    # Not judged (a targeted run that did not read the library): every row stays.
    ({CAT_A, CAT_B}, (), False, []),
])
def test_stale_catalog_rows(previous: set[str], failed: tuple[Failed, ...], judged: bool,
                            expected: list[str]) -> None:
    """A failed catalog's row is removed once a run that judged the library finds it no longer
    failing; runs that did not judge the library leave it."""
    assert stale_catalog_rows(previous, failed, judged=judged) == expected


def test_write_status_removes_the_rows_of_catalogs_no_longer_failing() -> None:
    """The stale catalog rows are removed in the same write as the new rows."""
    source = FakeSource()
    source.status = {CAT_A: {"documentId": 'catalog:"a"', "state": "failed"}}
    assert write_status(source, Plan((), ()), (BAD_CATALOG,), dict, "c1",
                        catalogs_judged=True) == 2  # b written, a removed
    assert set(source.status) == {CAT_B}
    assert write_status(source, Plan((), ()), (), dict, "c1") == 0  # not judged: kept
    assert set(source.status) == {CAT_B}
    assert write_status(source, Plan((), ()), (), dict, "c1", catalogs_judged=True) == 1
    assert source.status == {}


class ReadSpy(FakeSource):
    """FakeSource recording which status rows each read asked for (None: every row)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[set[str] | None] = []

    def read_status(self, keys: Any = None) -> dict[str, dict[str, Any]]:
        self.asked.append(None if keys is None else set(keys))
        return super().read_status(keys)


def test_a_run_that_did_not_judge_the_library_reads_only_the_rows_it_writes() -> None:
    """A targeted run (a watch batch) reads the status rows of its own clusters, not the fleet's,
    and still leaves an unchanged synced row alone; a run that judged the library reads every
    row, as it may remove stale catalog rows (issue 22)."""
    source = ReadSpy()
    source.status = {"a": {"state": "synced", "renderHash": "h", "commit": "c0"},
                     "b": {"state": "synced", "renderHash": "x", "commit": "c0"},
                     CAT_A: {"documentId": 'catalog:"a"', "state": "failed"}}
    plan = Plan((), (ClusterChange("a", "unchanged", "d"),))
    assert write_status(source, plan, (), lambda: {"a": "h"}, "c1") == 0
    assert source.asked == [{"a"}]
    assert write_status(source, plan, (), lambda: {"a": "h"}, "c1", catalogs_judged=True) == 1
    assert source.asked[-1] is None and CAT_A not in source.status
