"""Argo CD's view, joined with the status records (`trinogen status`, docs/status.md).

Pure but for `read_back`, which reads through the ports. Apart from `trinogen.status` so that a
sync, which never shows Argo CD's view, does not build these classes at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trinogen.ports import AppView, ArgoView, DocumentSource, StatusRecord
from trinogen.status import Row

# How Argo CD's revision of the GitOps repository relates to trinogen's last commit of a cluster.
CURRENT, NEWER, OLDER, UNKNOWN = "current", "newer", "older", "unknown"


@dataclass(frozen=True)
class ArgoRow:
    """One cluster trinogen has files for, or one Application's cluster: what Argo CD shows."""

    cluster_id: str
    application: str
    app: AppView | None  # None: no such Application (missing when `expected`)
    expected: bool  # the status record says trinogen's Application file is in git
    revision_is: str | None = None  # CURRENT, NEWER, OLDER, UNKNOWN (None: no revision)

    @property
    def missing(self) -> bool:
        return self.expected and self.app is None


@dataclass(frozen=True)
class Unexplained:
    """An Application with trinogen's managed-by label that no synced cluster accounts for."""

    application: str
    cluster_id: str | None
    reason: str


@dataclass(frozen=True)
class ArgoJoin:
    rows: dict[str, ArgoRow]  # cluster key -> row
    unexplained: list[Unexplained]

    @property
    def missing(self) -> list[str]:
        return sorted(k for k, r in self.rows.items() if r.missing)


def expects_application(record: StatusRecord) -> bool:
    """True when the record says the cluster's files (its Application) are in git: synced, or
    failed after an earlier sync (the last good files are kept)."""
    return record.get("state") == "synced" or (
        record.get("state") == "failed" and bool(record.get("commit")))


def join_argo(records: Mapping[str, StatusRecord], apps: Mapping[str, AppView], prefix: str,
              *, judged: bool = True, root: str = "") -> ArgoJoin:
    """Rows per cluster, and the labelled Applications nothing explains (pure).

    `prefix` is argocd.app_name_prefix (an Application is named prefix + clusterId and
    labelled with it); `root` is argocd.root_app_name, the app-of-apps, which carries the
    managed-by label and no cluster label (templates/root-application.yaml.j2): it is
    explained. Without status records to judge by (`judged` False: the embedded
    database keeps none) every Application is shown under its cluster label and nothing is
    flagged.
    """
    if not judged:
        return ArgoJoin(_by_label(apps), [])
    rows = _expected_rows(records, apps, prefix)
    claimed = {r.application for r in rows.values() if r.app is not None}
    if root in apps and apps[root].cluster_id is None:
        claimed.add(root)
    unexplained = [Unexplained(name, app.cluster_id, _why(app, records, prefix))
                   for name, app in sorted(apps.items()) if name not in claimed]
    return ArgoJoin(rows, unexplained)


def _expected_rows(records: Mapping[str, StatusRecord], apps: Mapping[str, AppView],
                   prefix: str) -> dict[str, ArgoRow]:
    rows: dict[str, ArgoRow] = {}
    for cid, record in sorted(records.items()):
        if cid.startswith("_id=") or not expects_application(record):
            continue
        app = apps.get(prefix + cid)
        if app is not None and app.cluster_id != cid:
            app = None  # labelled for another cluster (or none): not this one's, flagged
        rows[cid] = ArgoRow(cid, prefix + cid, app, True,
                            revision_is(app.revision if app else None, cid, records))
    return rows


def _by_label(apps: Mapping[str, AppView]) -> dict[str, ArgoRow]:
    """Each labelled Application as a row of its label's cluster (the first name wins)."""
    rows: dict[str, ArgoRow] = {}
    for name, app in sorted(apps.items()):
        if app.cluster_id is not None:
            rows.setdefault(app.cluster_id, ArgoRow(app.cluster_id, name, app, False))
    return rows


