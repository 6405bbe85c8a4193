"""sync against real git: plan, prune safely, commit and push once, survive conflicts and kills."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import (
    ROOT,
    FakeMongo,
    commit_count,
    example_docs,
    git,
    remote_tree,
    seed_remote,
    settings_for,
)
from trinogen import pipeline
from trinogen.errors import SafetyRefusal
from trinogen.gitops import WorkingCopy
from trinogen.pipeline import SyncOptions
from trinogen.settings import Settings

UNRELATED = {"README.md": "# platform gitops\n", "trino-clusters/README.md": "hand written\n",
             "other-apps/app.yaml": "kind: Application\n"}


class World:
    """A bare remote, a mongomock source and a working copy, wired like the CLI does."""

    def __init__(self, tmp_path: Path, docs: list[dict[str, Any]] | None = None, **sections: Any) -> None:
        self.tmp = tmp_path
        self.remote = tmp_path / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.settings: Settings = settings_for(self.remote, tmp_path, **sections)
        self.mongo = FakeMongo(self.settings, example_docs() if docs is None else docs)
        self.repo = WorkingCopy(self.settings.git, str(self.remote), tmp_path / "workdir")

    def sync(self, **options: Any) -> pipeline.Report:
        return pipeline.sync(self.settings, self.mongo.source, self.repo, options=SyncOptions(**options))

    def tree(self) -> dict[str, bytes]:
        return remote_tree(self.remote)

    def commits(self) -> int:
        return commit_count(self.remote)

    def clusters(self) -> set[str]:
        return {p.split("/")[1].removesuffix(".yaml") for p in self.tree()
                if p.startswith("trino-applications/")}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_first_sync_into_an_empty_remote_creates_the_branch(world: World) -> None:
    """The first run against a remote with no commits pushes one commit with every cluster."""
    report = world.sync()
    assert report.pushed and world.commits() == 1
    assert world.clusters() == {"analytics-prod", "adhoc-dev", "etl-batch"}
    assert "argocd/trino-clusters.yaml" in world.tree()
    assert git("--git-dir", str(world.remote), "log", "-1", "--format=%an <%ae>").strip() == (
        "trinogen demo <trinogen-demo@example.invalid>")


def test_noop_sync_makes_no_commit(world: World) -> None:
    """A second run with nothing changed commits and pushes nothing."""
    world.sync()
    head = git("--git-dir", str(world.remote), "rev-parse", "main")
    report = world.sync()
    assert report.plan is not None and report.plan.empty and not report.pushed
    assert report.stats["filesWritten"] == 0 and report.stats["commits"] == 0
    assert git("--git-dir", str(world.remote), "rev-parse", "main") == head


def test_an_edited_document_updates_only_its_files(world: World) -> None:
    """Changing one document rewrites exactly that cluster's changed files in one commit."""
    world.sync()
    before = world.tree()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 3)
    report = world.sync()
    after = world.tree()
    changed = {p for p in after if after[p] != before.get(p)}
    assert changed == {"trino-clusters/adhoc-dev/values.yaml"}
    assert yaml.safe_load(after["trino-clusters/adhoc-dev/values.yaml"])["server"]["workers"] == 3
    assert [c.cluster_id for c in report.plan.by_action("update")] == ["adhoc-dev"]
    msg = git("--git-dir", str(world.remote), "log", "-1", "--format=%B")
    assert "updated: adhoc-dev" in msg and '653a1a7b8e1f4a1e9c5d8e1b' in msg


def test_disable_prunes_the_cluster(world: World) -> None:
    """enabled: false removes every file of that cluster and nothing else."""
    world.sync()
    world.mongo.set("adhoc-dev", "enabled", False)
    report = world.sync()
    assert world.clusters() == {"analytics-prod", "etl-batch"}
    assert not any("adhoc-dev" in p for p in world.tree())
    assert report.plan.by_action("prune")[0].reason.startswith("disabled")


def test_deleted_document_is_pruned_by_its_recorded_id(world: World) -> None:
    """A document that no longer exists is found through the _id in its files and pruned."""
    world.sync()
    world.mongo.coll.delete_one({"clusterId": "etl-batch"})
    report = world.sync()
    assert world.clusters() == {"analytics-prod", "adhoc-dev"}
    assert report.plan.by_action("prune")[0].reason == "document deleted"


