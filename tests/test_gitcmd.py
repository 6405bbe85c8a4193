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


def _commit(repo: Path, changes: list[FileChange], parent: str = "") -> None:
    who = b"t <t@example.invalid> 0 +0000"
    header = b"commit refs/heads/main\nauthor %s\ncommitter %s\ndata 1\nm\n" % (who, who)
    fast_import(repo, header + (b"from %s\n" % parent.encode() if parent else b""), changes)


def test_a_file_replaced_by_a_directory_is_written_whatever_the_order(tmp_path: Path) -> None:
    """A deletion of a file listed after a write beneath the same path still leaves the write."""
    repo = tmp_path / "r.git"
    git("init", "--quiet", "--bare", str(repo))
    _commit(repo, [FileChange("c/a/b", "add", "a", b"old\n")])
    tip = git("--git-dir", str(repo), "rev-parse", "main").strip()
    _commit(repo, [FileChange("c/a/b/x", "add", "a", b"new\n"),
                   FileChange("c/a/b", "delete", "a")], parent=tip)
    listed = git("--git-dir", str(repo), "ls-tree", "-r", "--name-only", "main").split()
    assert listed == ["c/a/b/x"]


def test_the_same_file_of_the_next_cluster_is_stored_as_a_delta(tmp_path: Path) -> None:
    """Each cluster's values file is a delta against the previous cluster's, however the
    changes are listed (git's pack says which objects are deltas)."""
    repo = tmp_path / "r.git"
    git("init", "--quiet", "--bare", str(repo))
    git("--git-dir", str(repo), "config", "fastimport.unpackLimit", "0")  # a pack, even this small
    body = "".join(f"key{i}: value {i}\n" for i in range(200))
    changes = []
    for cid in ("alpha", "bravo", "charlie"):
        changes.append(FileChange(f"clusters/{cid}/values.yaml", "add", cid,
                                  f"cluster: {cid}\n{body}".encode()))
        changes.append(FileChange(f"clusters/{cid}/catalog/tpch.properties", "add", cid,
                                  f"connector.name=tpch\n# {cid} {'x' * 300}\n".encode()))
    _commit(repo, changes)
    blobs = {git("--git-dir", str(repo), "rev-parse", f"main:{ch.path}").strip(): ch.path
             for ch in changes}
    pack = next((repo / "objects" / "pack").glob("*.idx"))
    rows = git("--git-dir", str(repo), "verify-pack", "-v", str(pack)).splitlines()
    deltas = {r.split()[0] for r in rows if len(r.split()) >= 7 and r.split()[1] == "blob"}
    assert sorted(blobs[b] for b in deltas) == [
        "clusters/bravo/catalog/tpch.properties", "clusters/bravo/values.yaml",
        "clusters/charlie/catalog/tpch.properties", "clusters/charlie/values.yaml"]
