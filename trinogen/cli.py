"""The `trinogen` command line: parse, load settings, build adapters, call one pipeline function,
print, exit with the code from the one table in trinogen.errors (and the README)."""

from __future__ import annotations

import gc
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trinogen import __version__
from trinogen.errors import ConfigError, ExitCode, TrinogenError

if TYPE_CHECKING:  # imported when a command runs: `--help` stays fast
    from trinogen.gitops import WorkingCopy
    from trinogen.ports import ReaderFactory
    from trinogen.result import Report
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


ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", envvar="TRINOGEN_CONFIG", help="Settings file (YAML).",
                 show_envvar=True),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", metavar="SECTION.KEY=VALUE",
                 help="Override one setting (repeatable); wins over env and file."),
]
OutputOpt = Annotated[
    str, typer.Option("--output", "-o", help="text for people, json for machines (schemaVersion 1).")
]
ClusterOpt = Annotated[
    list[str] | None,
    typer.Option("--cluster", help="Only this clusterId (repeatable)."),
]
InlineOpt = Annotated[
    bool,
    typer.Option("--allow-inline-secrets",
                 help="Second opt-in for secrets.mode=inline (writes secret values into git)."),
]


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
    log_level: Annotated[str, typer.Option("--log-level", envvar="TRINOGEN_LOG_LEVEL")] = "",
    log_format: Annotated[str, typer.Option("--log-format", envvar="TRINOGEN_LOG_FORMAT",
                                            help="text or json")] = "",
) -> None:
    _setup_logging(log_level or "INFO", log_format or "text")  # until the settings are read
    # The flags (and their TRINOGEN_LOG_* variables) are the top layer of the log settings.
    log_sets = [f"log.{key}={value}" for key, value in (("level", log_level),
                                                        ("format", log_format)) if value]
    ctx.obj = {"config": config, "set": [*log_sets, *(set_ or [])]}


# --- commands ----------------------------------------------------------------------------------


@app.command()
def validate(ctx: typer.Context, config: ConfigOpt = None, set_: SetOpt = None, output: OutputOpt = "text") -> None:
    """Validate every document; list the problems; exit 1 when any document is invalid."""

    def run() -> int:
        from trinogen import pipeline, source

        settings = _settings(ctx, config, set_)
        report = pipeline.validate(settings, source.connect(settings.mongodb))
        _print(report, output)
        return ExitCode.CLUSTERS_FAILED if report.failed else ExitCode.OK

    _exit(run, output)


@app.command()
def render(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Directory to write the tree into (no git).")],
    cluster: ClusterOpt = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    output: OutputOpt = "text",
    allow_inline_secrets: InlineOpt = False,
) -> None:
    """Render the desired tree for the enabled, valid documents into --out."""

    def run() -> int:
        from trinogen import pipeline, source

        settings = _settings(ctx, config, set_)
        report = pipeline.render(
            settings, source.connect(settings.mongodb), out, clusters=cluster or (),
            reader_factory=_vault_factory(settings),
            inline=pipeline.inline_mode(settings, allow_inline_secrets),
            progress=_progress(output),
        )
        _print(report, output)
        return ExitCode.CLUSTERS_FAILED if report.failed else ExitCode.OK

    _exit(run, output)


@app.command()
def sync(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and diff; change nothing.")] = False,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="With --dry-run: exit 5 when changes are pending.")] = False,
    cluster: ClusterOpt = None,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", help="Allow pruning everything when the source is empty.")] = False,
    allow_mass_prune: Annotated[bool, typer.Option("--allow-mass-prune", help="Allow pruning more clusters than the sync.max_prune_* limits.")] = False,
    allow_inline_secrets: InlineOpt = False,
    remote: Annotated[str | None, typer.Option("--remote", help="GitOps repository (git.remote).")] = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Branch (git.branch).")] = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    output: OutputOpt = "text",
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Colour the diff (default: on a terminal).")] = None,
) -> None:
    """Plan the GitOps repository against the documents; commit and push only the difference."""

    def run() -> int:
        from trinogen import pipeline, source

        settings = _settings(ctx, config, set_, {"git.remote": remote, "git.branch": branch})
        options = pipeline.SyncOptions(
            dry_run=dry_run, allow_empty=allow_empty, allow_mass_prune=allow_mass_prune,
            clusters=tuple(cluster or ()), inline=pipeline.inline_mode(settings, allow_inline_secrets),
        )
        report = pipeline.sync(
            settings, source.connect(settings.mongodb), _working_copy(settings),
            options=options, reader_factory=_vault_factory(settings), progress=_progress(output),
        )
        _print(report, output, color=sys.stdout.isatty() if color is None else color)
        if report.failed:
            return ExitCode.CLUSTERS_FAILED
        if dry_run and exit_code and report.plan is not None and not report.plan.empty:
            return ExitCode.CHANGES_PENDING
        return ExitCode.OK

    _exit(run, output)


