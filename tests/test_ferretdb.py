"""validate, sync, status and the status write-back against a real MongoDB-wire server.

The scenarios run twice: on mongomock (in-process, as the rest of the suite) and on FerretDB
over TCP with the real pymongo, built from the URI as the CLI builds it. Their assertions are
written once. Change streams are not here: FerretDB has none (tests/test_watch.py uses mockupdb).

FerretDB v1 refuses keys containing '.', and every connector property is such a key
("connector.name"), so the documents here are the shipped examples without their connectors
(test_ferretdb_refuses_dotted_keys pins that difference; README "MongoDB servers, and FerretDB").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bson import ObjectId
from typer.testing import CliRunner

from tests import ferretdb
from tests.conftest import (
    ROOT,
    FakeMongo,
    RealMongo,
    commit_count,
    example_docs,
    git,
    needs,
    portable_docs,
    remote_tree,
    settings_for,
)
from trinogen import pipeline
from trinogen.cli import app
from trinogen.errors import ExitCode
from trinogen.gitops import WorkingCopy
from trinogen.pipeline import SyncOptions
from trinogen.settings import Settings
from trinogen.source import doc_key

HAS_FERRETDB = needs(ferretdb.available(), "FerretDB is not built and Go is not installed to build it")
CLUSTERS = {"analytics-prod", "adhoc-dev", "etl-batch"}


class InProcess:
    """FakeMongo with RealMongo's face (settings, status)."""

    def __init__(self, settings: Settings, docs: list[dict[str, Any]]) -> None:
        self.settings = settings
        self.fake = FakeMongo(settings, docs)
        self.source = self.fake.source
        self.coll = self.fake.coll
        self.status = self.fake.source.status
        self.catalogs = self.fake.source.catalogs

    def set(self, cluster_id: str, path: str, value: Any) -> None:
        self.fake.set(cluster_id, path, value)

    def close(self) -> None:
        pass


Mongo = InProcess | RealMongo


@pytest.fixture(params=["mongomock", pytest.param("ferretdb", marks=HAS_FERRETDB)])
def make_db(request: pytest.FixtureRequest) -> Iterator[Callable[[Settings, list[dict[str, Any]]], Mongo]]:
    """A factory of seeded databases on the parametrized backend, dropped after the test."""
    made: list[Mongo] = []

    def make(settings: Settings, docs: list[dict[str, Any]]) -> Mongo:
        if request.param == "ferretdb":
            db: Mongo = RealMongo(request.getfixturevalue("ferretdb_server"), settings, docs)
        else:
            db = InProcess(settings, docs)
        made.append(db)
        return db

    yield make
    for db in made:
        db.close()


class World:
    """A bare remote, a seeded database on one backend and a working copy, wired like the CLI."""

    def __init__(self, tmp_path: Path, make_db: Callable[..., Mongo],
                 docs: list[dict[str, Any]] | None = None) -> None:
        self.remote = tmp_path / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.mongo = make_db(settings_for(self.remote, tmp_path),
                             portable_docs() if docs is None else docs)
        self.settings = self.mongo.settings
        self.repo = WorkingCopy(self.settings.git, str(self.remote), tmp_path / "workdir")

    def sync(self, **options: Any) -> pipeline.Report:
        return pipeline.sync(self.settings, self.mongo.source, self.repo, options=SyncOptions(**options))

    def head(self) -> str:
        return git("--git-dir", str(self.remote), "rev-parse", "main").strip()

    def tree(self) -> dict[str, bytes]:
        return remote_tree(self.remote)

    def clusters(self) -> set[str]:
        return {p.split("/")[1].removesuffix(".yaml") for p in self.tree()
                if p.startswith("trino-applications/")}

    def status(self) -> dict[str, dict[str, Any]]:
        """The status collection, read with the test's own client."""
        return {d["_id"]: d for d in self.mongo.status.find({})}


@pytest.fixture
def world(tmp_path: Path, make_db: Callable[..., Mongo]) -> World:
    return World(tmp_path, make_db)


