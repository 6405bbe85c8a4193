"""trinogen.targets: which documents a targeted run reads."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from tests.fakes import FakeRepo, FakeSource, header
from trinogen.errors import ConfigError
from trinogen.model import RawDocument
from trinogen.plan import Layout
from trinogen.targets import (
    Holdings,
    Targets,
    read_documents,
    recorded_documents,
    unknown_clusters,
)

LAYOUT = Layout("trino-clusters", "trino-applications")


def repo() -> FakeRepo:
    return FakeRepo({"trino-applications/a.yaml": header("a", '"d1"') + b"x\n",
                     "trino-applications/b.yaml": header("b", '"d2"') + b"x\n",
                     "trino-clusters/a/values.yaml": header("a", '"d1"') + b"y\n"})


def test_recorded_documents_come_from_the_application_files() -> None:
    """Each cluster's document _id is read from its Application file's header."""
    r = repo()
    assert recorded_documents(r.tree(LAYOUT), r, LAYOUT) == {"a": '"d1"', "b": '"d2"'}


def test_a_full_run_reads_everything() -> None:
    """No targets: one read of all documents, and no limit on the plan."""
    src = FakeSource({'"d1"': {"clusterId": "a"}})
    r = repo()
    assert read_documents(src, Targets(), r.tree(LAYOUT), r, LAYOUT) == (src.read_all(), None)


def test_a_changed_id_targets_the_cluster_recorded_with_it() -> None:
    """A watch batch's _id maps to the cluster whose files record it, even if the document is gone."""
    src = FakeSource({})
    r = repo()
    raws, clusters = read_documents(src, Targets(doc_ids=('"d2"',)), r.tree(LAYOUT), r, LAYOUT)
    assert raws == [] and clusters == {"b"}


def test_documents_claiming_the_same_cluster_are_read_too() -> None:
    """A targeted document's clusterId pulls in every other document claiming it (duplicates)."""
    src = FakeSource({'"d1"': {"clusterId": "a"}, '"d3"': {"clusterId": "c"},
                      '"d4"': {"clusterId": "c"}})
    r = repo()
    raws, clusters = read_documents(src, Targets(doc_ids=('"d3"',)), r.tree(LAYOUT), r, LAYOUT)
    assert sorted(x.doc_id for x in raws) == ['"d3"', '"d4"'] and clusters == {"c"}


@pytest.mark.parametrize(("requested", "docs", "recorded", "unknown"), [
    ((), {}, (), []),
    (("a",), {'"d1"': {"clusterId": "a"}}, (), []),
    (("a",), {}, ("a",), []),  # document gone, files in git: a prune, not a typo
    (("a", "zz", "b"), {'"d1"': {"clusterId": "a"}}, ("b",), ["zz"]),
    (("y", "x"), {}, (), ["x", "y"]),
])
def test_unknown_clusters(requested: tuple[str, ...], docs: dict[str, dict[str, str]],
                          recorded: tuple[str, ...], unknown: list[str]) -> None:
    """A requested cluster is unknown when no document claims it and git holds no such cluster."""
    raws = FakeSource(docs).read_all()
    assert unknown_clusters(requested, raws, recorded) == unknown


def test_a_targeted_run_refuses_an_unknown_cluster() -> None:
    """--cluster naming nothing is a usage error naming it, before any plan is made."""
    src = FakeSource({'"d1"': {"clusterId": "a"}})
    r = repo()
    with pytest.raises(ConfigError, match="--cluster typo: no document"):
        read_documents(src, Targets(clusters=("a", "typo")), r.tree(LAYOUT), r, LAYOUT)


# --- who holds a contested name (issue 19: the first create wins) -----------------------------


class CountingRepo(FakeRepo):
    """A FakeRepo that counts what it is asked to read."""

    asked = 0

    def heads(self, blobs: Iterable[str]) -> dict[str, bytes]:
        self.asked += 1
        return super().heads(blobs)

    def blobs(self, blobs: Iterable[str]) -> dict[str, bytes]:
        self.asked += 1
        return super().blobs(blobs)


def _raw(doc_id: str, cid: str, enabled: bool = True) -> RawDocument:
    return RawDocument(doc_id, {"clusterId": cid, "enabled": enabled})


def test_holdings_of_clusters_read_only_contested_ones() -> None:
    """Only a clusterId two enabled documents claim asks the repository, and gets the _id its
    Application file records; an ordinary run reads nothing."""
    r = CountingRepo(repo().files)
    held = Holdings(r.tree(LAYOUT), r, LAYOUT)
    assert held.clusters([_raw('"d1"', "a"), _raw('"d2"', "b")]) == {} and r.asked == 0
    assert held.clusters([_raw('"d1"', "a"), _raw('"x"', "a"), _raw('"y"', "b", False)]) == {
        "a": '"d1"'}


SHARED = b'# Shared catalog lake from trino.trino_catalogs, document _id: '


def test_holdings_of_catalogs_come_from_trinogens_own_copies() -> None:
    """A catalog name's holders are the library _ids trinogen's catalog copies record; a
    hand-written file (no header) with the same line is no record."""
    r = CountingRepo({
        "trino-clusters/a/catalog/hive.properties": header("a", '"d1"') + SHARED + b'"x"\n',
        "trino-clusters/b/catalog/lake.properties": header("b", '"d2"') + SHARED + b'"x"\n',
        "trino-clusters/c/catalog/own.properties": header("c", '"d3"') + b"connector.name=tpch\n",
        "trino-clusters/d/catalog/hand.properties": b"# hand\n#\n" + SHARED + b'"forged"\n',
    })
    held = Holdings(r.tree(LAYOUT), r, LAYOUT)
    assert held.catalogs(set()) == {} and r.asked == 0
    assert held.catalogs({"lake"}) == {"lake": frozenset({'"x"'})}
    assert held.catalogs({"other"}) == {}
