"""trinogen.bsonread: documents measured before they are decoded (issue 19)."""

from __future__ import annotations

import datetime
import hashlib
import pickle
from typing import Any

import bson
import pytest
from bson import Binary, Decimal128, Int64, ObjectId
from bson.codec_options import CodecOptions
from bson.datetime_ms import DatetimeMS
from bson.raw_bson import RawBSONDocument

from trinogen import bsonread
from trinogen.model import HEAD_FIELDS, RawDocument, enabled_claims
from trinogen.model.library import references

OPTIONS: CodecOptions[Any] = CodecOptions(tz_aware=True)


@pytest.mark.parametrize("_id", [
    "a-string", "", ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), 7, Int64(2**40), 1.5, True, None,
    Decimal128("1.25"), Binary(b"\x00\x01", 4), {"tenant": "a", "n": [1, 2]},
    datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
])
def test_the_id_is_read_from_the_first_element_alone(_id: Any) -> None:
    """Every type an _id may have is decoded from the first element, as bson decodes it."""
    raw = bson.encode({"_id": _id, "rest": ["x" * 1000] * 10})
    assert repr(bsonread.first_id(raw, OPTIONS)) == repr(bson.decode(raw, OPTIONS)["_id"])


@pytest.mark.parametrize("raw", [
    bson.encode({"clusterId": "a", "x": 1}),    # no _id at all (never so from MongoDB)
    b"\x10\x00\x00\x00\x02_id\x00\xff\xff\xff\x7f\x00\x00",  # a length past the end
    b"\x05\x00\x00\x00\x00",                  # empty
])
def test_no_id_where_none_can_be_read(raw: bytes) -> None:
    """A document without a readable first _id is said to have none (it is never guessed)."""
    assert bsonread.first_id(raw, OPTIONS) is bsonread._NO_ID


def test_a_large_raw_document_is_measured_and_not_decoded() -> None:
    """Over the limit only the _id is read; under it the document is decoded whole."""
    raw = RawBSONDocument(bson.encode({"_id": "big", "clusterId": "a", "pad": "x" * 5000}))
    big = bsonread.read(raw, 4096, OPTIONS)
    assert big.body is None and big.id == "big" and big.size == len(raw.raw)
    assert big.refused is not None and big.refused.startswith(f"is {len(raw.raw):,} bytes as BSON")
    small = bsonread.read(raw, 10_000, OPTIONS)
    assert small.body == {"_id": "big", "clusterId": "a", "pad": "x" * 5000}


def test_a_decoded_document_is_measured_by_encoding_it() -> None:
    """mongomock's dicts are measured as BSON too; what bson cannot encode is not refused."""
    assert bsonread.read({"_id": 1, "pad": "x" * 5000}, 4096, OPTIONS).body is None
    assert bsonread.read({"_id": 1, "odd": object()}, 4096, OPTIONS).size is None


def test_elements_split_every_bson_type() -> None:
    """Each top-level element is found with its key and its exact bytes, for every BSON type."""
    from bson import DBRef, MaxKey, MinKey, Regex, Timestamp
    from bson.code import Code

    values = {"_id": ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), "double": 1.5, "string": "é",
              "doc": {"a": [1]}, "array": [1, "x"], "binary": Binary(b"\x00\x01", 4),
              "oid": ObjectId(), "bool": True, "date": datetime.datetime(2024, 1, 1),
              "null": None, "regex": Regex("a.*", "im"), "code": Code("x"),
              "scope": Code("x", {"a": 1}), "int32": 7, "timestamp": Timestamp(1, 2),
              "int64": Int64(2**40), "decimal": Decimal128("1.25"), "min": MinKey(),
              "max": MaxKey(), "ref": DBRef("c", 1)}
    raw = bson.encode(values)
    found = list(bsonread.elements(raw))
    assert [key for key, _, _ in found] == list(values)
    for key, start, end in found:
        alone = bson.decode((end - start + 5).to_bytes(4, "little") + raw[start:end] + b"\x00")
        assert alone == {key: values[key]}
    # the two types bson writes only from raw bytes: undefined (0x06) and a DBPointer (0x0C)
    undefined = b"\x06u\x00"
    pointer = b"\x0cp\x00" + (2).to_bytes(4, "little") + b"c\x00" + bytes(12)
    body = undefined + pointer
    raw = (len(body) + 5).to_bytes(4, "little") + body + b"\x00"
    assert [(k, raw[s:e]) for k, s, e in bsonread.elements(raw)] == [("u", undefined),
                                                                     ("p", pointer)]


