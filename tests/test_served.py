"""trinogen.served: which documents the render cache answers, and what it records."""

from __future__ import annotations

import pytest

from tests.fakes import FakeCache
from trinogen.cache import document_key
from trinogen.model import RawDocument
from trinogen.ports import CacheEntry
from trinogen.served import Served

DOC = {"_id": "d1", "clusterId": "a", "enabled": True}
RAW = RawDocument('"d1"', DOC)
FILES = {"trino-applications/a.yaml": "1" * 40}


def cache_with(entry: CacheEntry) -> FakeCache:
    cache = FakeCache()
    key = document_key(DOC, "fp")
    assert key is not None
    cache.entries[key] = entry
    return cache


ENTRY = CacheEntry("a", '"d1"', FILES, {"secret/x": 1})


@pytest.mark.parametrize(
    ("raws", "entry", "tree", "hit"),
    [
        ([RAW], ENTRY, FILES, True),
        ([RAW], ENTRY, {"trino-applications/a.yaml": "2" * 40}, False),  # the repository differs
        ([RAW], ENTRY, {}, False),  # the files are gone
        ([RAW], CacheEntry("a", '"other"', FILES), FILES, False),  # another document's entry
        # another enabled document claims the same clusterId: both must be validated
        ([RAW, RawDocument('"d2"', {"_id": "d2", "clusterId": "a", "enabled": True})], ENTRY,
         FILES, False),
    ],
)
def test_select(raws: list[RawDocument], entry: CacheEntry, tree: dict[str, str],
                hit: bool) -> None:
    """A document is served only when its entry matches it and the repository's files exactly."""
    served = Served.select(raws, "fp", cache_with(entry), tree)
    assert (RAW not in served.misses) == hit


def test_nothing_is_served_without_a_tree_or_with_inline_secrets() -> None:
    """No tree (render) or inline secrets: every document takes the path."""
    assert Served.select([RAW], "fp", cache_with(ENTRY), None).misses == [RAW]
    assert Served.select([RAW], "fp", cache_with(ENTRY), FILES, inline=True).misses == [RAW]


@pytest.mark.parametrize(
    ("versions", "errors", "stale"),
    [({"secret/x": 1}, {}, False), ({"secret/x": 2}, {}, True), ({}, {"secret/x": "gone"}, True)],
)
def test_a_rotated_or_vanished_secret_makes_a_hit_stale(
    versions: dict[str, int], errors: dict[str, str], stale: bool
) -> None:
    """A hit whose secret version changed, or whose path failed, is rendered again."""
    served = Served.select([RAW], "fp", cache_with(ENTRY), FILES)
    assert served.secret_paths() == {"secret/x"}
    assert (served.drop_stale(versions, errors) == [RAW]) == stale
    assert bool(served.hits) != stale
