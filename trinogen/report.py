"""Text output for people (the JSON shape lives in pipeline.Report.to_json) and JSON logs."""

from __future__ import annotations

import json
import logging
from typing import Any

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


def format_text(report: Any, *, color: bool = False) -> str:
    """The report as people read it: diff, summary line, clusters per action, failures."""
    lines: list[str] = []
    if report.diff:
        lines.append(colour_diff(report.diff, color).rstrip("\n"))
        lines.append("")
    if report.plan is not None:
        lines.extend(_plan_lines(report))
    else:
        lines.append(_tree_summary(report))
    for f in report.failed:
        lines.extend(_failure_lines(f, report.command, color))
    for w in report.warnings:
        lines.append(_style(f"  warning  {w}", "yellow", color))
    return "\n".join(lines) + "\n"


def _plan_lines(report: Any) -> list[str]:
    """The summary of a sync (what changed, and whether it was pushed) and its clusters."""
    plan = report.plan
    counts = plan.counts()
    head = (f"{counts['add']} added, {counts['update']} updated, {counts['prune']} pruned, "
            f"{counts['unchanged']} unchanged, {len(report.failed)} failed")
    lines = [f"trinogen {report.command}: {head}; {_outcome(report)}"]
    for action, word in (("add", "added"), ("update", "updated"), ("prune", "pruned")):
        changes = plan.by_action(action)
        for c in changes[:LIST_LIMIT]:
            why = f" ({c.reason})" if c.reason else ""
            lines.append(f"  {word:8} {c.cluster_id}{why}")
        if len(changes) > LIST_LIMIT:
            lines.append(f"  {word:8} ... and {len(changes) - LIST_LIMIT} more "
                         "(--output json lists all)")
    return lines


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


def _failure_lines(f: Any, command: str, color: bool) -> list[str]:
    name = f.cluster_id or f"_id={f.doc_id}"
    kept = "; its files in git are kept as they are" if command == "sync" else ""
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
