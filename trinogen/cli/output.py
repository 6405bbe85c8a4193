"""What the command line writes: the report (text or JSON), errors, logs, the progress line.

Progress goes to stderr only on a terminal, as one line rewritten in place; it is cleared before
anything else is written (a log line, the report), so no output starts in the middle of it.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from itertools import islice
from typing import TYPE_CHECKING, Any, NoReturn, Self, TextIO

import typer

from trinogen.errors import ExitCode, SafetyRefusal, TrinogenError
from trinogen.redact import RedactingFilter, redact_text

if TYPE_CHECKING:
    from trinogen.result import Report
    from trinogen.status.argo import StatusReport

log = logging.getLogger("trinogen")

# What the progress line says while a stage runs (stages come from the pipeline).
STAGE_TEXT = {
    "lock": "taking the working-copy lock (waits up to git.lock_timeout)",
    "refresh": "fetching the GitOps repository",
    "read": "reading documents",
    "vault": "reading secrets from Vault",
    "publish": "committing and pushing",
    "commit": "committing",
    "push": "pushing",
}


def use_color(flag: bool | None, environ: Mapping[str, str], tty: bool) -> bool:
    """--color forces colour, --no-color and NO_COLOR (any non-empty value) turn it off."""
    if flag is not None:
        return flag
    return not environ.get("NO_COLOR") and tty


class StatusLine:
    """The one progress line on stderr; `clear()` wipes it before other output."""

    def __init__(self) -> None:
        self.shown = False

    @property
    def stream(self) -> TextIO:
        return sys.stderr  # looked up each time: tests swap sys.stderr

    def show(self, text: str) -> None:
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


STATUS = StatusLine()


class Progress:
    """The pipeline's progress callback: the status line on a terminal, and a DEBUG log line
    when a stage ends (its count and how long it took; never any content).

    Waiting for the working-copy lock longer than `notice_after` seconds is logged (INFO), on a
    terminal or not: another run holds it, and the wait may last up to git.lock_timeout.
    """

    def __init__(self, terminal: bool, clock: Callable[[], float] = time.monotonic, *,
                 lock_timeout: float | None = None, notice_after: float = 1.0,
                 timer: Callable[[float, Callable[[], None]], threading.Timer] = threading.Timer,
                 ) -> None:
        self.terminal = terminal
        self.clock = clock
        self.stage: str | None = None
        self.count = (0, 0)
        self.started = clock()
        self.lock_timeout = lock_timeout
        self.notice_after = notice_after
        self._notice: threading.Timer | None = None
        self._timer = timer  # tests pass one they fire themselves

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self._ended()
            self.stage, self.started = stage, self.clock()
            if stage == "lock":
                self._notice = self._timer(self.notice_after, self._waiting)
                self._notice.daemon = True
                self._notice.start()
        self.count = (done, total)
        if self.terminal:
            STATUS.show(f"rendering {done}/{total}" if stage == "render"
                        else f"{STAGE_TEXT.get(stage, stage)}...")

    def _waiting(self) -> None:
        limit = f"{self.lock_timeout:.0f}s" if self.lock_timeout is not None else "git.lock_timeout"
        log.info("waiting for the working-copy lock: another trinogen run holds it (giving up "
                 "after %s)", limit)

    def _ended(self) -> None:
        if self._notice is not None:
            self._notice.cancel()
            self._notice = None
        if self.stage is not None:
            done, total = self.count
            log.debug("stage %s done: %d/%d in %.3fs", self.stage, done, total,
                      self.clock() - self.started)

    def finish(self) -> None:
        self._ended()
        self.stage = None
        STATUS.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()  # also on an error: no timer left running, no half line left on screen


class _ClearingHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes a log line after clearing the progress line."""

    def emit(self, record: logging.LogRecord) -> None:
        STATUS.clear()
        super().emit(record)


def setup_logging(level: str, fmt: str) -> None:
    handler = _ClearingHandler(sys.stderr)
    if fmt == "json":
        from trinogen.report import JsonLogFormatter

        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(logging.Formatter("trinogen: %(levelname)s: %(message)s"))
    handler.addFilter(RedactingFilter())  # git's stderr and library messages quote remotes
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper() if level.upper() in logging.getLevelNamesMapping() else "INFO")


