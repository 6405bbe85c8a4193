"""Which wave each cluster belongs to, from the `rollout.waves` rules. Pure."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.settings.rollout import WaveRule

REST = "rest"


@dataclass(frozen=True)
class Facts:
    """What the rules select a cluster by, read from its document."""

    owner: str | None = None
    profile: str | None = None

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> Facts:
        owner, profile = body.get("owner"), body.get("profile")
        return cls(owner if isinstance(owner, str) else None,
                   profile if isinstance(profile, str) else None)


def names(rules: tuple[WaveRule, ...]) -> list[str]:
    """The waves in order: the rules', then `rest` unless the last rule already takes all."""
    out = [r.name for r in rules]
    return out if rules and rules[-1].selects_all else [*out, REST]


def wave_of(rules: tuple[WaveRule, ...], cluster_id: str, facts: Facts) -> int:
    """The index of the first wave that selects the cluster (`len(rules)`: the implicit rest)."""
    for i, rule in enumerate(rules):
        if _selects(rule, cluster_id, facts):
            return i
    return len(rules)


def assign(rules: tuple[WaveRule, ...], clusters: Mapping[str, Facts]) -> dict[str, int]:
    return {cid: wave_of(rules, cid, facts) for cid, facts in clusters.items()}


def _selects(rule: WaveRule, cluster_id: str, facts: Facts) -> bool:
    if rule.clusters and not any(fnmatch.fnmatchcase(cluster_id, g) for g in rule.clusters):
        return False
    if rule.owners and facts.owner not in rule.owners:
        return False
    if rule.profiles and facts.profile not in rule.profiles:
        return False
    return rule.share is None or bucket(rule.name, cluster_id) < rule.share


def bucket(wave: str, cluster_id: str) -> float:
    """A stable number in [0, 1) per wave and cluster: a share wave takes the clusters below its
    share, so adding a cluster never moves another, and each share wave draws afresh from the
    clusters earlier waves left."""
    digest = hashlib.sha256(f"{wave}\0{cluster_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