def test_first_sync_pushes_every_cluster_and_records_its_status(world: World) -> None:
    """The first sync commits every document's cluster once and writes a synced status for each."""
    report = world.sync()
    assert report.pushed and commit_count(world.remote) == 1
    assert world.clusters() == CLUSTERS
    status = world.status()
    assert set(status) == CLUSTERS
    ids = {d["clusterId"]: doc_key(d["_id"]) for d in portable_docs()}
    for cid in CLUSTERS:
        assert status[cid]["state"] == "synced" and status[cid]["commit"] == report.commit
        assert status[cid]["documentId"] == ids[cid] and status[cid]["renderHash"]


def test_an_unchanged_second_run_commits_and_writes_nothing(world: World) -> None:
    """Run twice over the same documents: the second run has an empty plan and no writes."""
    world.sync()
    head, status = world.head(), world.status()
    again = world.sync()
    assert again.plan is not None and again.plan.empty and not again.pushed
    assert again.stats["commits"] == 0 and again.stats["statusWrites"] == 0
    assert world.head() == head and world.status() == status


def test_an_invalid_document_is_reported_and_the_others_sync(world: World) -> None:
    """A document that stops validating keeps its files and gets a failed status; the others sync."""
    first = world.sync()
    before = world.tree()
    world.mongo.set("adhoc-dev", "trinoVersion", "latest")
    world.mongo.set("etl-batch", "clusterConfig.worker.autoscaling.maxReplicas", 20)
    report = world.sync()
    after = world.tree()
    assert [f.cluster_id for f in report.failed] == ["adhoc-dev"]
    assert {p: c for p, c in after.items() if "adhoc-dev" in p} == {
        p: c for p, c in before.items() if "adhoc-dev" in p}
    assert "maxReplicas: 20" in after["trino-clusters/etl-batch/values.yaml"].decode()
    status = world.status()
    assert status["adhoc-dev"]["state"] == "failed" and "trinoVersion" in status["adhoc-dev"]["lastError"]
    assert status["adhoc-dev"]["commit"] == first.commit  # the last synced commit is kept
    assert status["etl-batch"]["commit"] == report.commit


def test_a_failed_catalogs_status_record_is_removed_once_it_no_longer_fails(world: World) -> None:
    """A failed catalog's status record is written while it fails, and removed over the wire
    once its document is deleted, or once no document uses the library."""
    key = '_id=catalog:"cat-bad"'
    bad = {"_id": "cat-bad", "name": "lake", "owner": "o", "properties": "oops"}
    world.mongo.catalogs.insert_one(dict(bad))
    world.mongo.set("adhoc-dev", "connectors", [{"name": "lake", "shared": "lake"}])
    world.sync()
    assert world.status()[key]["state"] == "failed"
    assert world.status()[key]["documentId"] == 'catalog:"cat-bad"'
    world.mongo.catalogs.delete_one({"_id": "cat-bad"})
    report = world.sync()
    assert [f.cluster_id for f in report.failed] == ["adhoc-dev"]  # "does not exist"
    assert key not in world.status()
    world.mongo.catalogs.insert_one(dict(bad))
    world.sync()
    assert key in world.status()
    world.mongo.set("adhoc-dev", "connectors", [])
    assert not world.sync().failed
    assert key not in world.status() and world.status()["adhoc-dev"]["state"] == "synced"


def test_a_disabled_document_is_pruned(world: World) -> None:
    """enabled: false removes every file of that cluster and records it as pruned."""
    world.sync()
    world.mongo.set("adhoc-dev", "enabled", False)
    report = world.sync()
    assert world.clusters() == CLUSTERS - {"adhoc-dev"}
    assert not any("adhoc-dev" in p for p in world.tree())
    assert report.plan is not None and report.plan.by_action("prune")[0].reason.startswith("disabled")
    assert world.status()["adhoc-dev"]["state"] == "pruned"


