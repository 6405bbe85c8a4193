"""The render cache: skip validating and rendering documents whose output is already in git.

An entry is keyed by a hash of the document's BSON bytes and the renderer's fingerprint
(templates, settings that shape output, trinogen's version). It records the blob ids of the files
that document rendered to and the Vault secret versions they were rendered with; or, for a
document that failed validation on its own, its problems (issue 19: a failed document that has
not changed is not validated again, and is reported with the same problems). A document is a
hit only when its entry exists, the repository still holds exactly those blobs at those paths
(or a waiting rollout wave holds the cluster's files in git: `trinogen.served`), and Vault still
reports the same versions; anything else renders again. The cache lives inside
the cached clone's git directory (never committed) and is rewritten after each run with just the
documents seen in that run; a partial run (`sync --cluster`, each `watch` batch, a read that
missed documents) keeps every other document's entry, so a full run after it still hits (issue
22). Losing it costs time, never correctness. A long-lived process (`watch`) passes the cache of
its last run to `load`, which reuses its entries instead of reading the file again while the
file is still the one that run read or wrote (`Stamp`): another writer's file is always read.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trinogen.ports import CachedFailure
from trinogen.ports import CacheEntry as Entry

__all__ = ["FORMAT", "CachedFailure", "Entry", "RenderCache", "Stamp", "document_key",
           "merged", "stamp_of", "value_digest"]

log = logging.getLogger(__name__)

# marshal (plain tuples, dicts and strings; the file is trinogen's own, in its own cache) loads
# several times faster than JSON; its format belongs to the Python version, so that is part of
# the key. 3: entries as tuples, each distinct warning written once (issue 22: 10,000 entries
# load in a third of the time).
FORMAT = f"3-py{sys.version_info[0]}.{sys.version_info[1]}"


def document_key(body: Mapping[str, Any], fingerprint: str, digest: bytes | None = None,
                 also: bytes | None = None) -> str | None:
    """A stable hash of a document as stored (BSON bytes) and the renderer fingerprint;
    `digest` is the sha256 of those bytes when the source has it already; `also` the digest of
    what else its output depends on (`value_digest` of its shared catalogs)."""
    if digest is None:
        digest = value_digest(body)
        if digest is None:
            return None
    h = hashlib.sha256(fingerprint.encode())
    h.update(digest)
    if also is not None:  # fixed-length digests: no two inputs hash the same bytes
        h.update(also)
    return h.hexdigest()[:40]


def value_digest(value: Mapping[str, Any]) -> bytes | None:
    """The sha256 of a mapping's BSON bytes; None when bson cannot encode it (not cached)."""
    import bson

    try:
        return hashlib.sha256(bson.encode(value)).digest()
    except Exception:  # noqa: BLE001 - anything bson cannot encode is simply not cached
        return None


# A file's identity: inode, size and modification time (ns). Every save replaces the file by a
# new one (os.replace), so a save by anyone else gives another stamp.
Stamp = tuple[int, int, int]


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _stamp(path: Path) -> Stamp | None:
    try:
        return stamp_of(path.stat())
    except OSError:
        return None


def merged(entries: Mapping[str, Entry], failures: Mapping[str, CachedFailure],
           used: Mapping[str, Entry], used_failures: Mapping[str, CachedFailure]
           ) -> tuple[dict[str, Entry], dict[str, CachedFailure]]:
    """What a partial run leaves in the cache: this run's entries and failures, and every
    earlier one of a document this run did not see (an older version of a document it saw is
    superseded, so edits replayed by `watch` do not pile up)."""
    seen = {e.doc_id for e in used.values()} | {f.doc_id for f in used_failures.values()}
    kept = {k: e for k, e in entries.items() if e.doc_id not in seen}
    kept_failures = {k: f for k, f in failures.items() if f.doc_id not in seen}
    return {**kept, **used}, {**kept_failures, **used_failures}


