"""The tenants' quotas applied to one run's desired tree, against what the repository holds.

Only the clusters whose files this run would change are judged (`trinogen.quotas.admit`); every
other cluster counts with the values the repository holds for it, read from git, so a render
cache hit, a failed document, or a cluster outside a targeted sync (`sync --cluster`, the
watcher) weighs exactly as in a full sync. A refused cluster becomes a `Failed` (stage
"quota"): its files stay as they are. Imported only when some tenant has a quota.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from trinogen.desired import Desired
from trinogen.model import Failed
from trinogen.plan import Layout
from trinogen.ports import Repository
from trinogen.quotas import NONE, Change, Measured, Usage, admit, measure
from trinogen.settings import Settings
from trinogen.targets import recorded_documents

VALUES = "values.yaml"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Scope:
    """What the plan will do with clusters this run did not render."""

    targets: set[str] | None  # a targeted run's clusters; None = all
    source_complete: bool
    failed_ids: frozenset[str | None] = frozenset()
    failed_docs: frozenset[str] = frozenset()
    disabled_ids: frozenset[str | None] = frozenset()
    disabled_docs: frozenset[str] = frozenset()

    def of(self, desired: Desired) -> Scope:
        """With the failed and disabled documents of this run."""
        return Scope(self.targets, self.source_complete,
                     frozenset(f.cluster_id for f in desired.failed),
                     frozenset(f.doc_id for f in desired.failed),
                     frozenset(d.cluster_id for d in desired.disabled),
                     frozenset(d.doc_id for d in desired.disabled))


def enforce_quotas(
    settings: Settings, desired: Desired, tree: Mapping[str, str], repo: Repository,
    layout: Layout, scope: Scope,
) -> None:
    """Turn each rendered cluster that would cross its tenant's quota into a Failed."""
    limits = {name: t.quotas for name, t in settings.tenants.items() if t.quotas.any}
    held = _clusters(tree, layout)
    changed = {cid: _measure(files[_values(layout, cid)].content if _values(layout, cid) in files
                             else None)
               for cid, files in desired.files.items()
               if {p: f.blob for p, f in files.items()} != held.get(cid)}
    if not any(m.owner in limits for m in changed.values()):
        return  # no change of a tenant with a quota: nothing to read
    recorded = recorded_documents(tree, repo, layout)
    scope = scope.of(desired)
    by_doc = {doc: cid for cid, doc in recorded.items()}
    old_of = {cid: cid if cid in held else by_doc.get(desired.docs[cid]) for cid in changed}
    kept = {cid for cid in held if cid not in desired.files
            and _kept(cid, recorded.get(cid), scope)}
    unchanged = {cid for cid in desired.files if cid in held and cid not in changed}
    gone = set(old_of.values()) - {None}
    measured = _measure_held(repo, tree, layout, kept | unchanged | {c for c in gone if c})
    base: dict[str, Usage] = {}
    for m in measured.values():
        base[m.owner or ""] = base.get(m.owner or "", NONE) + m.usage
    changes = [_change(cid, desired.docs[cid], new, old_of[cid], measured)
               for cid, new in changed.items()]
    for cid, problems in admit(limits, base, changes).items():
        desired.failed.append(Failed(desired.docs.pop(cid), cid, problems, "quota"))
        del desired.files[cid]
        desired.stopped.discard(cid)


def _change(cid: str, doc: str, new: Measured, old: str | None,
            measured: Mapping[str, Measured]) -> Change:
    before = measured.get(old) if old is not None else None
    return Change(cid, doc, new, before.usage if before else NONE,
                  before.owner if before else None, held=before is not None and old == cid)


def _kept(cid: str, doc: str | None, scope: Scope) -> bool:
    """Whether the plan keeps a cluster nothing was rendered for (trinogen.plan's rules)."""
    return (cid in scope.failed_ids or doc in scope.failed_docs
            or (scope.targets is not None and cid not in scope.targets)
            or doc is None  # no _id in its files: kept
            or not (cid in scope.disabled_ids or doc in scope.disabled_docs
                    or scope.source_complete))


def _clusters(tree: Mapping[str, str], layout: Layout) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for path, blob in tree.items():
        cid = layout.cluster_of(path)
        if cid is not None:
            out.setdefault(cid, {})[path] = blob
    return out


def _values(layout: Layout, cid: str) -> str:
    return f"{layout.clusters_dir}/{cid}/{VALUES}"


def _measure_held(repo: Repository, tree: Mapping[str, str], layout: Layout,
                  clusters: Iterable[str]) -> dict[str, Measured]:
    paths = {cid: _values(layout, cid) for cid in clusters}
    contents = repo.blobs(tree[p] for p in paths.values() if p in tree)
    return {cid: _measure(contents.get(tree.get(p, ""))) for cid, p in paths.items()}


def _measure(content: bytes | None) -> Measured:
    try:
        values = yaml.load(content, Loader=_Loader) if content else None
    except yaml.YAMLError:
        values = None
    return measure(values)
