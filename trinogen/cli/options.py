"""The command-line options, shared by the commands (the global ones are accepted before or after
the command name: each command declares them too, and the ones after it win)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer


class LogLevel(enum.StrEnum):
    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    CRITICAL = "CRITICAL"  # log.level in a settings file accepts it: the flag does too


class LogFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"


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
LogLevelOpt = Annotated[
    LogLevel | None,
    typer.Option("--log-level", envvar="TRINOGEN_LOG_LEVEL", case_sensitive=False,
                 help="DEBUG adds a line per stage (counts, timings)."),
]
LogFormatOpt = Annotated[
    LogFormat | None,
    typer.Option("--log-format", envvar="TRINOGEN_LOG_FORMAT", case_sensitive=False),
]
OutputOpt = Annotated[
    str, typer.Option("--output", "-o", help="text for people, json for machines (schemaVersion 1).")
]
ClusterOpt = Annotated[
    list[str] | None,
    typer.Option("--cluster", help="Only this clusterId (repeatable); an unknown one is an error."),
]
InlineOpt = Annotated[
    bool,
    typer.Option("--allow-inline-secrets",
                 help="Second opt-in for secrets.mode=inline (writes secret values into git)."),
]
RemoteOpt = Annotated[str | None, typer.Option("--remote", help="GitOps repository (git.remote).")]


@dataclass(frozen=True)
class Globals:
    """The global options as one command saw them (after its name)."""

    config: Path | None = None
    sets: tuple[str, ...] = ()
    log_level: str | None = None
    log_format: str | None = None

    def over(self, before: Globals) -> Globals:
        """These options on top of the ones given before the command name."""
        return Globals(self.config or before.config, (*before.sets, *self.sets),
                       self.log_level or before.log_level, self.log_format or before.log_format)

    def overrides(self) -> list[str]:
        """The log flags as settings (the top layer of log.*), then the --set items."""
        log_sets = [f"log.{key}={value}" for key, value in (("level", self.log_level),
                                                            ("format", self.log_format)) if value]
        return [*log_sets, *self.sets]


def globals_of(config: Path | None, sets: list[str] | None, log_level: LogLevel | None,
               log_format: LogFormat | None) -> Globals:
    return Globals(config, tuple(sets or ()), log_level.value if log_level else None,
                   log_format.value if log_format else None)
