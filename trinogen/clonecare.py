"""Keeping the cached clone healthy: corrupted packs found, leftovers removed, packs consolidated.

Called by `trinogen.gitops.WorkingCopy.refresh()` while it holds the clone's lock, so no other
trinogen process uses the clone and no git command of ours is running in it.

- **Corruption.** Every pack and pack index ends with a checksum of the bytes before it. Each
  pack is checked once (its size and mtime are recorded in `trinogen-verified-packs`), so a
  run reads only the packs that are new since the last one: the small pack of the last commit,
  or once the big pack after a consolidation. A pack that fails its checksum makes the clone
  unusable, and the caller clones again (issue 11, item 5: every later run died before).
  A corrupted loose object shows only when git reads it; git's error text then marks the
  clone (`CORRUPTED_MARK`). Met while listing the tree, the clone is rebuilt at once (nothing is
  planned yet); later, that run fails with exit 4 saying so and the next one clones again.
- **Leftovers.** `tmp_pack_*`/`tmp_idx_*` (an interrupted fetch or repack) and
  `fast_import_crash_*` (a failed commit) files older than `STALE_AFTER` are removed.
- **Consolidation.** Each commit adds one pack (fast-import) and most fetches another; past
  `PACK_LIMIT` packs, or about `LOOSE_LIMIT` loose objects (sampled the way `git gc --auto`
  does), one `git gc` packs everything into one pack and drops what no ref reaches. The
  check is a directory listing; the gc runs about once every `PACK_LIMIT` commits.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import re
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

STALE_AFTER = 600.0  # seconds; a running git's temporary pack is younger than this
PACK_LIMIT = 50
LOOSE_LIMIT = 6700  # git's own gc.auto default
RECORD = "trinogen-verified-packs"
CORRUPTED_MARK = "trinogen-corrupted"
# git's words for an object it cannot read back (a flipped bit, a truncated file, a lost pack)
_CORRUPTION = re.compile(
    r"corrupt|inflate|unable to unpack|bad object|invalid object|hash mismatch|"
    r"does not match index|unable to read (?:tree|object|sha1 file)|packfile .* cannot be accessed|"
    r"failed to read object|is not a valid '?(?:tree|commit|blob)", re.IGNORECASE)
_CHUNK = 1 << 20


class CorruptedPack(Exception):
    """A pack or pack index whose trailing checksum does not match its content."""


def mark_if_corrupted(gitdir: Path, git_said: str) -> bool:
    """When git's error says an object is unreadable, mark the clone to be cloned again."""
    if not _CORRUPTION.search(git_said):
        return False
    try:
        (gitdir / CORRUPTED_MARK).write_text(git_said[:2000] + "\n")
    except OSError as e:
        log.warning("could not mark the corrupted clone %s: %s", gitdir, e)
    return True


def marked_corrupted(gitdir: Path) -> bool:
    return (gitdir / CORRUPTED_MARK).exists()


def verify_packs(gitdir: Path) -> None:
    """Check every pack and index not checked before; raise CorruptedPack for a bad one."""
    record_path = gitdir / RECORD
    seen = _load_record(record_path)
    checked: dict[str, tuple[int, int]] = {}
    for path in sorted((gitdir / "objects" / "pack").glob("pack-*.*")):
        if path.suffix not in (".pack", ".idx"):
            continue
        st = path.stat()
        stamp = (st.st_size, st.st_mtime_ns)
        if seen.get(path.name) != stamp and not checksum_ok(path):
            raise CorruptedPack(f"{path.name} fails its checksum (corrupted)")
        checked[path.name] = stamp
    if checked != seen:
        try:
            record_path.write_bytes(marshal.dumps(checked))
        except OSError as e:  # only costs a second check next run
            log.warning("could not record the checked packs in %s: %s", record_path, e)


def _load_record(path: Path) -> dict[str, tuple[int, int]]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def checksum_ok(path: Path) -> bool:
    """True when the file's last bytes are the SHA-1 (or SHA-256) of everything before them."""
    size = path.stat().st_size
    with path.open("rb") as f:
        for algo, width in (("sha1", 20), ("sha256", 32)):
            if size < width:
                continue
            h = hashlib.new(algo)
            f.seek(0)
            left = size - width
            while left:
                chunk = f.read(min(_CHUNK, left))
                if not chunk:
                    return False
                h.update(chunk)
                left -= len(chunk)
            if f.read(width) == h.digest():
                return True
    return False


def remove_leftovers(gitdir: Path, now: float | None = None) -> int:
    """Remove stale temporary packs and fast-import crash reports; returns how many."""
    now = time.time() if now is None else now
    pack_dir = gitdir / "objects" / "pack"
    removed = 0
    for path in [*pack_dir.glob("tmp_*"), *gitdir.glob("fast_import_crash_*")]:
        try:
            if now - path.stat().st_mtime > STALE_AFTER:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    if removed:
        log.info("removed %d leftover temporary file(s) of interrupted git commands in %s",
                 removed, gitdir)
    return removed


def needs_consolidation(gitdir: Path) -> bool:
    """Too many packs, or about LOOSE_LIMIT loose objects (git gc --auto's sample: objects/17)."""
    objects = gitdir / "objects"
    packs = sum(1 for _ in (objects / "pack").glob("pack-*.pack"))
    sample = objects / "17"
    loose = sum(1 for _ in sample.iterdir()) if sample.is_dir() else 0
    return packs > PACK_LIMIT or loose * 256 > LOOSE_LIMIT


def consolidate(gitdir: Path, git: Callable[..., str]) -> None:
    """One `git gc`: every reachable object in one pack, unreachable ones dropped (we hold the
    lock, so nothing of ours is being written: --prune=now is safe)."""
    packs = sum(1 for _ in (gitdir / "objects" / "pack").glob("pack-*.pack"))
    log.info("consolidating the cached clone %s (%d packs) with git gc", gitdir, packs)
    git("-c", "gc.autoDetach=false", "gc", "--quiet", "--prune=now")
