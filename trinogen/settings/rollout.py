"""Rollouts: the waves a fleet change goes through, and how long each must soak (issue 20).

The settings file declares them under `rollout` (read from the file only):

    rollout:
      soak: 10m                        # every cluster released so far Synced+Healthy this long
      waves:
        - name: canary
          clusters: [adhoc-dev, "*-canary"]   # clusterIds (globs)
        - name: platform
          owners: [data_platform]
          profiles: [dev]              # a wave takes the clusters matching ALL its selectors
        - name: half
          share: 0.5                   # half of the clusters no earlier wave took
        - name: rest                   # no selector: every cluster left
      state_file: .trinogen/rollout.json  # the record, in the GitOps repository (the default)
      check_seconds: 30                # watch: how soon it looks again while a wave waits

A cluster belongs to the first wave that selects it; one that no wave selects goes last, in an
implicit wave `rest`. A `share` wave takes a stable share of the clusters still free (by a hash
of the clusterId), so adding a cluster never moves the others. With no `rollout` section there
are no waves (and a fleet change over `sync.max_fleet_change_share` is refused instead). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError

_FIELDS = {"soak", "waves", "state_file", "check_seconds"}
_WAVE_FIELDS = {"name", "clusters", "owners", "profiles", "share"}
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DURATION = re.compile(r"(\d+)(s|m|h)?")
_UNITS = {"s": 1, "m": 60, "h": 3600, None: 1}
MAX_WAVES = 20
MAX_SOAK_SECONDS = 7 * 24 * 3600
DEFAULT_STATE_FILE = ".trinogen/rollout.json"


@dataclass(frozen=True)
class WaveRule:
    """Which clusters one wave takes: each selector given must match (empty = any)."""

    name: str
    clusters: tuple[str, ...] = ()  # clusterId globs
    owners: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    share: float | None = None  # of the clusters no earlier wave took (after the selectors)

    @property
    def selects_all(self) -> bool:
        return not (self.clusters or self.owners or self.profiles) and self.share is None


@dataclass(frozen=True)
class RolloutSettings:
    waves: tuple[WaveRule, ...]
    soak_seconds: int = 600
    # In the GitOps repository, outside the output roots: Argo CD never reads it.
    state_file: str = DEFAULT_STATE_FILE
    # `watch`: how soon after a sync that left a rollout waiting it looks at Argo CD again.
    check_seconds: int = 30


def parse_rollout(where: str, data: Any) -> RolloutSettings:
    """The `rollout` section, every mistake named with its field path."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: rollout must be a mapping with waves (and soak)")
    _known(f"{where}: rollout", data, _FIELDS, "rollout setting")
    waves = data.get("waves")
    if not isinstance(waves, list) or not waves:
        raise ConfigError(f"{where}: rollout.waves must be a non-empty list of waves")
    if len(waves) > MAX_WAVES:
        raise ConfigError(f"{where}: rollout.waves has {len(waves)} waves; at most {MAX_WAVES}")
    rules = tuple(_wave(f"{where}: rollout.waves[{i}]", w) for i, w in enumerate(waves))
    names = [r.name for r in rules]
    if len(set(names)) != len(names) or "rest" in names[:-1]:
        raise ConfigError(f"{where}: rollout.waves: wave names must be unique (and `rest`, the "
                          "implicit last wave, may only name the last one)")
    state = data.get("state_file", DEFAULT_STATE_FILE)
    return RolloutSettings(rules, _soak(where, data.get("soak", 600)), _state_file(where, state),
                           _check(where, data.get("check_seconds", 30)))


def _check(where: str, check: Any) -> int:
    if isinstance(check, bool) or not isinstance(check, int) or not 5 <= check <= 3600:
        raise ConfigError(f"{where}: rollout.check_seconds must be whole seconds, 5 to 3600")
    return check


def _wave(where: str, data: Any) -> WaveRule:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where} must be a mapping (name and selectors)")
    _known(where, data, _WAVE_FIELDS, "wave field")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > 63:
        raise ConfigError(f"{where}.name must be a lowercase name (letters, digits, '-')")
    return WaveRule(name, _names(f"{where}.clusters", data.get("clusters")),
                    _names(f"{where}.owners", data.get("owners")),
                    _names(f"{where}.profiles", data.get("profiles")),
                    _share(f"{where}.share", data.get("share")))


def _known(where: str, data: Mapping[Any, Any], fields: set[str], what: str) -> None:
    unknown = sorted(str(k) for k in data if k not in fields)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]} is not a {what} "
                          f"(known: {', '.join(sorted(fields))})")


def _share(where: str, share: Any) -> float | None:
    if share is None:
        return None
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise ConfigError(f"{where} must be a number above 0 and at most 1")
    return float(share)


def _names(where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v and len(v) <= 253 for v in value):
        raise ConfigError(f"{where} must be a non-empty list of names")
    return tuple(value)


def _soak(where: str, value: Any) -> int:
    """Seconds, or a duration with one unit: `90s`, `10m`, `2h`."""
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    else:
        found = _DURATION.fullmatch(value) if isinstance(value, str) else None
        if found is None:
            raise ConfigError(f"{where}: rollout.soak must be seconds or a duration like 10m, "
                              f"not {value!r}")
        seconds = int(found.group(1)) * _UNITS[found.group(2)]
    if not 0 <= seconds <= MAX_SOAK_SECONDS:
        raise ConfigError(f"{where}: rollout.soak must be between 0 and 7 days")
    return seconds


def _state_file(where: str, value: Any) -> str:
    """A relative path inside the repository, with no `..` and no hidden way out."""
    parts = value.split("/") if isinstance(value, str) else []
    if not parts or any(p in ("", ".", "..") for p in parts) or "\\" in value:
        raise ConfigError(f"{where}: rollout.state_file must be a relative path inside the "
                          "GitOps repository (no '..')")
    return str(value)
