"""trinogen.result: the Report's --output json shape (schemaVersion 1), as docs/commands.md shows it."""

from __future__ import annotations

from trinogen.errors import Problem
from trinogen.model import Failed
from trinogen.plan import ClusterChange, FileChange, Plan
from trinogen.result import Report


def test_sync_report_json() -> None:
    """A sync report lists clusters per action, failures with their problems, and the changes."""
    plan = Plan(
        (FileChange("trino-applications/a.yaml", "add", "a", b"x"),
         FileChange("trino-applications/b.yaml", "delete", "b")),
        (ClusterChange("a", "add", "doc-a"), ClusterChange("b", "prune", "doc-b", "document deleted"),
         ClusterChange("c", "unchanged", "doc-c")),
    )
    report = Report("sync", plan=plan, commit="abc", pushed=True,
                    failed=[Failed("doc-d", "d", (Problem("d", "owner", "is required"),))],
                    warnings=[Problem("a", "connectors", "uppercase")], disabled=["e"])
    assert report.to_json() == {
        "schemaVersion": 1, "command": "sync", "dryRun": False,
        "clusters": {
            "added": [{"clusterId": "a", "documentId": "doc-a", "reason": None}],
            "updated": [],
            "pruned": [{"clusterId": "b", "documentId": "doc-b", "reason": "document deleted"}],
            "unchanged": ["c"],
            "disabled": ["e"],
            "failed": [{"clusterId": "d", "documentId": "doc-d", "stage": "validate",
                        "problems": [{"field": "owner", "message": "is required"}]}],
        },
        "warnings": [{"cluster": "a", "field": "connectors", "message": "uppercase"}],
        "stats": {},
        "commit": "abc", "pushed": True,
        "changes": [{"path": "trino-applications/a.yaml", "action": "add", "clusterId": "a"},
                    {"path": "trino-applications/b.yaml", "action": "delete", "clusterId": "b"}],
        "refusedBy": None,
    }


def test_render_report_json() -> None:
    """A render report has valid clusters and outDir, and no git fields."""
    data = Report("render", rendered=["b", "a"], out_dir="/tmp/out").to_json()
    assert data["clusters"] == {"valid": ["a", "b"], "disabled": [], "failed": []}
    assert data["outDir"] == "/tmp/out"
    assert not {"commit", "pushed", "changes", "refusedBy"} & set(data)
