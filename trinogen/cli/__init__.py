"""The `trinogen` command line: parse, load settings, build adapters, call one pipeline function,
print, exit with the code from the one table in trinogen.errors (and docs/commands.md)."""

from __future__ import annotations

import gc
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trinogen import __version__
from trinogen.cli.options import (
    ClusterOpt,
    ConfigOpt,
    Globals,
    InlineOpt,
    LogFormatOpt,
    LogLevelOpt,
    OutputOpt,
    RemoteOpt,
    SetOpt,
    globals_of,
)
from trinogen.cli.output import (
    Progress,
    finish,
    print_report,
    print_status,
    setup_logging,
    use_color,
)
from trinogen.errors import ConfigError, ExitCode, SafetyRefusal
from trinogen.redact import redact_text

if TYPE_CHECKING:  # imported when a command runs: `--help` stays fast
    from trinogen.gitops import WorkingCopy
    from trinogen.ports import ArgoView, ReaderFactory
    from trinogen.settings import Settings
    from trinogen.vault import VaultReader

app = typer.Typer(
    name="trinogen",
    help="Turn Trino cluster documents in MongoDB into the GitOps repository Argo CD deploys from.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # never print locals: they may hold secrets
    context_settings={"help_option_names": ["-h", "--help"]},
)

log = logging.getLogger("trinogen")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trinogen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    log_level: LogLevelOpt = None,
    log_format: LogFormatOpt = None,
) -> None:
    ctx.obj = globals_of(config, set_, log_level, log_format)


# --- commands ----------------------------------------------------------------------------------


@app.command()
def validate(ctx: typer.Context, config: ConfigOpt = None, set_: SetOpt = None,
             log_level: LogLevelOpt = None, log_format: LogFormatOpt = None,
             output: OutputOpt = "text") -> None:
    """Validate every document; list the problems; exit 1 when any document is invalid."""
    flags = globals_of(config, set_, log_level, log_format)

    def run() -> int:
        from trinogen import pipeline, source

        settings = _settings(ctx, flags)
        report = pipeline.validate(settings, source.connect(settings.mongodb))
        print_report(report, output)
        return ExitCode.CLUSTERS_FAILED if report.failed else ExitCode.OK

    finish(run, output, "validate")


@app.command()
def render(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Directory to write the tree into (no git).")],
    cluster: ClusterOpt = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    log_level: LogLevelOpt = None,
    log_format: LogFormatOpt = None,
    output: OutputOpt = "text",
    allow_inline_secrets: InlineOpt = False,
) -> None:
    """Render the desired tree for the enabled, valid documents into --out."""
    flags = globals_of(config, set_, log_level, log_format)

    def run() -> int:
        from trinogen import pipeline, source

        settings = _settings(ctx, flags)
        with _progress(output, settings) as progress:
            report = pipeline.render(
                settings, source.connect(settings.mongodb), out, clusters=cluster or (),
                reader_factory=_vault_factory(settings, progress),
                inline=pipeline.inline_mode(settings, allow_inline_secrets), progress=progress,
            )
        print_report(report, output)
        return ExitCode.CLUSTERS_FAILED if report.failed else ExitCode.OK

    finish(run, output, "render")


