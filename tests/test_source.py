"""trinogen.source: reading documents and writing status records (mongomock as MongoDB)."""

from __future__ import annotations

import bson
import mongomock
import pytest
from bson import ObjectId
from bson.codec_options import DEFAULT_CODEC_OPTIONS
from bson.raw_bson import RawBSONDocument

from tests.conftest import demo_settings
from trinogen.errors import ConfigError
from trinogen.settings import MongoSettings
from trinogen.source import Source, _explain, connect, doc_key, parse_doc_key

SETTINGS = demo_settings().mongodb


def source_with(*docs: dict[str, object]) -> Source:
    client = mongomock.MongoClient()
    src = Source(client, SETTINGS)
    if docs:
        src.collection.insert_many([dict(d) for d in docs])
    return src


def test_read_all_is_one_query_and_drops_the_metadata_fields() -> None:
    """Every document comes back in one query, without the fields trinogen never reads."""
    src = source_with({"_id": 1, "clusterId": "a", "description": "x"}, {"_id": 2, "clusterId": "b"})
    raws = src.read_all()
    assert src.queries == 1 and [r.body["clusterId"] for r in raws] == ["a", "b"]
    assert "description" not in raws[0].body


def test_read_targeted_by_id_or_cluster() -> None:
    """A targeted read returns the documents with those _ids and those claiming those clusterIds."""
    oid = ObjectId("653a1a7b8e1f4a1e9c5d8e1a")
    src = source_with({"_id": oid, "clusterId": "a"}, {"_id": 2, "clusterId": "b"},
                      {"_id": 3, "clusterId": "c"})
    raws = src.read_targeted([doc_key(oid)], ["c"])
    assert sorted(r.body["clusterId"] for r in raws) == ["a", "c"]
    assert src.read_targeted([], []) == []


def test_write_status_replaces_the_records_of_the_given_clusters() -> None:
    """Writing a record replaces the previous one of that cluster; other records stay."""
    src = source_with()
    src.write_status({"a": {"state": "synced"}, "b": {"state": "failed"}})
    assert src.write_status({"a": {"state": "pruned"}}) == 1
    assert src.read_status() == {"a": {"_id": "a", "state": "pruned"},
                                 "b": {"_id": "b", "state": "failed"}}


def test_the_canonical_id_round_trips() -> None:
    """An _id written down as canonical Extended JSON reads back as the same value."""
    oid = ObjectId("653a1a7b8e1f4a1e9c5d8e1a")
    assert doc_key(oid) == '{"$oid": "653a1a7b8e1f4a1e9c5d8e1a"}'
    assert parse_doc_key(doc_key(oid)) == oid


@pytest.mark.parametrize(
    ("uri", "shown"),
    [("mongodb://user:s3cret@db:27017/x", "mongodb://user:***@db:27017/x"),
     ("mongodb://db:27017", "mongodb://db:27017"),
     ("mongodb+srv://u:p@q@cluster.example", "mongodb+srv://u:***@cluster.example"),
     ("mongodb://db/?tls=true&tlsCertificateKeyFilePassword=s3cret",
      "mongodb://db/?tls=true&tlsCertificateKeyFilePassword=***"),
     ("mongodb://db/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:s3cret",
      "mongodb://db/?authMechanism=MONGODB-AWS&authMechanismProperties=***")],
)
def test_messages_never_show_the_password(uri: str, shown: str) -> None:
    """The URI in an unreachable-database message has its password and secret options masked."""
    from pymongo.errors import ServerSelectionTimeoutError

    message = _explain(ServerSelectionTimeoutError("timed out"), MongoSettings(uri=uri))
    assert f"MongoDB ({shown}, " in message
    assert "s3cret" not in message


def test_an_unusable_uri_is_a_config_error_without_its_secrets() -> None:
    """A URI pymongo refuses is a ConfigError whose message hides the password and options."""
    uri = ("mongodb://u:s3cret@db/?tlsCertificateKeyFilePassword=s3cret&tlsInsecure=true"
           "&tlsAllowInvalidCertificates=false")
    with pytest.raises(ConfigError) as e:
        connect(MongoSettings(uri=uri))
    assert "s3cret" not in str(e.value)


def test_a_document_over_the_size_limit_is_refused_by_id_and_cluster_id() -> None:
    """Over mongodb.max_document_bytes a document is read back as refused, named by its _id and
    clusterId (one more query, for the too-large documents only); the others are untouched."""
    import dataclasses

    src = source_with({"_id": 1, "clusterId": "big", "pad": "x" * 5000}, {"_id": 2, "clusterId": "b"})
    src.settings = dataclasses.replace(src.settings, max_document_bytes=4096)
    big, small = src.read_all()
    assert big.doc_id == doc_key(1) and big.body == {"_id": 1, "clusterId": "big"}
    assert big.unreadable is not None and big.unreadable.startswith("the document is 5,0")
    assert small.unreadable is None and small.body["clusterId"] == "b"
    assert src.queries == 2


class RawCollection:
    """Stands in for a pymongo collection reading raw BSON (`bsonread.raw_options`): `find`
    hands out each document's bytes, whatever the query."""

    def __init__(self, *docs: dict[str, object]) -> None:
        self.docs = [RawBSONDocument(bson.encode(d)) for d in docs]
        self.codec_options = DEFAULT_CODEC_OPTIONS

    def find(self, query: object, projection: object = None, batch_size: int = 0
             ) -> list[RawBSONDocument]:
        return list(self.docs)


@pytest.mark.parametrize("seed_complete", [True, False])
def test_only_the_read_that_met_an_unidentified_document_is_incomplete(
        seed_complete: bool) -> None:
    """A too-large document without an _id cannot be told from any other, so the read that met
    it may not prune; the next read of every document, without it (a watcher's reconcile),
    may again, unless a seed file could not be read (then no read ever may)."""
    import dataclasses

    nameless = {"clusterId": "big", "pad": "x" * 5000}
    coll = RawCollection({"_id": 1, "clusterId": "a"}, nameless)
    client = {SETTINGS.database: {SETTINGS.collection: coll, SETTINGS.catalog_collection: coll}}
    src = Source(client, dataclasses.replace(SETTINGS, max_document_bytes=4096),
                 complete=seed_complete)
    read = src.read_all()
    assert [r.unreadable is not None for r in read] == [False, True] and not src.complete
    coll.docs = coll.docs[:1]
    assert [r.doc_id for r in src.read_all()] == [doc_key(1)]
    assert src.complete is seed_complete