class RenderCache:
    """Entries loaded from, and saved to, one marshal file (`FORMAT`)."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.entries: dict[str, Entry] = {}
        self.used: dict[str, Entry] = {}
        # Files of no single cluster (the app-of-apps), which depend on the fingerprint only.
        self.extra: dict[str, str] = {}
        self.used_extra: dict[str, str] = {}
        # Documents that failed validation on their own (issue 19): not validated again.
        self.failures: dict[str, CachedFailure] = {}
        self.used_failures: dict[str, CachedFailure] = {}
        # Application blob -> its project, destination and repositories (tenant projects only).
        self.apps: dict[str, tuple[Any, ...]] = {}
        self.used_apps: dict[str, tuple[Any, ...]] = {}
        # The file `entries` (and extra, failures, apps) came from, or were last saved to;
        # None when unknown (no file, or a failed save).
        self.stamp: Stamp | None = None

    @classmethod
    def load(cls, path: Path, fingerprint: str, previous: RenderCache | None = None
             ) -> RenderCache:
        """The cache saved at `path` for `fingerprint`. With `previous` (the cache of this
        process's last run, issue 22): its entries, without reading the file, if that file is
        still the one it read or saved."""
        cache = cls(path, fingerprint)
        if previous is not None and cache._reuse(previous):
            return cache
        try:
            with path.open("rb") as f:
                stamp, data = stamp_of(os.fstat(f.fileno())), marshal.loads(f.read())
            cache.stamp = stamp
            if data.get("format") == FORMAT and data.get("fingerprint") == fingerprint:
                cache.entries = {k: Entry.from_row(v) for k, v in data["entries"].items()}
                cache.extra = {str(k): str(v) for k, v in data.get("extra", {}).items()}
                cache.failures = {k: CachedFailure.from_json(v)
                                  for k, v in data.get("failures", {}).items()}
                cache.apps = dict(data.get("apps", {}))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError) as e:
            log.warning("ignoring the unreadable render cache %s: %s", path, e)
        return cache

    def _reuse(self, previous: RenderCache) -> bool:
        """Take `previous`'s entries if they are what the file still holds."""
        if (previous.fingerprint != self.fingerprint or previous.path != self.path
                or previous.stamp is None or previous.stamp != _stamp(self.path)):
            return False
        self.entries, self.extra = previous.entries, previous.extra
        self.failures, self.apps = previous.failures, previous.apps
        self.stamp = previous.stamp
        return True

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key)

    def owners(self) -> dict[str, Entry]:
        """Blob id -> the loaded entry that rendered it. A blob's id fixes its content, so
        its header names that entry's cluster and document: a targeted run (each `watch`
        batch) learns every other cluster's headers from here instead of reading their files
        from git (issue 22)."""
        return {blob: e for e in self.entries.values() for blob in e.files.values()}

    def keep(self, key: str, entry: Entry) -> None:
        """Record an entry to be saved (hits and fresh renders of this run)."""
        self.used[key] = entry

    def failure(self, key: str) -> CachedFailure | None:
        return self.failures.get(key)

    def keep_failure(self, key: str, failure: CachedFailure) -> None:
        self.used_failures[key] = failure

    def save(self, *, partial: bool = False) -> None:
        """Write the entries of this run, unless they are exactly what was loaded. A `partial`
        run saw only some documents: the entries of the others are kept (`merged`)."""
        if partial:
            self.used, self.used_failures = merged(self.entries, self.failures, self.used,
                                                   self.used_failures)
            self.used_extra = {**self.extra, **self.used_extra}
            self.used_apps = {**self.apps, **self.used_apps}
        if (self.used == self.entries and self.used_extra == self.extra
                and self.used_failures == self.failures and self.used_apps == self.apps):
            return
        self.stamp = self._write()
        # What the file now holds (the next `load` of this process may reuse it).
        self.entries, self.extra = self.used, self.used_extra
        self.failures, self.apps = self.used_failures, self.used_apps

    def _write(self) -> Stamp | None:
        """Replace the file by this run's entries; the new file's stamp, None if it failed."""
        share: dict[Any, Any] = {}
        data = {"format": FORMAT, "fingerprint": self.fingerprint,
                "entries": {k: e.to_row(share) for k, e in sorted(self.used.items())},
                "extra": dict(sorted(self.used_extra.items())),
                "failures": {k: f.to_json() for k, f in sorted(self.used_failures.items())}}
        if self.used_apps:
            data["apps"] = dict(sorted(self.used_apps.items()))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".render-cache-", dir=self.path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(marshal.dumps(data))
                f.flush()
                stamp = stamp_of(os.fstat(f.fileno()))
            os.replace(tmp, self.path)
        except OSError as e:  # a cache that cannot be written only costs time next run
            log.warning("could not write the render cache %s: %s", self.path, e)
            return None
        return stamp
