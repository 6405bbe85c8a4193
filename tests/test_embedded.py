"""trinogen.embedded: the embedded database answers as mongomock did, from BSON held once.

mongomock is the independent reader here: it served `mongomock://` before, and every expectation
below is what it does with the same documents (inserted one by one, read by a Source over it).
"""

from __future__ import annotations

import copy
import datetime
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import bson
import mongomock
import pytest
from bson import Code, Decimal128, Int64, ObjectId, Regex, Timestamp, json_util

from tests.conftest import ROOT, demo_settings, example_docs
from tests.hostile_corpus import corpus
from tests.kitchen_sink import document as kitchen_sink
from trinogen import bsonread
from trinogen.embedded import Embedded, Refused, SeedCollection, project
from trinogen.settings import MongoSettings
from trinogen.source import Source, connect, doc_key

SETTINGS = demo_settings().mongodb


def mongomock_reads(docs: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    """What mongomock:// read before this module: each document inserted (refusals noted), then
    one Source read over it, as the embedded database was read (no projection)."""
    client = mongomock.MongoClient()
    coll = client[SETTINGS.database][SETTINGS.collection]
    refused = []
    for doc in docs:
        try:
            coll.insert_one(copy.deepcopy(doc))
        except Exception as e:  # noqa: BLE001 - whatever mongomock refuses, by name and message
            refused.append(f"{type(e).__name__}: {e}")
    return Source(client, SETTINGS, ephemeral=True).read_all(), refused


def embedded_reads(docs: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    client = Embedded()
    coll = client.seed(SETTINGS.database, SETTINGS.collection)
    refused = []
    for doc in docs:
        try:
            coll.add(copy.deepcopy(doc))
        except Refused as e:
            refused.append(f"{e.kind}: {e}")
    return Source(client, SETTINGS, ephemeral=True).read_all(), refused


def typed(value: Any) -> Any:
    """A value with every type spelled out, so dict order and tz-awareness count. One difference
    is allowed (and pinned below): an integer beyond 32 bits that mongomock kept as int is an
    Int64 here, as MongoDB gives it."""
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, datetime.datetime):
        return ("datetime", value.isoformat(), value.tzinfo)
    if type(value) is Int64 and not -2**31 <= value < 2**31:
        return ("int", repr(int(value)))
    return (type(value).__name__, repr(value))


def corpus_docs() -> list[dict[str, Any]]:
    """The shipped examples, the kitchen sink and the hostile corpus, as the seed files hold them
    (Extended JSON read back)."""
    docs = [*example_docs(), kitchen_sink(), *(case.doc for case in corpus())]
    return [json_util.loads(json_util.dumps(d)) for d in docs]


def test_documents_read_back_exactly_as_mongomock_returned_them() -> None:
    """Every example, kitchen-sink and hostile document reads back with the same keys in the same
    order, the same types (naive datetimes at millisecond precision), the same digest."""
    docs = corpus_docs()
    theirs, their_refusals = mongomock_reads(docs)
    ours, our_refusals = embedded_reads(docs)
    assert our_refusals == their_refusals
    assert [r.doc_id for r in ours] == [r.doc_id for r in theirs]
    assert [typed(r.body) for r in ours] == [typed(r.body) for r in theirs]
    assert [r.digest for r in ours] == [r.digest for r in theirs]
    assert [r.unreadable for r in ours] == [r.unreadable for r in theirs]


def test_a_large_integer_reads_back_as_int64_as_from_mongodb() -> None:
    """An integer beyond 32 bits comes back as Int64 (as pymongo gives it), equal to mongomock's
    int; its digest is the same, since both are stored as a BSON int64."""
    doc = {"_id": "a", "clusterId": "a", "n": 2**40, "m": 7, "when": datetime.datetime(
        2024, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))}
    (theirs,), _ = mongomock_reads([doc])
    (ours,), _ = embedded_reads([doc])
    assert type(ours.body["n"]) is Int64 and type(theirs.body["n"]) is int
    assert ours.body == theirs.body and ours.digest == theirs.digest
    assert ours.body["when"] == datetime.datetime(2024, 1, 2, 1, 4, 5, 678000)


REFUSED = [
    [{"_id": 1}, {"_id": 1.0}],                          # equal as numbers
    [{"_id": 1}, {"_id": True}],                         # equal as Python compares them
    [{"_id": {"a": 1, "b": 2}}, {"_id": {"b": 2, "a": 1}}],  # a document, in any key order
    [{"_id": {"a": [1, 2]}}, {"_id": {"a": [1, 2]}}],
    [{"_id": [1, 2]}],
    [{"_id": {"a": [{"b": 1}]}}],
    [{"_id": Regex("a")}],
    [{"_id": Decimal128("1")}],
    [{"_id": Code("x")}],
    [{"_id": 1, "a\0b": 1}],
    [{"_id": 1, "x": {"y": {"a\0": 1}}}],
    [{"_id": 1, "x": [{"a\0": 1}]}],                     # inside a list: bson's own message
    [{"_id": 1, "$x": 1}],
    [{"_id": 1, "$x": 1, "y": {"a\0": 1}}],              # the NUL check came first
    [{"_id": 1, "$x": 2**64}],                           # the $ check came before encoding
    [{"_id": 1, "x": 2**64}],
    [{"_id": 1, "x": uuid.UUID(int=1)}],
    [{"_id": 1, "x": "\ud800"}],
    [{"_id": "s"}, {"_id": b"s"}, {"_id": None}, {"_id": None}],
]