def _why(app: AppView, records: Mapping[str, StatusRecord], prefix: str) -> str:
    cid = app.cluster_id
    if cid is None:
        return "it has no trinogen.io/cluster label"
    named = app.name[len(prefix):] if app.name.startswith(prefix) else None
    if named is not None and named != cid and named in records:
        return f"its name is cluster {named}'s, its label says cluster {cid}"
    record = records.get(cid)
    if record is None:
        return f"no status record names cluster {cid}: no document trinogen synced explains it"
    if record.get("state") == "pruned":
        return (f"cluster {cid} was pruned ({record.get('reason') or 'document gone'}); the "
                "app-of-apps should have deleted it")
    if expects_application(record):
        return f"cluster {cid}'s Application is {prefix + cid}, not this one"
    return f"cluster {cid} never synced (state {record.get('state')})"


def revision_is(revision: str | None, cluster_id: str,
                records: Mapping[str, StatusRecord]) -> str | None:
    """CURRENT when Argo CD's revision is trinogen's last commit for the cluster; NEWER or
    OLDER when it is another commit trinogen recorded later or earlier (trinogen's commits are
    one line of history on the branch, so a later one carries the cluster's files too);
    UNKNOWN for a commit no record names (someone else's, or one no record keeps)."""
    if revision is None:
        return None
    own = records.get(cluster_id, {})
    if revision == own.get("commit"):
        return CURRENT
    when = {r.get("commit"): r.get("syncedAt") for r in records.values() if r.get("commit")}
    theirs, ours = when.get(revision), own.get("syncedAt")
    if theirs is None or ours is None or theirs == ours:
        return UNKNOWN
    try:
        return NEWER if theirs > ours else OLDER
    except TypeError:  # a hand-edited record with a string date: no order to trust
        return UNKNOWN


def observed(row: ArgoRow, now: datetime) -> Row:
    """What the status record keeps of Argo CD's view (its `argocd` field)."""
    out: Row = {"application": row.application, "missing": row.missing, "readAt": now}
    app = row.app
    if app is not None:
        out.update(sync=app.sync, health=app.health, message=app.message,
                   revision=app.revision, revisionIs=row.revision_is, operation=app.operation,
                   operationMessage=app.operation_message, observedAt=app.observed_at)
    return out


@dataclass
class StatusReport:
    """What `trinogen status` shows: the records, and Argo CD's view when it was read."""

    records: dict[str, dict[str, Any]]
    ephemeral: bool
    argo: ArgoJoin | None = None
    argo_note: str = ""  # why Argo CD was not read, or where it was read from
    namespace: str = ""
    applications: int = 0
    writes: int = 0

    def to_json(self) -> dict[str, Any]:
        """schemaVersion 1: `clusters` rows as before, each with `argocd` when known, and a
        top-level `argocd` saying whether it was read and what it flags (fields only added)."""
        now = datetime.now(UTC).replace(microsecond=0)
        rows: dict[str, dict[str, Any]] = {
            k: {"clusterId": k, **{f: v for f, v in r.items() if f != "_id"}}
            for k, r in self.records.items()}
        argo: dict[str, Any] = {"read": self.argo is not None, "note": self.argo_note}
        if self.argo is not None:
            for cid, row in self.argo.rows.items():
                rows.setdefault(cid, {"clusterId": cid})["argocd"] = observed(row, now)
            argo.update(namespace=self.namespace, applications=self.applications,
                        missing=self.argo.missing,
                        unexplained=[{"application": u.application, "clusterId": u.cluster_id,
                                      "reason": u.reason} for u in self.argo.unexplained],
                        statusWrites=self.writes)
        return {"schemaVersion": 1, "command": "status",
                "clusters": [rows[k] for k in sorted(rows)], "argocd": argo}


def read_back(source: DocumentSource, view: ArgoView | None, prefix: str,
              note: str = "", root: str = "") -> StatusReport:
    """The status records, joined with Argo CD's Applications when `view` is given; the
    observed fields are written into the records of the clusters read (`argocd`)."""
    records = source.read_status()
    report = StatusReport(records, source.ephemeral, argo_note=note)
    if view is None:
        return report
    apps = view.applications()
    report.argo = join_argo(records, apps, prefix, judged=not source.ephemeral, root=root)
    report.applications = len(apps)
    now = datetime.now(UTC).replace(microsecond=0)
    report.writes = source.write_observed(
        {cid: observed(row, now) for cid, row in report.argo.rows.items() if cid in records})
    return report