def test_documents_read_share_their_keys_and_keep_their_values() -> None:
    """Two documents of one read share each key's string, nested ones too (issue 22's
    memory), and decode to exactly what bson.decode gives: values, types and key order."""
    doc = {"_id": ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), "clusterId": "a",
           "catalogs": [{"name": "hive", "properties": {"hive.metastore.uri": "thrift://m"}}],
           "size": Int64(2**40), "when": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)}
    raw = bson.encode(doc)
    keys: dict[str, str] = {}
    first, second = (bsonread.read(RawBSONDocument(raw), 10_000, OPTIONS, keys).body
                     for _ in "ab")
    assert first is not None and second is not None
    decoded = bson.decode(raw, OPTIONS)
    assert first == decoded and list(first) == list(decoded)
    assert repr(first) == repr(decoded)  # Int64 stays Int64, the datetime aware
    key = next(k for k in second["catalogs"][0]["properties"])
    assert key is next(k for k in first["catalogs"][0]["properties"])
    assert next(iter(second)) is next(iter(first))


def test_documents_read_share_their_string_values_in_dicts_and_lists() -> None:
    """Equal string values of two documents of one read are one string (issue 22's memory),
    in nested dicts and in lists alike; other values and unequal strings are left as they are."""
    doc = {"_id": 1, "trinoVersion": "476", "tags": ["a-tag", 7, "b-tag"],
           "catalogs": [{"name": "hive", "properties": {"hive.metastore.uri": "thrift://m"}}]}
    raw = bson.encode(doc)
    keys: dict[str, str] = {}
    first, second = (bsonread.read(RawBSONDocument(raw), 10_000, OPTIONS, keys).body
                     for _ in "ab")
    assert first is not None and second is not None
    assert first == second == bson.decode(raw, OPTIONS)
    assert second["trinoVersion"] is first["trinoVersion"]
    assert second["tags"][0] is first["tags"][0] and second["tags"][2] is first["tags"][2]
    uri = [d["catalogs"][0]["properties"]["hive.metastore.uri"] for d in (first, second)]
    assert uri[1] is uri[0] and uri[0] == "thrift://m"
    other = bsonread.read(RawBSONDocument(bson.encode({"_id": 2, "trinoVersion": "475"})),
                          10_000, OPTIONS, keys).body
    assert other is not None and other["trinoVersion"] == "475"


def test_a_document_nested_too_deep_to_share_is_read_as_decoded() -> None:
    """Sharing keys never fails a read: a document nested past Python's recursion limit is
    handed over as bson decoded it."""
    depth = 800  # bson decodes it (its limit: the recursion limit); sharing recurses twice a level
    nested = b"\x05\x00\x00\x00\x00"
    for _ in range(depth):  # written by hand: bson.encode itself recurses
        element = b"\x03d\x00" + nested
        nested = (len(element) + 5).to_bytes(4, "little") + element + b"\x00"
    element = b"\x10_id\x00\x01\x00\x00\x00\x03deep\x00" + nested
    raw = (len(element) + 5).to_bytes(4, "little") + element + b"\x00"
    read = bsonread.read(RawBSONDocument(raw), 10**6, OPTIONS, {})
    assert read.refused is None and read.body is not None and read.body["_id"] == 1
    inner = read.body["deep"]
    for _ in range(depth):
        inner = inner["d"]
    assert inner == {}


# --- read lazily (issue 22): what a document answers undecoded equals the eager decode ------

def _lazy(raw: bytes, keys: dict[str, str] | None = None) -> RawDocument:
    """A document as `trinogen.source` builds one from a lazy read of these bytes."""
    read = bsonread.read(RawBSONDocument(raw), 10**8, OPTIONS, {} if keys is None else keys,
                         lazy=True)
    assert read.undecoded is not None
    return RawDocument(bsonread.doc_key(read.id), digest=read.digest, undecoded=read.undecoded)


