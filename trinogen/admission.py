"""The tenants' quotas applied to one run's desired tree, against what the repository holds.

Only the clusters whose files this run would change are judged (`trinogen.quotas.admit`); every
other cluster counts with the values the repository holds for it, read from git, so a render
cache hit, a failed document, or a cluster outside a targeted sync (`sync --cluster`, the
watcher) weighs exactly as in a full sync. A refused cluster becomes a `Failed` (stage
"quota"): its files stay as they are. Imported only when some tenant has a quota.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from trinogen.applications import Applications
from trinogen.desired import Desired
from trinogen.errors import Problem
from trinogen.model import Failed
from trinogen.plan import Documents, Layout, kept
from trinogen.quotas import NONE, Change, Measured, Usage, admit, measure
from trinogen.settings import Settings

VALUES = "values.yaml"
_COUNTED = (b"server:", b"coordinator:", b"worker:")
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Scope:
    """What the plan will do with clusters this run did not render (`trinogen.plan.kept`)."""

    targets: set[str] | None  # a targeted run's clusters; None = all
    source_complete: bool

    def keeps(self, desired: Desired) -> Callable[[str, str | None], bool]:
        """Whether the plan keeps a held cluster nothing was rendered for, given its document."""
        docs = Documents.of(desired.failed, desired.disabled, desired.docs)
        return lambda cid, doc: kept(cid, doc, docs, source_complete=self.source_complete,
                                     targets=self.targets)


def enforce_quotas(
    settings: Settings, desired: Desired, apps: Applications, scope: Scope,
) -> None:
    """Turn each rendered cluster that would cross its tenant's quota into a Failed (`apps`: the
    run's read of the tree's Application files, shared with the other steps)."""
    limits = {name: t.quotas for name, t in settings.tenants.items() if t.quotas.any}
    tree, layout = apps.tree, apps.layout
    held = layout.files_by_cluster(tree)
    changed = _changed(desired, held, layout)
    if not any(m.owner in limits for m in changed.values()):
        return  # no change of a tenant with a quota: nothing to read
    recorded = apps.recorded()
    old_of = _old_of(changed, held, desired.docs, recorded)
    owners = {m.owner for m in changed.values() if m.owner in limits}
    stays = _stays(held, desired, changed, recorded, scope.keeps(desired))
    measured = _measure_held(apps, _naming(apps, stays, owners))
    measured.update(_measure_held(apps, {c for c in old_of.values() if c}))
    changes = [_change(cid, desired.docs[cid], new, old_of[cid], measured)
               for cid, new in changed.items()]
    _refuse(desired, admit(limits, _totals(measured.values()), changes))


def _old_of(changed: Iterable[str], held: Mapping[str, object], docs: Mapping[str, str],
            recorded: Mapping[str, str]) -> dict[str, str | None]:
    """The old side of each change: the cluster of the same id, else its document's (a rename)."""
    by_doc = {doc: cid for cid, doc in recorded.items()}
    return {cid: cid if cid in held else by_doc.get(docs[cid]) for cid in changed}


def _refuse(desired: Desired, refused: Mapping[str, tuple[Problem, ...]]) -> None:
    """A refused cluster fails; the plan then keeps its files as the repository holds them."""
    for cid, problems in refused.items():
        desired.failed.append(Failed(desired.docs.pop(cid), cid, problems, "quota"))
        del desired.files[cid]
        desired.stopped.discard(cid)


def _stays(held: Iterable[str], desired: Desired, changed: Mapping[str, Measured],
           recorded: Mapping[str, str], keeps: Callable[[str, str | None], bool]) -> set[str]:
    """The clusters the repository holds that stay as they are after this run."""
    return {cid for cid in held if (cid not in changed) if cid in desired.files
            or keeps(cid, recorded.get(cid))}


def _totals(measured: Iterable[Measured]) -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for m in measured:
        totals[m.owner or ""] = totals.get(m.owner or "", NONE) + m.usage
    return totals


def _changed(desired: Desired, held: Mapping[str, Mapping[str, str]], layout: Layout
             ) -> dict[str, Measured]:
    """The rendered clusters whose files differ from the repository's, measured."""
    out = {}
    for cid, files in desired.files.items():
        if {p: f.blob for p, f in files.items()} != held.get(cid):
            values = files.get(_values(layout, cid))
            out[cid] = _measure(values.content if values is not None else None)
    return out


def _change(cid: str, doc: str, new: Measured, old: str | None,
            measured: Mapping[str, Measured]) -> Change:
    before = measured.get(old) if old is not None else None
    return Change(cid, doc, new, before.usage if before else NONE,
                  before.owner if before else None, held=before is not None and old == cid)


def _values(layout: Layout, cid: str) -> str:
    return f"{layout.clusters_dir}/{cid}/{VALUES}"


def _naming(apps: Applications, clusters: Iterable[str], owners: Iterable[str]) -> set[str]:
    """The clusters that may belong to one of `owners`: a byte search of their Application
    files, which carry the owner label (`trinogen.io/owner`) as the values do; a cluster with no
    Application file in the tree is kept (its values.yaml decides). A tenant's change reads
    only that tenant's values files."""
    marks = [o.encode() for o in owners]
    texts = apps.of(clusters)
    return {cid for cid in clusters
            if (text := texts.get(cid)) is None or any(m in text for m in marks)}


def _measure_held(apps: Applications, clusters: Iterable[str]) -> dict[str, Measured]:
    """The held clusters' usage, from their values.yaml."""
    tree = apps.tree
    paths = {cid: _values(apps.layout, cid) for cid in clusters}
    contents = apps.repo.blobs(tree[p] for p in paths.values() if p in tree)
    return {cid: _measure(contents.get(tree.get(path, ""))) for cid, path in paths.items()}


def _measure(content: bytes | None) -> Measured:
    """The usage in a values.yaml, parsing only the sections it is counted from."""
    try:
        values = yaml.load(_sections(content), Loader=_Loader) if content else None
    except yaml.YAMLError:
        values = None
    return measure(values)


def _sections(content: bytes) -> bytes:
    """The top-level `server:`, `coordinator:` and `worker:` blocks (the catalogs, which may be
    most of the file, are left unparsed): a block runs to the next line at column 0."""
    out, keep = [], False
    for line in content.splitlines(keepends=True):
        if line[:1] not in (b" ", b"\t", b"#", b"\n", b"\r", b""):
            keep = line.startswith(_COUNTED)
        if keep:
            out.append(line)
    return b"".join(out)