def print_report(report: Report, output: str, *, color: bool = False, stat: bool = False) -> None:
    STATUS.clear()
    log.debug("%s stats: %s", report.command, json.dumps(report.stats, default=str))
    if output == "json":
        echo_json(report.to_json())
        return
    from trinogen.report import format_text

    # color=True: click would strip the escapes when stdout is not a terminal (--color forces).
    typer.echo(format_text(report, color=color, stat=stat), nl=False, color=color or None)


def echo_json(value: Any, batch: int = 8192) -> None:
    """`value` as indented JSON on stdout (what `json.dumps(value, indent=2)` prints), written
    while it is encoded: a full sync's report lists every file changed (63,586 at 10,000
    clusters, 13 MB), and joining it first held its pieces, the text and its bytes at once
    (issue 22)."""
    encoded = json.JSONEncoder(indent=2, default=jsonable).iterencode(value)
    while pieces := list(islice(encoded, batch)):  # taken in C: no Python step per piece
        typer.echo("".join(pieces), nl=False)
    typer.echo("")


def print_status(report: StatusReport, output: str,
                 rollout: dict[str, Any] | None = None) -> None:
    """The status report, and the rollout's record when `rollout` waves are configured."""
    STATUS.clear()
    if output == "json":
        out = report.to_json()
        typer.echo(json.dumps({**out, **({"rollout": rollout} if rollout else {})}, indent=2,
                              default=jsonable))
        return
    from trinogen.report import format_status

    typer.echo(format_status(report), nl=False)
    if rollout is not None:
        from trinogen.rollout.view import status_lines

        typer.echo("\n".join(status_lines(rollout)))


def jsonable(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value if isinstance(value, (str, int, float, bool, type(None), list, dict)) else str(value)


def error_json(e: BaseException, exit_code: int, command: str | None) -> dict[str, Any]:
    """The `--output json` document of a failed run (a guard's refusal is also `refusedBy`)."""
    out: dict[str, Any] = {"schemaVersion": 1}
    if command:
        out["command"] = command
    message = redact_text(str(e))
    out["error"] = {"type": type(e).__name__, "message": message, "exitCode": exit_code}
    if isinstance(e, SafetyRefusal):
        out["refusedBy"] = message
    return out


def finish(run: Callable[[], int], output: str, command: str | None = None) -> NoReturn:
    """Run a command body and turn its outcome into the documented exit code."""
    if output not in ("text", "json"):
        typer.echo(f"trinogen: --output must be text or json, not {output!r}", err=True)
        raise typer.Exit(ExitCode.USAGE)
    try:
        code = run()
    except TrinogenError as e:
        _fail(e, int(e.exit_code), output, command)
    except KeyboardInterrupt:
        STATUS.clear()
        typer.echo("trinogen: interrupted", err=True)
        raise typer.Exit(130) from None
    except Exception as e:
        if output == "json":
            _internal(e, command)
        raise
    raise typer.Exit(int(code))


def _fail(e: TrinogenError, code: int, output: str, command: str | None) -> NoReturn:
    STATUS.clear()
    if output == "json":
        typer.echo(json.dumps(error_json(e, code, command), indent=2))
    typer.echo(f"trinogen: {redact_text(str(e))}", err=True)
    raise typer.Exit(code) from None


def _internal(e: Exception, command: str | None) -> NoReturn:
    """A bug under -o json: the error object on stdout, the traceback on stderr, exit 70."""
    STATUS.clear()
    # The message of a bug's exception may hold anything (a value read from a secret): the
    # saved JSON names its type only; the traceback goes to stderr as always.
    doc = error_json(e, ExitCode.INTERNAL, command)
    doc["error"].update(type="InternalError",
                        message=f"internal error (a bug, {type(e).__name__}): see stderr")
    typer.echo(json.dumps(doc, indent=2))
    traceback.print_exc()
    sys.stderr.write("trinogen: internal error (a bug): please report it with the traceback above\n")
    raise typer.Exit(ExitCode.INTERNAL) from None
