"""The status write-back: per cluster, the last synced commit, time, render hash, last error.

`status_rows` decides what to write (pure: the plan, the failures and the previous records in,
rows out); `write_status` reads the previous records and writes the rows in one batch. A row
that would not change anything is not written again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from trinogen.model import MAX_DOC_ID, Failed
from trinogen.plan import ClusterChange, Plan
from trinogen.ports import DocumentSource, StatusRecord

Row = dict[str, Any]


def status_rows(
    changes: Iterable[ClusterChange],
    failed: Iterable[Failed],
    render_hashes: Mapping[str, str],
    previous: Mapping[str, StatusRecord],
    commit: str | None,
    now: datetime,
    stopped: Collection[str] = frozenset(),
) -> dict[str, Row]:
    """The status rows to write: cluster key -> record (previous records left out are kept).

    A synced cluster in `stopped` (its document says `stopped: true`) is recorded with
    `"stopped": true`: its files are in git, its compute is not running.
    """
    rows: dict[str, Row] = {}
    for change in changes:
        row = _change_row(change, render_hashes, previous.get(change.cluster_id, {}), commit, now,
                          change.cluster_id in stopped)
        if row is not None:
            rows[change.cluster_id] = row
    for f in failed:
        key = f.cluster_id or f"_id={_short(f.doc_id)}"
        row = _failed_row(f, previous.get(key, {}), now)
        if row is not None:
            rows[key] = row
    return rows


def _change_row(
    change: ClusterChange, render_hashes: Mapping[str, str], prev: StatusRecord,
    commit: str | None, now: datetime, stopped: bool = False,
) -> Row | None:
    if change.action == "prune":
        return {"documentId": change.doc_id, "state": "pruned", "reason": change.reason,
                "commit": commit, "syncedAt": now, "renderHash": None,
                "lastError": None, "errorAt": None}
    if change.action not in ("add", "update", "unchanged"):
        return None  # failed clusters are written from their failures; disabled ones prune
    rh = render_hashes.get(change.cluster_id)
    if (change.action == "unchanged" and prev.get("state") == "synced"
            and prev.get("renderHash") == rh and bool(prev.get("stopped")) == stopped):
        return None
    row: Row = {"documentId": change.doc_id, "state": "synced", "commit": commit,
                "syncedAt": now, "renderHash": rh, "lastError": None, "errorAt": None}
    if stopped:
        row["stopped"] = True
    return row


def _failed_row(f: Failed, prev: StatusRecord, now: datetime) -> Row | None:
    error = "\n".join(str(p) for p in f.problems)
    if prev.get("state") == "failed" and prev.get("lastError") == error:
        return None
    # The last good sync (commit, time, render hash) stays next to the error.
    kept = {k: v for k, v in prev.items() if k != "_id"}
    return {**kept, "documentId": _short(f.doc_id), "state": "failed", "stage": f.stage,
            "lastError": error, "errorAt": now}


def _short(doc_id: str) -> str:
    """An _id as a status row holds it: one too long for any file header by its start (a row is
    at most 16 MiB; a failed document's _id may be nearly that)."""
    return doc_id if len(doc_id) <= MAX_DOC_ID else doc_id[:100] + "..."


def write_status(
    source: DocumentSource, plan: Plan, failed: Iterable[Failed],
    render_hashes: Callable[[], Mapping[str, str]], commit: str | None,
    stopped: Collection[str] = frozenset(),
) -> int:
    """Write this run's status rows (batched); returns the records written."""
    if source.ephemeral:
        return 0  # nobody could read them back: do not even hash every cluster's files
    now = datetime.now(UTC).replace(microsecond=0)
    rows = status_rows(plan.clusters, failed, render_hashes(), source.read_status(), commit, now,
                       stopped)
    return int(source.write_status(rows))
