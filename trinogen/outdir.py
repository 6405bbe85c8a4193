"""`trinogen render --out DIR`: the desired tree written into a plain directory (no git).

Files that are already identical are not rewritten; trinogen files that are no longer desired
are removed, files without trinogen's header never are.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from pathlib import Path

from trinogen.errors import GitUnavailable
from trinogen.plan import Layout
from trinogen.render import HEAD_BYTES, parse_header


def write_tree(
    out_dir: Path,
    files: Mapping[str, Mapping[str, bytes]],
    extra: Mapping[str, bytes],
    layout: Layout,
    *,
    prune_stale: bool,
) -> int:
    """Write the desired files into a plain directory (no git); returns files written.

    Files that are already identical are not rewritten. With `prune_stale`, trinogen files under
    the output roots that are no longer desired are removed; files without the header never are.
    """
    wanted: dict[str, bytes] = dict(extra)
    for cluster_files in files.values():
        wanted.update(cluster_files)
    try:
        written = _write_files(out_dir, wanted)
        if prune_stale:
            _prune_stale(out_dir, wanted, layout)
    except OSError as e:
        hint = " (disk full)" if e.errno == errno.ENOSPC else ""
        raise GitUnavailable(f"cannot write to {out_dir}{hint}: {e.strerror}") from e
    return written


def _write_files(out_dir: Path, wanted: Mapping[str, bytes]) -> int:
    written = 0
    made: set[Path] = set()
    for path, content in sorted(wanted.items()):
        target = out_dir / path
        if _holds(target, content):
            continue
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        # A plain directory, not the GitOps repository: written in place, no temp files.
        with open(target, "wb") as f:
            f.write(content)
        written += 1
    return written


def _holds(target: Path, content: bytes) -> bool:
    try:
        return target.read_bytes() == content
    except OSError:
        return False


def _prune_stale(out_dir: Path, wanted: Mapping[str, bytes], layout: Layout) -> None:
    for root in (layout.clusters_dir, layout.applications_dir):
        base = out_dir / root
        if not base.is_dir():
            continue
        for found in sorted(base.rglob("*")):
            rel = found.relative_to(out_dir).as_posix()
            if found.is_file() and rel not in wanted and _is_ours(found):
                found.unlink()
                _remove_empty_parents(found.parent, out_dir)


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def _is_ours(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return parse_header(f.read(HEAD_BYTES)) is not None
    except OSError:
        return False
