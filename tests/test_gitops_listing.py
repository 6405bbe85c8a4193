"""WorkingCopy.tree in a long-lived process (watch): a tip it listed or pushed before is not
listed again, another is read from what changed since (issue 22). Expectations come from the
working repository's own index (`git ls-files -s`), never from trinogen's listing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import git
from tests.test_gitops import failing_git
from trinogen.cache import Entry
from trinogen.gitcmd import Listing, listing, run_git
from trinogen.gitops import WorkingCopy
from trinogen.plan import Layout
from trinogen.settings.types import GitSettings

LAYOUT = Layout("trino-clusters", "trino-applications", "argocd/root.yaml")
FIRST = {
    "trino-clusters/a/values.yaml": "a: 1\n",
    "trino-clusters/b/values.yaml": "b: 1\n",
    "trino-clusters/c/values.yaml": "c: 1\n",
    "trino-clusters-old/x.yaml": "not under a root\n",  # a name the root is a prefix of
    "trino-applications/a.yaml": "app a\n",
    "argocd/root.yaml": "root\n",
    "argocd/other.yaml": "not listed\n",
    "README.md": "hello\n",
}


def _expected(work: Path) -> dict[str, str]:
    """Path -> blob of the regular files under the layout's roots, as git's index has them."""
    files = {}
    for line in git("ls-files", "-s", cwd=work).splitlines():
        meta, path = line.split("\t", 1)
        mode, blob, _ = meta.split(" ")
        under = path.startswith(("trino-clusters/", "trino-applications/")) or (
            path == "argocd/root.yaml")
        if under and mode in ("100644", "100755"):
            files[path] = blob
    return files


def _push(work: Path, message: str) -> None:
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", message, cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)


@pytest.fixture
def work(bare_remote: Path, tmp_path: Path) -> Path:
    """A working repository whose pushes make the remote's history."""
    work = tmp_path / "work"
    git("clone", "--quiet", str(bare_remote), str(work))
    git("checkout", "-q", "-B", "main", cwd=work)
    for rel, text in FIRST.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    _push(work, "first")
    return work


def _change(work: Path) -> None:
    """An edit, a deletion, an addition, a file made executable, one turned into a symlink
    and one beside the roots."""
    (work / "trino-clusters/a/values.yaml").write_text("a: 2\n")
    (work / "trino-clusters/b/values.yaml").unlink()
    (work / "trino-clusters/d/values.yaml").parent.mkdir()
    (work / "trino-clusters/d/values.yaml").write_text("d: 1\n")
    (work / "trino-applications/a.yaml").chmod(0o755)
    (work / "trino-clusters/c/values.yaml").unlink()
    (work / "trino-clusters/c/values.yaml").symlink_to("../a/values.yaml")
    (work / "trino-clusters-old/x.yaml").write_text("changed\n")
    (work / "argocd/root.yaml").write_text("root 2\n")


def test_a_new_tip_is_read_from_what_changed_and_the_same_tip_not_at_all(
        bare_remote: Path, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a first listing, a tip that moved on is listed without `git ls-tree` (edits,
    deletions, additions, modes and a file turned symlink all as git's index has them), and a
    tip that did not move is listed without running `diff-tree` either."""
    repo = WorkingCopy(GitSettings(), str(bare_remote), tmp_path / "wd")
    with repo.locked():
        repo.refresh()
        assert repo.tree(LAYOUT) == _expected(work)
    _change(work)
    _push(work, "second")
    with repo.locked():
        repo.refresh()
        failing_git(tmp_path / "no-ls-tree", "ls-tree")
        with monkeypatch.context() as m:
            m.setenv("PATH", f"{tmp_path / 'no-ls-tree'}{os.pathsep}{os.environ['PATH']}")
            assert repo.tree(LAYOUT) == _expected(work)
        failing_git(tmp_path / "no-diff-tree", "diff-tree")
        with monkeypatch.context() as m:
            m.setenv("PATH", os.pathsep.join([str(tmp_path / "no-ls-tree"),
                                              str(tmp_path / "no-diff-tree"),
                                              os.environ["PATH"]]))
            listed = repo.tree(LAYOUT)
            listed.clear()  # the caller's own copy: what it does is not remembered
            assert repo.tree(LAYOUT) == _expected(work)


def test_a_listing_whose_tip_is_gone_lists_the_whole_tree(
        bare_remote: Path, work: Path, tmp_path: Path) -> None:
    """A previous listing of a commit the clone does not have (a rewritten history, a new
    clone) is not trusted: the whole tree is listed."""
    repo = WorkingCopy(GitSettings(), str(bare_remote), tmp_path / "wd")
    with repo.locked():
        repo.refresh()
    assert repo.tip is not None
    roots = ("trino-clusters", "trino-applications", "argocd/root.yaml")
    gone = Listing("0" * 40, roots, {"trino-clusters/stale.yaml": "f" * 40})

    def run(*args: str) -> str:
        return run_git(args, repo.workdir, str(bare_remote))

    assert listing(run, repo.tip, roots, gone).files == _expected(work)


def test_the_working_copy_hands_its_next_run_the_render_cache_it_saved(
        bare_remote: Path, tmp_path: Path) -> None:
    """A second render_cache() of the same working copy (the next watch batch) holds the entries
    the first one saved without reading the file again, while the file keeps its identity
    (its bytes overwritten in place, same size and mtime); a new working copy reads the file."""
    entry = Entry("a", "doc-a", {"trino-clusters/a/values.yaml": "b" * 40})
    repo = WorkingCopy(GitSettings(), str(bare_remote), tmp_path / "wd")
    first = repo.render_cache("fp")
    first.keep("k", entry)
    first.save()
    path = first.path
    st = path.stat()
    with path.open("r+b") as f:
        f.write(b"\0" * st.st_size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert repo.render_cache("fp").entries == {"k": entry}
    assert WorkingCopy(GitSettings(), str(bare_remote), tmp_path / "wd").render_cache(
        "fp").entries == {}
