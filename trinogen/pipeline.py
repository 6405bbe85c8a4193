"""The one path every command takes: read -> validate -> resolve -> render -> plan -> apply.

`validate()`, `render()` and `sync()` are the commands' single calls; `watch` calls `sync()` with
targets. The adapters (document source, working copy, secret reader) are built by the caller and
passed in through the Protocols of `trinogen.ports`. The steps live in their own modules:

    trinogen.targets  which documents a run reads
    trinogen.desired  the desired tree (classify, resolve secrets, render), wrapped by the
                      render cache (trinogen.served)
    trinogen.publish  plan against the tree; commit, push, retry
    trinogen.status   the status rows written back after a sync
    trinogen.result   the Report and its JSON shape
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trinogen import model
from trinogen.applications import Applications
from trinogen.appprojects import ProjectPlanner, rendered_projects
from trinogen.desired import (
    VAULT_PARALLEL_READS,
    Context,
    Desired,
    Progress,
    build_desired,
    masker,
    no_progress,
)
from trinogen.errors import ConfigError
from trinogen.model import Classified, Cluster, Failed
from trinogen.plan import Guards, Layout, Plan, unified_diff
from trinogen.pool import ForkPool, from_settings
from trinogen.ports import (
    ArgoView,
    ArgoViewFactory,
    DocumentSource,
    ReaderFactory,
    RenderCacheStore,
    Repository,
)
from trinogen.publish import Planner, Published, plan_failures, publish
from trinogen.render import Renderer
from trinogen.result import Report
from trinogen.settings import Settings
from trinogen.status import write_status
from trinogen.targets import (
    Holdings,
    Targets,
    read_documents,
    read_library,
    require_known,
)

if TYPE_CHECKING:
    from trinogen.status.argo import StatusReport

__all__ = [
    "VAULT_PARALLEL_READS", "Context", "Desired", "Progress", "ReaderFactory", "Report", "SyncOptions",
    "build_desired", "inline_mode", "render", "require_repo_url", "status", "sync", "validate",
]

log = logging.getLogger(__name__)


def inline_mode(settings: Settings, cli_opt_in: bool) -> bool:
    """Inline secrets need the opt-in in the settings AND on the command line."""
    if settings.secrets.mode != "inline":
        return False
    if not (settings.secrets.allow_inline and cli_opt_in):
        raise ConfigError(
            "secrets.mode is inline, which writes secret values into the GitOps repository: it "
            "needs secrets.allow_inline: true in the settings AND --allow-inline-secrets on the "
            "command line (use it only with an encrypted repository)"
        )
    log.warning("inline secrets: secret values are written into the GitOps repository in plain "
                "text; only safe if that repository is encrypted")
    return True


def validate(settings: Settings, source: DocumentSource) -> Report:
    raws = source.read_all()
    # validate always reads the library: a catalog nobody uses yet is judged too
    library = read_library(source, raws, settings, always=True)
    c = Classified.of(model.classify_all(raws, settings, library))
    c.clusters, too_large = _objects_fit(c.clusters, Renderer(settings))
    report = Report("validate", failed=[*library.failed, *c.failed, *too_large],
                    rendered=[x.cluster_id for x in c.clusters],
                    disabled=[d.cluster_id or d.doc_id for d in c.disabled])
    for cluster in c.clusters:
        report.warnings.extend(cluster.warnings)
    report.stats = {"documents": len(raws)}
    return report


def status(settings: Settings, source: DocumentSource, view: ArgoView | None,
           note: str = "") -> StatusReport:
    """The status records, with Argo CD's view of each cluster when `view` is given."""
    from trinogen.status.argo import read_back  # `trinogen status` only, not a sync

    report = read_back(source, view, settings.argocd.app_name_prefix, note,
                       settings.argocd.root_app_name)
    report.namespace = settings.argocd.namespace
    return report


def _objects_fit(clusters: list[Cluster], renderer: Renderer) -> tuple[list[Cluster], list[Failed]]:
    """The clusters whose objects Kubernetes takes, and the others, failed (render.limits)."""
    fit, failed = [], []
    for cluster in clusters:
        problems = renderer.object_problems(cluster)
        if problems:
            failed.append(Failed(cluster.doc_id, cluster.cluster_id, tuple(problems), "render"))
        else:
            fit.append(cluster)
    return fit, failed


