"""Classify and render ahead, on several cores, what a large sync renders (issue 22).

`build_desired` validates the documents the render cache cannot serve, reads Vault, then renders.
For a large sync, `Ahead.of` first runs the pure part of that path over the same documents
through a `ports.FanOut` (`trinogen.pool`): each document classified on its own, and each
cluster that uses no Vault value rendered and self-checked. After the Vault read,
`Ahead.with_secrets` renders the clusters that use one the same way. `build_desired` then
takes the same path as ever, asking `Ahead` before doing a step itself, so its results, their
order and the render cache's records are those of a serial run.

What spans documents (a clusterId claimed twice), the render cache's remembered failures and
every Vault read stay in the calling process. The first workers are forked before Vault is
read; the second ones after it, so they inherit the values in memory, and send back files as
git will hold them (references, never values). In inline mode the files hold the values: those
clusters are rendered in the calling process, and no value travels in a pipe.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from trinogen import model
from trinogen.errors import Problem
from trinogen.model import Classified, Cluster, Disabled, Failed, RawDocument, settled
from trinogen.model.claims import refusals
from trinogen.model.library import Library
from trinogen.model.raw import contested_claims
from trinogen.plan import DesiredFile
from trinogen.ports import FanOut
from trinogen.render import LimitError, Renderer, RenderError
from trinogen.secrets import Resolved
from trinogen.served import Judge, Judged, Made
from trinogen.settings import Settings

Rendered = Failed | dict[str, DesiredFile]  # a cluster's files, or why it has none
# A cluster to render, or what is kept of one a worker already rendered (its files in `Ahead`).
Item = Cluster | Made


def render_files(cluster: Cluster, resolved: Resolved, renderer: Renderer,
                 inline: bool) -> Rendered:
    """One cluster's files (self-checked by the renderer), or its render failure."""
    cid = cluster.cluster_id
    try:
        files = renderer.render_cluster(cluster, resolved, inline=inline)
    except LimitError as e:  # Kubernetes would refuse an object: the document's fault
        return Failed(cluster.doc_id, cid, e.problems, "render")
    except RenderError as e:
        return Failed(cluster.doc_id, cid, (Problem(cid, "", str(e)),), "render")
    return {p: DesiredFile.of(c) for p, c in files.items()}


@dataclass(frozen=True)
class Ahead:
    """What the workers found, by document and by cluster (empty: nothing was fanned out)."""

    outcomes: dict[int, Judged] = field(default_factory=dict)  # id(raw) -> its own outcome
    rendered: dict[int, tuple[Item, Rendered]] = field(default_factory=dict)  # by id(item)
    # The clusterIds several documents claim (`raw.contested_claims`), noted before any was
    # let go; None: no document was, the claims rule reads them.
    contested: dict[str, list[int]] | None = None

    @classmethod
    def of(cls, fan_out: FanOut | None, raws: Sequence[RawDocument], settings: Settings,
           library: Library, renderer: Renderer, *, inline: bool, keep: bool = False) -> Ahead:
        """Classify `raws` and render their secret-free clusters through `fan_out`, if it
        takes the work (else nothing is done here and every step stays with the caller).
        Each document whose outcome is in lets its body go (`RawDocument.let_go`): a disabled
        one before the fork, the others as their chunk lands; not if the caller reads the
        documents again (`keep`)."""
        todo, disabled = _worth(fan_out, raws)
        if fan_out is None or not todo:
            return cls()
        ahead, rest = cls(contested=None if keep else contested_claims(raws)), todo[1:]
        for raw, outcome in disabled:
            ahead.outcomes[id(raw)] = outcome
            if not keep:
                raw.let_go()
        work = _work(settings, library, renderer, inline=inline)
        # The first document here, before the fork: the validator and the templates it uses
        # are then loaded once, in this process, and every worker inherits them.
        ahead._record(todo[:1], work(todo[:1]), let_go=False)
        # Recorded as each chunk lands, its documents let go: what a chunk's documents held
        # makes room for the next chunks' files (issue 22: the peak of a full sync held every
        # document beside every file). The answer, if any, holds the same results again.
        landed = None if keep else partial(ahead._landed, rest)
        done = fan_out(work, rest, landed)
        if done is not None:  # else the caller does the rest itself (what landed is recorded)
            ahead._record(rest, done, let_go=False)
        return ahead

    def _landed(self, raws: Sequence[RawDocument], start: int, results: list[Any]) -> None:
        self._record(raws[start:start + len(results)], results, let_go=True)

    def _record(self, raws: Sequence[RawDocument], results: list[tuple[Judged, Rendered | None]],
                *, let_go: bool) -> None:
        for raw, (outcome, rendered) in zip(raws, results, strict=True):
            self.outcomes[id(raw)] = outcome
            if rendered is not None and isinstance(outcome, Cluster | Made):
                self.rendered[id(outcome)] = (outcome, rendered)
            # Only once its outcome is here: never classified again. A failure keeps its body:
            # whether it is one to remember asks if the body decodes (`served._recorded`).
            if let_go and not isinstance(outcome, Failed):
                raw.let_go()

    def with_secrets(self, fan_out: FanOut | None, clusters: Sequence[Item],
                     resolved: Resolved, renderer: Renderer, *, ready: Callable[[Cluster], bool],
                     inline: bool) -> None:
        """Render through `fan_out`, after the Vault read, the clusters nobody rendered yet
        whose secrets are all `ready` (the caller reports the others' secret problems itself).
        Workers are forked now, so they inherit the values read; what travels back is files
        as git will hold them, with no secret value in them, never in inline mode: there the
        files hold the values, and they stay in this process (rendered by the caller)."""
        todo = [] if inline or not resolved else self._unrendered(clusters, ready)
        if fan_out is None or not todo or not fan_out.wants(len(todo)):
            return
        done = fan_out(partial(_render_each, resolved, renderer), todo)
        for cluster, rendered in zip(todo, done or [], strict=done is not None):
            self.rendered[id(cluster)] = (cluster, rendered)

    def _unrendered(self, clusters: Sequence[Item],
                    ready: Callable[[Cluster], bool]) -> list[Cluster]:
        return [c for c in clusters if isinstance(c, Cluster) and self.files(c) is None
                and ready(c)]

    def judge(self, classify: Judge) -> Judge:
        """`classify`, answered from the workers' outcome where there is one."""
        if not self.outcomes:
            return classify

        def judged(raw: RawDocument) -> Judged:
            found = self.outcomes.get(id(raw))
            return classify(raw) if found is None else found

        return judged

    def files(self, cluster: Item) -> Rendered | None:
        """The cluster's render from a worker: only for this very cluster value."""
        found = self.rendered.get(id(cluster))
        return found[1] if found is not None and found[0] is cluster else None

    def take_or(self, item: Item, render: Callable[[Cluster], Rendered]) -> Rendered:
        """The item's files from a worker (`take`), else `render(item)` now."""
        done = self.take(item)
        if done is not None:
            return done
        if isinstance(item, Cluster):
            return render(item)
        # a bug: a Made comes from a worker's render only, its files kept here until taken
        raise LookupError(f"cluster {item.cluster_id}: rendered ahead, its files lost")

    def take(self, cluster: Item) -> Rendered | None:
        """`files`, no longer kept here: the caller's, and the cluster is not held any more."""
        found = self.files(cluster)
        if found is not None:
            del self.rendered[id(cluster)]
        return found


