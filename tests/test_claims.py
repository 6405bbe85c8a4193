"""The first create wins, against real git: a newcomer claiming a held clusterId, or a held name
of the catalog library, can neither take it over nor freeze its owner's edits (issue 19,
finding 5)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from bson import ObjectId

from tests.conftest import example_docs
from tests.test_library import LAKE, cluster_doc
from tests.test_library import World as LibraryWorld
from tests.test_sync import World
from trinogen.source import doc_key

VICTIM = "adhoc-dev"
APP = f"trino-applications/{VICTIM}.yaml"
VALUES = f"trino-clusters/{VICTIM}/values.yaml"
INTRUDER_ID = ObjectId("653a1a7b8e1f4a1e9c5d8eff")


def _intruder() -> dict[str, Any]:
    """A copy of the victim's document under another _id and owner, with its own sizing."""
    victim = next(d for d in example_docs() if d["clusterId"] == VICTIM)
    doc = copy.deepcopy(victim)
    doc.update({"_id": INTRUDER_ID, "owner": "intruder"})
    doc.setdefault("clusterConfig", {}).setdefault("worker", {})["replicas"] = 7
    return doc


def _victim_id(world: World) -> str:
    return doc_key(world.mongo.coll.find_one({"clusterId": VICTIM, "owner": {"$ne": "intruder"}})["_id"])


def _workers(world: World) -> int:
    return int(yaml.safe_load(world.tree()[VALUES])["server"]["workers"])


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.fixture
def held(world: World) -> World:
    """The examples synced, then a newcomer claiming the victim's clusterId."""
    world.sync()
    world.mongo.coll.insert_one(_intruder())
    return world


# (sync options) a full run, `sync --cluster`, the watcher's batch for the intruder's change
RUNS = [{}, {"clusters": (VICTIM,)}, {"doc_ids": (doc_key(INTRUDER_ID),)}]


@pytest.mark.parametrize("options", RUNS)
def test_a_newcomer_cannot_take_over_a_held_cluster(held: World, options: dict[str, Any]) -> None:
    """The newcomer fails naming the holder; the cluster's files stay its owner's."""
    before = held.tree()
    report = held.sync(**options)
    assert held.tree() == before and not report.pushed
    failed = [f for f in report.failed if f.doc_id == doc_key(INTRUDER_ID)]
    assert len(failed) == 1 and failed[0].cluster_id is None
    assert f"belongs to the document _id {_victim_id(held)}" in failed[0].problems[0].message
    assert all(f.doc_id != _victim_id(held) for f in report.failed)


@pytest.mark.parametrize("options", [{}, {"clusters": (VICTIM,)}, "victim"])
def test_the_holder_edits_still_go_through(held: World, options: Any) -> None:
    """With the newcomer still there, the owner's own edit is rendered and pushed."""
    held.sync()
    held.mongo.coll.update_one({"_id": held.mongo.coll.find_one(
        {"clusterId": VICTIM, "owner": {"$ne": "intruder"}})["_id"]},
        {"$set": {"clusterConfig.worker.replicas": 3}})
    if options == "victim":  # the watcher's batch for the owner's change
        options = {"doc_ids": (_victim_id(held),)}
    report = held.sync(**options)
    assert report.pushed and [c.cluster_id for c in report.plan.by_action("update")] == [VICTIM]
    assert _workers(held) == 3
    assert f"Document _id: {_victim_id(held)}" in held.tree()[APP].decode()


def test_the_status_of_the_cluster_stays_its_owner(held: World) -> None:
    """The newcomer's failure is recorded under its own _id, not over the cluster's status."""
    held.sync()
    status = {d["_id"]: d for d in held.mongo.source.status.find({})}
    assert status[VICTIM]["state"] == "synced" and status[VICTIM]["documentId"] == _victim_id(held)
    assert status[f"_id={doc_key(INTRUDER_ID)}"]["state"] == "failed"


def test_the_holder_is_rendered_again_while_contested_then_served(held: World) -> None:
    """While contested the holder is validated with its rivals (never a cache hit), which changes
    nothing; once the newcomer is gone it is a cache hit again."""
    contested = held.sync()
    assert contested.stats["cacheHits"] == 2 and not contested.pushed
    held.mongo.coll.delete_one({"_id": INTRUDER_ID})
    alone = held.sync()
    assert alone.stats["cacheHits"] == 3 and not alone.failed and not alone.pushed


def test_when_the_repository_holds_none_of_them_all_fail(world: World) -> None:
    """Two new documents claiming one new clusterId: both fail, nothing is written for it."""
    world.sync()
    twin = _intruder()
    twin.update({"clusterId": "fresh"})
    world.mongo.coll.insert_many([twin, {**copy.deepcopy(twin), "_id": ObjectId()}])
    report = world.sync()
    fresh = [f for f in report.failed if f.cluster_id == "fresh"]
    assert len(fresh) == 2 and all("for none of them" in f.problems[-1].message for f in fresh)
    assert "fresh" not in world.clusters()


