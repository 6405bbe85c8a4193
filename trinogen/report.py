"""Text output for people (the JSON shape lives in pipeline.Report.to_json) and JSON logs."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from trinogen.model.library import CATALOG_DOC

if TYPE_CHECKING:
    from trinogen.status.argo import ArgoRow, StatusReport

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


def format_status(report: StatusReport) -> str:
    """`trinogen status` for people: a line per cluster, Argo CD's view under it, then flags."""
    lines: list[str] = []
    if not report.records:
        lines.append("the embedded database keeps no status records (they would die with the "
                     "process); see git log of the GitOps repository" if report.ephemeral
                     else "no status records yet: run trinogen sync")
    argo = report.argo
    rows = argo.rows if argo is not None else {}
    for cid in sorted(set(report.records) | set(rows)):
        record = report.records.get(cid)
        lines.extend(_status_row(cid, record) if record is not None else [f"{cid:40} (no record)"])
        if cid in rows:
            lines.extend(_argo_lines(rows[cid]))
    lines.extend(_argo_summary(report))
    return "".join(f"{line}\n" for line in lines)


def _status_row(cid: str, r: Mapping[str, Any]) -> list[str]:
    commit = (r.get("commit") or "")[:10]
    when = r.get("syncedAt") or r.get("errorAt") or ""
    lines = [f"{cid:40} {r.get('state', '?'):8} {commit:10} {when}"]
    if r.get("stopped"):  # synced with `stopped: true`: files and Application kept, no workers
        lines[0] += "  stopped (no workers)"
    if r.get("state") == "failed" and r.get("lastError"):
        lines.extend(f"    {line}" for line in str(r["lastError"]).splitlines())
    return lines


def _argo_lines(row: ArgoRow) -> list[str]:
    app = row.app
    if app is None:
        return [f"    argocd: MISSING: no Application {row.application}"]
    rev = f"{app.revision[:10]} ({row.revision_is})" if app.revision else "no revision"
    lines = [f"    argocd: {app.sync} {app.health} at {rev}; last sync {app.operation or '-'}"]
    # Messages were made printable when read (trinogen.argocd): a pod's text cannot move the
    # cursor or colour the terminal.
    if app.message:
        lines.append(f"    argocd: health: {app.message}")
    if app.operation_message and app.operation not in (None, "Succeeded"):
        lines.append(f"    argocd: last sync: {app.operation_message}")
    return lines


def _argo_summary(report: StatusReport) -> list[str]:
    argo = report.argo
    if argo is None:
        return []  # as before Argo CD could be read; -o json says why (`argocd.note`)
    head = (f"Argo CD: {report.applications} Applications read in namespace "
            f"{report.namespace} ({report.argo_note})")
    lines = [head]
    if argo.missing:
        lines.append(f"MISSING Applications ({len(argo.missing)}): " + ", ".join(argo.missing))
    for u in argo.unexplained:
        lines.append(f"UNEXPLAINED Application {u.application}: {u.reason}")
    return lines
