"""The command line's first-hour promises: no silent no-op, global flags anywhere, colour and
progress that behave, summaries that fit a screen, JSON for every outcome (issue 11)."""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.conftest import ROOT, git
from tests.test_cli import invoke, seeded  # noqa: F401 - the fixture is used by name
from trinogen.errors import ExitCode

CLUSTERS = ["adhoc-dev", "analytics-prod", "etl-batch"]  # the clusterIds of the example docs


def commits(remote: str) -> int:
    out = git("--git-dir", remote, "rev-list", "--all", "--count")
    return int(str(out).strip() or 0)


# --- silent no-ops ------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["sync", "--dry-run", "--exit-code", "--cluster", "adhoc-dve"],
    ["sync", "--cluster", "adhoc-dev", "--cluster", "nope"],
    ["render", "--out", "OUT", "--cluster", "adhoc-dve"],
])
def test_unknown_cluster_is_a_usage_error(seeded: dict[str, str], tmp_path: Path,  # noqa: F811
                                          args: list[str]) -> None:
    """A --cluster that names no document and no cluster in git exits 2 naming it."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    result = invoke(args, seeded)
    assert result.exit_code == ExitCode.USAGE, result.output
    unknown = args[-1]
    assert re.search(rf"--cluster {unknown}: no document has this clusterId", result.output)


def test_known_cluster_still_passes_the_drift_gate(seeded: dict[str, str]) -> None:  # noqa: F811
    """A correctly spelled --cluster on a fresh remote reports pending changes (exit 5)."""
    result = invoke(["sync", "--dry-run", "--exit-code", "--cluster", "adhoc-dev"], seeded)
    assert result.exit_code == ExitCode.CHANGES_PENDING, result.output


def test_exit_code_without_dry_run_is_refused(seeded: dict[str, str]) -> None:  # noqa: F811
    """`sync --exit-code` without --dry-run exits 2 and pushes nothing."""
    result = invoke(["sync", "--exit-code"], seeded)
    assert result.exit_code == ExitCode.USAGE
    assert "--exit-code only works with --dry-run" in result.output
    assert commits(seeded["TRINOGEN_GIT_REMOTE"]) == 0


# --- global flags after the command, log levels -------------------------------------------------


@pytest.mark.parametrize("command", [["validate"], ["sync", "--dry-run"], ["status"]])
def test_log_level_after_the_command(seeded: dict[str, str], command: list[str]) -> None:  # noqa: F811
    """--log-level DEBUG is accepted after the command name and takes effect."""
    result = invoke([*command, "--log-level", "DEBUG"], seeded)
    assert result.exit_code == 0, result.output
    assert "DEBUG" in result.stderr


def test_log_format_after_the_command(seeded: dict[str, str]) -> None:  # noqa: F811
    """--log-format json after the command makes every log line a JSON object."""
    result = invoke(["sync", "--dry-run", "--log-level", "debug", "--log-format", "json"], seeded)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and all(json.loads(line)["level"] for line in lines)


def test_flags_after_the_command_win(seeded: dict[str, str]) -> None:  # noqa: F811
    """A global flag after the command overrides the same flag before it."""
    result = invoke(["--log-level", "ERROR", "sync", "--dry-run", "--log-level", "DEBUG"], seeded)
    assert result.exit_code == 0 and "DEBUG" in result.stderr


@pytest.mark.parametrize("args", [
    ["--log-level", "LOUD", "validate"],
    ["validate", "--log-level", "LOUD"],
    ["validate", "--log-format", "xml"],
])
def test_log_flags_take_only_their_choices(seeded: dict[str, str], args: list[str]) -> None:  # noqa: F811
    """--log-level accepts DEBUG, INFO, WARNING, ERROR only (and --log-format text or json)."""
    result = invoke(args, seeded)
    assert result.exit_code == ExitCode.USAGE
    assert "Invalid value" in result.output


def test_debug_lines_name_stages_with_counts_and_no_secrets(seeded: dict[str, str]) -> None:  # noqa: F811
    """DEBUG logs each stage with its count and time, and the run's stats, never file content."""
    result = invoke(["sync", "--log-level", "DEBUG", "--set", "git.author_name=Hunter2Name"],
                    seeded)
    assert result.exit_code == 0, result.output
    assert "overridden on the command line: git.author_name, log.level" in result.stderr
    assert "Hunter2Name" not in result.stderr  # keys of --set only: a value may be a credential
    assert re.search(r"stage read done: 3/3 in \d+\.\d{3}s", result.stderr)
    assert re.search(r"stage render done: 3/3 in \d+\.\d{3}s", result.stderr)
    assert '"documents": 3' in result.stderr
    assert "coordinator" not in result.stderr  # no rendered text reaches the log


