"""One error tree and one exit-code table for every command.

Imports nothing of trinogen. Expected failures are `TrinogenError`s whose message says what
happened and what to do; the CLI maps them to exit codes in one place. Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ExitCode(enum.IntEnum):
    """Exit codes of every trinogen command (docs/commands.md has the same table)."""

    OK = 0
    CLUSTERS_FAILED = 1  # some clusters failed; all others were done
    USAGE = 2  # bad flags, settings or configuration files
    REFUSED = 3  # a safety guard refused the run (empty source, mass prune, ...)
    UNAVAILABLE = 4  # MongoDB, Vault or the git remote could not be used
    CHANGES_PENDING = 5  # only `sync --dry-run --exit-code`: the plan is not empty
    INTERNAL = 70  # a bug in trinogen (EX_SOFTWARE); the traceback is printed


class TrinogenError(Exception):
    """Base of every expected failure; `str(err)` is the message shown to the user."""

    exit_code: ExitCode = ExitCode.INTERNAL


class ConfigError(TrinogenError):
    """Settings, flags or configuration files are wrong."""

    exit_code = ExitCode.USAGE


class SafetyRefusal(TrinogenError):
    """A guard refused to run because the result could destroy clusters."""

    exit_code = ExitCode.REFUSED


class UnavailableError(TrinogenError):
    """A dependency (MongoDB, Vault, the git remote, the working copy) could not be used."""

    exit_code = ExitCode.UNAVAILABLE


class SourceUnavailable(UnavailableError):
    """MongoDB could not be reached, authenticated against, or read completely."""


class VaultUnavailable(UnavailableError):
    """Vault could not be reached or authenticated against."""


class GitUnavailable(UnavailableError):
    """The git remote or the working copy could not be used."""


class ArgoUnavailable(UnavailableError):
    """The Kubernetes API could not be used to read Argo CD's Applications (status)."""


class LeaseLost(UnavailableError):
    """Another watch replica holds the lease now; this one must not push or save a token."""


class Interrupted(TrinogenError):
    """The run was asked to stop (SIGTERM/SIGINT) before it committed anything."""

    exit_code = ExitCode.OK


class SecretProblem(Exception):
    """A secret path that cannot be used for the clusters referencing it (never a run failure).

    Raised by a secret reader for one path; the pipeline turns it into a per-cluster problem.
    """


class SecretNotFound(SecretProblem):
    """The path (or its current version) does not exist."""


class SecretForbidden(SecretProblem):
    """The reader's credentials may not read the path."""


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one cluster, located by a field path inside its document.

    `cluster` is the clusterId, or the document `_id` when clusterId is missing or unusable.
    """

    cluster: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"cluster {self.cluster}: {where}{self.message}"
