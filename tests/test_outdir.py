"""trinogen.outdir: `render --out DIR` writes the tree into a plain directory."""

from __future__ import annotations

from pathlib import Path

from tests.fakes import header
from trinogen.outdir import write_tree
from trinogen.plan import Layout

LAYOUT = Layout("trino-clusters", "trino-applications")
APP = header("a", "doc-a") + b"kind: Application\n"


def test_writes_new_files_and_skips_identical_ones(tmp_path: Path) -> None:
    """Files are written once; a second identical write rewrites nothing."""
    files = {"a": {"trino-applications/a.yaml": APP}}
    assert write_tree(tmp_path, files, {}, LAYOUT, prune_stale=True) == 1
    assert (tmp_path / "trino-applications/a.yaml").read_bytes() == APP
    assert write_tree(tmp_path, files, {}, LAYOUT, prune_stale=True) == 0


def test_removes_stale_trinogen_files_only(tmp_path: Path) -> None:
    """A trinogen file no longer desired is removed (with its empty directory); others stay."""
    stale = tmp_path / "trino-clusters/old/values.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(header("old", "doc-o") + b"x: 1\n")
    foreign = tmp_path / "trino-clusters/notes.md"
    foreign.write_text("hand-written\n")
    write_tree(tmp_path, {"a": {"trino-applications/a.yaml": APP}}, {}, LAYOUT, prune_stale=True)
    assert not stale.exists() and not stale.parent.exists()
    assert foreign.read_text() == "hand-written\n"


def test_a_targeted_render_keeps_other_files(tmp_path: Path) -> None:
    """Without prune_stale (render --cluster), other clusters' files stay."""
    other = tmp_path / "trino-applications/b.yaml"
    other.parent.mkdir(parents=True)
    other.write_bytes(header("b", "doc-b"))
    write_tree(tmp_path, {"a": {"trino-applications/a.yaml": APP}}, {}, LAYOUT, prune_stale=False)
    assert other.exists()
