"""trinogen.cache: the render cache file (losing or damaging it costs time, never correctness)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trinogen.cache import Entry, RenderCache, document_key, value_digest

ENTRY = Entry("a", "doc-a", {"trino-applications/a.yaml": "b" * 40}, {"secret/x": 3},
              (("a", "connectors", "uppercase"),))


def test_entries_kept_in_one_run_are_loaded_by_the_next(tmp_path: Path) -> None:
    """save() writes the entries kept in this run; load() with the same fingerprint returns them."""
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("k", ENTRY)
    cache.used_extra = {"argocd/root.yaml": "c" * 40}
    cache.save()
    again = RenderCache.load(tmp_path / "c", "fp")
    assert again.get("k") == ENTRY and again.extra == {"argocd/root.yaml": "c" * 40}


def test_a_warning_many_clusters_share_is_stored_once(tmp_path: Path) -> None:
    """The same warning given to many clusters is written once: the file of 200 entries with
    one long warning each is far smaller than 200 copies of it, and every entry reads back."""
    message = "x.y is not a property of connector hive in Trino 474 " * 40  # ~2 kB
    cache = RenderCache.load(tmp_path / "c", "fp")
    entries = {f"k{i}": Entry(f"c{i}", f"doc-{i}", {f"trino-applications/c{i}.yaml": "b" * 40},
                              {}, ((f"c{i}", "connectors", f"{message}{'.' * (i % 1)}"),))
               for i in range(200)}  # each message a string of its own, as rendering makes them
    for key, entry in entries.items():
        cache.keep(key, entry)
    cache.save()
    assert (tmp_path / "c").stat().st_size < 200 * len(message) / 10
    assert RenderCache.load(tmp_path / "c", "fp").entries == entries


def test_entries_not_kept_are_dropped(tmp_path: Path) -> None:
    """Only documents seen in the last run stay in the cache."""
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("old", ENTRY)
    cache.save()
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("new", ENTRY)
    cache.save()
    assert RenderCache.load(tmp_path / "c", "fp").entries.keys() == {"new"}


def test_a_partial_run_keeps_the_documents_it_did_not_see(tmp_path: Path) -> None:
    """save(partial=True) keeps other documents' entries and drops the superseded entry (an
    older version) of a document the run saw, so replayed edits do not pile up."""
    other = Entry("b", "doc-b", {}, {}, ())
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("a-v1", ENTRY)
    cache.keep("b-v1", other)
    cache.save()
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("a-v2", ENTRY)
    cache.save(partial=True)
    assert RenderCache.load(tmp_path / "c", "fp").entries.keys() == {"a-v2", "b-v1"}


def test_another_fingerprint_starts_empty(tmp_path: Path) -> None:
    """Entries made with other templates or settings are never used."""
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("k", ENTRY)
    cache.save()
    assert RenderCache.load(tmp_path / "c", "other").entries == {}


@pytest.mark.parametrize("damage", [b"", b"not marshal", b"\x00" * 10])
def test_an_unreadable_file_is_ignored(tmp_path: Path, damage: bytes) -> None:
    """A damaged cache file loads as an empty cache instead of failing the run."""
    (tmp_path / "c").write_bytes(damage)
    assert RenderCache.load(tmp_path / "c", "fp").entries == {}


def test_an_unchanged_cache_is_not_rewritten(tmp_path: Path) -> None:
    """A run that keeps exactly what it loaded does not write the file again."""
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep("k", ENTRY)
    cache.save()
    before = (tmp_path / "c").stat().st_mtime_ns
    again = RenderCache.load(tmp_path / "c", "fp")
    again.keep("k", again.get("k"))  # type: ignore[arg-type]
    again.save()
    assert (tmp_path / "c").stat().st_mtime_ns == before


def test_document_key_depends_on_the_document_and_the_fingerprint() -> None:
    """The key changes with any byte of the document or the fingerprint; it is stable otherwise."""
    doc = {"_id": "x", "clusterId": "a", "n": 1}
    assert document_key(doc, "fp") == document_key(dict(doc), "fp")
    assert document_key(doc, "fp") != document_key({**doc, "n": 2}, "fp")
    assert document_key(doc, "fp") != document_key(doc, "fp2")
    assert document_key({"bad": object()}, "fp") is None  # not BSON: simply not cached


def test_document_key_depends_on_what_else_the_document_uses() -> None:
    """A digest of what else a document's output depends on (its shared catalogs) changes its
    key; the same digest gives the same key, and none gives the key of the bytes alone."""
    doc = {"_id": "x", "clusterId": "a", "n": 1}
    one, other = value_digest({"catalogs": [["pg", [{"n": 1}]]]}), value_digest({"catalogs": []})
    assert one is not None and other is not None and one != other
    assert document_key(doc, "fp", also=one) == document_key(dict(doc), "fp", also=one)
    assert len({document_key(doc, "fp"), document_key(doc, "fp", also=one),
                document_key(doc, "fp", also=other)}) == 3
    assert value_digest({"bad": object()}) is None  # not BSON: its users are not cached


def test_failures_kept_in_one_run_are_loaded_by_the_next(tmp_path: Path) -> None:
    """A document's recorded failure survives the file like an entry; one not kept is dropped."""
    from trinogen.cache import CachedFailure

    failure = CachedFailure('"bad"', "bad", (("bad", "nope", "unknown field"),))
    cache = RenderCache.load(tmp_path / "c", "fp")
    cache.keep_failure("k", failure)
    cache.keep_failure("gone", failure)
    cache.save()
    again = RenderCache.load(tmp_path / "c", "fp")
    assert again.failure("k") == failure and again.entries == {}
    again.keep_failure("k", failure)
    again.save()
    assert RenderCache.load(tmp_path / "c", "fp").failures.keys() == {"k"}


