"""watch and the catalog library: one stream on the database covers both collections, and a
change to a shared catalog re-syncs exactly its users (real pymongo stream over mockupdb)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.mongowire import ChangeStreamServer
from tests.test_library import LAKE, cluster_doc
from tests.watchrig import Rig, drive, started, synced
from trinogen.watch.batching import Batch
from trinogen.watch.decision import Work
from trinogen.watch.feed import Changed, to_event


@pytest.mark.parametrize(("ns", "library"), [
    ({"db": "trino", "coll": "trino_catalogs"}, True),
    ({"db": "trino", "coll": "trino_clusters"}, False),
    (None, False),
])
def test_events_of_the_catalog_collection_are_marked(ns: dict[str, str] | None,
                                                     library: bool) -> None:
    """A change event is a library change exactly when it comes from the catalog collection."""
    raw: dict[str, Any] = {"operationType": "update", "documentKey": {"_id": "x"}}
    if ns is not None:
        raw["ns"] = ns
    event = to_event(raw, library="trino_catalogs")
    assert isinstance(event, Changed) and event.library is library


@pytest.mark.parametrize(("clusters", "catalogs", "doc_ids"), [
    ({"a", "b"}, set(), ("a", "b")),
    ({"a"}, {"c"}, ()),  # a catalog changed: a full sync finds its users
    (set(), {"c"}, ()),
])
def test_a_batch_with_a_catalog_change_syncs_everything(clusters: set[str], catalogs: set[str],
                                                        doc_ids: tuple[str, ...]) -> None:
    """Cluster changes alone are a targeted sync; any catalog change makes it a full one."""
    batch = Batch(started=0.0, last=0.0)
    for d in clusters:
        batch.add(d, "update", 0.0, None)
    for d in catalogs:
        batch.add(d, "update", 0.0, None, library=True)
    assert Work("batch", "quiet", None, batch).doc_ids == doc_ids


@pytest.fixture
def rig(tmp_path: Path, wire: ChangeStreamServer) -> Iterator[Rig]:
    r = Rig(tmp_path, wire)
    r.mongo.coll.insert_many([
        cluster_doc("lake-a", "growth_analytics", [{"name": "hive", "shared": "lake-hive"}]),
        cluster_doc("plain", "etl_team", [{"name": "tpch",
                                           "properties": {"connector.name": "tpch"}}])])
    r.mongo.source.catalogs.insert_one(copy.deepcopy(LAKE))
    yield r
    r.close()


def test_a_catalog_change_commits_once_touching_only_its_users(rig: Rig) -> None:
    """Changing a shared catalog on the stream gives one commit touching only its users' files."""
    w = rig.watcher()
    started(rig, w)
    assert rig.wire.pipelines[0][0]["$match"]["$or"][0]["ns.coll"]["$in"] == [
        "trino_catalogs", "trino_clusters"]
    before, commits = git("--git-dir", str(rig.remote), "rev-parse", "main").strip(), rig.commits()
    props = {**LAKE["properties"], "hive.max-partitions-per-scan": "7000"}
    rig.mongo.source.catalogs.update_one({"_id": LAKE["_id"]}, {"$set": {"properties": props}})
    rig.wire.emit("update", LAKE["_id"], {**LAKE, "properties": props}, coll="trino_catalogs")
    drive(w, until=synced(w, 1))
    assert rig.commits() == commits + 1
    touched = git("--git-dir", str(rig.remote), "diff", "--name-only", before, "main").split()
    assert touched and {p.split("/")[1].removesuffix(".yaml") for p in touched} == {"lake-a"}
    assert b"hive.max-partitions-per-scan=7000" in rig.tree()[
        "trino-clusters/lake-a/catalog/hive.properties"]
    assert rig.state()["resumeToken"] == rig.wire.last_token  # saved after the push


def test_deleting_a_used_catalog_on_the_stream_keeps_the_files(rig: Rig) -> None:
    """A delete event of a used catalog fails its user visibly; nothing is committed."""
    w = rig.watcher()
    started(rig, w)
    commits = rig.commits()
    rig.mongo.source.catalogs.delete_one({"_id": LAKE["_id"]})
    rig.wire.emit("delete", LAKE["_id"], coll="trino_catalogs")
    drive(w, until=synced(w, 1))
    assert rig.commits() == commits
    assert "trino-clusters/lake-a/catalog/hive.properties" in rig.tree()
    status = rig.mongo.source.status.find_one({"_id": "lake-a"})
    assert status["state"] == "failed" and "lake-hive" in status["lastError"]


@pytest.mark.parametrize(("faults", "error", "words"), [
    # FerretDB: the database-level aggregate does not parse; the collection answers 238
    (["failed_to_parse", "not_implemented"], "ChangeStreamsUnsupported", "NotImplemented (238)"),
    (["no_replica_set"], "ChangeStreamsUnsupported", "Location40573"),
    # a user allowed change streams on the collection only: the database stream is refused
    (["unauthorized"], "FeedFailed", "needs find and changeStream on the database"),
    (["unauthorized", "unauthorized"], "FeedFailed", "Unauthorized"),
])
def test_a_refused_database_stream_is_explained(wire: ChangeStreamServer, faults: list[str],
                                                error: str, words: str) -> None:
    """Why the database stream was refused: no change streams at all, or only the database's."""
    from trinogen.watch import feed

    for kind in faults:
        wire.fail("aggregate", kind)
    client = wire.client()
    try:
        f = feed.ChangeFeed(client.trino, 50, pipeline=feed.watched_pipeline(
            ["trino_clusters", "trino_catalogs"]), probe=client.trino.trino_clusters)
        with pytest.raises(getattr(feed, error)) as e:
            f.open(None)
        assert words in str(e.value)
        assert type(e.value).__name__ == error
    finally:
        client.close()