def test_renamed_cluster_moves(world: World) -> None:
    """A document whose clusterId changes gets the new cluster; the old one is pruned."""
    world.sync()
    world.mongo.set("adhoc-dev", "clusterId", "adhoc-sandbox")
    world.sync()
    assert world.clusters() == {"analytics-prod", "adhoc-sandbox", "etl-batch"}


def test_invalid_document_keeps_its_files_and_is_reported(world: World) -> None:
    """A document that stops validating keeps its files exactly; the others still sync."""
    world.sync()
    before = world.tree()
    world.mongo.set("adhoc-dev", "trinoVersion", "latest")
    world.mongo.set("etl-batch", "clusterConfig.worker.autoscaling.maxReplicas", 20)
    report = world.sync()
    after = world.tree()
    assert {p: c for p, c in after.items() if "adhoc-dev" in p} == {
        p: c for p, c in before.items() if "adhoc-dev" in p}
    assert [f.cluster_id for f in report.failed] == ["adhoc-dev"]
    assert "maxReplicas: 20" in after["trino-clusters/etl-batch/values.yaml"].decode()


def test_document_with_broken_cluster_id_keeps_files_through_its_id(world: World) -> None:
    """Even when clusterId itself becomes invalid, the _id in the header protects the files."""
    world.sync()
    world.mongo.set("adhoc-dev", "clusterId", "Adhoc Dev!")
    report = world.sync()
    assert "adhoc-dev" in world.clusters()
    assert report.plan.by_action("prune") == []


def test_empty_source_is_refused_unless_allowed(world: World) -> None:
    """A full run that reads no documents while the repo holds clusters is refused."""
    world.sync()
    world.mongo.coll.delete_many({})
    with pytest.raises(SafetyRefusal, match="no documents at all"):
        world.sync()
    assert len(world.clusters()) == 3
    world.sync(allow_empty=True)
    assert world.clusters() == set()


def test_mass_prune_is_refused_unless_allowed(tmp_path: Path) -> None:
    """Pruning more clusters than both limits refuses the run; one deliberate prune passes."""
    docs = []
    base = next(d for d in example_docs() if d["clusterId"] == "adhoc-dev")
    for i in range(10):
        d = json.loads(json.dumps(base, default=str))
        d["_id"] = i
        d["clusterId"] = f"c{i}"
        docs.append(d)
    world = World(tmp_path, docs)
    world.sync()
    world.mongo.coll.update_many({"_id": {"$lt": 6}}, {"$set": {"enabled": False}})
    with pytest.raises(SafetyRefusal, match="prune 6 of 10"):
        world.sync()
    assert len(world.clusters()) == 10
    world.mongo.coll.update_many({"_id": {"$gt": 0}}, {"$set": {"enabled": True}})
    world.sync()  # one prune: under both limits
    assert len(world.clusters()) == 9
    world.mongo.coll.update_many({}, {"$set": {"enabled": False}})
    world.sync(allow_mass_prune=True)
    assert world.clusters() == set()


def test_targeted_prune_of_one_passes_the_guard(world: World) -> None:
    """A targeted run prunes only its cluster and is judged against the whole repository."""
    world.sync()
    world.mongo.set("adhoc-dev", "enabled", False)
    world.mongo.set("etl-batch", "enabled", False)
    report = world.sync(clusters=("adhoc-dev",))
    assert world.clusters() == {"analytics-prod", "etl-batch"}
    assert [c.cluster_id for c in report.plan.by_action("prune")] == ["adhoc-dev"]


def test_files_outside_the_roots_and_without_header_are_untouched(world: World) -> None:
    """Unrelated files, and hand-written files under the roots, survive every run."""
    seed_remote(world.remote, UNRELATED, world.tmp)
    world.sync()
    world.mongo.coll.delete_many({})
    world.sync(allow_empty=True)
    tree = world.tree()
    for path, text in UNRELATED.items():
        assert tree[path] == text.encode()
    assert world.clusters() == set()


def test_a_hand_edit_to_a_generated_file_is_reverted(world: World) -> None:
    """Files with the header are trinogen's: the next sync restores them."""
    world.sync()
    good = world.tree()["trino-clusters/adhoc-dev/values.yaml"]
    seed_remote(world.remote, {"trino-clusters/adhoc-dev/values.yaml": good.decode() + "extra: 1\n"},
                world.tmp, "hand edit")
    world.sync()
    assert world.tree()["trino-clusters/adhoc-dev/values.yaml"] == good


