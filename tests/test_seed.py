"""Seed files of the embedded database: a document's identity must be stable across runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bson import json_util
from typer.testing import CliRunner

from tests.conftest import ROOT, commit_count, example_docs, git, remote_tree
from trinogen.cli import app
from trinogen.errors import ExitCode
from trinogen.source import load_seed

runner = CliRunner()


def seeded_env(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, str]:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "docs.json").write_text(json_util.dumps(docs))
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    return {
        "TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
        "TRINOGEN_MONGODB_SEED_DIR": str(seed),
        "TRINOGEN_GIT_REMOTE": str(remote),
        "TRINOGEN_GIT_WORKDIR": str(tmp_path / "wd"),
        "TRINOGEN_GIT_INIT_LOCAL_REMOTE": "false",
    }


def sync(env: dict[str, str]) -> Any:
    return runner.invoke(app, ["sync", "--output", "json"], env=env, catch_exceptions=False)


def test_a_seed_document_without_id_is_refused_naming_file_and_index(tmp_path: Path) -> None:
    """No _id: reported as failed with its file and index; the others sync; a second run commits nothing."""
    docs = example_docs()
    del docs[1]["_id"]  # adhoc-dev, analytics-prod, etl-batch (sorted file names)
    env = seeded_env(tmp_path, docs)
    first = sync(env)
    assert first.exit_code == ExitCode.CLUSTERS_FAILED, first.output
    report = json.loads(first.stdout)
    failed = report["clusters"]["failed"]
    assert [f["clusterId"] for f in failed] == [docs[1]["clusterId"]]
    message = failed[0]["problems"][0]["message"]
    assert "docs.json item 1" in message and '"_id"' in message
    assert sorted(c["clusterId"] for c in report["clusters"]["added"]) == sorted(
        d["clusterId"] for d in docs if "_id" in d)
    remote = Path(env["TRINOGEN_GIT_REMOTE"])
    assert commit_count(remote) == 1
    assert sync(env).exit_code == ExitCode.CLUSTERS_FAILED
    assert commit_count(remote) == 1  # nothing new: the document did not get a new identity


def test_a_synced_document_that_loses_its_id_keeps_its_files(tmp_path: Path) -> None:
    """Removing _id from a synced seed document fails it; its cluster is neither pruned nor rewritten."""
    docs = example_docs()
    env = seeded_env(tmp_path, docs)
    assert sync(env).exit_code == 0
    remote = Path(env["TRINOGEN_GIT_REMOTE"])
    before = remote_tree(remote)
    del docs[0]["_id"]
    (Path(env["TRINOGEN_MONGODB_SEED_DIR"]) / "docs.json").write_text(json_util.dumps(docs))
    assert sync(env).exit_code == ExitCode.CLUSTERS_FAILED
    assert remote_tree(remote) == before and commit_count(remote) == 1


def test_load_seed_keeps_documents_with_an_id_as_they_are(tmp_path: Path) -> None:
    """Documents with an _id of any kind are returned unchanged; only the one without is refused."""
    items = [{"_id": 7, "clusterId": "a"}, {"clusterId": "b"}, {"_id": None, "clusterId": "c"}]
    (tmp_path / "s.json").write_text(json.dumps(items))
    docs, refused, complete = load_seed(tmp_path)
    assert [doc for _, doc in docs] == [items[0], items[2]] and complete
    assert [r.body.get("clusterId") for r in refused] == ["b"]
    assert refused[0].unreadable is not None and "s.json item 1" in refused[0].unreadable