# --- colour -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("flag", "env", "tty", "expected"), [
    (None, {}, True, True),
    (None, {}, False, False),
    (None, {"NO_COLOR": "1"}, True, False),
    (None, {"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value counts
    (True, {"NO_COLOR": "1"}, False, True),  # --color forces, piped or not
    (False, {}, True, False),
])
def test_use_color(flag: bool | None, env: dict[str, str], tty: bool, expected: bool) -> None:
    """Colour: --color/--no-color decide; otherwise a terminal without NO_COLOR."""
    from trinogen.cli.output import use_color

    assert use_color(flag, env, tty) is expected


def test_color_flag_forces_colour_when_piped(seeded: dict[str, str]) -> None:  # noqa: F811
    """`sync --dry-run --color` colours the diff although stdout is not a terminal."""
    result = invoke(["sync", "--dry-run", "--color"], seeded)
    assert result.exit_code == 0
    assert "\x1b[32m+" in result.stdout


# --- progress -----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_line_is_cleared_before_a_log_line(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A log line written while a progress line shows starts on a cleared line."""
    from trinogen.cli import output
    from trinogen.cli.output import Progress, StatusLine

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(output, "STATUS", StatusLine())
    output.setup_logging("INFO", "text")
    progress = Progress(terminal=True)
    progress("vault", 0, 1)
    logging.getLogger("trinogen.test").warning("something to say")
    text = err.getvalue()
    assert text.startswith("\rreading secrets from Vault...\x1b[K")
    assert "\r\x1b[Ktrinogen: WARNING: something to say" in text


def test_progress_finish_clears_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the last stage the progress line is wiped, so the report starts at column 0."""
    from trinogen.cli import output
    from trinogen.cli.output import Progress, StatusLine

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(output, "STATUS", StatusLine())
    progress = Progress(terminal=True)
    progress("render", 3, 3)
    progress.finish()
    assert err.getvalue() == "\rrendering 3/3\x1b[K\r\x1b[K"


@pytest.mark.parametrize(("stage", "words"), [
    ("lock", "lock"), ("vault", "Vault"), ("publish", "committing and pushing")])
def test_progress_names_the_slow_stages(monkeypatch: pytest.MonkeyPatch, stage: str,
                                        words: str) -> None:
    """The lock, Vault and commit-and-push stages each say what is being waited for."""
    from trinogen.cli import output
    from trinogen.cli.output import Progress, StatusLine

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(output, "STATUS", StatusLine())
    with Progress(terminal=True) as progress:
        progress(stage, 0, 1)
        shown = err.getvalue()
    assert shown.startswith("\r") and words in shown


def test_progress_logs_stage_timings(caplog: pytest.LogCaptureFixture) -> None:
    """Each stage's end is one DEBUG line with its last count and its duration."""
    from trinogen.cli import output
    from trinogen.cli.output import Progress, StatusLine

    clock = Clock()
    progress = Progress(terminal=False, clock=clock)
    with caplog.at_level(logging.DEBUG, logger="trinogen"):
        progress("read", 7, 7)
        clock.now = 1.5
        progress("render", 7, 7)
        clock.now = 4.0
        progress.finish()
    assert [r.getMessage() for r in caplog.records] == [
        "stage read done: 7/7 in 1.500s", "stage render done: 7/7 in 2.500s"]


# --- summaries ----------------------------------------------------------------------------------