@app.command()
def status(ctx: typer.Context, config: ConfigOpt = None, set_: SetOpt = None, output: OutputOpt = "text") -> None:
    """Show the last sync state of every cluster (from the status collection)."""

    def run() -> int:
        from trinogen import source

        settings = _settings(ctx, config, set_)
        records = source.connect(settings.mongodb).read_status()
        if output == "json":
            rows = [{"clusterId": k, **{f: _jsonable(v) for f, v in r.items() if f != "_id"}}
                    for k, r in sorted(records.items())]
            typer.echo(json.dumps({"schemaVersion": 1, "command": "status", "clusters": rows}, indent=2))
        else:
            if not records:
                typer.echo("no status records yet: run trinogen sync")
            for cid, r in sorted(records.items()):
                commit = (r.get("commit") or "")[:10]
                when = r.get("syncedAt") or r.get("errorAt") or ""
                typer.echo(f"{cid:40} {r.get('state', '?'):8} {commit:10} {when}")
                if r.get("state") == "failed" and r.get("lastError"):
                    for line in str(r["lastError"]).splitlines():
                        typer.echo(f"    {line}")
        return ExitCode.OK

    _exit(run, output)


@app.command()
def watch(ctx: typer.Context, config: ConfigOpt = None, set_: SetOpt = None,
          remote: Annotated[str | None, typer.Option("--remote", help="GitOps repository (git.remote).")] = None,
          ) -> None:
    """Follow MongoDB change streams and sync changed clusters within seconds (long-running)."""

    def run() -> int:
        from trinogen import source
        from trinogen import watch as watch_mod

        settings = _settings(ctx, config, set_, {"git.remote": remote})
        watch_mod.require_change_streams(settings)
        # One pymongo client: documents, status, lease and the change stream.
        mongo = source.connect(settings.mongodb)
        watcher = watch_mod.compose(settings, mongo, mongo.collection, _working_copy(settings),
                                    reader_factory=_vault_factory(settings))
        return watch_mod.run(settings, watcher)

    _exit(run, "text")


# --- plumbing ----------------------------------------------------------------------------------


def _settings(
    ctx: typer.Context, config: Path | None, sets: list[str] | None,
    extra: dict[str, Any] | None = None,
) -> Settings:
    """Settings from --config/--set given before or after the command name."""
    from trinogen.settings import load_settings

    root = ctx.obj or {}
    config = config or root.get("config")
    overrides: dict[str, Any] = {}
    for item in [*root.get("set", []), *(sets or ())]:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            raise ConfigError(f"--set {item!r}: write SECTION.KEY=VALUE, e.g. git.branch=main")
        overrides[key.strip()] = value
    overrides.update({k: v for k, v in (extra or {}).items() if v is not None})
    settings = load_settings(config, os.environ, overrides)
    _setup_logging(settings.log.level, settings.log.format)  # log.* from the file counts too
    return settings


def _working_copy(settings: Settings) -> WorkingCopy:
    from trinogen.gitops import WorkingCopy, default_workdir

    remote = settings.git.remote
    if not remote:
        raise ConfigError("set the GitOps repository: git.remote, TRINOGEN_GIT_REMOTE or --remote")
    workdir = Path(settings.git.workdir) if settings.git.workdir else default_workdir(remote)
    return WorkingCopy(settings.git, remote, workdir)


def _vault_factory(settings: Settings) -> ReaderFactory:
    def factory() -> VaultReader:
        from trinogen import vault

        return vault.connect(settings.vault, settings.secrets.kv_version, os.environ)

    return factory


def _progress(output: str) -> Callable[[str, int, int], None]:
    if output == "json" or not sys.stderr.isatty():
        return lambda stage, done, total: None

    def show(stage: str, done: int, total: int) -> None:
        # One status line on the terminal, rewritten in place ("\x1b[K" clears its rest).
        if stage == "render":
            sys.stderr.write(f"\rrendering {done}/{total}\x1b[K" + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(f"\r{stage}...\x1b[K")
        sys.stderr.flush()

    return show


def _exit(run: Callable[[], int], output: str) -> None:
    """Run a command body and turn its outcome into the documented exit code."""
    if output not in ("text", "json"):
        typer.echo(f"trinogen: --output must be text or json, not {output!r}", err=True)
        raise typer.Exit(ExitCode.USAGE)
    try:
        code = run()
    except TrinogenError as e:
        if output == "json":
            typer.echo(json.dumps({"schemaVersion": 1, "error": {"type": type(e).__name__,
                                   "message": str(e), "exitCode": int(e.exit_code)}}, indent=2))
        typer.echo(f"trinogen: {e}", err=True)
        raise typer.Exit(int(e.exit_code)) from None
    except KeyboardInterrupt:
        typer.echo("trinogen: interrupted", err=True)
        raise typer.Exit(130) from None
    raise typer.Exit(int(code))


def _print(report: Report, output: str, *, color: bool = False) -> None:
    if output == "json":
        typer.echo(json.dumps(report.to_json(), indent=2, default=_jsonable))
        return
    from trinogen.report import format_text

    typer.echo(format_text(report, color=color), nl=False)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value if isinstance(value, (str, int, float, bool, type(None), list, dict)) else str(value)


def _setup_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        from trinogen.report import JsonLogFormatter

        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(logging.Formatter("trinogen: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper() if level.upper() in logging.getLevelNamesMapping() else "INFO")


def main() -> None:
    """Console-script entry point: a bug prints its traceback and exits 70."""
    # A run allocates many long-lived objects (documents, rendered files) and few cycles: with
    # the default thresholds the cyclic GC re-scans the growing heap over and over (a quarter of
    # a 10,000-cluster sync). Collect young objects less often; everything is still collected.
    gc.set_threshold(100_000, 50, 100)
    try:
        app()
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - the one place that catches bugs
        traceback.print_exc()
        sys.stderr.write(
            "trinogen: internal error (a bug): please report it with the traceback above\n"
        )
        sys.exit(ExitCode.INTERNAL)


if __name__ == "__main__":
    main()