def render(
    settings: Settings,
    source: DocumentSource,
    out_dir: Path,
    *,
    clusters: Iterable[str] = (),
    reader_factory: ReaderFactory | None = None,
    inline: bool = False,
    progress: Progress = no_progress,
) -> Report:
    """Write the desired tree (no git) into `out_dir`; stale trinogen files there are removed."""
    from trinogen.gitops import write_tree

    started = time.monotonic()
    wanted = set(clusters)
    raws = source.read_targeted((), wanted) if wanted else source.read_all()
    require_known(wanted, raws)
    renderer = Renderer(require_repo_url(settings))
    documents = len(raws)  # build_desired empties `raws`
    desired = build_desired(Context(settings, renderer, reader_factory, inline=inline,
                                    progress=progress, fan_out=_fan_out(settings),
                                    library=read_library(source, raws, settings)), raws)
    if wanted:
        desired.files = {k: v for k, v in desired.files.items() if k in wanted}
    contents = {cid: {p: f.content or b"" for p, f in files.items()}
                for cid, files in desired.files.items()}
    extra = {p: f.content or b"" for p, f in desired.extra.items()}
    extra.update(rendered_projects(settings, renderer, _layout(settings), contents))
    written = write_tree(out_dir, contents, extra, _layout(settings), prune_stale=not wanted)
    report = Report("render", failed=desired.failed, warnings=desired.warnings,
                    rendered=sorted(desired.files), out_dir=str(out_dir),
                    disabled=_disabled(desired))
    report.stats = {
        "documents": documents,
        "filesWritten": written,
        "vaultRequests": desired.vault_requests,
        "mongoQueries": source.queries,
        "seconds": round(time.monotonic() - started, 3),
    }
    return report


@dataclass(frozen=True)
class SyncOptions:
    dry_run: bool = False
    allow_empty: bool = False
    allow_mass_prune: bool = False
    allow_fleet_change: bool = False  # no waves: change more running clusters than the limits
    resume_rollout: bool = False  # after a halt (or an abort): release the next waves again
    abort_rollout: bool = False  # put the released clusters' files back; hold the change
    clusters: tuple[str, ...] = ()  # --cluster: only these (and prune only among them)
    doc_ids: tuple[str, ...] = ()  # watch: documents that changed (canonical _id JSON)
    inline: bool = False
    write_status: bool = True
    # Called right before each push (watch: "am I still the leader?"); raising aborts the push.
    before_push: Callable[[], None] | None = None

    @property
    def targets(self) -> Targets:
        return Targets(self.clusters, self.doc_ids)

    @property
    def targeted(self) -> bool:
        return self.targets.targeted