def _readable_docs() -> list[tuple[str, dict[str, Any]]]:
    from tests.conftest import example_docs
    from tests.hostile_corpus import corpus
    from tests.kitchen_sink import document as kitchen_sink

    docs = [("kitchen-sink", kitchen_sink()), *((f"example-{i}", d)
                                              for i, d in enumerate(example_docs()))]
    return docs + [(f"hostile-{c.name}", c.doc) for c in corpus() if not c.big]


@pytest.mark.parametrize(("name", "doc"), _readable_docs(), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_a_lazy_document_answers_what_bson_decodes(name: str, doc: dict[str, Any]) -> None:
    """Undecoded, a document's head holds exactly bson.decode's values (types, order) for the
    head fields it has, and none else (`connectors` only as far as the shared catalogs it names
    go); its body, once asked for, is bson.decode's."""
    raw = bson.encode(doc)
    decoded = bson.decode(raw, OPTIONS)
    lazy = _lazy(raw)
    head = {k: v for k, v in lazy.head.items() if k != "connectors"}
    assert repr(head) == repr({k: v for k, v in decoded.items()
                               if k in HEAD_FIELDS and k != "connectors"})
    assert references(lazy.head, {}, {}) == references(decoded, {}, {})
    if "connectors" in lazy.head:
        assert repr(lazy.head["connectors"]) == repr(decoded["connectors"])
    assert lazy.doc_id == bsonread.doc_key(decoded["_id"]) and lazy.unread is None
    assert lazy.digest == hashlib.sha256(raw).digest()
    assert repr(lazy.body) == repr(decoded) and lazy.unreadable is None
    assert lazy.head is lazy.body  # decoded: the head is the body


@pytest.mark.parametrize("connectors", [
    [{"shared": "lake"}], [{"name": "a"}, {"shared": "lake", "properties": {"x": "1"}}],
    [{"shared": 7}], [{"name": "a", "properties": {"shared": "not-a-reference"}}],
    [{"shared": 1, "shared2": "x"}], "shared", [], None,
])
def test_the_head_names_the_shared_catalogs_the_document_names(connectors: Any) -> None:
    """Whatever `connectors` holds, the shared catalogs read from the head are those read from
    the decoded document (the render cache keys a document with them)."""
    raw = bson.encode({"_id": 1, "clusterId": "a", "connectors": connectors})
    assert references(_lazy(raw).head, {}, {}) == references(bson.decode(raw, OPTIONS), {}, {})


def test_the_body_of_lazy_documents_shares_keys_as_an_eager_read() -> None:
    """Decoded when asked, two documents of one read share their keys' strings."""
    keys: dict[str, str] = {}
    raw = bson.encode({"_id": 1, "clusterId": "a", "catalogs": [{"properties": {"k.x": "v"}}]})
    first, second = _lazy(raw, keys), _lazy(raw, keys)
    key = next(iter(second.body["catalogs"][0]["properties"]))
    assert key is next(iter(first.body["catalogs"][0]["properties"]))


FAR = DatetimeMS(2**62)  # valid BSON; no Python datetime holds it


@pytest.mark.parametrize("doc", [
    {"_id": "x", "clusterId": "cid-a", "enabled": True, "since": FAR},
    {"_id": "x", "clusterId": "cid-a", "connectors": [{"name": "c", "at": {"when": 1}}],
     "props": {"since": FAR}},
    {"_id": ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), "clusterId": "c" * 5000, "since": FAR},
    {"_id": 7, "since": FAR},
    {"_id": 7, "clusterId": "cid-a", "\u00ff": 1},  # its key made not UTF-8 below
])
def test_a_value_that_cannot_be_decoded_refuses_the_document_as_an_eager_read(
        doc: dict[str, Any]) -> None:
    """A value Python cannot decode outside the head is found when the body is asked for: the
    document is then unreadable with bson's own error, named by its _id and its clusterId (as
    the identity query reads it: text, at most IDENTITY_BYTES), as an eager read refuses it."""
    raw = bson.encode(doc).replace(b"\xc3\xbf\x00", b"\xff\xfe\x00")  # ÿ: a key not UTF-8
    with pytest.raises(Exception) as error:  # whatever bson raises names the refusal
        bson.decode(raw, OPTIONS)
    lazy = _lazy(raw)
    assert lazy.head["_id"] == doc["_id"] and lazy.unread is None
    small = bson.encode({k: doc[k] for k in ("_id", "clusterId") if k in doc})
    named = {"_id": doc["_id"]} | (
        {"clusterId": doc["clusterId"]} if "clusterId" in doc and len(small) <= 4096 else {})
    assert lazy.unreadable == (f"the document cannot be decoded ({type(error.value).__name__}: "
                               f"{str(error.value)[:200]}); correct the value in MongoDB")
    assert lazy.body == named and lazy.head == named
    eager = bsonread.read(RawBSONDocument(raw), 10**8, OPTIONS, {})
    assert eager.undecoded is None and eager.refused is not None
    assert lazy.unreadable == f"the document {eager.refused}"