@pytest.mark.parametrize("docs", REFUSED, ids=range(len(REFUSED)))
def test_what_mongomock_refused_is_refused_in_its_words(docs: list[dict[str, Any]]) -> None:
    """A document MongoDB (and mongomock) would refuse is refused with mongomock's error name and
    message; the ones it kept are kept."""
    theirs, their_refusals = mongomock_reads(docs)
    ours, our_refusals = embedded_reads(docs)
    assert our_refusals == their_refusals
    assert [typed(r.body) for r in ours] == [typed(r.body) for r in theirs]


def queried() -> tuple[Any, SeedCollection]:
    docs = [{"_id": ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), "clusterId": "a", "x": 1},
            {"_id": "two", "clusterId": "b", "description": "d"},
            {"_id": 3, "clusterId": ["c", "d"]},
            {"_id": {"t": "x", "n": 1}, "clusterId": "e"},
            {"_id": Int64(2**40), "clusterId": 5}]
    theirs = mongomock.MongoClient().db.c
    ours = SeedCollection()
    for d in docs:
        theirs.insert_one(copy.deepcopy(d))
        ours.add(copy.deepcopy(d))
    return theirs, ours


QUERIES: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
    ({}, None),
    ({"_id": {"$in": [3, "two", "nope"]}}, None),
    ({"_id": {"$in": [ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), Int64(2**40)]}}, None),
    ({"_id": {"$in": [{"t": "x", "n": 1}]}}, None),
    ({"clusterId": {"$in": ["a", "d", "e", "5"]}}, None),
    ({"_id": "two"}, None),  # a watch batch's few _ids: one equality each
    ({"_id": ObjectId("653a1a7b8e1f4a1e9c5d8e1a")}, None),
    ({"_id": 3}, None),
    ({"$or": [{"_id": {"$in": ["two"]}}, {"clusterId": {"$in": ["a", "b"]}}]}, None),
    ({}, {"description": 0, "x": 0}),
    ({"_id": {"$in": [3, "two"]}}, {"clusterId": 1, "enabled": 1}),
    ({}, {"clusterId": 1, "_id": 0}),
]


@pytest.mark.parametrize(("query", "projection"), QUERIES, ids=range(len(QUERIES)))
def test_the_queries_source_makes_match_as_on_mongomock(query: dict[str, Any],
                                                         projection: dict[str, Any] | None) -> None:
    """Every query trinogen.source makes (all, _id $in or equality, clusterId $in, their $or, a projection)
    finds the documents mongomock finds, in the same order, with the same fields."""
    theirs, ours = queried()
    found = [bson.decode(r.raw) for r in ours.find(query, projection, batch_size=1)]
    expected = list(theirs.find(query, copy.deepcopy(projection)))  # mongomock edits it
    if projection and any(projection.values()):
        # mongomock puts an inclusion projection's fields in the projection's order; MongoDB
        # keeps the document's, as here (test_a_projection_keeps_the_bytes...)
        expected = [{k: d[k] for k in sorted(d)} for d in expected]
        found = [{k: d[k] for k in sorted(d)} for d in found]
    assert [typed(d) for d in found] == [typed(d) for d in expected]


def test_an_embedded_document_id_matches_in_its_own_key_order_only() -> None:
    """As on MongoDB (FerretDB seen, docs/configuration.md), an _id that is a document is found
    by the same document with its keys in the same order (mongomock ignored the order)."""
    _, ours = queried()
    assert len(ours.find({"_id": {"$in": [{"t": "x", "n": 1}]}})) == 1
    assert ours.find({"_id": {"$in": [{"n": 1, "t": "x"}]}}) == []


def test_a_projection_keeps_the_bytes_of_the_fields_it_keeps() -> None:
    """A projected document is the stored one's elements, byte for byte, as a server sends it."""
    raw = bson.encode({"_id": 1, "clusterId": "a", "pad": "x" * 100, "enabled": True})
    assert project(raw, {"clusterId": 1, "enabled": 1}) == bson.encode(
        {"_id": 1, "clusterId": "a", "enabled": True})


def test_documents_are_handed_out_as_raw_bson() -> None:
    """A read is raw BSON, so it is measured before it is decoded, as from a real server: a
    seed document over mongodb.max_document_bytes is refused by its _id and clusterId."""
    _, ours = queried()
    assert all(type(r.raw) is bytes for r in ours.find({}))
    client = Embedded()
    client.seed(SETTINGS.database, SETTINGS.collection).add(
        {"_id": 1, "clusterId": "big", "pad": "x" * 5000})
    src = Source(client, SETTINGS.__class__(**{**SETTINGS.__dict__, "max_document_bytes": 4096}),
                 ephemeral=True)
    (big,) = src.read_all()
    assert big.body == {"_id": 1, "clusterId": "big"} and big.unreadable is not None
    assert big.unreadable.startswith("the document is 5,0")


