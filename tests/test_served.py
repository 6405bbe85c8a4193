"""trinogen.served: which documents the render cache answers, and what it records."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from tests.conftest import demo_settings
from tests.fakes import FakeCache
from trinogen.cache import document_key
from trinogen.model import HEAD_FIELDS, Disabled, Failed, RawDocument, declares_stopped, settled
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


class Undecoded:
    """A document's bytes as the source leaves them (`bsonread.Undecoded`), counting decodes."""

    def __init__(self, body: dict[str, Any], unreadable: str | None = None) -> None:
        self.body, self.unreadable, self.decodes = body, unreadable, 0

    def head(self) -> dict[str, Any]:
        return {k: v for k, v in self.body.items() if k in HEAD_FIELDS}

    def decode(self) -> tuple[dict[str, Any], str | None]:
        self.decodes += 1
        return self.body, self.unreadable


DIGEST = hashlib.sha256(b"the document's bytes").digest()


def test_a_hit_is_served_without_decoding_its_document() -> None:
    """A document read undecoded and answered by the cache is never decoded: its head is read
    (clusterId, enabled, stopped), not its body."""
    bytes_ = Undecoded({**DOC, "stopped": True, "properties": {"x": "1"}})
    raw = RawDocument('"d1"', digest=DIGEST, undecoded=bytes_)
    cache = FakeCache()
    key = document_key({}, "fp", DIGEST)
    assert key is not None
    cache.entries[key] = ENTRY
    served = Served.select([raw], "fp", cache, FILES)
    assert served.misses == [] and [e.cluster_id for e in served.entries()] == ["a"]
    assert declares_stopped(raw.head, demo_settings())
    assert bytes_.decodes == 0


def test_a_value_found_undecodable_when_judged_is_never_remembered() -> None:
    """A document whose body cannot be decoded fails when judged, and the failure is not kept
    in the cache (a refusal found at the read is never keyed either): it is judged afresh."""
    bytes_ = Undecoded({"_id": "d1", "clusterId": "a"}, "the document cannot be decoded (x)")
    raw = RawDocument('"d1"', digest=DIGEST, undecoded=bytes_)
    cache = FakeCache()
    served = Served.select([raw], "fp", cache, {})
    outcome = served.judge(lambda r: settled(r) or Disabled(r.doc_id, None))(raw)
    assert isinstance(outcome, Failed) and outcome.cluster_id == "a"
    assert outcome.problems[0].message == "the document cannot be decoded (x)"
    assert cache.failures == {} and bytes_.decodes == 1
