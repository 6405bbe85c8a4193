"""`trinogen status`: the rollout as its record in the GitOps repository says (issue 20).

The record holds the wave released last, the clusters released in each, since when they have all
been healthy, and a halt with its cluster and reason. Why a wave waits right now (soaking, an
Application not yet at the head) is the gate's verdict of a run, not recorded: `sync --dry-run`
shows it without changing anything.
"""

from __future__ import annotations

from typing import Any

from trinogen.errors import ConfigError, UnavailableError
from trinogen.ports import Repository
from trinogen.redact import redact_text
from trinogen.rollout.state import RolloutState, load
from trinogen.rollout.waves import names
from trinogen.settings import Settings


def read_status(settings: Settings, repo: Repository) -> dict[str, Any] | None:
    """The rollout's summary read from the branch's tip; None with no waves configured."""
    if settings.rollout is None:
        return None
    try:
        with repo.locked():
            repo.refresh()
            content = repo.read(settings.rollout.state_file)
        state = load(content, settings.rollout.state_file)
    except (ConfigError, UnavailableError) as e:  # the clusters' rows and Argo CD's still show
        return {**summary(RolloutState(), []), "state": "unreadable",
                "error": redact_text(str(e))}
    waves = state.rollout.waves if state.rollout and state.rollout.waves else None
    return summary(state, names(waves or settings.rollout.waves))


def summary(state: RolloutState, waves: list[str]) -> dict[str, Any]:
    r = state.rollout
    if r is None:
        return {"state": "idle", "wave": None, "waves": [], "haltedBy": None,
                "healthySince": None, "startedAt": None}

    def name(index: int) -> str:
        return waves[index] if 0 <= index < len(waves) else f"#{index + 1}"

    released = [{"name": name(i), "clusters": sorted(c for c, w in r.released.items() if w == i)}
                for i in sorted(set(r.released.values()))]
    return {
        "state": "aborted" if r.aborted else "halted" if r.halted else "rolling",
        "wave": None if r.aborted else name(r.wave),
        "waves": released,
        "haltedBy": None if r.halted is None else {
            "cluster": r.halted.cluster, "reason": r.halted.reason, "wave": name(r.halted.wave),
            "at": r.halted.at.isoformat()},
        "healthySince": r.healthy_since.isoformat() if r.healthy_since else None,
        "startedAt": r.started.isoformat(),
    }


def status_lines(view: dict[str, Any] | None) -> list[str]:
    """The rollout block `trinogen status` prints."""
    if view is None:
        return []
    if view["state"] == "idle":
        return ["rollout: none under way"]
    if view["state"] == "unreadable":
        return [f"rollout: could not be read: {view['error']}"]
    lines = [f"rollout: {view['state']}" + (f", wave {view['wave']}" if view["wave"] else "")
             + f" (started {view['startedAt']})"]
    lines.extend(f"  released in wave {w['name']}: {', '.join(w['clusters'])}"
                 for w in view["waves"])
    if view["haltedBy"]:
        h = view["haltedBy"]
        lines.append(f"  halted in wave {h['wave']} by {h['cluster']} at {h['at']}: {h['reason']}"
                     " (fix it, then sync --resume-rollout; or --abort-rollout)")
    elif view["healthySince"]:
        lines.append(f"  every released cluster Synced and Healthy since {view['healthySince']}")
    elif view["state"] == "rolling":
        lines.append("  waiting for every released cluster to be Synced and Healthy "
                     "(sync --dry-run says which one)")
    return lines
