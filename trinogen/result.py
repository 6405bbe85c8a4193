"""What a command did (`Report`), and its `--output json` shape (schemaVersion 1).

Text output for people is in `trinogen.report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trinogen.errors import Problem
from trinogen.model import Failed
from trinogen.plan import ClusterChange, Plan

# Cluster actions of a plan, and their key in the JSON `clusters` object.
_LISTED = (("add", "added"), ("update", "updated"), ("prune", "pruned"))


@dataclass
class Report:
    """What a command did, for people and for --output json (schemaVersion 1)."""

    command: str
    dry_run: bool = False
    plan: Plan | None = None
    failed: list[Failed] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    commit: str | None = None
    pushed: bool = False
    diff: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    rendered: list[str] = field(default_factory=list)  # render / validate: clusters that are fine
    disabled: list[str] = field(default_factory=list)
    out_dir: str | None = None
    rollout: dict[str, Any] | None = None  # sync with rollout waves: trinogen.rollout.step


    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schemaVersion": 1,
            "command": self.command,
            "dryRun": self.dry_run,
            "clusters": self._clusters_json(),
            "warnings": [{"cluster": w.cluster, "field": w.field, "message": w.message}
                         for w in self.warnings],
            "stats": self.stats,
        }
        if self.command == "sync":
            out.update(self._sync_json())
        if self.out_dir is not None:
            out["outDir"] = self.out_dir
        if self.rollout is not None:
            out["rollout"] = self.rollout
        return out

    def _clusters_json(self) -> dict[str, Any]:
        clusters: dict[str, Any] = {}
        if self.plan is not None:
            for action, key in _LISTED:
                clusters[key] = [_change_json(c) for c in self.plan.by_action(action)]
            clusters["unchanged"] = sorted(c.cluster_id for c in self.plan.by_action("unchanged"))
        else:
            clusters["valid"] = sorted(self.rendered)
        clusters["disabled"] = sorted(self.disabled)
        clusters["failed"] = [_failed_json(f) for f in self.failed]
        return clusters

    def _sync_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "commit": self.commit,
            "pushed": self.pushed,
            "changes": [{"path": ch.path, "action": ch.action, "clusterId": ch.cluster}
                        for ch in (plan.files if plan else ())],
            "refusedBy": plan.refusal if plan else None,
        }


def _change_json(c: ClusterChange) -> dict[str, Any]:
    return {"clusterId": c.cluster_id, "documentId": c.doc_id, "reason": c.reason or None}


def _failed_json(f: Failed) -> dict[str, Any]:
    return {
        "clusterId": f.cluster_id,
        "documentId": f.doc_id,
        "stage": f.stage,
        "problems": [{"field": p.field, "message": p.message} for p in f.problems],
    }