def test_an_edited_document_updates_only_its_files(world: World) -> None:
    """Changing one document's field over the wire rewrites exactly that cluster's file."""
    world.sync()
    before = world.tree()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 3)
    world.sync()
    after = world.tree()
    assert {p for p in after if after[p] != before.get(p)} == {"trino-clusters/adhoc-dev/values.yaml"}
    assert "workers: 3" in after["trino-clusters/adhoc-dev/values.yaml"].decode()


def test_a_targeted_run_reads_and_changes_only_its_cluster(world: World) -> None:
    """sync --cluster reads its documents by clusterId and _id and leaves other edits for later."""
    world.sync()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    world.mongo.set("etl-batch", "enabled", False)
    report = world.sync(clusters=("adhoc-dev",))
    assert report.plan is not None
    assert [c.cluster_id for c in report.plan.by_action("update")] == ["adhoc-dev"]
    assert report.plan.by_action("prune") == [] and world.clusters() == CLUSTERS
    assert report.stats["mongoQueries"] <= 2


def test_a_dry_run_changes_neither_the_remote_nor_the_database(world: World) -> None:
    """--dry-run shows the diff; remote, documents and status stay as they were."""
    world.sync()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 7)
    head, status = world.head(), world.status()
    docs = list(world.mongo.coll.find({}))
    report = world.sync(dry_run=True)
    assert "+  workers: 7" in report.diff
    assert world.head() == head and world.status() == status
    assert list(world.mongo.coll.find({})) == docs


@pytest.mark.parametrize("_id", ["a-string", 42, ObjectId("653a1a7b8e1f4a1e9c5d8eff"),
                                 {"team": "growth", "n": 1}], ids=["str", "int", "oid", "document"])
def test_a_deleted_document_is_found_by_the_id_recorded_in_its_files(
    tmp_path: Path, make_db: Callable[..., Mongo], _id: Any,
) -> None:
    """Each kind of _id round-trips through the file header: deleting the document prunes its cluster."""
    docs = portable_docs()
    docs[0]["_id"] = _id
    world = World(tmp_path, make_db, docs)
    world.sync()
    world.mongo.coll.delete_one({"_id": _id})
    report = world.sync()
    assert report.plan is not None
    assert [(c.cluster_id, c.reason) for c in report.plan.by_action("prune")] == [
        (docs[0]["clusterId"], "document deleted")]
    assert world.clusters() == CLUSTERS - {docs[0]["clusterId"]}


def test_documents_spread_over_many_batches_are_all_read(tmp_path: Path, make_db: Callable[..., Mongo]) -> None:
    """With mongodb.batch_size 1 every document still arrives (one find, then getMore per batch)."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    mongo = make_db(settings_for(remote, tmp_path, mongodb={"batch_size": 1}), portable_docs())
    assert {r.body["clusterId"] for r in mongo.source.read_all()} == CLUSTERS
    assert all("lastUpdated" not in r.body for r in mongo.source.read_all())  # projected away


def test_the_watch_lease_is_exclusive_until_it_expires(tmp_path: Path, make_db: Callable[..., Mongo]) -> None:
    """Two replicas: only one holds the lease; the other takes it after expiry; the old one cannot save a token."""
    from trinogen.errors import LeaseLost
    from trinogen.watch import Lease
    from trinogen.watch.position import StreamPosition

    mongo = make_db(settings_for(tmp_path / "unused.git", tmp_path), [])
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    a, b = (Lease(mongo.source.state, "watch:t", 30, owner=o, wall=lambda: now[0]) for o in "ab")
    assert a.acquire() and not b.acquire() and a.renew()
    assert b.holder() == "a"
    now[0] += timedelta(seconds=31)
    assert b.acquire() and not a.renew()
    b.save(StreamPosition({"_data": "82abc"}))
    assert a.position() == StreamPosition({"_data": "82abc"})
    with pytest.raises(LeaseLost):
        a.save(StreamPosition({"_data": "82old"}))
    assert b.position() == StreamPosition({"_data": "82abc"})


# --- the CLI over the wire (FerretDB only: mongomock cannot outlive one process) ---------------

runner = CliRunner()


@pytest.fixture
def served(tmp_path: Path, ferretdb_server: Any) -> Iterator[tuple[dict[str, str], RealMongo]]:
    """Env for CLI runs against a fresh FerretDB database seeded with pymongo, and that database."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    db = RealMongo(ferretdb_server, settings_for(remote, tmp_path), portable_docs())
    env = {
        "TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
        "TRINOGEN_MONGODB_URI": db.settings.mongodb.uri,
        "TRINOGEN_MONGODB_DATABASE": db.database,
        "TRINOGEN_GIT_REMOTE": str(remote),
        "TRINOGEN_GIT_WORKDIR": str(tmp_path / "wd"),
        "TRINOGEN_GIT_INIT_LOCAL_REMOTE": "false",
    }
    yield env, db
    db.close()