def _bytes(*elements: tuple[str, Any]) -> bytes:
    """A BSON document of these elements in this order (bson.encode moves `_id` first)."""
    body = b"".join(bson.encode({k: v})[4:-1] for k, v in elements)
    return (len(body) + 5).to_bytes(4, "little") + body + b"\x00"


@pytest.mark.parametrize("raw", [
    _bytes(("clusterId", "a"), ("_id", 1)),  # _id not first
    _bytes(("clusterId", "a")),  # no _id
    _bytes(("_id", 1), ("clusterId", "a"), ("_id", 2)),  # _id twice
    _bytes(("_id", 1), ("stopped", FAR)),  # a head field cannot be decoded
    _bytes(("_id", 1), ("owner", "o"))[:-3] + b"\xff\x00\x00",  # a head value not UTF-8
    _bytes(("_id", 1), ("x", "ab")).replace(b"x\x00\x03", b"x\x00\x09"),  # past the end
])
def test_a_document_whose_head_cannot_be_read_alone_is_read_eagerly(raw: bytes) -> None:
    """When the head is not plainly there (its _id first and once, every head field decodable),
    the document is read as ever: decoded now, or refused now with the eager read's reason."""
    eager = bsonread.read(RawBSONDocument(raw), 10**8, OPTIONS, {})
    read = bsonread.read(RawBSONDocument(raw), 10**8, OPTIONS, {}, lazy=True)
    assert read.undecoded is None
    assert (read.body, read.refused, read.id if read.identified else None) == (
        eager.body, eager.refused, eager.id if eager.identified else None)


def test_a_lazy_document_pickles_as_its_decoded_form() -> None:
    """Pickled (a worker's result, a test's copy), a document travels decoded and compares equal."""
    lazy = _lazy(bson.encode({"_id": "a", "clusterId": "a", "x": [1, {"y": 2}]}))
    copy = pickle.loads(pickle.dumps(lazy))
    assert copy == lazy and copy.body == {"_id": "a", "clusterId": "a", "x": [1, {"y": 2}]}
    assert copy.digest == lazy.digest


@pytest.mark.parametrize(("first", "claims"), [
    ({"_id": "a", "clusterId": "x", "enabled": False, "since": FAR}, {"x": [0, 1]}),
    ({"_id": "a", "clusterId": "x", "enabled": False}, {"x": [1]}),
    ({"_id": "a", "clusterId": "x", "since": FAR}, {"x": [0, 1]}),
])
def test_a_clusterid_two_documents_name_is_claimed_as_their_decoded_bodies_say(
        first: dict[str, Any], claims: dict[str, list[int]]) -> None:
    """Who claims a clusterId named twice is judged on the decoded documents: one that cannot
    be decoded is refused named by its _id and clusterId and claims it (an eager read's refusal
    keeps no `enabled`), whatever its undecoded `enabled` says."""
    raws = [_lazy(bson.encode(first)), _lazy(bson.encode({"_id": "b", "clusterId": "x"}))]
    assert enabled_claims(raws) == claims