def test_an_empty_timestamp_is_kept_as_written() -> None:
    """Timestamp(0, 0) stays as written (mongomock put the current time there on every run)."""
    client = Embedded()
    client.seed("d", "c").add({"_id": 1, "t": Timestamp(0, 0)})
    (raw,) = client["d"]["c"].find({})
    assert bson.decode(raw.raw)["t"] == Timestamp(0, 0)


def test_a_sync_over_the_embedded_database_never_imports_mongomock(tmp_path: Path) -> None:
    """Reading the seeded documents, the catalog library and the status records of the embedded
    database imports neither mongomock nor pymongo (start-up cost every run would pay)."""
    (tmp_path / "docs.json").write_text(json_util.dumps(example_docs()))
    script = ("import sys\nfrom trinogen.settings import MongoSettings\n"
              "from trinogen.source import connect\n"
              f"s = connect(MongoSettings(uri='mongomock://', seed_dir={str(tmp_path)!r}))\n"
              "print(len(s.read_all()), len(s.read_catalogs()), s.read_status(), "
              "s.write_status({'a': {}}), 'mongomock' in sys.modules, 'pymongo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)}).stdout
    assert out.split() == [str(len(example_docs())), "0", "{}", "0", "False", "False"]


def test_other_collections_are_mongomock_ones() -> None:
    """A collection nobody seeded (the watch lease in the tests) is a working mongomock one."""
    source = connect(MongoSettings(uri="mongomock://"))
    source.state.insert_one({"_id": "lease", "owner": "me"})
    assert source.state.find_one({"_id": "lease"}) == {"_id": "lease", "owner": "me"}
    assert source.read_all() == [] and source.read_status() == {}


def test_doc_key_fast_paths_write_what_json_util_writes() -> None:
    """ObjectId and string _ids are written down as canonical Extended JSON writes them."""
    for _id in (ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), "a", 'q"\\é\u2028\x00', ""):
        assert bsonread.doc_key(_id) == json_util.dumps(
            _id, json_options=json_util.CANONICAL_JSON_OPTIONS)
    assert doc_key is bsonread.doc_key


def test_the_id_comes_first_as_mongodb_stores_it() -> None:
    """A seed document with `_id` after other keys reads back with `_id` first (MongoDB and BSON
    put it there; mongomock kept the file's order); the other keys keep theirs, the digest too."""
    doc = {"clusterId": "a", "_id": "x", "owner": "o"}
    (theirs,), _ = mongomock_reads([doc])
    (ours,), _ = embedded_reads([doc])
    assert list(ours.body) == ["_id", "clusterId", "owner"]
    assert ours.body == theirs.body and ours.digest == theirs.digest


GOOD_X = '[{"_id": "x", "clusterId": "x"}]'
HALFWAY = [
    # (b.json's text, the _ids kept, the refusals' beginnings in order, every file read)
    ('[{"_id": "a", "clusterId": "a"}, {"_id": "a", "clusterId": "dup"}, '
     + '{"_id": "b", "clusterId": "b", "v": {"$numberDecimal": "abc"}}, {"_id": "c", "clusterId": "c"}]',
     ["x", "a", "c"], ["seed file b.json item 2: has malformed Extended JSON",
                       "seed file b.json item 1: MongoDB would refuse this document (DuplicateKeyError"],
     True),
    ('[{"_id": "a", "clusterId": "a"}, {"_id": "c"', ["x"],
     ["seed file b.json: cannot be read as Extended JSON"], False),
    ('[{"_id": "a", "clusterId": "a"}] [', ["x"], ["seed file b.json: cannot be read as Extended JSON"],
     False),
    ('[{"_id": "a", "clusterId": "a"},]', ["x"], ["seed file b.json: cannot be read as Extended JSON"],
     False),
]


@pytest.mark.parametrize(("text", "kept", "refusals", "complete"), HALFWAY, ids=range(len(HALFWAY)))
def test_a_seed_file_malformed_halfway_is_read_again_from_a_clean_state(
        tmp_path: Path, text: str, kept: list[str], refusals: list[str], complete: bool) -> None:
    """A seed array that turns out malformed after some of its documents were kept is read again
    item by item as if never begun: each good document once, none of a file that cannot be read,
    no duplicate _id refused that the file does not hold twice; earlier files stay."""
    from trinogen.embedded import seeded

    (tmp_path / "a.json").write_text(GOOD_X)
    (tmp_path / "b.json").write_text(text)
    db = seeded(MongoSettings(uri="mongomock://", seed_dir=str(tmp_path)))
    coll = db.client.seed(SETTINGS.database, SETTINGS.collection)
    assert [bson.decode(r.raw)["_id"] for r in coll.find({})] == kept
    by_cluster = coll.find({"clusterId": {"$in": ["a", "c", "x"]}})
    assert [bson.decode(r.raw)["_id"] for r in by_cluster] == kept
    assert len(db.refused) == len(refusals)
    assert all((r.unreadable or "").startswith(start) for r, start in zip(db.refused, refusals))
    assert db.complete is complete
