"""The render cache: skip validating and rendering documents whose output is already in git.

An entry is keyed by a hash of the document's BSON bytes and the renderer's fingerprint
(templates, settings that shape output, trinogen's version). It records the blob ids of the files
that document rendered to and the Vault secret versions they were rendered with. A document is a
hit only when its entry exists, the repository still holds exactly those blobs at those paths,
and Vault still reports the same versions; anything else renders again. The cache lives inside
the cached clone's git directory (never committed) and is rewritten after each run with just the
documents seen in that run. Losing it costs time, never correctness.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FORMAT = 1


@dataclass(frozen=True)
class Entry:
    cluster_id: str
    doc_id: str
    files: Mapping[str, str]  # path -> blob id
    versions: Mapping[str, int | None] = field(default_factory=dict)  # secret path -> version
    warnings: tuple[tuple[str, str, str], ...] = ()  # (cluster, field, message)

    def to_json(self) -> dict[str, Any]:
        return {"cluster": self.cluster_id, "doc": self.doc_id, "files": dict(self.files),
                "versions": dict(self.versions), "warnings": [list(w) for w in self.warnings]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        files = data["files"]
        versions = data.get("versions") or {}
        if not (isinstance(files, dict) and isinstance(versions, dict)
                and all(type(k) is str and type(v) is str for k, v in files.items())):
            raise TypeError("malformed cache entry")
        return cls(
            cluster_id=str(data["cluster"]),
            doc_id=str(data["doc"]),
            files=files,
            versions={str(k): (int(v) if v is not None else None) for k, v in versions.items()},
            warnings=tuple((str(w[0]), str(w[1]), str(w[2])) for w in data.get("warnings", ())),
        )


def document_key(body: Mapping[str, Any], fingerprint: str) -> str | None:
    """A stable hash of a document as stored (BSON bytes) and the renderer fingerprint."""
    import bson

    try:
        encoded = bson.encode(body)
    except Exception:  # noqa: BLE001 - anything bson cannot encode is simply not cached
        return None
    h = hashlib.sha256(fingerprint.encode())
    h.update(encoded)
    return h.hexdigest()[:40]


class RenderCache:
    """Entries loaded from, and saved to, one JSON file."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.entries: dict[str, Entry] = {}
        self.used: dict[str, Entry] = {}
        # Files of no single cluster (the app-of-apps), which depend on the fingerprint only.
        self.extra: dict[str, str] = {}
        self.used_extra: dict[str, str] = {}

    @classmethod
    def load(cls, path: Path, fingerprint: str) -> RenderCache:
        cache = cls(path, fingerprint)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") == FORMAT and data.get("fingerprint") == fingerprint:
                cache.entries = {k: Entry.from_json(v) for k, v in data["entries"].items()}
                cache.extra = {str(k): str(v) for k, v in data.get("extra", {}).items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            log.warning("ignoring the unreadable render cache %s: %s", path, e)
        return cache

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key)

    def keep(self, key: str, entry: Entry) -> None:
        """Record an entry to be saved (hits and fresh renders of this run)."""
        self.used[key] = entry

    def save(self) -> None:
        """Write the entries of this run, unless they are exactly what was loaded."""
        if self.used == self.entries and self.used_extra == self.extra:
            return
        data = {"format": FORMAT, "fingerprint": self.fingerprint,
                "entries": {k: e.to_json() for k, e in sorted(self.used.items())},
                "extra": dict(sorted(self.used_extra.items()))}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".render-cache-", dir=self.path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(data, separators=(",", ":")).encode())
            os.replace(tmp, self.path)
        except OSError as e:  # a cache that cannot be written only costs time next run
            log.warning("could not write the render cache %s: %s", self.path, e)
