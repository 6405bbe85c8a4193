"""The watcher's index of claimants (trinogen.watch.claimants): its decisions as a table, its
reads against a query-based read on mongomock (the independent reader), and a watch batch whose
reads are `_id` equality only with the outcome of a query-based `sync --cluster`-style read."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mongomock
import pytest
from bson import ObjectId

from tests import ferretdb
from tests.conftest import RealMongo, demo_settings, needs, remote_tree
from tests.fakes import FakeSource
from tests.mongowire import ChangeStreamServer
from tests.watchrig import Rig, drive, started, synced
from trinogen import pipeline
from trinogen.gitops import WorkingCopy
from trinogen.model import RawDocument, claimed_cluster_id
from trinogen.settings import replace
from trinogen.source import Source, doc_key
from trinogen.watch.claimants import ClaimIndex, IndexedClaims

HAS_FERRETDB = needs(ferretdb.available(), "FerretDB is not built and Go is not installed to build it")


def raw(doc_id: str, cluster: Any = None, **body: Any) -> RawDocument:
    return RawDocument(doc_id, {"_id": doc_id, **({} if cluster is None else
                                                 {"clusterId": cluster}), **body})


def claims(index: ClaimIndex, cids: tuple[str, ...] = ("x", "y", "z")) -> dict[str, set[str]]:
    return {c: found for c in cids if (found := index.claimants([c]))}


START = [raw("1", "x"), raw("2", "y"), raw("3", "y")]
LEARN = [  # (what happened, _ids asked, documents found, claims after)
    ("unchanged", {"1"}, [raw("1", "x")], {"x": {"1"}, "y": {"2", "3"}}),
    ("renamed x -> z", {"1"}, [raw("1", "z")], {"z": {"1"}, "y": {"2", "3"}}),
    ("renamed onto a held name", {"1"}, [raw("1", "y")], {"y": {"1", "2", "3"}}),
    ("deleted: asked, not found", {"2"}, [], {"x": {"1"}, "y": {"3"}}),
    ("new document", {"4"}, [raw("4", "x")], {"x": {"1", "4"}, "y": {"2", "3"}}),
    ("disabled still claims", {"1"}, [raw("1", "x", enabled=False)], {"x": {"1"}, "y": {"2", "3"}}),
    ("clusterId no longer text", {"1"}, [raw("1", ["x"])], {"y": {"2", "3"}}),
    ("clusterId not a valid name", {"1"}, [raw("1", "X Y")], {"y": {"2", "3"}}),
    ("clusterId removed", {"2"}, [raw("2")], {"x": {"1"}, "y": {"3"}}),
    ("too large: its identity still claims", {"1"},
     [RawDocument("1", {"_id": "1", "clusterId": "z"}, unreadable="too large")],
     {"z": {"1"}, "y": {"2", "3"}}),
    # A document read without a usable _id: which one it is cannot be told, so nothing asked
    # and missing is taken as deleted (a stale entry costs a read; a lost one hides a rival).
    ("unidentified result", {"2", "3"}, [RawDocument('"unidentified document 1"', {}, "no _id")],
     {"x": {"1"}, "y": {"2", "3"}}),
    ("a document not asked for teaches nothing", {"1"}, [raw("1", "x"), raw("9", "z")],
     {"x": {"1"}, "y": {"2", "3"}}),
]


@pytest.mark.parametrize(("what", "asked", "found", "after"), LEARN, ids=[r[0] for r in LEARN])
def test_a_targeted_read_updates_the_index(what: str, asked: set[str], found: list[RawDocument],
                                           after: dict[str, set[str]]) -> None:
    """Each document read gives its current claim; an _id asked and not found is forgotten."""
    index = ClaimIndex()
    index.rebuild(START)
    index.learn(asked, found)
    assert claims(index) == after


def test_a_full_read_replaces_every_claim() -> None:
    """A full read (start-up, reconcile, resync) rebuilds the index from scratch."""
    index = ClaimIndex()
    assert not index.warm
    index.rebuild(START)
    index.rebuild([raw("7", "z"), raw("8", ["x"]), raw("9", "y", enabled=False)])
    assert index.warm and claims(index) == {"z": {"7"}, "y": {"9"}}


class ClaimsFake(FakeSource):
    """The fake source, also telling who claims what; every read asked is recorded."""

    def __init__(self, docs: dict[str, dict[str, Any]]) -> None:
        super().__init__(docs)
        self.asked: list[Any] = []

    def read_claims(self) -> list[RawDocument]:
        self.asked.append("claims")
        return [RawDocument(k, {"clusterId": v.get("clusterId")}) for k, v in self.docs.items()]

    def read_targeted(self, doc_ids: Any, cluster_ids: Any) -> list[RawDocument]:
        self.asked.append((set(doc_ids), set(cluster_ids)))
        return super().read_targeted(doc_ids, cluster_ids)


def test_a_first_batch_without_a_full_read_reads_every_claim_once() -> None:
    """A watcher resumed from a saved token has read no document: its first batch reads who
    claims what once; every batch asks by _id only."""
    inner = ClaimsFake({"1": {"clusterId": "x"}, "2": {"clusterId": "x"}, "3": {"clusterId": "y"}})
    src = IndexedClaims(inner)
    assert {r.doc_id for r in src.read_targeted((), ["x"])} == {"1", "2"}
    assert {r.doc_id for r in src.read_targeted(["3"], ["x"])} == {"1", "2", "3"}
    assert inner.asked == ["claims", ({"1", "2"}, set()), ({"1", "2", "3"}, set())]


def test_a_full_read_serves_the_next_batches_without_a_claims_read() -> None:
    """After a full read (start-up, reconcile) no claims read is needed."""
    inner = ClaimsFake({"1": {"clusterId": "x"}, "2": {"clusterId": "y"}})
    src = IndexedClaims(inner)
    src.read_all()
    assert {r.doc_id for r in src.read_targeted((), ["y"])} == {"2"}
    assert inner.asked == [({"2"}, set())]


CLAIMED = [{"_id": 1, "clusterId": "a", "owner": "t", "big": "x" * 100},
           {"_id": 2, "clusterId": ["b"]}, {"_id": 3}]


@pytest.fixture(params=["mongomock", pytest.param("ferretdb", marks=HAS_FERRETDB)])
def claimed(request: pytest.FixtureRequest) -> Iterator[Source]:
    """A Source over CLAIMED on the parametrized backend (FerretDB: over the wire)."""
    if request.param == "mongomock":
        src = Source(mongomock.MongoClient(), demo_settings().mongodb)
        src.collection.insert_many(copy.deepcopy(CLAIMED))
        yield src
        return
    db = RealMongo(request.getfixturevalue("ferretdb_server"), demo_settings(),
                   copy.deepcopy(CLAIMED))
    yield db.source
    db.close()


def test_the_claims_read_asks_only_for_the_cluster_id(claimed: Source) -> None:
    """`Source.read_claims` is one query whose documents carry their _id and clusterId only."""
    raws = claimed.read_claims()
    assert claimed.queries == 1
    assert {r.doc_id: dict(r.body) for r in raws} == {
        doc_key(1): {"_id": 1, "clusterId": "a"}, doc_key(2): {"_id": 2, "clusterId": ["b"]},
        doc_key(3): {"_id": 3}}


# --- against a query-based read on mongomock -------------------------------------------------

A, B, C, D = ObjectId(), ObjectId(), ObjectId(), ObjectId()
BASE: list[dict[str, Any]] = [{"_id": A, "clusterId": "a"}, {"_id": B, "clusterId": "b"},
                              {"_id": C, "clusterId": "b", "enabled": False},
                              {"_id": D, "clusterId": "d"}, {"_id": 5, "clusterId": "e"}]
# (what, the writes, the batch: changed _ids and the clusterIds the repository records for them,
#  what only a server's query reads afterwards: an array clusterId matches its element there, but
#  claims nothing (model.claimed_cluster_id), so it is read by its own batches only)
Write = tuple[str, Any, dict[str, Any] | None]
WRITES: list[tuple[str, list[Write], list[Any], list[str], set[Any]]] = [
    ("a rename to a free name", [("set", A, {"clusterId": "n"})], [A], ["a"], set()),
    ("a rename onto a held name", [("set", A, {"clusterId": "b"})], [A], ["a"], set()),
    ("a deleted holder", [("delete", B, None)], [B], ["b"], set()),
    ("a new rival", [("insert", 9, {"_id": 9, "clusterId": "d"})], [9], [], set()),
    ("a rival renamed away", [("set", C, {"clusterId": "c"})], [C], [], set()),
    ("two changes, one name", [("set", D, {"clusterId": "e"}), ("set", 5, {"clusterId": "d"})],
     [D, 5], ["d", "e"], set()),
    ("the name to an array", [("set", A, {"clusterId": ["a"]})], [A], ["a"], {A}),
]


class FindLog:
    """The cluster collection, recording the filter of every find."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.filters = inner, []  # type: list[Any]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def find(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self.filters.append(query)
        return self.inner.find(query, *args, **kwargs)


