"""trinogen.pipeline through its ports, with dict-backed fakes: the path from documents to one
pushed commit (desired tree, render cache, publishing, status, targets) without git or MongoDB.

The real adapters run the same path in tests/test_sync.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import demo_settings, example_docs
from tests.fakes import FakeCache, FakeReader, FakeRepo, FakeSource
from trinogen import pipeline
from trinogen.errors import GitUnavailable, SafetyRefusal
from trinogen.pipeline import SyncOptions
from trinogen.settings import Settings
from trinogen.source import doc_key

CLUSTERS = ["adhoc-dev", "analytics-prod", "etl-batch"]
REMOTE = "https://git.example.com/platform/trino-gitops.git"


def settings(**sections: dict[str, Any]) -> Settings:
    return demo_settings(git={"remote": REMOTE, **sections.pop("git", {})}, **sections)


def source() -> FakeSource:
    return FakeSource({doc_key(d["_id"]): d for d in example_docs()})


def edit(src: FakeSource, cid: str, **fields: Any) -> None:
    key = next(k for k, d in src.docs.items() if d["clusterId"] == cid)
    src.docs[key] = {**src.docs[key], **fields}


def apps(repo: FakeRepo) -> list[str]:
    return sorted(p.removeprefix("trino-applications/").removesuffix(".yaml")
                  for p in repo.files if p.startswith("trino-applications/"))


def test_first_sync_writes_every_cluster_in_one_commit_then_nothing() -> None:
    """The first sync adds every valid cluster in one commit; the next one commits nothing."""
    src, repo = source(), FakeRepo()
    report = pipeline.sync(settings(), src, repo)
    assert report.pushed and len(repo.commits) == 1 and apps(repo) == CLUSTERS
    assert sorted(c.cluster_id for c in report.plan.by_action("add")) == CLUSTERS  # type: ignore[union-attr]
    again = pipeline.sync(settings(), src, repo)
    assert not again.pushed and len(repo.commits) == 1 and again.stats["filesChanged"] == 0


def test_status_rows_reach_the_source_after_the_push() -> None:
    """After a push every cluster is recorded as synced with the commit; a no-op writes nothing."""
    src, repo = source(), FakeRepo()
    pipeline.sync(settings(), src, repo)
    assert sorted(src.status) == CLUSTERS
    assert {r["state"] for r in src.status.values()} == {"synced"}
    assert {r["commit"] for r in src.status.values()} == {"commit-1"}
    assert pipeline.sync(settings(), src, repo).stats["statusWrites"] == 0


def test_the_render_cache_serves_unchanged_documents() -> None:
    """With a cache, unchanged documents are not rendered again; an edited one is."""
    src, repo = source(), FakeRepo(cache=FakeCache())
    assert pipeline.sync(settings(), src, repo).stats["cacheHits"] == 0
    noop = pipeline.sync(settings(), src, repo)
    assert (noop.stats["cacheHits"], noop.stats["clustersRendered"]) == (3, 0)
    edit(src, "adhoc-dev", owner="another_team")
    one = pipeline.sync(settings(), src, repo)
    assert (one.stats["cacheHits"], one.stats["clustersRendered"]) == (2, 1)
    assert [c.cluster_id for c in one.plan.by_action("update")] == ["adhoc-dev"]  # type: ignore[union-attr]


def test_a_cache_entry_is_not_used_when_the_repository_lost_its_files() -> None:
    """A cached document whose files are gone from the repository is rendered and written again."""
    src, repo = source(), FakeRepo(cache=FakeCache())
    pipeline.sync(settings(), src, repo)
    del repo.files["trino-applications/etl-batch.yaml"]
    report = pipeline.sync(settings(), src, repo)
    assert report.stats["cacheHits"] == 2
    assert [(c.path, c.action) for c in report.plan.files] == [  # type: ignore[union-attr]
        ("trino-applications/etl-batch.yaml", "add")]


SECRETS = {"secret/trino/analytics-prod": {"MYSQL_RDS_PASSWORD": "pw"},
           "secret/trino/etl-batch/warehouse": {"password": "pw"}}


def test_a_rotated_secret_renders_only_the_clusters_using_it() -> None:
    """A new version of a secret misses the cache for exactly the clusters that use it."""
    src, repo = source(), FakeRepo(cache=FakeCache())
    reader = FakeReader(SECRETS, {p: 1 for p in SECRETS})
    checked = settings(secrets={"check": True})
    pipeline.sync(checked, src, repo, reader_factory=lambda: reader)
    reader.versions["secret/trino/etl-batch/warehouse"] = 2
    report = pipeline.sync(checked, src, repo, reader_factory=lambda: reader)
    assert report.stats["cacheHits"] == 2
    assert [c.cluster_id for c in report.plan.by_action("update")] == ["etl-batch"]  # type: ignore[union-attr]
    assert 'version: "2"' in repo.files["trino-clusters/etl-batch/secrets/externalsecret.yaml"].decode()


def test_a_missing_secret_fails_only_its_cluster() -> None:
    """A Vault path that does not exist fails the cluster using it; the others are written."""
    src, repo = source(), FakeRepo()
    reader = FakeReader({"secret/trino/analytics-prod": {"MYSQL_RDS_PASSWORD": "pw"}})
    report = pipeline.sync(settings(secrets={"check": True}), src, repo,
                           reader_factory=lambda: reader)
    assert [(f.cluster_id, f.stage) for f in report.failed] == [("etl-batch", "secrets")]
    assert "secret/trino/etl-batch/warehouse" in report.failed[0].problems[0].message
    assert apps(repo) == ["adhoc-dev", "analytics-prod"]
    assert sorted(reader.paths_read) == sorted(SECRETS)  # each distinct path read once


def test_a_rejected_push_is_planned_again_against_the_moved_remote() -> None:
    """When the remote moved on, the plan is made again and pushed once; nothing is lost."""
    src, repo = source(), FakeRepo()
    repo.reject_pushes = 1
    repo.moves = {"elsewhere/README": b"someone else's change\n"}
    report = pipeline.sync(settings(), src, repo)
    assert report.pushed and report.stats["pushAttempts"] == 2 and len(repo.commits) == 1
    assert repo.refreshes == 2 and "elsewhere/README" in repo.files


def test_a_push_rejected_more_often_than_the_retries_is_unavailable() -> None:
    """A remote that keeps moving on fails the run after git.push_retries re-plans."""
    repo = FakeRepo()
    repo.reject_pushes = 10
    with pytest.raises(GitUnavailable, match="rejected 3 times"):
        pipeline.sync(settings(git={"push_retries": 2}), source(), repo)
    assert repo.commits == []


def test_dry_run_shows_the_diff_and_changes_nothing() -> None:
    """--dry-run returns the plan and its diff; nothing is committed and no status written."""
    src, repo = source(), FakeRepo()
    report = pipeline.sync(settings(), src, repo, options=SyncOptions(dry_run=True))
    assert repo.commits == [] and src.status == {}
    assert "+++ b/trino-applications/adhoc-dev.yaml" in report.diff


def test_a_refused_plan_raises_before_anything_is_written() -> None:
    """An empty source against a repository with clusters is refused; nothing is committed."""
    src, repo = source(), FakeRepo()
    pipeline.sync(settings(), src, repo)
    src.docs.clear()
    with pytest.raises(SafetyRefusal, match="--allow-empty"):
        pipeline.sync(settings(), src, repo)
    assert len(repo.commits) == 1


def test_a_targeted_run_reads_and_plans_only_its_targets() -> None:
    """--cluster reads the targets' documents only and prunes only among them."""
    src, repo = source(), FakeRepo()
    pipeline.sync(settings(), src, repo)
    edit(src, "adhoc-dev", enabled=False)
    edit(src, "etl-batch", enabled=False)
    report = pipeline.sync(settings(), src, repo, options=SyncOptions(clusters=("etl-batch",)))
    assert [(c.cluster_id, c.action) for c in report.plan.clusters] == [("etl-batch", "prune")]  # type: ignore[union-attr]
    assert apps(repo) == ["adhoc-dev", "analytics-prod"]


def test_a_watch_batch_finds_a_deleted_document_through_its_recorded_id() -> None:
    """A changed _id whose document is gone prunes the cluster recorded with that _id."""
    src, repo = source(), FakeRepo()
    pipeline.sync(settings(), src, repo)
    gone = next(k for k, d in src.docs.items() if d["clusterId"] == "etl-batch")
    del src.docs[gone]
    report = pipeline.sync(settings(), src, repo, options=SyncOptions(doc_ids=(gone,)))
    assert [(c.cluster_id, c.action, c.reason) for c in report.plan.clusters] == [  # type: ignore[union-attr]
        ("etl-batch", "prune", "document deleted")]


def test_validate_and_render_use_the_same_source_port(tmp_path: Any) -> None:
    """validate lists the valid clusters; render writes them into a directory."""
    src = source()
    assert sorted(pipeline.validate(settings(), src).rendered) == CLUSTERS
    report = pipeline.render(settings(), src, tmp_path)
    assert sorted(report.rendered) == CLUSTERS
    assert (tmp_path / "trino-applications" / "etl-batch.yaml").is_file()