def sync(
    settings: Settings,
    source: DocumentSource,
    repo: Repository,
    *,
    options: SyncOptions = SyncOptions(),
    reader_factory: ReaderFactory | None = None,
    renderer: Renderer | None = None,
    progress: Progress = no_progress,
    argo_view: ArgoViewFactory | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Report:
    """Plan the repository against the documents, then commit and push the difference once.

    `argo_view` is read only when a rollout waits on Argo CD's health (`rollout` settings);
    `clock` gives the rollout's time (UTC now by default).
    """
    started = time.monotonic()
    if options.resume_rollout or options.abort_rollout:
        from trinogen.rollout.step import check_control

        check_control(settings, options.resume_rollout, options.abort_rollout)
    renderer = renderer or Renderer(settings, bytecode_dir=_bytecode_dir(repo))
    require_repo_url(settings)
    layout = _layout(settings)
    report = Report("sync", dry_run=options.dry_run)
    progress("lock", 0, 1)
    with repo.locked():
        progress("refresh", 0, 1)
        repo.refresh()
        tree = repo.tree(layout)
        reader = _Reader(settings, source, repo, renderer, options, reader_factory, progress,
                         _Rollouts(argo_view, clock))
        planner = reader(tree)
        if options.dry_run:
            done = Published(planner(tree), planner)
            report.diff = unified_diff(done.plan, repo.read,
                                       masker(planner.desired, inline=options.inline))
        else:
            progress("publish", 0, 1)
            done = publish(repo, planner, tree, layout, retries=settings.git.push_retries,
                           reread=reader, before_push=options.before_push)
        reader.save_cache()
    desired = done.planner.desired
    _fill(report, desired, done)
    if reader.rollouts.step is not None:
        report.rollout = reader.rollouts.step.to_json()
    if not options.dry_run and options.write_status:
        report.stats["statusWrites"] = write_status(source, done.plan, desired.failed,
                                                    desired.render_hashes,
                                                    done.commit or repo.head_commit(),
                                                    desired.stopped,
                                                    catalogs_judged=(desired.library_read
                                                                     or not options.targeted))
    report.stats.update(_sync_stats(desired, done, done.planner.guards.documents_read, source,
                                    started))
    return report


@dataclass
class _Rollouts:
    """What the rollout step needs from the caller, and what it decided last."""

    argo_view: ArgoViewFactory | None = None
    clock: Callable[[], datetime] | None = None
    step: Any = None  # trinogen.rollout.step.Step of the last read (imported only with waves)
    inputs: Any = None  # its Inputs, and what it read before rendering (Prepared)
    ready: Any = None

    def prepare(self, settings: Settings, raws: list[model.RawDocument], tree: Mapping[str, str],
                repo: Repository, options: SyncOptions) -> Any:
        """Read the record and judge the gate; returns which clusters need no render."""
        from trinogen.rollout.step import Control, Inputs, prepare  # only with waves

        now = self.clock() if self.clock is not None else datetime.now(UTC)
        self.inputs = Inputs(settings, Desired(), raws, tree, repo, _layout(settings), now,
                             Control(options.resume_rollout, options.abort_rollout),
                             self.argo_view, full_run=not options.targeted)
        self.ready = prepare(self.inputs)
        return self.ready.pending

    def __call__(self, desired: Desired) -> None:
        from trinogen.rollout.step import run_step

        self.step = run_step(dataclasses.replace(self.inputs, desired=desired), self.ready)


@dataclass
class _Reader:
    """Reads the documents for one tree and builds its planner; called again on every retry,
    so a re-plan never uses a read older than the commit that beat it (trinogen.publish)."""

    settings: Settings
    source: DocumentSource
    repo: Repository
    renderer: Renderer
    options: SyncOptions
    reader_factory: ReaderFactory | None
    progress: Progress
    rollouts: _Rollouts
    cache: RenderCacheStore | None = None

    def __call__(self, tree: Mapping[str, str]) -> Planner:
        layout = _layout(self.settings)
        # A fresh load each time: entries kept by an earlier attempt belong to its read.
        self.cache = self.repo.render_cache(self.renderer.fingerprint)
        # A targeted run (each watch batch) plans against the whole tree: the cache tells the
        # headers of every other cluster's files, which it would otherwise read (issue 22).
        owners = (self.cache.owners() if self.cache is not None and self.options.targeted
                  else None)
        # each Application file read once a run
        apps = Applications(tree, self.repo, layout, owners)
        raws, scope = read_documents(self.source, self.options.targets, tree, self.repo, layout,
                                     apps)
        self.progress("read", len(raws), len(raws))
        held = Holdings(tree, self.repo, layout, apps)  # who keeps a contested name (model.claims)
        documents = len(raws)  # build_desired empties `raws`; the rollout step reads its copy
        pending = None if self.settings.rollout is None else self.rollouts.prepare(
            self.settings, raws[:], tree, self.repo, self.options)
        desired = build_desired(Context(
            self.settings, self.renderer, self.reader_factory, inline=self.options.inline,
            progress=self.progress, cache=self.cache, tree=tree,
            library=read_library(self.source, raws, self.settings, holdings=held),
            held=held.clusters(raws), pending=pending, fan_out=_fan_out(self.settings)), raws)
        if any(t.quotas.any for t in self.settings.tenants.values()):
            from trinogen.admission import Scope, enforce_quotas  # only when a quota exists

            enforce_quotas(self.settings, desired, apps, Scope(scope, self.source.complete))
        if self.settings.rollout is not None:
            self.rollouts(desired)
        guards = _guards(self.settings, self.options, documents, self.source)
        return Planner(layout, desired, guards, self.repo, scope,
                       ProjectPlanner(self.settings, self.renderer, apps, self.cache), owners)

    def save_cache(self) -> None:
        if self.cache is not None:  # a targeted or incomplete read keeps the others' entries
            self.cache.save(partial=self.options.targeted or not self.source.complete)


def _guards(settings: Settings, options: SyncOptions, documents_read: int,
            source: DocumentSource) -> Guards:
    return Guards(
        full_run=not options.targeted,
        documents_read=documents_read,
        allow_empty=options.allow_empty,
        allow_mass_prune=options.allow_mass_prune,
        max_prune_count=settings.sync.max_prune_count,
        max_prune_share=settings.sync.max_prune_share,
        source_complete=source.complete,
        allow_fleet_change=options.allow_fleet_change,
        max_fleet_change_count=settings.sync.max_fleet_change_count,
        max_fleet_change_share=settings.sync.max_fleet_change_share,
        waves=settings.rollout is not None,
    )


def _fill(report: Report, desired: Desired, done: Published) -> None:
    report.plan = done.plan
    report.commit, report.pushed = done.commit, done.pushed
    report.failed = desired.failed + plan_failures(done.plan)
    report.warnings = desired.warnings
    report.disabled = _disabled(desired)


def _sync_stats(desired: Desired, done: Published, documents: int, source: DocumentSource,
                started: float) -> dict[str, int | float]:
    plan: Plan = done.plan
    return {
        "documents": documents,
        "clustersRendered": len(desired.files) - desired.cache_hits,
        "cacheHits": desired.cache_hits,
        "filesChanged": len(plan.files),
        "filesWritten": done.written,
        "commits": 1 if done.pushed else 0,
        "pushAttempts": done.attempts,
        "vaultRequests": desired.vault_requests,
        "mongoQueries": source.queries,
        "seconds": round(time.monotonic() - started, 3),
    }


def _disabled(desired: Desired) -> list[str]:
    return [d.cluster_id or d.doc_id for d in desired.disabled]


def _bytecode_dir(repo: Repository) -> Path | None:
    return repo.workdir / "trinogen-templates" if repo.workdir is not None else None


def _fan_out(settings: Settings) -> ForkPool:
    s = settings.sync
    return from_settings(s.workers, s.parallel_min_clusters, s.worker_timeout_seconds)


def _layout(settings: Settings) -> Layout:
    o = settings.output
    return Layout(o.clusters_dir, o.applications_dir, o.root_app)


def require_repo_url(settings: Settings) -> Settings:
    if not settings.repo_url:
        raise ConfigError(
            "the Argo CD Applications need the GitOps repository's URL: set git.remote "
            "(TRINOGEN_GIT_REMOTE) or argocd.repo_url"
        )
    return settings
