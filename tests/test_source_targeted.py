"""Source.read_targeted: its results on mongomock and on FerretDB over the wire (the same
table, expectations from the documents), and the queries it sends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mongomock
import pytest
from bson import ObjectId
from pymongo.errors import AutoReconnect

from tests import ferretdb
from tests.conftest import RealMongo, demo_settings, needs
from trinogen.errors import SourceUnavailable
from trinogen.source import EQUALITY_IDS, Source, doc_key

HAS_FERRETDB = needs(ferretdb.available(), "FerretDB is not built and Go is not installed to build it")
OID = ObjectId("653a1a7b8e1f4a1e9c5d8e1a")
# Two documents claim "b"; OID's document claims "a".
DOCS: list[dict[str, Any]] = [{"_id": OID, "clusterId": "a"}, {"_id": 2, "clusterId": "b"},
                              {"_id": "x", "clusterId": "b"}, {"_id": 4, "clusterId": "c"},
                              {"_id": 5, "clusterId": "d"}]
MANY = [{"_id": 100 + i, "clusterId": f"m{i}"} for i in range(EQUALITY_IDS + 2)]

BATCHES = [  # (doc_ids, cluster_ids, the _ids expected)
    ([], [], set()),
    ([OID], [], {OID}),
    ([OID, 2, "x", 99], [], {OID, 2, "x"}),  # _ids alone, by equality: ObjectId, int, str
    ([], ["b"], {2, "x"}),
    ([OID, 4], ["d"], {OID, 4, 5}),
    ([2], ["b"], {2, "x"}),  # 2 matched by both branches: once
    ([OID, "x"], ["a", "b", "c"], {OID, 2, "x", 4}),  # overlaps on both sides
    ([99, "nope"], ["zz"], set()),  # nothing there
    ([d["_id"] for d in MANY], [], {d["_id"] for d in MANY}),  # more than EQUALITY_IDS: one $in
    ([d["_id"] for d in MANY], ["m0", "a"], {d["_id"] for d in MANY} | {OID}),
]


@pytest.fixture(params=["mongomock", pytest.param("ferretdb", marks=HAS_FERRETDB)])
def source(request: pytest.FixtureRequest) -> Iterator[Source]:
    """A Source over DOCS + MANY on the parametrized backend."""
    settings = demo_settings()
    if request.param == "mongomock":
        src = Source(mongomock.MongoClient(), settings.mongodb)
        src.collection.insert_many([dict(d) for d in DOCS + MANY])
        yield src
        return
    db = RealMongo(request.getfixturevalue("ferretdb_server"), settings,
                   [dict(d) for d in DOCS + MANY])
    yield db.source
    db.close()


@pytest.mark.parametrize(("doc_ids", "cluster_ids", "expected"), BATCHES, ids=range(len(BATCHES)))
def test_a_targeted_read_returns_each_matching_document_once(
        source: Source, doc_ids: list[Any], cluster_ids: list[str], expected: set[Any]) -> None:
    """The documents with the given _ids plus every one claiming a given clusterId, each once."""
    raws = source.read_targeted([doc_key(i) for i in doc_ids], cluster_ids)
    assert sorted(r.doc_id for r in raws) == sorted(doc_key(i) for i in expected)


QUERIES = [  # (doc_ids, cluster_ids, queries sent)
    ([OID, 2], [], 2),  # a few _ids alone: one equality query each
    ([d["_id"] for d in MANY], [], 1),  # more than EQUALITY_IDS: one $in
    ([OID, 2], ["c"], 1),  # with clusterIds: one $or
    ([], ["c", "d"], 1),
    ([{"t": "x"}], [], 1),  # an embedded-document _id: $in, never an equality on a mapping
]


@pytest.mark.parametrize(("doc_ids", "cluster_ids", "sent"), QUERIES, ids=range(len(QUERIES)))
def test_the_queries_a_targeted_read_sends(doc_ids: list[Any], cluster_ids: list[str],
                                           sent: int) -> None:
    """A few _ids alone are asked one equality each (FerretDB answers only that from its
    index); more _ids, or any clusterId, go in one query."""
    src = Source(mongomock.MongoClient(), demo_settings().mongodb)
    src.collection.insert_many([dict(d) for d in DOCS + MANY])
    src.read_targeted([doc_key(i) for i in doc_ids], cluster_ids)
    assert src.queries == sent


class DiesOnSecondQuery:
    """A collection whose second find raises as a cursor dying mid-read does."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, 0

    def find(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 2:
            raise AutoReconnect("connection closed")
        return self.inner.find(*args, **kwargs)


def test_a_query_failing_mid_read_fails_the_whole_read() -> None:
    """When one of the targeted queries fails, the read fails: no partial batch is returned."""
    src = Source(mongomock.MongoClient(), demo_settings().mongodb)
    src.collection.insert_many([dict(d) for d in DOCS])
    src.collection = DiesOnSecondQuery(src.collection)
    with pytest.raises(SourceUnavailable):
        src.read_targeted([doc_key(OID), doc_key(2)], [])
