"""The first create wins: several documents claiming one clusterId (issue 19, finding 5)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import demo_settings
from trinogen.model import Cluster, Disabled, Failed, Outcome, RawDocument, classify_all
from trinogen.model.claims import keeper
from trinogen.model.library import Library, contested_names, parse_library

SETTINGS = demo_settings()


def _raw(doc_id: str, cluster_id: str = "shared", **more: Any) -> RawDocument:
    body: dict[str, Any] = {"clusterId": cluster_id, "owner": "team", "enabled": True, **more}
    return RawDocument(f'"{doc_id}"', body)


def _kinds(outcomes: list[Outcome]) -> list[str]:
    return [type(o).__name__ for o in outcomes]


@pytest.mark.parametrize(("claimants", "held", "kept"), [
    (["a", "b"], {"a"}, "a"),
    (["a", "b"], {"b"}, "b"),
    (["a", "b", "c"], {"c"}, "c"),
    (["a", "b"], set(), None),  # held for none of them
    (["a", "b"], {"z"}, None),  # held for a document that is gone
    (["a", "b"], {"a", "b"}, None),  # the repository names both: it cannot tell
])
def test_the_held_claimant_keeps_the_name(claimants: list[str], held: set[str],
                                          kept: str | None) -> None:
    """Of several claimants, the one the repository holds keeps the name; else none does."""
    assert keeper(claimants, held) == kept


def test_the_held_document_renders_and_the_newcomer_fails_naming_it() -> None:
    """The document the repository holds the cluster for renders as if alone; the newcomer
    fails on its clusterId naming the holder, and its failure is not the cluster's."""
    a, b = _raw("a"), _raw("b")
    out = classify_all([a, b], SETTINGS, held={"shared": '"a"'})
    assert _kinds(out) == ["Cluster", "Failed"]
    newcomer = out[1]
    assert isinstance(newcomer, Failed) and newcomer.cluster_id is None
    assert [p.field for p in newcomer.problems] == ["clusterId"]
    assert 'belongs to the document _id "a"' in newcomer.problems[0].message
    # the same, whichever order the source returns them in
    assert _kinds(classify_all([b, a], SETTINGS, held={"shared": '"a"'})) == ["Failed", "Cluster"]


def test_the_holder_keeps_the_cluster_while_its_own_edit_is_invalid() -> None:
    """A held document that fails on its own fails with its own problems only; the newcomer
    still fails naming it (it cannot take the cluster over while its owner fixes an edit)."""
    out = classify_all([_raw("a", trinoVersion="latest"), _raw("b")], SETTINGS,
                       held={"shared": '"a"'})
    assert _kinds(out) == ["Failed", "Failed"]
    holder, newcomer = out
    assert isinstance(holder, Failed) and holder.cluster_id == "shared"
    assert [p.field for p in holder.problems] == ["trinoVersion"]
    assert isinstance(newcomer, Failed) and "belongs to the document" in newcomer.problems[0].message


@pytest.mark.parametrize(("held", "needle"), [
    ({}, "holds cluster shared for none of them"),
    ({"shared": '"gone"'}, "holds cluster shared for none of them"),
    ({"other": '"a"'}, "holds cluster shared for none of them"),
    (None, "validate and render do not read the repository"),
])
def test_without_a_held_claimant_every_claimant_fails(held: dict[str, str] | None,
                                                      needle: str) -> None:
    """Held for none of the claimants (or not read): all fail, naming every _id, as before."""
    out = classify_all([_raw("a"), _raw("b"), _raw("c", enabled=False)], SETTINGS, held=held)
    assert _kinds(out) == ["Failed", "Failed", "Disabled"]
    for o in out[:2]:
        assert isinstance(o, Failed) and o.cluster_id == "shared"
        message = o.problems[-1].message
        assert "used by 2 enabled documents" in message and '"a", "b"' in message
        assert needle in message


def test_three_claimants_two_newcomers() -> None:
    """Every newcomer fails naming the holder; the holder renders."""
    out = classify_all([_raw("a"), _raw("b"), _raw("c")], SETTINGS, held={"shared": '"b"'})
    assert _kinds(out) == ["Failed", "Cluster", "Failed"]