def _batch_read(src: Any, doc_ids: list[Any], cids: list[str]) -> set[str]:
    """The batch's read as `targets.read_documents` makes it: the documents and the claimants of
    their clusterIds, then the rivals for the names they claim now."""
    raws = src.read_targeted([doc_key(i) for i in doc_ids], cids)
    claimed = {c for r in raws if (c := claimed_cluster_id(r))} - set(cids)
    more = src.read_targeted((), claimed) if claimed else []
    return {r.doc_id for r in raws} | {r.doc_id for r in more}


@pytest.mark.parametrize("start", ["full read", "claims read"])
@pytest.mark.parametrize(("what", "writes", "doc_ids", "cids", "server_only"), WRITES,
                         ids=[w[0] for w in WRITES])
def test_the_index_reads_what_a_query_by_cluster_id_reads(
        what: str, writes: list[Write], doc_ids: list[Any], cids: list[str],
        server_only: set[Any], start: str) -> None:
    """Once every change's event is processed, the batch reads the documents a query by
    clusterId (mongomock's) would, with `_id` equality only; the index filled by a full read
    or by a read of every claim."""
    settings = demo_settings().mongodb
    client = mongomock.MongoClient()
    plain, inner = Source(client, settings), Source(client, settings)
    plain.collection.insert_many(copy.deepcopy(BASE))
    indexed = IndexedClaims(inner)
    if start == "full read":
        indexed.read_all()
    else:
        indexed.index.rebuild(inner.read_claims())
    for op, _id, body in writes:
        if op == "set":
            plain.collection.update_one({"_id": _id}, {"$set": body})
        elif op == "delete":
            plain.collection.delete_one({"_id": _id})
        else:
            plain.collection.insert_one(body)
    inner.collection = log = FindLog(inner.collection)
    assert _batch_read(indexed, doc_ids, cids) == _batch_read(plain, doc_ids, cids)
    assert log.filters and all(set(q) == {"_id"} for q in log.filters), log.filters
    # and the index now knows the batch's claims: a read of every name agrees too
    every = ["a", "b", "c", "d", "e", "n"]
    assert _batch_read(indexed, [], every) | {doc_key(i) for i in server_only} == _batch_read(
        plain, [], every)


