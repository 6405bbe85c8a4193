"""trinogen.bsonread: documents measured before they are decoded (issue 19)."""

from __future__ import annotations

import datetime
from typing import Any

import bson
import pytest
from bson import Binary, Decimal128, Int64, ObjectId
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from trinogen import bsonread

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