def cli(args: list[str], env: dict[str, str]) -> Any:
    return runner.invoke(app, args, env=env, catch_exceptions=False)


@HAS_FERRETDB
def test_cli_validate_sync_and_status_over_the_wire(served: tuple[dict[str, str], RealMongo]) -> None:
    """validate, sync and status run against FerretDB; status shows what sync wrote back."""
    env, db = served
    assert cli(["validate"], env).exit_code == 0
    assert cli(["status"], env).output.strip() == "no status records yet: run trinogen sync"
    db.coll.insert_one({"_id": "bad-1", "clusterId": "broken", "owner": "x", "enabled": "true"})
    checked = cli(["validate", "--output", "json"], env)
    assert checked.exit_code == ExitCode.CLUSTERS_FAILED
    data = json.loads(checked.stdout)
    assert [f["clusterId"] for f in data["clusters"]["failed"]] == ["broken"]
    assert [p["field"] for p in data["clusters"]["failed"][0]["problems"]] == ["enabled"]
    assert sorted(data["clusters"]["valid"]) == sorted(CLUSTERS)

    synced = cli(["sync", "--output", "json"], env)
    assert synced.exit_code == ExitCode.CLUSTERS_FAILED
    report = json.loads(synced.stdout)
    assert report["pushed"] is True and report["stats"]["mongoQueries"] == 1
    assert sorted(c["clusterId"] for c in report["clusters"]["added"]) == sorted(CLUSTERS)

    shown = json.loads(cli(["status", "--output", "json"], env).stdout)
    rows = {r["clusterId"]: r for r in shown["clusters"]}
    assert set(rows) == CLUSTERS | {"broken"}
    assert {rows[c]["state"] for c in CLUSTERS} == {"synced"}
    assert {rows[c]["commit"] for c in CLUSTERS} == {report["commit"]}
    assert rows["broken"]["state"] == "failed" and "enabled" in rows["broken"]["lastError"]
    text = cli(["status"], env).output
    assert f"adhoc-dev{' ' * 31} synced   {report['commit'][:10]}" in text

    remote = Path(env["TRINOGEN_GIT_REMOTE"])
    again = json.loads(cli(["sync", "--output", "json"], env).stdout)
    assert again["pushed"] is False and again["stats"]["filesChanged"] == 0
    assert commit_count(remote) == 1 and "trino-applications/broken.yaml" not in remote_tree(remote)


# --- what differs from MongoDB (README "MongoDB servers, and FerretDB"); fails if FerretDB changes


@HAS_FERRETDB
def test_ferretdb_refuses_dotted_keys(ferretdb_server: Any) -> None:
    """FerretDB v1 refuses a key containing '.', so a document with connector properties cannot be stored."""
    from pymongo.errors import WriteError

    client = ferretdb_server.client()
    try:
        coll = client["trinogen_facts"]["dotted"]
        with pytest.raises(WriteError, match="connector.name") as refused:
            coll.insert_one(next(d for d in example_docs() if d["clusterId"] == "adhoc-dev"))
        assert refused.value.code == 2
        with pytest.raises(WriteError):
            coll.insert_one({"properties": {"query": {}}, "x": {"a.b": "1"}})
    finally:
        client.drop_database("trinogen_facts")
        client.close()


