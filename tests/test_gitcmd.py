"""trinogen.gitcmd: paths as git fast-import reads them (checked against real git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from trinogen.gitcmd import GitFailed, fast_import, quote_path, run_git
from trinogen.plan import FileChange


@pytest.mark.parametrize(
    "path",
    ["trino-clusters/a/values.yaml", "dir with space/x.yaml", 'quote"d/x', "back\\slash/x",
     "ünïcode/ü.properties", "tab\there/x", '"leading-quote'],
)
def test_fast_import_writes_every_path_exactly(tmp_path: Path, path: str) -> None:
    """A file written through fast-import appears in git under exactly its path."""
    repo = tmp_path / "r.git"
    git("init", "--quiet", "--bare", str(repo))
    who = b"t <t@example.invalid> 0 +0000"
    fast_import(repo, b"commit refs/heads/main\nauthor %s\ncommitter %s\ndata 1\nm\n" % (who, who),
                [FileChange(path, "add", None, b"x\n")])
    listed = git("--git-dir", str(repo), "-c", "core.quotePath=false", "ls-tree", "-r", "-z",
                 "--name-only", "main")
    assert listed.split("\0")[0] == path


def test_plain_paths_are_not_quoted() -> None:
    """A path of ordinary characters goes to git as it is."""
    assert quote_path("trino-clusters/a-b_c.d/x@1+2=3,4.yaml") == b"trino-clusters/a-b_c.d/x@1+2=3,4.yaml"


def test_a_failing_command_raises_with_gits_message(tmp_path: Path) -> None:
    """A git command that fails raises GitFailed carrying git's first lines of stderr."""
    with pytest.raises(GitFailed, match="not a git repository"):
        run_git(("rev-parse", "HEAD"), tmp_path, "remote")