@app.command()
def sync(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and diff; change nothing.")] = False,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Only with --dry-run: exit 5 when changes are pending.")] = False,
    stat: Annotated[bool, typer.Option("--stat", help="Counts and files per cluster instead of the diff.")] = False,
    cluster: ClusterOpt = None,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", help="Allow pruning everything when the source is empty.")] = False,
    allow_mass_prune: Annotated[bool, typer.Option("--allow-mass-prune", help="Allow pruning more clusters than the sync.max_prune_* limits.")] = False,
    allow_fleet_change: Annotated[bool, typer.Option("--allow-fleet-change", help="With no rollout waves: allow changing more running clusters than the sync.max_fleet_change_* limits.")] = False,
    resume_rollout: Annotated[bool, typer.Option("--resume-rollout", help="Release the next wave again after a halt (or restart an aborted rollout).")] = False,
    abort_rollout: Annotated[bool, typer.Option("--abort-rollout", help="Put the released clusters' files back and hold the fleet change.")] = False,
    allow_inline_secrets: InlineOpt = False,
    remote: RemoteOpt = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Branch (git.branch).")] = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    log_level: LogLevelOpt = None,
    log_format: LogFormatOpt = None,
    output: OutputOpt = "text",
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Colour the diff (default: on a terminal, unless NO_COLOR is set).")] = None,
) -> None:
    """Plan the GitOps repository against the documents; commit and push only the difference."""
    flags = globals_of(config, set_, log_level, log_format)

    def run() -> int:
        from trinogen import pipeline, source

        if exit_code and not dry_run:
            # A drift gate that commits and pushes is not a gate: refuse before doing anything.
            raise ConfigError("--exit-code only works with --dry-run (it reports pending "
                              "changes; a sync without --dry-run pushes them)")
        settings = _settings(ctx, flags, {"git.remote": remote, "git.branch": branch})
        options = pipeline.SyncOptions(
            dry_run=dry_run, allow_empty=allow_empty, allow_mass_prune=allow_mass_prune,
            clusters=tuple(cluster or ()), inline=pipeline.inline_mode(settings, allow_inline_secrets),
            allow_fleet_change=allow_fleet_change, resume_rollout=resume_rollout,
            abort_rollout=abort_rollout,
        )
        try:
            with _progress(output, settings) as progress:
                report = pipeline.sync(
                    settings, source.connect(settings.mongodb), _working_copy(settings),
                    options=options, reader_factory=_vault_factory(settings, progress),
                    progress=progress, argo_view=_argo(settings),
                )
        except SafetyRefusal as e:
            raise _refusal_hint(e, allow_empty, allow_mass_prune) from None
        print_report(report, output, stat=stat,
                     color=use_color(color, os.environ, sys.stdout.isatty()))
        if report.failed:
            return ExitCode.CLUSTERS_FAILED
        if exit_code and report.plan is not None and not report.plan.empty:
            return ExitCode.CHANGES_PENDING
        return ExitCode.OK

    finish(run, output, "sync")


@app.command()
def status(ctx: typer.Context, config: ConfigOpt = None, set_: SetOpt = None,
           log_level: LogLevelOpt = None, log_format: LogFormatOpt = None,
           output: OutputOpt = "text",
           argocd: Annotated[bool | None, typer.Option("--argocd/--no-argocd", help="Read Argo CD's Applications from the Kubernetes API (default: argocd.read_status, auto: when a kubeconfig or in-cluster account exists).")] = None,
           ) -> None:
    """Show the last sync state of every cluster, and what Argo CD shows of it."""
    flags = globals_of(config, set_, log_level, log_format)

    def run() -> int:
        from trinogen import pipeline, source

        settings = _settings(ctx, flags)
        mongo = source.connect(settings.mongodb)
        view, note = _argo_view(settings, argocd)
        report = pipeline.status(settings, mongo, view, note)
        log.debug("status: %d records read (embedded database: %s)", len(report.records),
                  mongo.ephemeral)
        print_status(report, output, _rollout_status(settings))
        return ExitCode.OK

    finish(run, output, "status")


@app.command()
def watch(ctx: typer.Context, config: ConfigOpt = None, set_: SetOpt = None,
          log_level: LogLevelOpt = None, log_format: LogFormatOpt = None,
          remote: RemoteOpt = None) -> None:
    """Follow MongoDB change streams and sync changed clusters within seconds (long-running)."""
    flags = globals_of(config, set_, log_level, log_format)

    def run() -> int:
        from trinogen import source
        from trinogen import watch as watch_mod

        collect_garbage()  # a watcher runs for days: its cycles must be freed
        settings = _settings(ctx, flags, {"git.remote": remote})
        watch_mod.require_change_streams(settings)
        # One pymongo client: documents, status, lease and the change stream.
        mongo = source.connect(settings.mongodb)
        watcher = watch_mod.compose(settings, mongo, mongo.collection, _working_copy(settings),
                                    reader_factory=_vault_factory(settings))
        return watch_mod.run(settings, watcher)

    finish(run, "text", "watch")


# --- plumbing ----------------------------------------------------------------------------------


def _settings(ctx: typer.Context, flags: Globals, extra: dict[str, Any] | None = None) -> Settings:
    """Settings from the global options given before and after the command name."""
    from trinogen.settings import load_settings

    given = flags.over(ctx.obj if isinstance(ctx.obj, Globals) else Globals())
    setup_logging(given.log_level or "INFO", given.log_format or "text")  # until they are read
    overrides = _overrides(given.overrides(), extra or {})
    settings = load_settings(given.config, os.environ, overrides)
    setup_logging(settings.log.level, settings.log.format)  # log.* from the file counts too
    # Keys only: a --set value may be a credential.
    log.debug("settings from %s; overridden on the command line: %s",
              given.config or "defaults and TRINOGEN_* variables", ", ".join(sorted(overrides))
              or "nothing")
    return settings