def test_a_deleted_holder_frees_the_name(held: World) -> None:
    """Once the holder's document is gone, the newcomer is the only claimant and takes it."""
    held.mongo.coll.delete_one({"_id": held.mongo.coll.find_one(
        {"clusterId": VICTIM, "owner": {"$ne": "intruder"}})["_id"]})
    report = held.sync()
    assert not report.failed and _workers(held) == 7
    assert f"Document _id: {doc_key(INTRUDER_ID)}" in held.tree()[APP].decode()


# --- a catalog name of the library ------------------------------------------------------------

COPY = "trino-clusters/lake-a/catalog/hive.properties"
EVIL = {**LAKE, "_id": "cat-evil", "owner": "intruder", "shareWith": ["*"],
        "properties": {**LAKE["properties"], "hive.metastore.uri": "thrift://evil:9083"}}


@pytest.fixture
def library_world(tmp_path: Path) -> LibraryWorld:
    """Clusters using the shared catalog lake-hive, synced; then a second document named so."""
    w = LibraryWorld(tmp_path)
    w.sync()
    w.catalogs.insert_one(copy.deepcopy(EVIL))
    return w


def test_a_shared_catalog_copy_records_its_library_document(tmp_path: Path) -> None:
    """The reviewable copy of a shared catalog names the library document it came from on the
    line after its header; a document's own catalog has no such line, and the catalog text
    Trino reads (values.yaml) carries none."""
    from trinogen.render import parse_shared_catalog

    w = LibraryWorld(tmp_path)
    w.sync()
    lines = w.file(COPY).split("\n")
    assert lines[2] == '# Shared catalog lake-hive from trino.trino_catalogs, document _id: "cat-lake"'
    assert parse_shared_catalog(w.file(COPY).encode()) == ("lake-hive", '"cat-lake"')
    assert parse_shared_catalog(w.file("trino-clusters/lake-b/catalog/tpch.properties").encode()) is None
    catalogs = yaml.safe_load(w.file("trino-clusters/lake-a/values.yaml"))["catalogs"]
    assert "Shared catalog" not in catalogs["hive"]


@pytest.mark.parametrize("options", [{}, {"clusters": ("lake-a",)}])
def test_a_second_catalog_document_cannot_freeze_or_take_over_the_name(
    library_world: LibraryWorld, options: dict[str, Any]
) -> None:
    """The users keep the held catalog and are not failed; the newcomer fails naming the holder."""
    before = library_world.head()
    report = library_world.sync(**options)
    assert library_world.head() == before and not report.pushed
    assert [f.doc_id for f in report.failed] == ['catalog:"cat-evil"']
    assert 'belongs to the catalog document _id "cat-lake"' in report.failed[0].problems[-1].message
    assert "thrift://evil" not in library_world.file(COPY)


def test_the_held_catalogs_edits_still_reach_its_users(library_world: LibraryWorld) -> None:
    """With the newcomer still there, a change to the held catalog re-renders its users."""
    props = {**LAKE["properties"], "hive.metastore.uri": "thrift://new:9083"}
    library_world.catalogs.update_one({"_id": "cat-lake"}, {"$set": {"properties": props}})
    report = library_world.sync()
    assert report.pushed and "thrift://new:9083" in library_world.file(COPY)
    assert sorted(c.cluster_id for c in report.plan.by_action("update")) == ["lake-a", "lake-b"]


def test_the_newcomer_leaves_the_users_cache_hits(library_world: LibraryWorld) -> None:
    """The newcomer is no part of the users' render-cache keys: nothing is rendered again."""
    report = library_world.sync()
    assert report.stats["clustersRendered"] == 0
    assert report.stats["cacheHits"] == 6  # the three examples, both users and "plain"


def test_a_new_catalog_name_claimed_twice_fails_all(library_world: LibraryWorld) -> None:
    """No cluster holds a new name yet: both documents fail, and so does a cluster using it."""
    fresh = {**LAKE, "name": "fresh", "shareWith": ["*"]}
    library_world.catalogs.insert_many([{**fresh, "_id": "fresh-1"}, {**fresh, "_id": "fresh-2"}])
    library_world.mongo.coll.insert_one(cluster_doc("fresh-user", "etl_team", [
        {"name": "hive", "shared": "fresh"}]))
    report = library_world.sync()
    ids = sorted(f.doc_id for f in report.failed)
    assert ids == ['"doc-fresh-user"', 'catalog:"cat-evil"', 'catalog:"fresh-1"',
                   'catalog:"fresh-2"']
