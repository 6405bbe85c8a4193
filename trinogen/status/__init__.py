"""The status write-back: per cluster, the last synced commit, time, render hash, last error.

`status_rows` decides what to write (pure: the plan, the failures and the previous records in,
rows out); `write_status` reads the previous records and writes the rows in one batch. A row
that would not change anything is not written again. Argo CD's view of the clusters, joined with
these records for `trinogen status`, is `trinogen.status.argo`'s (a sync does not import it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from trinogen.model import MAX_DOC_ID, Failed
from trinogen.model.library import CATALOG_DOC
from trinogen.plan import ClusterChange, Plan
from trinogen.ports import DocumentSource, StatusRecord

Row = dict[str, Any]
# The status key of a failed catalog document (a Failed without a clusterId is keyed by _id).
CATALOG_ROW = "_id=" + CATALOG_DOC


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
        key = _key(f)
        row = _failed_row(f, previous.get(key, {}), now)
        if row is not None:
            rows[key] = row
    return rows


def _key(f: Failed) -> str:
    return f.cluster_id or f"_id={_short(f.doc_id)}"


def stale_catalog_rows(previous: Iterable[str], failed: Iterable[Failed], *,
                       judged: bool) -> list[str]:
    """The rows of catalog documents that no longer fail (fixed or deleted), to remove.

    Only a run that `judged` the library knows: one that read it (every catalog document is
    judged then), or a full run that did not need to (no document uses a shared catalog, so no
    run would report one). A targeted run that did not read the library keeps every row.
    """
    if not judged:
        return []
    failing = {_key(f) for f in failed}
    return sorted(k for k in previous if k.startswith(CATALOG_ROW) and k not in failing)


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
    stopped: Collection[str] = frozenset(), *, catalogs_judged: bool = False,
) -> int:
    """Write this run's status rows (batched) and remove the stale catalog rows (see
    `stale_catalog_rows`); returns the records written or removed."""
    if source.ephemeral:
        return 0  # nobody could read them back: do not even hash every cluster's files
    now = datetime.now(UTC).replace(microsecond=0)
    failed = list(failed)
    # Only the rows this run writes, unless catalog rows may go stale (then all): a watch
    # batch of one document reads one row, not the fleet's (issue 22).
    keys = None if catalogs_judged else ({c.cluster_id for c in plan.clusters}
                                         | {_key(f) for f in failed})
    previous = source.read_status(keys)
    rows = status_rows(plan.clusters, failed, render_hashes(), previous, commit, now, stopped)
    removed = stale_catalog_rows(previous, failed, judged=catalogs_judged)
    return int(source.write_status(rows, removed))