def test_stat_prints_no_diff_but_files_per_cluster(seeded: dict[str, str]) -> None:  # noqa: F811
    """`sync --dry-run --stat` lists every cluster with its changed-file count, without a diff."""
    result = invoke(["sync", "--dry-run", "--stat"], seeded)
    assert result.exit_code == 0
    assert "@@" not in result.stdout and "+++" not in result.stdout
    for cid in CLUSTERS:
        assert re.search(rf"^  added +{cid}: \d+ files \(\d+ added\)$", result.stdout, re.M)


# --- guards and JSON ----------------------------------------------------------------------------


def emptied(env: dict[str, str]) -> dict[str, str]:
    """After a first sync of the example documents, a seed directory with no documents."""
    assert invoke(["sync"], env).exit_code == 0
    empty = Path(env["TRINOGEN_MONGODB_SEED_DIR"]).parent / "empty-seed"
    empty.mkdir()
    return {**env, "TRINOGEN_MONGODB_SEED_DIR": str(empty)}


def test_allow_empty_alone_says_mass_prune_is_needed_too(seeded: dict[str, str]) -> None:  # noqa: F811
    """--allow-empty that then meets the mass-prune guard says both flags are needed."""
    env = emptied(seeded)
    result = invoke(["sync", "--allow-empty", "--set", "sync.max_prune_count=1"], env)
    assert result.exit_code == ExitCode.REFUSED
    assert "also needs --allow-mass-prune: give both flags" in result.output
    both = invoke(["sync", "--allow-empty", "--allow-mass-prune",
                   "--set", "sync.max_prune_count=1"], env)
    assert both.exit_code == 0, both.output


def test_refusal_under_json_fills_refused_by(seeded: dict[str, str]) -> None:  # noqa: F811
    """A guard's refusal under -o json exits 3 with the reason in refusedBy."""
    env = emptied(seeded)
    result = invoke(["sync", "-o", "json"], env)
    assert result.exit_code == ExitCode.REFUSED
    doc = json.loads(result.stdout)
    assert doc["command"] == "sync" and doc["error"]["exitCode"] == 3
    assert "--allow-empty" in doc["refusedBy"]