def test_a_foreign_file_in_the_way_fails_only_that_cluster(world: World) -> None:
    """A file without the header at a generated path is never overwritten."""
    seed_remote(world.remote, {"trino-applications/adhoc-dev.yaml": "kind: Mine\n"}, world.tmp)
    report = world.sync()
    assert world.tree()["trino-applications/adhoc-dev.yaml"] == b"kind: Mine\n"
    assert [f.cluster_id for f in report.failed] == ["adhoc-dev"]
    assert "not written by trinogen" in report.failed[0].problems[0].message
    assert world.clusters() == {"analytics-prod", "adhoc-dev", "etl-batch"}


def test_removed_connector_deletes_its_catalog_file(world: World) -> None:
    """A connector removed from the document loses its catalog file."""
    world.sync()
    world.mongo.coll.update_one({"clusterId": "adhoc-dev"},
                                {"$pull": {"connectors": {"name": "memory"}}})
    world.sync()
    assert "trino-clusters/adhoc-dev/catalog/memory.properties" not in world.tree()


def test_concurrent_pusher_forces_a_retry_without_losing_either_change(world: World) -> None:
    """A rejected push is fetched, re-planned and retried: no merge commit, no lost update."""
    world.sync()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    calls = []

    def someone_else_pushes() -> None:
        if not calls:
            seed_remote(world.remote, {"notes.txt": "theirs\n"}, world.tmp, "their change")
        calls.append(1)

    report = pipeline.sync(world.settings, world.mongo.source, world.repo,
                           options=SyncOptions(before_push=someone_else_pushes))
    assert report.pushed and report.stats["pushAttempts"] == 2
    tree = world.tree()
    assert tree["notes.txt"] == b"theirs\n"
    assert "workers: 4" in tree["trino-clusters/adhoc-dev/values.yaml"].decode()
    merges = git("--git-dir", str(world.remote), "rev-list", "--merges", "main").strip()
    assert merges == ""
    assert world.commits() == 3  # ours, theirs, ours again (once)


def test_dry_run_changes_nothing_anywhere(world: World) -> None:
    """--dry-run shows the diff but leaves remote, source and status untouched."""
    world.sync()
    head = git("--git-dir", str(world.remote), "rev-parse", "main")
    status_before = list(world.mongo.source.status.find({}))
    docs_before = list(world.mongo.coll.find({}))
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 7)
    docs_before = list(world.mongo.coll.find({}))
    report = world.sync(dry_run=True)
    assert "+  workers: 7" in report.diff and "-  workers: 1" in report.diff
    assert git("--git-dir", str(world.remote), "rev-parse", "main") == head
    assert list(world.mongo.coll.find({})) == docs_before
    assert list(world.mongo.source.status.find({})) == status_before


def test_status_records_commit_hash_and_errors(world: World) -> None:
    """After a push, each cluster's status holds the commit and render hash; failures the error."""
    report = world.sync()
    status = {d["_id"]: d for d in world.mongo.source.status.find({})}
    assert {status[c]["commit"] for c in world.clusters()} == {report.commit}
    assert all(status[c]["state"] == "synced" and status[c]["renderHash"] for c in world.clusters())
    world.mongo.set("adhoc-dev", "enabled", "no")
    world.sync()
    status = {d["_id"]: d for d in world.mongo.source.status.find({})}
    assert status["adhoc-dev"]["state"] == "failed"
    assert "enabled" in status["adhoc-dev"]["lastError"]
    assert status["adhoc-dev"]["commit"] == report.commit  # last synced commit kept


def test_cache_leftovers_never_leak_into_a_commit(world: World) -> None:
    """An unpushed commit and stale locks left in the cache clone never reach the remote."""
    world.sync()
    tip = git("--git-dir", str(world.remote), "rev-parse", "main").strip()
    wd = str(world.repo.workdir)
    junk_tree = subprocess.run(["git", "--git-dir", wd, "mktree"], input="", text=True,
                               capture_output=True, check=True).stdout.strip()
    junk = git("--git-dir", wd, "commit-tree", junk_tree, "-p", tip, "-m", "junk from a killed run").strip()
    git("--git-dir", wd, "update-ref", "refs/heads/main", junk)
    git("--git-dir", wd, "update-ref", "refs/trinogen/pending", junk)
    (world.repo.workdir / "refs" / "heads" / "main.lock").write_text(junk)
    world.mongo.set("etl-batch", "owner", "someone_else")
    assert world.sync().pushed
    new = git("--git-dir", str(world.remote), "rev-parse", "main").strip()
    assert git("--git-dir", str(world.remote), "rev-parse", f"{new}^").strip() == tip
    changed = git("--git-dir", str(world.remote), "diff", "--name-only", tip, new).split()
    # the owner is a label of the Application and of the pods (values.yaml): exactly those two
    assert changed == ["trino-applications/etl-batch.yaml", "trino-clusters/etl-batch/values.yaml"]


