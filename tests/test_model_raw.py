"""model.raw: what a raw document says before validation (depth limit, refused, disabled)."""

from __future__ import annotations

from typing import Any

import pytest

from trinogen.model import Disabled, Failed, RawDocument, classify, settled
from trinogen.model.raw import nests_deeper
from trinogen.model.rules import MAX_DEPTH
from trinogen.settings import load_settings


def _depth(value: Any) -> int:
    """An independent reader: the levels of maps and lists around the deepest value (0: none)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=-1)
    if isinstance(value, (list, tuple)):
        return 1 + max(map(_depth, value), default=-1)
    return 0


def _nest(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(levels):
        value = {"k": value} if i % 2 else [value]
    return value


SHAPES = [
    1, "text", {}, [], {"a": 1}, [1, 2], {"a": {}}, {"a": []}, {"a": [[]]}, {"a": [[1]]},
    {"a": {"b": {"c": 1}}, "d": 2}, [{"a": [1, {"b": ()}]}], (1, (2, (3,))),
    _nest(3), _nest(4), _nest(5, leaf={}), _nest(5, leaf=[]),
    {"wide": list(range(50)), "deep": _nest(6)},
]


@pytest.mark.parametrize("value", SHAPES)
@pytest.mark.parametrize("limit", [-1, 0, 1, 2, 3, 4, 5, 6, 7])
def test_nests_deeper_agrees_with_a_recursive_reading(value: Any, limit: int) -> None:
    """True exactly when some value sits inside more than `limit` levels of maps and lists."""
    assert nests_deeper(value, limit) is (_depth(value) > limit)


def _raw(body: Any, doc_id: str = '"d1"', unreadable: str | None = None) -> RawDocument:
    return RawDocument(doc_id, body, unreadable)


@pytest.mark.parametrize(("raw", "outcome"), [
    (_raw({"clusterId": "a", "enabled": False}), Disabled),
    (_raw({"clusterId": "a", "enabled": True}), None),
    (_raw({"clusterId": "a"}), None),
    (_raw(["not", "an", "object"]), Failed),
    (_raw({"clusterId": "a", "enabled": False, "x": _nest(MAX_DEPTH + 1)}), Failed),
    (_raw({"clusterId": "a", "enabled": False}, doc_id='"' + "x" * 5000 + '"'), Failed),
    (_raw({"clusterId": "a"}, unreadable="cannot be decoded"), Failed),
])
def test_settled_decides_only_what_needs_no_validation(raw: RawDocument, outcome: Any) -> None:
    """Refused documents fail before their `enabled` counts; a disabled one is settled; the rest
    are left to the validator, which agrees with every settled outcome."""
    got = settled(raw)
    assert (None if got is None else type(got)) is outcome
    if got is not None:
        assert classify(raw, load_settings(environ={})) == got


def test_a_huge_id_labels_a_document_by_its_start() -> None:
    """Messages name a document with an over-long _id by its first 100 characters."""
    from trinogen.model import document_label

    raw = RawDocument('"' + "x" * 1_000_000 + '"', {"clusterId": 7})
    assert document_label(raw) == '_id="' + "x" * 99 + "..."
