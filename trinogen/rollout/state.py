"""The rollout's record, kept as one JSON file in the GitOps repository (`rollout.state_file`).

Why git: the record then moves with the files it gates, in the same commit. A restart reads it
back from the branch; two writers never lose an update of it, because a push the remote rejects
is planned again from the new tree, record included (`trinogen.publish`). It sits outside the
output roots, so Argo CD never applies it and the plan never prunes it.

    documents   clusterId -> the digest of the document its files in git were rendered from
                (how a fleet change is told from the document's own edit)
    rollout     the fleet change under way, or null

Anyone who can push to the repository can edit it; a malformed record is an error naming the
file (fix or delete it: deleting it forgets the rollout, and the next fleet change starts anew).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.rollout import WaveRule, parse_rollout

VERSION = 1


@dataclass(frozen=True)
class Halt:
    """Why the rollout stopped: a released cluster went Degraded or failed its sync."""

    wave: int
    cluster: str
    reason: str
    at: datetime


@dataclass(frozen=True)
class Rollout:
    """A fleet change under way."""

    started: datetime
    wave: int  # the last wave released (index into the settings' waves)
    released: Mapping[str, int] = field(default_factory=dict)  # cluster -> wave released in
    # The files each released cluster had before (path -> blob id): what an abort puts back.
    before: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    healthy_since: datetime | None = None  # every released cluster Synced+Healthy since then
    halted: Halt | None = None
    aborted: bool = False  # put back; nothing is released until resumed
    # The waves it goes through, as the settings said when it started: `wave` and `released`
    # are indices into them, so a change of `rollout.waves` waits for the next rollout (empty:
    # a record from before they were kept; the settings' waves then).
    waves: tuple[WaveRule, ...] = ()


@dataclass(frozen=True)
class RolloutState:
    documents: Mapping[str, str] = field(default_factory=dict)
    rollout: Rollout | None = None

    def with_rollout(self, rollout: Rollout | None) -> RolloutState:
        return replace(self, rollout=rollout)

    def to_bytes(self) -> bytes:
        data: dict[str, Any] = {"version": VERSION, "documents": dict(sorted(
            self.documents.items())), "rollout": _rollout_json(self.rollout)}
        return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


def load(content: bytes | None, where: str) -> RolloutState:
    """The record as the repository holds it; an empty one when there is none."""
    if content is None:
        return RolloutState()
    try:
        data = json.loads(content)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} rollout record")
        return RolloutState(_str_map(data["documents"]), _rollout(data["rollout"]))
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{where}: the rollout record in the GitOps repository is malformed "
                          f"({e}); fix it, or delete it to forget the rollout") from e


def _rollout_json(r: Rollout | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "started": r.started.isoformat(), "wave": r.wave,
        "released": dict(sorted(r.released.items())),
        "before": {c: dict(sorted(f.items())) for c, f in sorted(r.before.items())},
        "healthySince": r.healthy_since.isoformat() if r.healthy_since else None,
        "halted": None if r.halted is None else {
            "wave": r.halted.wave, "cluster": r.halted.cluster, "reason": r.halted.reason,
            "at": r.halted.at.isoformat()},
        "aborted": r.aborted,
        "waves": [_rule_json(w) for w in r.waves],
    }


def _rule_json(w: WaveRule) -> dict[str, Any]:
    out: dict[str, Any] = {"name": w.name, "clusters": list(w.clusters), "owners": list(w.owners),
                           "profiles": list(w.profiles), "share": w.share}
    return {k: v for k, v in out.items() if v not in ([], None)}


def _rollout(data: Any) -> Rollout | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError("rollout is not an object")
    halted = data["halted"]
    before = data["before"]
    if not isinstance(before, dict):
        raise TypeError("before is not an object")
    return Rollout(
        started=_time(data["started"]), wave=_int(data["wave"]),
        released={_cid(k): _int(v) for k, v in _map(data["released"]).items()},
        before={_cid(c): _str_map(f) for c, f in before.items()},
        healthy_since=None if data["healthySince"] is None else _time(data["healthySince"]),
        halted=None if halted is None else Halt(_int(halted["wave"]), _text(halted["cluster"]),
                                                _text(halted["reason"]), _time(halted["at"])),
        aborted=data["aborted"] is True,
        waves=_waves(data.get("waves", [])),
    )


def _waves(data: Any) -> tuple[WaveRule, ...]:
    """The recorded waves, judged as the settings' are (names, globs, shares, at most 20)."""
    if data == []:
        return ()
    try:
        return parse_rollout("the record", {"waves": data}).waves
    except ConfigError as e:
        raise ValueError(str(e)) from e


def _map(value: Any) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise TypeError("expected an object")
    return value


def _str_map(value: Any) -> dict[str, str]:
    found = _map(value)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
        raise TypeError("expected an object of strings")
    return found


def _cid(value: Any) -> str:
    """A clusterId as the record names it: printed by `status`, so no control characters."""
    if not isinstance(value, str) or not value.isprintable() or not 0 < len(value) <= 253:
        raise TypeError(f"{value!r} is not a clusterId")
    return value


def _text(value: Any) -> str:
    """Free text someone may have edited (a halt's reason): printable, and not a book."""
    return "".join(c if c.isprintable() else " " for c in str(value)[:2000])


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1000:
        raise TypeError(f"{value!r} is not a wave number")
    return value


def _time(value: Any) -> datetime:
    found = datetime.fromisoformat(str(value))
    if found.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone")
    return found