def test_a_write_whose_event_is_pending_joins_with_its_own_batch() -> None:
    """A new rival written but not yet seen as an event is not read by another document's batch
    (a query by clusterId would read it); its own batch reads it and the name's holder."""
    settings = demo_settings().mongodb
    client = mongomock.MongoClient()
    plain, inner = Source(client, settings), Source(client, settings)
    plain.collection.insert_many(copy.deepcopy(BASE))
    indexed = IndexedClaims(inner)
    indexed.read_all()
    plain.collection.insert_one({"_id": 9, "clusterId": "a"})
    assert _batch_read(indexed, [A], ["a"]) == {doc_key(A)}
    assert _batch_read(plain, [A], ["a"]) == {doc_key(A), doc_key(9)}
    assert _batch_read(indexed, [9], []) == _batch_read(plain, [9], []) == {doc_key(A), doc_key(9)}


def test_after_forgetting_the_next_batch_reads_every_claim_again() -> None:
    """Re-elected after another replica led (whose events this one never saw), a batch reads
    who claims what again, so a rival written meanwhile is seen as a query by clusterId sees
    it; without forgetting, the index kept from before would miss it."""
    settings = demo_settings().mongodb
    client = mongomock.MongoClient()
    plain, inner = Source(client, settings), Source(client, settings)
    plain.collection.insert_many(copy.deepcopy(BASE))
    indexed = IndexedClaims(inner)
    indexed.read_all()
    plain.collection.insert_one({"_id": 9, "clusterId": "d"})  # while another replica led
    assert _batch_read(indexed, [], ["d"]) == {doc_key(D)}  # the kept index misses it
    indexed.index.forget()
    assert _batch_read(indexed, [], ["d"]) == _batch_read(plain, [], ["d"]) == {
        doc_key(D), doc_key(9)}


# --- a watch batch ----------------------------------------------------------------------------


@pytest.fixture
def rig(tmp_path: Path, wire: ChangeStreamServer) -> Iterator[Rig]:
    r = Rig(tmp_path, wire)
    yield r
    r.close()


