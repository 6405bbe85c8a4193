"""trinogen.gitops: every git failure reaches the user as the documented exit code and message."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from bson import json_util
from typer.testing import CliRunner

from tests.conftest import ROOT, demo_env, example_docs
from trinogen.cli import app
from trinogen.errors import ExitCode, GitUnavailable
from trinogen.gitops import WorkingCopy
from trinogen.plan import Layout
from trinogen.settings import load_settings

REAL_GIT = shutil.which("git") or "/usr/bin/git"


def failing_git(bin_dir: Path, subcommand: str) -> None:
    """A `git` first on PATH that fails `subcommand` the way git does, and runs the real one else."""
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "git"
    shim.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do\n"
        f"  if [ \"$a\" = \"{subcommand}\" ]; then\n"
        f"    echo \"fatal: simulated failure of {subcommand}\" >&2; exit 128\n"
        "  fi\n"
        "done\n"
        f"exec {REAL_GIT} \"$@\"\n"
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return demo_env(tmp_path, example_docs())


@pytest.mark.parametrize(
    ("subcommand", "step", "first_sync_done"),
    [
        ("ls-tree", "listing the tree", True),  # reading the repository after the fetch
        ("update-ref", "moving the branch", False),  # moving the branch to the new commit
    ],
)
def test_a_git_failure_exits_4_with_gits_message(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subcommand: str,
    step: str, first_sync_done: bool,
) -> None:
    """A git command failing inside sync exits 4 (unavailable), naming the step and git's error."""
    runner = CliRunner()
    if first_sync_done:
        assert runner.invoke(app, ["sync"], env=env, catch_exceptions=False).exit_code == 0
        (Path(env["TRINOGEN_MONGODB_SEED_DIR"]) / "docs.json").write_text(
            json_util.dumps(example_docs()[:2]))
    failing_git(tmp_path / "bin", subcommand)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = runner.invoke(app, ["sync", "--output", "json"], env=env, catch_exceptions=False)
    assert result.exit_code == ExitCode.UNAVAILABLE
    assert f"simulated failure of {subcommand}" in result.stderr
    assert step in result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "GitUnavailable" and error["exitCode"] == ExitCode.UNAVAILABLE


def test_the_working_copy_wraps_git_failures(env: dict[str, str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """WorkingCopy's methods raise GitUnavailable, never git's own error, when git fails."""
    settings = load_settings(ROOT / "config" / "demo.yaml", env)
    repo = WorkingCopy(settings.git, env["TRINOGEN_GIT_REMOTE"], tmp_path / "wd")
    with repo.locked():
        repo.refresh()
        repo.tip = "0" * 40  # a commit that does not exist: ls-tree fails
        with pytest.raises(GitUnavailable, match="listing the tree"):
            repo.tree(Layout("trino-clusters", "trino-applications"))


def test_a_missing_git_binary_is_unavailable_not_a_bug(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without git on PATH, sync exits 4 and says what failed."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = CliRunner().invoke(app, ["sync"], env=env, catch_exceptions=False)
    assert result.exit_code == ExitCode.UNAVAILABLE, result.output