# --- the real CLI as a subprocess ----------------------------------------------------------------


def cli_env(tmp_path: Path, remote: Path, seed: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRINOGEN_")}
    env.update({
        "TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
        "TRINOGEN_MONGODB_SEED_DIR": str(seed),
        "TRINOGEN_GIT_REMOTE": str(remote),
        "TRINOGEN_GIT_WORKDIR": str(tmp_path / "cli-workdir"),
        "TRINOGEN_GIT_INIT_LOCAL_REMOTE": "false",
        **extra,
    })
    return env


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trinogen.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def write_seed(seed: Path, docs: list[dict[str, Any]]) -> None:
    from bson import json_util

    seed.mkdir(exist_ok=True)
    for old in seed.glob("*.json"):
        old.unlink()
    (seed / "docs.json").write_text(json_util.dumps(docs))


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after-write", "after-commit", "after-push"])
def test_sigkill_at_any_point_then_a_normal_run_converges(tmp_path: Path, point: str) -> None:
    """A sync killed at a named point leaves the remote unchanged or complete; the next run converges."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    seed = tmp_path / "seed"
    docs = example_docs()
    write_seed(seed, docs)
    env = cli_env(tmp_path, remote, seed)
    assert run_cli(["sync"], env).returncode == 0
    docs[0]["clusterConfig"] = {"worker": {"replicas": 4}}  # adhoc-dev (profile small)
    docs[2]["enabled"] = False
    write_seed(seed, docs)
    killed = run_cli(["sync"], {**env, "TRINOGEN_TEST_KILL_AT": point})
    assert killed.returncode == -signal.SIGKILL
    expected_commits = 2 if point == "after-push" else 1
    assert commit_count(remote) == expected_commits  # unchanged, or one complete commit
    done = run_cli(["sync", "--output", "json"], env)
    assert done.returncode == 0, done.stderr
    assert commit_count(remote) == 2
    tree = remote_tree(remote)
    assert not any(docs[2]["clusterId"] in p for p in tree)
    assert "workers: 4" in tree[f"trino-clusters/{docs[0]['clusterId']}/values.yaml"].decode()
    again = json.loads(run_cli(["sync", "--output", "json"], env).stdout)
    assert again["stats"]["filesChanged"] == 0  # converged


@pytest.mark.slow
def test_two_syncs_at_once_never_interleave(tmp_path: Path) -> None:
    """Two CLI syncs on one working copy serialise on the lock: one commit, both succeed."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    seed = tmp_path / "seed"
    write_seed(seed, example_docs())
    env = cli_env(tmp_path, remote, seed)
    procs = [subprocess.Popen([sys.executable, "-m", "trinogen.cli", "sync", "--output", "json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    reports = [json.loads(o[0]) for o in outs]
    assert sorted(r["pushed"] for r in reports) == [False, True]
    assert commit_count(remote) == 1


def test_lock_left_by_a_killed_process_does_not_block(tmp_path: Path, world: World) -> None:
    """flock dies with its process: a lock file left behind is no obstacle."""
    lock = world.repo.workdir.parent / f"{world.repo.workdir.name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl,os,sys,time;fd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT);"
        "fcntl.flock(fd,fcntl.LOCK_EX);print('locked',flush=True);time.sleep(60)"), str(lock)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    holder.kill()
    holder.wait()
    assert lock.exists()
    assert world.sync().pushed


def test_a_held_lock_makes_the_second_run_wait_then_fail_clearly(world: World) -> None:
    """While one run holds the lock, another gives up after lock_timeout with a clear error."""
    from trinogen.errors import GitUnavailable

    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with world.repo.locked():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(5)
    other = WorkingCopy(world.settings.git, str(world.remote), world.repo.workdir)
    try:
        with pytest.raises(GitUnavailable, match="another trinogen run holds"):
            with other.locked(timeout=0.3):
                pass
    finally:
        release.set()
        t.join()


@pytest.mark.slow
def test_acceptance_sequence(tmp_path: Path) -> None:
    """sync, sync, edit, sync, disable, sync, invalid, sync, empty, sync: exactly 3 new commits."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    seed_remote(remote, UNRELATED, tmp_path)
    seed = tmp_path / "seed"
    docs = example_docs()
    write_seed(seed, docs)
    env = cli_env(tmp_path, remote, seed)
    codes = [run_cli(["sync"], env).returncode, run_cli(["sync"], env).returncode]
    docs[0]["clusterConfig"] = {"worker": {"replicas": 6}}  # adhoc-dev (profile small)
    write_seed(seed, docs)
    codes.append(run_cli(["sync"], env).returncode)
    docs[2]["enabled"] = False
    write_seed(seed, docs)
    codes.append(run_cli(["sync"], env).returncode)
    before_invalid = remote_tree(remote)
    docs[1]["trinoVersion"] = "nope"
    write_seed(seed, docs)
    codes.append(run_cli(["sync"], env).returncode)
    write_seed(seed, [])
    empty = run_cli(["sync"], env)
    codes.append(empty.returncode)
    assert codes == [0, 0, 0, 0, 1, 3], empty.stderr
    assert "--allow-empty" in empty.stderr
    assert commit_count(remote) == 1 + 3
    tree = remote_tree(remote)
    invalid = docs[1]["clusterId"]
    assert {p: c for p, c in tree.items() if invalid in p} == {
        p: c for p, c in before_invalid.items() if invalid in p}
    assert any(invalid in p for p in tree)
    for path, text in UNRELATED.items():
        assert tree[path] == text.encode()


# --- the render cache ------------------------------------------------------------------------


def test_unchanged_documents_are_served_from_the_render_cache(world: World) -> None:
    """A second run re-renders nothing; a changed document is rendered again alone."""
    first = world.sync()
    assert first.stats["cacheHits"] == 0 and first.stats["clustersRendered"] == 3
    second = world.sync()
    assert second.stats["cacheHits"] == 3 and second.stats["clustersRendered"] == 0
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 2)
    third = world.sync()
    assert third.stats["cacheHits"] == 2 and third.stats["clustersRendered"] == 1
    assert [c.cluster_id for c in third.plan.by_action("update")] == ["adhoc-dev"]


def test_targeted_syncs_keep_the_other_clusters_cached(world: World) -> None:
    """A full sync after targeted ones (what `watch` runs) with no document change renders
    nothing: a targeted sync keeps the entries of the clusters it did not read (issue 22)."""
    world.sync()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 2)
    targeted = world.sync(clusters=("adhoc-dev",))
    assert targeted.stats["clustersRendered"] == 1
    assert world.sync(clusters=("etl-batch",)).stats["clustersRendered"] == 0
    full = world.sync()
    assert (full.stats["clustersRendered"], full.stats["cacheHits"]) == (0, 3)
    assert full.plan.empty


class ReadSpy(WorkingCopy):
    """The real working copy, recording every blob a run reads from git (heads or whole)."""

    asked: set[str]

    def heads(self, blobs: Any) -> dict[str, bytes]:
        wanted = set(blobs)
        self.asked |= wanted
        return super().heads(wanted)

    def blobs(self, blobs: Any) -> dict[str, bytes]:
        wanted = set(blobs)
        self.asked |= wanted
        return super().blobs(wanted)


def test_a_targeted_sync_reads_no_other_clusters_files(world: World) -> None:
    """A targeted sync (each watch batch) learns the headers of the other clusters' files from
    the render cache: it reads none of them from git, and still commits only its cluster (issue 22)."""
    world.sync()
    world.repo = spy = ReadSpy(world.settings.git, str(world.remote), world.tmp / "workdir")
    spy.asked = set()
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 2)
    report = world.sync(clusters=("adhoc-dev",))
    assert [c.cluster_id for c in report.plan.by_action("update")] == ["adhoc-dev"]
    listing = git("--git-dir", str(world.remote), "ls-tree", "-r", "main").splitlines()
    others = {line.split()[2] for line in listing
              if "analytics-prod" in line or "etl-batch" in line}
    assert len(others) >= 4
    assert not spy.asked & others


def test_a_cache_hit_needs_the_files_in_the_repository(world: World) -> None:
    """A hand edit makes the cached entry useless: the cluster is rendered and restored."""
    world.sync()
    good = world.tree()["trino-clusters/etl-batch/values.yaml"]
    seed_remote(world.remote, {"trino-clusters/etl-batch/values.yaml": good.decode() + "x: 1\n"},
                world.tmp)
    report = world.sync()
    assert report.stats["cacheHits"] == 2
    assert world.tree()["trino-clusters/etl-batch/values.yaml"] == good


def test_a_template_change_invalidates_the_cache(world: World, tmp_path: Path) -> None:
    """Another template set has another fingerprint: every cluster renders again."""
    from trinogen.settings import replace

    world.sync()
    custom = tmp_path / "tpl"
    custom.mkdir()
    (custom / "catalog.properties.j2").write_text(
        (ROOT / "templates" / "catalog.properties.j2").read_text() + "{# a comment #}\n")
    world.settings = replace(world.settings, output={"templates_dir": str(custom)})
    report = world.sync()
    assert report.stats["cacheHits"] == 0 and report.plan.empty


def test_an_unreadable_cache_is_ignored(world: World) -> None:
    """A corrupted cache file costs a re-render, never a wrong result."""
    world.sync()
    (world.repo.workdir / "trinogen-render-cache").write_bytes(b"{not marshal")
    report = world.sync()
    assert report.stats["cacheHits"] == 0 and report.plan.empty


def test_a_rotated_secret_version_misses_the_cache(tmp_path: Path) -> None:
    """A document whose Vault secret changed version is rendered again with the new pin."""
    from trinogen.secrets import Secret, SecretData

    world = World(tmp_path, secrets={"check": True})
    version = {"n": 1}

    class Reader:
        requests = 0

        def read(self, path: str) -> SecretData:
            Reader.requests += 1
            return SecretData(version["n"], {"MYSQL_RDS_PASSWORD": Secret("pw"), "password": Secret("pw")})

    def sync() -> pipeline.Report:
        return pipeline.sync(world.settings, world.mongo.source, world.repo, reader_factory=Reader)

    sync()
    assert sync().stats["cacheHits"] == 3
    version["n"] = 2
    report = sync()
    assert report.stats["cacheHits"] == 1  # adhoc-dev uses no secret
    assert sorted(c.cluster_id for c in report.plan.by_action("update")) == ["analytics-prod", "etl-batch"]
    es = world.tree()["trino-clusters/etl-batch/secrets/externalsecret.yaml"].decode()
    assert 'version: "2"' in es


@pytest.mark.slow
def test_an_unreadable_seed_file_prunes_nothing_as_deleted(tmp_path: Path) -> None:
    """When a seed file cannot be read, clusters whose documents are missing are kept, not pruned."""
    from bson import json_util

    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    seed = tmp_path / "seed"
    seed.mkdir()
    docs = example_docs()
    (seed / "a.json").write_text(json_util.dumps(docs[:2]))
    (seed / "b.json").write_text(json_util.dumps(docs[2]))
    env = cli_env(tmp_path, remote, seed)
    assert run_cli(["sync"], env).returncode == 0
    (seed / "b.json").write_text(json_util.dumps(docs[2])[:-10])  # truncated: not JSON any more
    docs[0]["clusterConfig"] = {"worker": {"replicas": 3}}
    (seed / "a.json").write_text(json_util.dumps(docs[:2]))
    run = run_cli(["sync"], env)
    assert run.returncode == 1 and "b.json" in run.stdout and "Traceback" not in run.stderr
    tree = remote_tree(remote)
    assert f"trino-applications/{docs[2]['clusterId']}.yaml" in tree  # kept, not "deleted"
    assert "workers: 3" in tree[f"trino-clusters/{docs[0]['clusterId']}/values.yaml"].decode()


def test_nested_output_directories_sync_and_prune(tmp_path: Path) -> None:
    """Output roots may have several segments; clusters under them are found and pruned."""
    world = World(tmp_path, output={"clusters_dir": "gitops/trino/clusters",
                                    "applications_dir": "gitops/trino/apps", "root_app": ""})
    world.sync()
    tree = world.tree()
    assert "gitops/trino/apps/adhoc-dev.yaml" in tree
    assert "gitops/trino/clusters/adhoc-dev/values.yaml" in tree
    app = yaml.safe_load(tree["gitops/trino/apps/adhoc-dev.yaml"])
    assert app["spec"]["sources"][0]["helm"]["valueFiles"] == [
        "$values/gitops/trino/clusters/adhoc-dev/values.yaml"]
    world.mongo.set("adhoc-dev", "enabled", False)
    world.sync()
    assert not any("adhoc-dev" in p for p in world.tree())
    assert world.sync().plan.empty
