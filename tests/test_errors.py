"""trinogen.errors: one error tree, and the exit-code table docs/commands.md documents."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from trinogen import errors
from trinogen.errors import ExitCode, Problem


def readme_exit_codes() -> dict[int, str]:
    """The exit-code table of docs/commands.md: code -> meaning."""
    text = (ROOT / "docs" / "commands.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n\n", 2)[1]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+) \| (.+) \|$", section, re.MULTILINE)}


def test_the_exit_codes_are_the_documented_ones() -> None:
    """Every ExitCode is in the documented table, and the table lists no other code."""
    assert sorted(readme_exit_codes()) == sorted(int(c) for c in ExitCode)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.ConfigError, 2), (errors.SafetyRefusal, 3), (errors.SourceUnavailable, 4),
        (errors.VaultUnavailable, 4), (errors.GitUnavailable, 4), (errors.LeaseLost, 4),
        (errors.Interrupted, 0),
    ],
)
def test_each_error_maps_to_its_documented_exit_code(error: type[errors.TrinogenError],
                                                     code: int) -> None:
    """Each expected failure carries the exit code the documentation gives for its kind."""
    assert issubclass(error, errors.TrinogenError) and error.exit_code == code
    assert code in readme_exit_codes()


def test_secret_problems_are_per_path_not_run_failures() -> None:
    """A missing or forbidden secret path is a SecretProblem, outside the run-failure tree."""
    for kind in (errors.SecretNotFound, errors.SecretForbidden):
        assert issubclass(kind, errors.SecretProblem)
        assert not issubclass(kind, errors.TrinogenError)


@pytest.mark.parametrize(
    ("problem", "text"),
    [
        (Problem("a", "owner", "is required"), "cluster a: owner: is required"),
        (Problem("_id=x", "", "is not an object"), "cluster _id=x: is not an object"),
    ],
)
def test_a_problem_names_the_cluster_and_the_field(problem: Problem, text: str) -> None:
    """A problem reads `cluster <id>: <field>: <message>`, the field left out when empty."""
    assert str(problem) == text
