"""Text output for people (the JSON shape lives in pipeline.Report.to_json) and JSON logs."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

from trinogen.model.library import CATALOG_DOC

LIST_LIMIT = 25  # clusters listed per action in text output


def _style(text: str, color: str | None, enabled: bool) -> str:
    if not enabled or color is None:
        return text
    codes = {"red": "31", "green": "32", "yellow": "33", "cyan": "36", "bold": "1"}
    return f"\x1b[{codes[color]}m{text}\x1b[0m"


def colour_diff(diff: str, enabled: bool) -> str:
    if not enabled:
        return diff
    out = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            out.append(_style(line.rstrip("\n"), "bold", True) + "\n")
        elif line.startswith("+"):
            out.append(_style(line.rstrip("\n"), "green", True) + "\n")
        elif line.startswith("-"):
            out.append(_style(line.rstrip("\n"), "red", True) + "\n")
        elif line.startswith("@@"):
            out.append(_style(line.rstrip("\n"), "cyan", True) + "\n")
        else:
            out.append(line)
    return "".join(out)


def format_text(report: Any, *, color: bool = False, stat: bool = False) -> str:
    """The report as people read it: diff, summary line, clusters per action, failures.

    `stat` (sync --stat): no diff; every changed cluster is listed with its changed files.
    """
    lines: list[str] = []
    if report.diff and not stat:
        lines.append(colour_diff(report.diff, color).rstrip("\n"))
        lines.append("")
    if report.plan is not None:
        lines.extend(_plan_lines(report, stat))
        lines.extend(rollout_lines(getattr(report, "rollout", None)))
    else:
        lines.append(_tree_summary(report))
    for group in failure_groups(report.failed):
        lines.extend(_failure_lines(group, report.command, color))
    for w in report.warnings:
        lines.append(_style(f"  warning  {w}", "yellow", color))
    return "\n".join(lines) + "\n"


def _plan_lines(report: Any, stat: bool = False) -> list[str]:
    """The summary of a sync (what changed, and whether it was pushed) and its clusters."""
    plan = report.plan
    counts = plan.counts()
    head = (f"{counts['add']} added, {counts['update']} updated, {counts['prune']} pruned, "
            f"{counts['unchanged']} unchanged, {len(report.failed)} failed")
    lines = [f"trinogen {report.command}: {head}; {_outcome(report)}"]
    files = _files_per_cluster(plan.files) if stat else {}
    limit = None if stat else LIST_LIMIT
    for action, word in (("add", "added"), ("update", "updated"), ("prune", "pruned")):
        changes = plan.by_action(action)
        for c in changes[:limit]:
            why = f" ({c.reason})" if c.reason else ""
            lines.append(f"  {word:8} {c.cluster_id}{why}{files.get(c.cluster_id, '')}")
        if limit is not None and len(changes) > limit:
            lines.append(f"  {word:8} ... and {len(changes) - LIST_LIMIT} more "
                         "(--output json lists all)")
    return lines


def rollout_lines(rollout: Any) -> list[str]:
    """The rollout block of a sync with waves: each wave's state, and what waits and why."""
    if not rollout:
        return []
    lines = [f"rollout: {rollout['state']}" + (f", wave {rollout['wave']}" if rollout["wave"]
                                                else "")]
    lines.extend(_wave_line(w) for w in rollout["waves"] if w["clusters"])
    halted = rollout.get("haltedBy")
    if halted:
        lines.append(f"  halted in wave {halted['wave']} by {halted['cluster']}: "
                     f"{halted['reason']} (fix it, then sync --resume-rollout; or "
                     "--abort-rollout to put the released files back)")
    elif rollout.get("waiting"):
        lines.append(f"  waiting: {rollout['waiting']}")
    lines.extend(f"  released early (its document was edited): {c}" for c in rollout["early"])
    lines.extend(f"  put back: {c}" for c in rollout["restored"])
    lines.extend(f"  {note}" for note in rollout["notes"])
    return lines


def _wave_line(wave: Any) -> str:
    clusters = wave["clusters"]
    more = f" ... and {len(clusters) - LIST_LIMIT} more" if len(clusters) > LIST_LIMIT else ""
    return (f"  wave {wave['name']:10} {wave['status']:8} "
            f"{', '.join(clusters[:LIST_LIMIT])}{more}")


def _files_per_cluster(changes: Iterable[Any]) -> dict[str, str]:
    """Cluster id -> ": N files (a added, u updated, d deleted)" for --stat."""
    per: dict[str, Counter[str]] = {}
    for ch in changes:
        per.setdefault(ch.cluster or "", Counter())[ch.action] += 1
    words = (("add", "added"), ("update", "updated"), ("delete", "deleted"))
    return {cid: f": {sum(n.values())} files ("
                 + ", ".join(f"{n[a]} {w}" for a, w in words if n[a]) + ")"
            for cid, n in per.items()}


def _outcome(report: Any) -> str:
    if report.dry_run:
        plan = report.plan
        return "dry run: nothing changed" + (
            "" if plan.empty else f" ({len(plan.files)} files would change)")
    if report.pushed:
        return f"commit {report.commit[:12]} pushed"
    return "nothing to commit"


def _tree_summary(report: Any) -> str:
    """The summary of validate or render (no plan)."""
    what = "valid" if report.command == "validate" else "rendered"
    return (f"trinogen {report.command}: {len(report.rendered)} {what}, "
            f"{len(report.disabled)} disabled, {len(report.failed)} failed"
            + (f"; written to {report.out_dir}" if report.out_dir else ""))


def failure_groups(failed: Iterable[Any]) -> list[list[Any]]:
    """Failures in order, with render failures of the same problems in one group (a template
    bug fails every cluster alike: it is told once, with the clusters it affects)."""
    groups: list[list[Any]] = []
    by_problem: dict[tuple[Any, ...], list[Any]] = {}
    for f in failed:
        if f.stage != "render":
            groups.append([f])
            continue
        key = tuple((p.field, p.message) for p in f.problems)
        if key not in by_problem:
            by_problem[key] = []
            groups.append(by_problem[key])
        by_problem[key].append(f)
    return groups


def _failed_name(f: Any) -> str:
    """How a failure is named: its cluster, a library catalog by name and _id, or the _id."""
    if f.stage == "catalog" and f.problems:
        return f"{f.problems[0].cluster} (_id {f.doc_id.removeprefix(CATALOG_DOC)})"
    return f.cluster_id or f"_id={f.doc_id}"


def _failure_lines(group: list[Any], command: str, color: bool) -> list[str]:
    f = group[0]
    names = [_failed_name(g) for g in group]
    name = names[0] if len(names) == 1 else (
        f"{len(names)} clusters: " + ", ".join(names[:5]) + (" ..." if len(names) > 5 else ""))
    kept = ("; its files in git are kept as they are" if len(group) == 1
            else "; their files in git are kept as they are") if command == "sync" else ""
    if f.stage == "catalog":
        kept = ""  # a document of the catalog library has no files; its users say so
    lines = [_style(f"  FAILED   {name} ({f.stage}){kept}", "red", color)]
    for p in f.problems:
        where = f"{p.field}: " if p.field else ""
        lines.append(f"    {where}{p.message}")
    return lines


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any `extra` fields."""

    _skip = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in self._skip and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