def secret_paths(clusters: Iterable[Item]) -> set[str]:
    """The Vault paths the clusters use (of one rendered ahead: those it used)."""
    return {p for c in clusters for p in (c.secret_paths if isinstance(c, Made) else
                                          (u.ref.secret_path for u in c.vault_uses))}


def _render_each(resolved: Resolved, renderer: Renderer, chunk: Sequence[Cluster]) -> list[Rendered]:
    """In a worker forked after the Vault read: each cluster's files, not inline."""
    return [render_files(c, resolved, renderer, False) for c in chunk]


def _worth(fan_out: FanOut | None, raws: Sequence[RawDocument]
           ) -> tuple[list[RawDocument], list[tuple[RawDocument, Disabled]]]:
    """The documents to fan out, and the disabled ones with their outcome: none unless enough
    need validating. Disabled and refused documents are settled without validation and do not
    count (a no-op sync's misses are mostly disabled documents: it never forks)."""
    if fan_out is None or not fan_out.wants(len(raws)):
        return [], []
    todo, disabled = [], []
    for raw in raws:
        done = settled(raw)
        if done is None:
            todo.append(raw)
        elif isinstance(done, Disabled):
            disabled.append((raw, done))
    return (todo, disabled) if todo and fan_out.wants(len(todo)) else ([], [])


def _work(settings: Settings, library: Library, renderer: Renderer, *,
          inline: bool) -> Callable[[Sequence[RawDocument]], list[tuple[Judged, Rendered | None]]]:
    """What a worker does with its documents: classify each on its own and render each
    secret-free cluster. Secret-free: it uses no Vault value, or this run reads none
    (`secrets.check` off and not inline: `read_secrets` returns nothing, so every cluster
    renders without one, in a worker as in the caller). A cluster rendered is sent back as
    a `Made`, not whole (issue 22: the Clusters of every core, unpickled here beside their
    files and the documents, made the peak of a full sync); inline, whole: its masks need it."""
    reads_vault = settings.secrets.check or inline

    def work(chunk: Sequence[RawDocument]) -> list[tuple[Judged, Rendered | None]]:
        out: list[tuple[Judged, Rendered | None]] = []
        for raw in chunk:
            outcome = model.classify(raw, settings, library)
            if not isinstance(outcome, Cluster) or (reads_vault and outcome.vault_uses):
                out.append((outcome, None))
                continue
            files = render_files(outcome, {}, renderer, inline)
            out.append((outcome if inline else Made.of(outcome), files))
        return out

    return work


def judge_all(raws: list[RawDocument], judge: Judge, held: Mapping[str, str] | None,
              contested: Mapping[str, list[int]] | None = None) -> tuple[list[Item], Classified]:
    """Each document's own outcome (`judge`), then the clusterIds several claim settled
    (`model.claims`): the clusters to render or rendered ahead, in the documents' order, and
    the other outcomes. A cluster rendered ahead that loses its clusterId fails as any does."""
    outcomes = [judge(raw) for raw in raws]
    for i, failed in refusals(outcomes, raws, held, contested).items():
        outcomes[i] = failed
    return ([o for o in outcomes if isinstance(o, Cluster | Made)],
            Classified.of(o for o in outcomes if not isinstance(o, Cluster | Made)))