def _saved(path: Path, fingerprint: str, entries: dict[str, Entry]) -> RenderCache:
    cache = RenderCache.load(path, fingerprint)
    for key, entry in entries.items():
        cache.keep(key, entry)
    cache.save()
    return cache


def test_a_long_lived_process_reuses_its_last_cache_while_the_file_is_the_one_it_saved(
        tmp_path: Path) -> None:
    """With `previous`, load() takes that cache's entries without reading the file while the
    file keeps its identity: bytes overwritten in place with the same size and mtime are not
    read (a plain load finds them unreadable and starts empty)."""
    path = tmp_path / "c"
    saved = _saved(path, "fp", {"k": ENTRY})
    st = path.stat()
    with path.open("r+b") as f:
        f.write(b"\0" * st.st_size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert RenderCache.load(path, "fp").entries == {}
    assert RenderCache.load(path, "fp", previous=saved).entries == {"k": ENTRY}


def test_another_writers_file_is_read_even_with_a_previous_cache(tmp_path: Path) -> None:
    """A file saved by someone else since (another process's save replaces it) is read: its
    entries, not the previous cache's."""
    path = tmp_path / "c"
    mine = _saved(path, "fp", {"k": ENTRY})
    _saved(path, "fp", {"theirs": ENTRY})
    assert RenderCache.load(path, "fp", previous=mine).entries.keys() == {"theirs"}


def test_a_previous_cache_of_another_fingerprint_is_not_reused(tmp_path: Path) -> None:
    """A renderer with another fingerprint (templates or settings changed) gets no entry of
    the previous cache."""
    path = tmp_path / "c"
    mine = _saved(path, "fp", {"k": ENTRY})
    assert RenderCache.load(path, "other", previous=mine).entries == {}


def test_a_reused_cache_holds_what_a_partial_run_saved(tmp_path: Path) -> None:
    """After a partial run (a watch batch) the reused entries are those the file holds: the
    run's own and every other document's, as a fresh load reads them."""
    path = tmp_path / "c"
    other = Entry("b", "doc-b", {"trino-applications/b.yaml": "d" * 40})
    _saved(path, "fp", {"a-v1": ENTRY, "b-v1": other})
    batch = RenderCache.load(path, "fp")
    batch.keep("a-v2", ENTRY)
    batch.save(partial=True)
    reused = RenderCache.load(path, "fp", previous=batch)
    assert reused.entries == RenderCache.load(path, "fp").entries
    assert reused.entries.keys() == {"a-v2", "b-v1"}


def test_a_cache_whose_save_failed_is_not_reused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A save that could not write leaves the file as it was: the next load reads the file,
    not the entries that were never written."""
    path = tmp_path / "c"
    _saved(path, "fp", {"k": ENTRY})
    failed = RenderCache.load(path, "fp")
    failed.keep("new", ENTRY)

    def disk_full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", disk_full)
        failed.save()
    assert RenderCache.load(path, "fp", previous=failed).entries.keys() == {"k"}