def _overrides(items: list[str], extra: dict[str, Any]) -> dict[str, Any]:
    """--set SECTION.KEY=VALUE items (later ones win), then the command's own flags."""
    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            raise ConfigError(f"--set {item!r}: write SECTION.KEY=VALUE, e.g. git.branch=main")
        overrides[key.strip()] = value
    overrides.update({k: v for k, v in extra.items() if v is not None})
    return overrides


def _rollout_status(settings: Settings) -> dict[str, Any] | None:
    """With rollout waves: the rollout as its record in the GitOps repository says."""
    if settings.rollout is None:
        return None
    from trinogen.rollout.view import read_status

    return read_status(settings, _working_copy(settings))


def _argo(settings: Any) -> Any:
    """Argo CD's view for a rollout's gate (built only when a gate reads it)."""
    if settings.rollout is None:
        return None
    from functools import partial

    from trinogen.argocd import argo_view

    return partial(argo_view, settings)  # the view reads nothing until the gate asks


def _refusal_hint(e: SafetyRefusal, allow_empty: bool, allow_mass_prune: bool) -> SafetyRefusal:
    """--allow-empty lets an empty source through, but pruning it all is also a mass prune."""
    if allow_empty and not allow_mass_prune and "--allow-mass-prune" in str(e):
        return SafetyRefusal(f"{e} (--allow-empty lets an empty source through; pruning every "
                             "cluster also needs --allow-mass-prune: give both flags)")
    return e


def _argo_view(settings: Settings, flag: bool | None) -> tuple[ArgoView | None, str]:
    """The Argo CD view `status` reads (None when off), and a note saying why or from where."""
    from trinogen import argocd  # only here: a sync never loads the Kubernetes client

    mode = settings.argocd.read_status if flag is None else ("always" if flag else "never")
    if mode == "never":
        return None, "turned off (--no-argocd or argocd.read_status: never)"
    if mode == "auto" and not argocd.has_access(os.environ):
        return None, ("no kubeconfig or in-cluster service account found (argocd.read_status: "
                      "auto); set KUBECONFIG or pass --argocd")
    view = argocd.argo_view(settings)
    return view, f"read through {view.access.where}"


def _working_copy(settings: Settings) -> WorkingCopy:
    from trinogen.gitops import WorkingCopy, default_workdir

    remote = settings.git.remote
    if not remote:
        raise ConfigError("set the GitOps repository: git.remote, TRINOGEN_GIT_REMOTE or --remote")
    workdir = Path(settings.git.workdir) if settings.git.workdir else default_workdir(remote)
    return WorkingCopy(settings.git, remote, workdir)


def _vault_factory(settings: Settings, progress: Progress | None = None) -> ReaderFactory:
    def factory() -> VaultReader:
        from trinogen import vault

        if progress is not None:  # called when the run first needs a secret: login, then reads
            progress("vault", 0, 1)
        return vault.connect(settings.vault, settings.secrets.kv_version, os.environ)

    return factory


def _progress(output: str, settings: Settings) -> Progress:
    return Progress(terminal=output != "json" and sys.stderr.isatty(),
                    lock_timeout=settings.git.lock_timeout)


def main() -> None:
    """Console-script entry point: a bug prints its traceback and exits 70."""
    # A one-shot command allocates many long-lived objects (documents, rendered files) and
    # almost no cycles (a no-op sync of 10,000 clusters collects none, a render of 1,000 about
    # 15 objects per cluster), all freed when the process ends: each pass of the cyclic GC over
    # the young objects only costs time (0.2 s of a 10,000-cluster no-op, issue 22). So it is
    # off for the run; `watch`, which runs for days, turns it back on (`collect_garbage`).
    gc.disable()
    try:
        app()
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - the one place that catches bugs
        # a library's exception may quote a remote with its token (GitCommandError's command)
        sys.stderr.write(redact_text(traceback.format_exc()))
        sys.stderr.write(
            "trinogen: internal error (a bug): please report it with the traceback above\n"
        )
        sys.exit(ExitCode.INTERNAL)
    finally:
        # The interpreter's last collection at exit walks every object still alive (0.13 s
        # after a 10,000-cluster sync) to find cycles whose memory the exit frees anyway;
        # frozen objects are not walked. Files and locks are closed by `with`, not by it.
        gc.freeze()


def collect_garbage() -> None:
    """The cyclic GC for a long-running command: on, collecting young objects rarely. A run
    allocates many long-lived objects and few cycles; with the default thresholds the GC
    re-scans the growing heap over and over (a quarter of a 10,000-cluster sync)."""
    gc.set_threshold(300_000, 50, 100)
    gc.enable()