def test_internal_error_under_json_still_answers(seeded: dict[str, str],  # noqa: F811
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug under -o json prints a JSON error on stdout, the traceback on stderr, exit 70."""
    from trinogen import pipeline

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("token=hunter2 in a bug's message")

    monkeypatch.setattr(pipeline, "validate", broken)
    result = invoke(["validate", "-o", "json"], seeded)
    assert result.exit_code == ExitCode.INTERNAL
    doc = json.loads(result.stdout)
    assert doc["error"]["type"] == "InternalError" and doc["error"]["exitCode"] == 70
    assert "hunter2" not in result.stdout  # a bug's message may hold anything: not in the JSON
    assert "Traceback" in result.stderr and "RuntimeError" in result.stderr


def test_the_commands_page_documents_the_new_flags() -> None:
    """docs/commands.md, up to the sync section, names --stat and the --exit-code/--cluster rules."""
    page = (ROOT / "docs" / "commands.md").read_text()
    commands = page[:page.index("## sync: planning")]
    for needle in ("--stat", "NO_COLOR", "--exit-code` without `--dry-run`",
                   "`--cluster` that names", '"refusedBy"', "InternalError"):
        assert needle in commands, needle


def test_vault_login_shows_on_the_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Vault stage is announced when the run first needs a secret, before the login."""
    from trinogen import vault
    from trinogen.cli import _vault_factory
    from trinogen.settings import load_settings

    calls: list[str] = []
    monkeypatch.setattr(vault, "connect", lambda *a: calls.append("connect") or "reader")
    settings = load_settings(ROOT / "config" / "demo.yaml", {}, {})
    factory = _vault_factory(settings, lambda stage, done, total: calls.append(stage))  # type: ignore[arg-type]
    assert factory() == "reader" and calls == ["vault", "connect"]


NOTICE = "waiting for the working-copy lock: another trinogen run holds it (giving up after "


def _holder(env: dict[str, str]) -> Any:
    """The working copy as another run holds it (flock is per open file: this process blocks)."""
    from trinogen.gitops import WorkingCopy
    from trinogen.settings import load_settings

    settings = load_settings(ROOT / "config" / "demo.yaml", env, {})
    return WorkingCopy(settings.git, env["TRINOGEN_GIT_REMOTE"], Path(env["TRINOGEN_GIT_WORKDIR"]))


def test_waiting_for_the_lock_is_logged(seeded: dict[str, str]) -> None:  # noqa: F811
    """A sync that waits for a lock another run holds says so, and goes on once it is released.

    The other run lets go when the notice is logged, not after some time: the test waits on the
    event, so a slow machine cannot make the notice come too late.
    """
    held, noticed, released = threading.Event(), threading.Event(), threading.Event()

    class Spot(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            if record.getMessage().startswith(NOTICE):
                noticed.set()
            return True

    def other_run() -> None:
        with _holder(seeded).locked():
            held.set()
            noticed.wait(120)  # holds the lock until the waiting sync has said so
        released.set()

    thread = threading.Thread(target=other_run, daemon=True)
    spot = Spot()
    logging.getLogger("trinogen").addFilter(spot)
    try:
        thread.start()
        assert held.wait(60)
        result = invoke(["sync", "--set", "git.lock_timeout=120"], seeded)
    finally:
        logging.getLogger("trinogen").removeFilter(spot)
        noticed.set()
        thread.join(60)
    assert released.is_set() and result.exit_code == 0, result.stderr
    assert NOTICE + "120s)" in result.stderr


def test_a_lock_held_beyond_the_timeout_gives_up_with_exit_4(seeded: dict[str, str]) -> None:  # noqa: F811
    """A lock another run holds for longer than git.lock_timeout ends the sync with exit 4."""
    with _holder(seeded).locked():
        result = invoke(["sync", "--set", "git.lock_timeout=0"], seeded)
    assert result.exit_code == ExitCode.UNAVAILABLE
    assert "for more than 0s; try again later" in result.stderr


class FakeTimer:
    """threading.Timer's face; the test fires it, so nothing depends on how fast threads run."""

    made: ClassVar[list[FakeTimer]] = []

    def __init__(self, interval: float, function: Callable[[], None]) -> None:
        self.interval, self.function = interval, function
        self.daemon = False
        self.started = self.cancelled = False
        FakeTimer.made.append(self)

    def start(self) -> None:
        self.started = True

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        if not self.cancelled:
            self.function()


@pytest.mark.parametrize(("stages", "noticed"), [
    (["lock"], True),  # still waiting when the notice is due
    (["lock", "refresh"], False),  # the lock came first: the notice is cancelled
    (["lock", "lock"], True),  # the same stage again keeps its notice
])
def test_the_lock_notice_is_due_only_while_waiting(caplog: pytest.LogCaptureFixture,
                                                  stages: list[str], noticed: bool) -> None:
    """The lock notice is logged when it falls due during the lock stage, never after it."""
    from trinogen.cli.output import Progress

    FakeTimer.made.clear()
    with caplog.at_level(logging.INFO, logger="trinogen"):
        progress = Progress(terminal=False, notice_after=1.0, timer=FakeTimer)
        for stage in stages:
            progress(stage, 0, 1)
        (timer,) = FakeTimer.made
        assert timer.started and timer.interval == 1.0
        timer.fire()
        progress.finish()
        timer.fire()  # once the run is over, never
    assert len([r for r in caplog.records if r.getMessage().startswith(NOTICE)]) == noticed


def test_a_template_bug_is_reported_once(seeded: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    """A template that fails for every cluster is printed once, with the clusters it affects."""
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "application.yaml.j2").write_text("{{ header }}\nx: {{ nope.field }}\n")
    result = invoke(["render", "--out", str(tmp_path / "out"),
                     "--set", f"output.templates_dir={templates}"], seeded)
    assert result.exit_code == ExitCode.CLUSTERS_FAILED
    assert f"FAILED   3 clusters: {', '.join(CLUSTERS)} (render)" in result.stdout
    assert result.stdout.count("application.yaml.j2") == 1