@HAS_FERRETDB
def test_ferretdb_has_no_change_streams_and_no_replica_set(ferretdb_server: Any) -> None:
    """watch() is NotImplemented (238) on FerretDB and it reports no replica set name."""
    from pymongo.errors import OperationFailure

    client = ferretdb_server.client()
    try:
        with pytest.raises(OperationFailure) as failed:
            client["trinogen_facts"]["c"].watch().try_next()
        assert failed.value.code == 238
        assert "setName" not in client.admin.command("hello")
    finally:
        client.drop_database("trinogen_facts")
        client.close()


@HAS_FERRETDB
def test_watch_on_ferretdb_gives_up_with_exit_4(served: tuple[dict[str, str], RealMongo]) -> None:
    """Without change streams, `trinogen watch` exits 4 at once (no reconnect budget spent), no traceback."""
    import os
    import subprocess
    import sys
    import time

    env, _ = served
    started = time.monotonic()
    # The default watch.max_reconnects (10): with back-off, retrying would take over a minute.
    run = subprocess.run([sys.executable, "-m", "trinogen.cli", "watch"], capture_output=True,
                         text=True, timeout=60, check=False, env={**os.environ, **env})
    assert run.returncode == ExitCode.UNAVAILABLE, run.stderr[-2000:]
    assert "change streams, which need a replica set" in run.stderr
    assert "NotImplemented (238)" in run.stderr and "times in a row" not in run.stderr
    assert time.monotonic() - started < 30
    assert "Traceback" not in run.stderr


def _limited(world: World, max_bytes: int) -> None:
    """The world's source with a lower mongodb.max_document_bytes (as the settings would set)."""
    import dataclasses

    src = world.mongo.source
    src.settings = dataclasses.replace(src.settings, max_document_bytes=max_bytes)


def test_a_document_over_the_size_limit_fails_unread_and_keeps_its_files(world: World) -> None:
    """Over mongodb.max_document_bytes a document fails naming its clusterId and size, unread;
    its files stay in git and the other documents still sync (issue 19)."""
    world.sync()
    before = world.tree()
    _limited(world, 16_384)
    world.mongo.set("adhoc-dev", "padding", "x" * 20_000)
    world.mongo.set("etl-batch", "clusterConfig.worker.autoscaling.maxReplicas", 20)
    report = world.sync()
    [failed] = report.failed
    assert failed.cluster_id == "adhoc-dev" and len(failed.problems) == 1
    problem = failed.problems[0]
    assert problem.cluster == "adhoc-dev" and re.fullmatch(
        r"the document is 2\d,\d{3} bytes as BSON; at most 16,384 are read "
        r"\(mongodb\.max_document_bytes\).*", problem.message)
    assert "padding" not in problem.message  # never walked: no unknown-field problem
    after = world.tree()
    assert {p: c for p, c in after.items() if "adhoc-dev" in p} == {
        p: c for p, c in before.items() if "adhoc-dev" in p}
    assert "maxReplicas: 20" in after["trino-clusters/etl-batch/values.yaml"].decode()
    assert world.status()["adhoc-dev"]["state"] == "failed"


@HAS_FERRETDB
def test_a_value_python_cannot_decode_fails_only_its_document(tmp_path: Path,
                                                              ferretdb_server: Any) -> None:
    """A date past the year 9999 (valid BSON, no Python datetime) fails its document, named by
    its clusterId; before, pymongo's decoding error ended the whole read with a traceback."""
    from bson.datetime_ms import DatetimeMS

    world = World(tmp_path, lambda s, d: RealMongo(ferretdb_server, s, d))
    world.sync()
    world.mongo.coll.update_one({"clusterId": "adhoc-dev"},
                                {"$set": {"since": DatetimeMS(2**62)}})
    report = world.sync()
    [failed] = report.failed
    assert failed.cluster_id == "adhoc-dev"
    assert failed.problems[0].message.startswith("the document cannot be decoded (InvalidBSON")
    assert world.clusters() == CLUSTERS
