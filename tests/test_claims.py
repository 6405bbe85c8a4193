"""The first create wins, against real git: a newcomer claiming a held clusterId can neither take
the cluster over nor freeze its owner's edits (issue 19, finding 5)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from bson import ObjectId

from tests.conftest import example_docs
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
