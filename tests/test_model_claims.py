"""The first create wins: several documents claiming one clusterId (issue 19, finding 5)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import demo_settings
from trinogen.model import Cluster, Disabled, Failed, Outcome, RawDocument, classify_all
from trinogen.model.claims import keeper

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
