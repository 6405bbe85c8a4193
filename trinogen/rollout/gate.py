"""The gate between two waves: advance, wait or halt, from what Argo CD reports. Pure.

Like Argo CD's progressive syncs (RollingSync), a wave goes only when every Application of the
earlier waves is Healthy; here each must also be Synced at the repository's head (so it runs the
files the rollout released, not an older commit) and stay so for the soak time. A Degraded
Application, or a last sync operation that Failed or Errored, halts the rollout: a careful
operator looks before anything else is released, so a halt holds until `--resume-rollout`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from trinogen.ports import AppView

ADVANCE, WAIT, HALT = "advance", "wait", "halt"
_FAILED_OPERATIONS = ("Failed", "Error")


@dataclass(frozen=True)
class Verdict:
    action: str  # advance | wait | halt
    reason: str
    cluster: str | None = None  # the cluster that halts or holds the rollout
    healthy_since: datetime | None = None  # when every cluster was first seen ready (None: not)


def by_cluster(apps: Mapping[str, AppView], prefix: str) -> dict[str, AppView]:
    """The Applications by clusterId: its trinogen.io label, else its name without the prefix."""
    out: dict[str, AppView] = {}
    for name, app in apps.items():
        cid = app.cluster_id or (name[len(prefix):] if name.startswith(prefix) else None)
        if cid:
            out[cid] = app
    return out


def judge(
    released: Iterable[str], apps: Mapping[str, AppView], *, head: str | None, now: datetime,
    healthy_since: datetime | None, soak_seconds: int,
) -> Verdict:
    """Whether the clusters released so far let the next wave go."""
    clusters = sorted(released)
    found = _first_halt(clusters, apps) or _first_unready(clusters, apps)
    if found is not None:
        return found
    for cid in clusters:
        # Ready, but maybe on a commit from before the release: the clock neither starts nor
        # starts over (a later commit of someone else's does not cost the soak again).
        revision = apps[cid].revision
        if head is not None and revision != head:
            return Verdict(WAIT, f"{cid} has not synced commit {head[:12]} yet (it runs "
                           f"{(revision or 'no revision')[:12]})", cid, healthy_since)
    since = healthy_since or now
    waited = (now - since).total_seconds()
    if waited < soak_seconds:
        return Verdict(WAIT, f"soaking: every released cluster Healthy for {int(waited)}s of "
                       f"{soak_seconds}s", None, since)
    return Verdict(ADVANCE, "every released cluster Synced and Healthy for the soak time",
                   None, since)


def _first_halt(clusters: list[str], apps: Mapping[str, AppView]) -> Verdict | None:
    """A halt anywhere wins over a wait elsewhere."""
    for cid in clusters:
        halt = _halt(cid, apps.get(cid))
        if halt is not None:
            return Verdict(HALT, halt, cid)
    return None


def _first_unready(clusters: list[str], apps: Mapping[str, AppView]) -> Verdict | None:
    """A cluster not (yet) Synced and Healthy: wait, and the soak clock starts over."""
    for cid in clusters:
        app = apps.get(cid)
        if app is None:
            return Verdict(WAIT, f"Argo CD has no Application for cluster {cid}", cid)
        if app.health != "Healthy" or app.sync != "Synced":
            return Verdict(WAIT, f"{cid} is {app.sync} and {app.health}"
                           + (f" ({app.message})" if app.message else ""), cid)
    return None


def _halt(cid: str, app: AppView | None) -> str | None:
    if app is None:
        return None
    if app.operation in _FAILED_OPERATIONS:
        return (f"Argo CD's last sync of {app.name} {app.operation.lower()}"
                + (f": {app.operation_message}" if app.operation_message else ""))
    if app.health == "Degraded":
        return f"{app.name} is Degraded" + (f": {app.message}" if app.message else "")
    return None