def _status(source: Source) -> dict[str, tuple[Any, ...]]:
    return {d["_id"]: (d["state"], d.get("documentId"), d.get("lastError"))
            for d in source.status.find({})}


def test_a_watch_batch_reads_by_id_only_and_ends_as_a_query_based_sync(
        rig: Rig, tmp_path: Path) -> None:
    """A batch with a rename, a rename onto a held name, a deletion and a new rival reads
    `_id` equality only, and pushes the tree and status a query-based sync of the same
    documents (the CLI's `Source`, asking by clusterId) pushes from the same start."""
    w = rig.watcher()
    started(rig, w)
    before = tmp_path / "before.git"
    shutil.copytree(rig.remote, before)
    settings = replace(rig.settings, mongodb={"status_collection": "status_plain"},
                       git={"remote": str(before), "workdir": str(tmp_path / "plain-workdir")})
    source = Source(rig.mongo.client, settings.mongodb)  # the CLI's reads: by clusterId
    source.status.insert_many([dict(d) for d in rig.mongo.source.status.find({})])
    log = FindLog(rig.mongo.source.collection)
    rig.mongo.source.collection = log

    coll = log.inner
    adhoc, analytics, etl = (coll.find_one({"clusterId": c})
                             for c in ("adhoc-dev", "analytics-prod", "etl-batch"))
    newcomer = {**copy.deepcopy(adhoc), "_id": ObjectId(), "clusterId": "analytics-prod"}
    coll.update_one({"_id": adhoc["_id"]}, {"$set": {"clusterId": "adhoc-renamed"}})
    coll.update_one({"_id": etl["_id"]}, {"$set": {"clusterId": "analytics-prod"}})
    coll.delete_one({"_id": analytics["_id"]})
    coll.insert_one(newcomer)
    for kind, doc in (("update", adhoc), ("update", etl), ("delete", analytics),
                      ("insert", newcomer)):
        rig.wire.emit(kind, doc["_id"], coll.find_one({"_id": doc["_id"]}))
    drive(w, until=synced(w, 1))
    batch_ids = tuple(sorted(doc_key(d["_id"]) for d in (adhoc, etl, analytics, newcomer)))
    assert log.filters and all(set(q) == {"_id"} for q in log.filters), log.filters
    assert all(not isinstance(q["_id"], dict) for q in log.filters)  # equality, not $in

    # The query-based read of the same batch, from the same start, into a copy of the remote.
    repo = WorkingCopy(settings.git, str(before), tmp_path / "plain-workdir")
    pipeline.sync(settings, source, repo,
                  options=pipeline.SyncOptions(doc_ids=batch_ids, before_push=lambda: None))
    assert rig.tree() == remote_tree(before)
    assert "trino-clusters/adhoc-renamed/values.yaml" in rig.tree()
    assert not any(p.startswith("trino-clusters/adhoc-dev/") for p in rig.tree())
    assert _status(rig.mongo.source) == _status(source)
    states = {k: v[0] for k, v in _status(source).items()}
    assert states["adhoc-dev"] == "pruned" and states["adhoc-renamed"] == "synced"


def test_a_resumed_watcher_reads_every_claim_once_then_by_id(rig: Rig) -> None:
    """A watcher resumed from a saved token runs no full sync: its first batch reads who claims
    what once (every document, its clusterId only), and every batch reads by `_id` only."""
    w1 = rig.watcher()
    started(rig, w1)
    rig.change("analytics-prod", "owner", "one")
    drive(w1, until=synced(w1, 1))
    w1.close()
    log = FindLog(rig.mongo.source.collection)
    rig.mongo.source.collection = log
    projections: list[Any] = []
    find = log.find
    log.find = lambda q, *a, **k: projections.append(a[0] if a else None) or find(q, *a, **k)  # type: ignore[method-assign]

    w2 = rig.watcher()
    rig.change("adhoc-dev", "owner", "two")
    drive(w2, until=synced(w2, 1))
    rig.change("etl-batch", "owner", "three")
    drive(w2, until=synced(w2, 2))
    assert w2.metrics.counts["syncs_full_pushed"] + w2.metrics.counts["syncs_full_unchanged"] == 0
    assert log.filters[0] == {} and set(projections[0]) <= {"_id", "clusterId"}
    assert log.filters[1:] and all(set(q) == {"_id"} for q in log.filters[1:]), log.filters
    assert rig.commits() == 4  # the initial sync, then one commit per batch
