"""trinogen.model.checker: typed reads of untrusted values, field paths and name suggestions."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest
from bson import Binary, Code, Decimal128, ObjectId

from trinogen.model.checker import (
    Checker,
    closest,
    field_path,
    property_key_ok,
    text_ok,
    type_name,
)

ROLE_FIELDS = {"replicas", "resources", "jvm", "properties"}


@pytest.mark.parametrize(("key", "known", "expected"), [
    ("replica", ROLE_FIELDS, "replicas"),          # a letter missing
    ("resorces", ROLE_FIELDS, "resources"),
    ("jmv", {"jvm", "properties"}, None),         # a swap in a 3-letter name is too far (0.67)
    ("propertys", ROLE_FIELDS, "properties"),
    ("clusterid", {"clusterId", "owner"}, "clusterId"),  # case differs
    ("image", ROLE_FIELDS, None),                  # nothing close
    ("x" * 101, {"x" * 101}, None),               # huge keys get no suggestion (difflib is slow)
])
def test_closest_suggests_a_near_name_only(key: str, known: set[str], expected: str | None) -> None:
    """A misspelt key gets the known name it most likely meant, and only a close one."""
    assert closest(key, known) == expected


def test_unknown_field_message_carries_the_suggestion() -> None:
    """An unknown key is an error naming the field and, when close, the likely name."""
    c = Checker("demo", "error")
    c.fields({"replica": 3, "image": "x"}, "clusterConfig.worker", ROLE_FIELDS)
    assert [(p.field, p.message) for p in c.problems] == [
        ("clusterConfig.worker.replica",
         "unknown field (did you mean replicas?); remove it or correct its name"),
        ("clusterConfig.worker.image", "unknown field; remove it or correct its name"),
    ]


def test_unknown_fields_warn_but_reserved_fields_still_fail() -> None:
    """With unknown_fields=warn a typo is a warning; a field reserved for the platform is not."""
    c = Checker("demo", "warn")
    c.fields({"replica": 3, "namespace": "x"}, "", {"replicas"})
    assert [p.field for p in c.warnings] == ["replica"]
    assert [p.field for p in c.problems] == ["namespace"]
    assert c.problems[0].message.startswith("may not be set: ")


@pytest.mark.parametrize(("value", "expected"), [
    (None, "null"),
    (True, "a boolean"),
    (3, "an integer"),
    (2.5, "a number"),
    ("x", "a string"),
    ({}, "an object"),
    ([], "a list"),
    (b"x", "binary data"),
    (ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), "an ObjectId"),
    (datetime.datetime(2023, 10, 27), "a date"),
    (Binary(b"x", 5), "binary data"),
    (Code("function() {}"), "JavaScript code"),   # a str subclass, but not text
    (Decimal128("1.5"), "Decimal128"),
])
def test_type_names_speak_the_document_authors_language(value: Any, expected: str) -> None:
    """Types are named as a MongoDB user knows them, BSON types included."""
    assert type_name(value) == expected


@pytest.mark.parametrize(("base", "parts", "expected"), [
    ("", ("clusterId",), "clusterId"),
    ("clusterConfig", ("worker", "jvm"), "clusterConfig.worker.jvm"),
    ("connectors", (3, "name"), "connectors[3].name"),
    ("properties", ("query", "max-memory"), "properties.query.max-memory"),
    ("properties", ("a.b",), 'properties["a.b"]'),            # a dot would be ambiguous
    ("x", ("has space",), 'x["has space"]'),
    ("x", ("k" * 81,), 'x["' + "k" * 60 + '"...]'),           # long keys are cut
])
def test_field_paths(base: str, parts: tuple[str | int, ...], expected: str) -> None:
    """Simple keys join with dots, odd keys are quoted, indexes are bracketed."""
    assert field_path(base, *parts) == expected


@pytest.mark.parametrize(("text", "ok"), [
    ("plain", True), ("tab\tis fine", True), ("ünïcode", True),
    ("a\nb", False), ("a\rb", False), ("a\x00b", False), ("lone \ud800", False),
])
def test_text_ok(text: str, ok: bool) -> None:
    """Line breaks, NUL and lone surrogates cannot be a Trino property value."""
    assert text_ok(text) is ok


@pytest.mark.parametrize(("key", "ok"), [
    ("query.max-memory", True), ("ünïcode", True), ("k" * 256, True), ("", False),
    ("a b", False), ("a\tb", False), ("a\nb", False), ("a\x1fb", False), ("a\u2028b", False),
    ("lone\ud800", False), ("k" * 257, False),
])
def test_property_key_ok(key: str, ok: bool) -> None:
    """A property name is a run of printable non-space characters a UTF-8 file holds, <= 256."""
    assert property_key_ok(key) is ok


@pytest.mark.parametrize(("value", "expected", "message"), [
    (5, 5, None),
    (5.0, 5, None),                    # a whole float is an integer (JSON has only numbers)
    (1, 1, None),                      # the minimum itself
    (1000, 1000, None),                # the maximum itself
    (0, None, "is 0; it must be at least 1"),
    (1001, None, "is 1001; it must be at most 1000"),
    (2.5, None, "must be a whole number, not 2.5"),
    (float("nan"), None, "must be a whole number, not NaN/Infinity"),
    (True, None, "must be a whole number, not a boolean"),
    ("5", None, 'must be a whole number, not "5"'),
    (2**63, None, "too large for MongoDB's 64-bit integers"),
    (None, None, "is required"),
])
def test_integer_reads(value: Any, expected: int | None, message: str | None) -> None:
    """Integers are whole numbers within the bounds, each failure a message on the path."""
    c = Checker("demo", "error")
    assert c.integer(value, "n", minimum=1, maximum=1000) == expected
    _one_problem_like(c, message)


@pytest.mark.parametrize(("value", "message"), [
    ("ok", None),
    ("x" * 10, None),                  # exactly max_len
    ("x" * 11, "is 11 characters long; at most 10 are allowed"),
    ("A", '"A" is not valid: lowercase'),
    ("a\nb", "contains a newline"),
    (Code("x"), "must be a string, not JavaScript code"),
    (7, "must be a string, not an integer"),
])
def test_string_reads(value: Any, message: str | None) -> None:
    """Strings are plain str, printable on one line, within max_len and the pattern."""
    c = Checker("demo", "error")
    got = c.string(value, "s", pattern=re.compile("[a-z]+"), rule="lowercase", max_len=10)
    assert got == (value if message is None else None)
    _one_problem_like(c, message)


def _one_problem_like(c: Checker, message: str | None) -> None:
    messages = [p.message for p in c.problems]
    if message is None:
        assert messages == []
    else:
        assert len(messages) == 1 and message in messages[0], messages


def test_optional_values_may_be_missing() -> None:
    """required=False turns a missing value into None without a problem."""
    c = Checker("demo", "error")
    assert c.string(None, "a", required=False) is None
    assert c.integer(None, "b", required=False) is None
    assert c.mapping(None, "c", required=False) is None
    assert c.boolean(None, "d", required=False) is None
    assert c.problems == []


def test_mapping_refuses_non_string_keys() -> None:
    """A map with a non-string key (possible in YAML and BSON) is refused as a whole."""
    c = Checker("demo", "error")
    assert c.mapping({1: "x"}, "m") is None
    assert c.problems[0].message == "has keys that are not strings"


# --- what one document may cost (issue 19) --------------------------------------------------------


def _unknown_keys(n: int) -> dict[str, int]:
    return {f"x{i:05d}": 1 for i in range(n)}


@pytest.mark.parametrize(("found", "limit", "listed", "last"), [
    (3, 5, 3, "unknown field; remove it or correct its name"),          # under the cap: all
    (5, 5, 5, "unknown field; remove it or correct its name"),          # exactly the cap
    (6, 5, 6, ("... and 1 more problems (at most 5 are listed per document: "
               "validation.max_problems); fix these and validate again")),
    (60, 50, 51, ("... and 10 more problems (at most 50 are listed per document: "
                  "validation.max_problems); fix these and validate again")),
])
def test_problems_beyond_the_cap_are_counted_not_listed(found: int, limit: int, listed: int,
                                                        last: str) -> None:
    """The first max_problems problems are kept, then one more saying how many were left out."""
    c = Checker("demo", "error", limit)
    c.fields(_unknown_keys(found), "", set())
    problems = c.listed()
    assert len(problems) == listed and problems[-1].message == last
    assert problems[-1].cluster == "demo"  # the summary names the cluster too
    assert c.count == found


def test_the_walk_stops_at_a_hundred_times_the_cap() -> None:
    """A document of 300,000 mistakes stops the walk at 100 x max_problems: its cost is bounded."""
    c = Checker("demo", "error", 10)
    assert c.run(lambda: c.fields(_unknown_keys(300_000), "", set())) is None
    assert c.stopped and c.count == 1000 and len(c.problems) == 10
    assert c.listed()[-1].message.startswith("... and at least 990 more problems: validation "
                                             "stopped there")


def test_a_repeated_problem_counts_once() -> None:
    """The same field and message twice is one problem, listed or counted."""
    c = Checker("demo", "error", 1)
    for _ in range(3):
        c.error("a", "is wrong")
        c.error("b", "is wrong")
    assert c.count == 2 and c.listed()[-1].message.startswith("... and 1 more problems")


def test_warnings_beyond_the_cap_are_counted_and_the_walk_goes_on() -> None:
    """Warnings are capped alike; they never stop the walk (a later error must still be found)."""
    c = Checker("demo", "warn", 5)
    c.fields(_unknown_keys(20_000), "", set())
    c.error("clusterId", "is required")
    warnings = c.listed_warnings()
    assert len(warnings) == 6 and warnings[-1].message == (
        "... and 19,995 more warnings (at most 5 are listed per document: validation.max_problems)")
    assert [p.field for p in c.listed()] == ["clusterId"]


def test_no_suggestion_is_computed_for_an_unlisted_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cap, an unknown key costs no difflib search (its message is never shown)."""
    from trinogen.model import checker

    calls: list[str] = []
    monkeypatch.setattr(checker, "closest", lambda key, known: calls.append(key))
    c = Checker("demo", "error", 2)
    c.fields(_unknown_keys(10), "", {"replicas"})
    assert calls == ["x00000", "x00001"]


def test_rules_still_fail_when_their_problems_are_past_the_cap() -> None:
    """A reader that tells its own failure by the problems it added still sees unlisted ones."""
    from trinogen.model.access_rules import check_rules

    c = Checker("demo", "error", 1)
    c.error("owner", "is required")  # the cap is reached before the rules are read
    assert check_rules({"catalogs": [{"allow": "everything"}]}, "accessControl.rules", c) is None
    assert c.count == 2


def test_problems_made_after_validation_are_capped_alike() -> None:
    """The secrets stage's problems (one per failing placeholder) are listed up to the cap too."""
    from trinogen.errors import Problem
    from trinogen.model.checker import capped

    problems = [Problem("a", f"connectors[{i}]", "Vault has no secret") for i in range(7)]
    assert capped(problems, 7) == tuple(problems)
    out = capped(problems, 5)
    assert out[:5] == tuple(problems[:5]) and out[5] == Problem("a", "", (
        "... and 2 more problems (at most 5 are listed per document: validation.max_problems); "
        "fix these and validate again"))