def test_a_disabled_holder_frees_the_name() -> None:
    """A disabled document claims nothing: a single enabled claimant takes the clusterId."""
    out = classify_all([_raw("a", enabled=False), _raw("b")], SETTINGS, held={"shared": '"a"'})
    assert isinstance(out[0], Disabled) and isinstance(out[1], Cluster)


# --- catalog names of the library (model.library applies the same rule) -----------------------

LAKE = {"_id": "cat-lake", "name": "lake-hive", "owner": "data_platform",
        "properties": {"connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083"}}
NEWCOMER = {**LAKE, "_id": "cat-evil", "owner": "intruder",
            "properties": {"connector.name": "hive", "hive.metastore.uri": "thrift://evil:9083"}}


def _library(*docs: dict[str, Any], held: dict[str, set[str]] | None) -> Library:
    return parse_library([RawDocument(f'"{d["_id"]}"', d) for d in docs], held=held)


def test_the_held_catalog_keeps_its_name_and_the_newcomer_fails() -> None:
    """The catalog the repository's copies record keeps the name for every user; the newcomer
    fails naming it, and does not even reach the users' render-cache keys."""
    lib = _library(LAKE, NEWCOMER, held={"lake-hive": {'"cat-lake"'}})
    assert lib.catalogs["lake-hive"].doc_id == '"cat-lake"' and not lib.broken
    assert [f.doc_id for f in lib.failed] == ['catalog:"cat-evil"']
    message = lib.failed[0].problems[-1].message
    assert 'belongs to the catalog document _id "cat-lake"' in message
    assert lib.sources["lake-hive"] == (LAKE,)
    # whichever order the collection returns them in
    again = _library(NEWCOMER, LAKE, held={"lake-hive": {'"cat-lake"'}})
    assert again.catalogs["lake-hive"].doc_id == '"cat-lake"'


def test_an_invalid_newcomer_does_not_break_the_held_name() -> None:
    """A newcomer that is itself invalid fails with its own problems and the name's; the held
    catalog stays usable (it used to make the name "invalid" for every user)."""
    broken = {"_id": "cat-evil", "name": "lake-hive", "owner": "intruder"}  # no properties
    lib = _library(LAKE, broken, held={"lake-hive": {'"cat-lake"'}})
    assert "lake-hive" in lib.catalogs and not lib.broken
    (failed,) = lib.failed
    assert [p.field for p in failed.problems] == ["properties", "name"]


def test_an_invalid_holder_keeps_the_name_while_it_is_fixed() -> None:
    """A held catalog that fails on its own makes the name unusable as any invalid catalog does,
    and the newcomer still fails naming it (it cannot take the name over meanwhile)."""
    invalid = {**LAKE, "properties": {"hive.metastore.uri": "thrift://hms:9083"}}
    lib = _library(invalid, NEWCOMER, held={"lake-hive": {'"cat-lake"'}})
    assert "lake-hive" not in lib.catalogs and "is invalid" in lib.broken["lake-hive"]
    assert sorted(f.doc_id for f in lib.failed) == ['catalog:"cat-evil"', 'catalog:"cat-lake"']


@pytest.mark.parametrize(("held", "needle"), [
    ({}, "holds it for none of them"),
    ({"lake-hive": {'"gone"'}}, "holds it for none of them"),
    ({"lake-hive": {'"cat-lake"', '"cat-evil"'}}, "holds it for none of them"),  # cannot tell
    (None, "validate and render do not read the repository"),
])
def test_a_catalog_name_held_for_none_is_unusable_for_all(held: dict[str, set[str]] | None,
                                                          needle: str) -> None:
    """Without exactly one held claimant, every claimant fails and the name is unusable."""
    lib = _library(LAKE, NEWCOMER, held=held)
    assert "lake-hive" not in lib.catalogs and "more than one" in lib.broken["lake-hive"]
    assert len(lib.failed) == 2 and all(needle in f.problems[-1].message for f in lib.failed)


@pytest.mark.parametrize(("names", "contested"), [
    (["a", "b"], set()),
    (["a", "b", "a"], {"a"}),
    (["a", "a", "b", "b", "c"], {"a", "b"}),
])
def test_contested_names_are_those_claimed_twice(names: list[str], contested: set[str]) -> None:
    """Only a name several catalog documents claim asks the repository who holds it."""
    raws = [RawDocument(f'"{i}"', {"name": n}) for i, n in enumerate(names)]
    assert contested_names(raws) == contested
