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
    lines: list[str] = []
    if report.diff:
        lines.append(colour_diff(report.diff, color).rstrip("\n"))
        lines.append("")
    plan = report.plan
    if plan is not None:
        counts = plan.counts()
        head = (f"{counts['add']} added, {counts['update']} updated, {counts['prune']} pruned, "
                f"{counts['unchanged']} unchanged, {len(report.failed)} failed")
        if report.dry_run:
            tail = "dry run: nothing changed" + ("" if plan.empty else f" ({len(plan.files)} files would change)")
        elif report.pushed:
            tail = f"commit {report.commit[:12]} pushed"
        else:
            tail = "nothing to commit"
        lines.append(f"trinogen {report.command}: {head}; {tail}")
        for action, word in (("add", "added"), ("update", "updated"), ("prune", "pruned")):
            changes = plan.by_action(action)
            for c in changes[:LIST_LIMIT]:
                why = f" ({c.reason})" if c.reason else ""
                lines.append(f"  {word:8} {c.cluster_id}{why}")
            if len(changes) > LIST_LIMIT:
                lines.append(f"  {word:8} ... and {len(changes) - LIST_LIMIT} more "
                             "(--output json lists all)")
    else:
        what = "valid" if report.command == "validate" else "rendered"
        lines.append(f"trinogen {report.command}: {len(report.rendered)} {what}, "
                     f"{len(report.disabled)} disabled, {len(report.failed)} failed"
                     + (f"; written to {report.out_dir}" if report.out_dir else ""))
    for f in report.failed:
        name = f.cluster_id or f"_id={f.doc_id}"
        lines.append(_style(f"  FAILED   {name} ({f.stage}); its files in git are kept as they are"
                            if report.command == "sync" else f"  FAILED   {name} ({f.stage})",
                            "red", color))
        for p in f.problems:
            where = f"{p.field}: " if p.field else ""
            lines.append(f"    {where}{p.message}")
    for w in report.warnings:
        lines.append(_style(f"  warning  {w}", "yellow", color))
    return "\n".join(lines) + "\n"


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
