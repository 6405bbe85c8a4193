"""Retries: losing git's ref-lock race on the remote is a conflict to retry, not a refusal
(issue 11, item 7), and a retry after a concurrent change to a cache hit renders it (item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import commit_count, git, remote_tree, seed_remote
from tests.test_sync import World
from trinogen import pipeline
from trinogen.gitcmd import lost_ref_race
from trinogen.pipeline import SyncOptions


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _racing_hook(world: World) -> Path:
    """A pre-receive hook that, once, lets another clone push first: the pending push then fails
    its ref update with git's own "cannot lock ref ... is at X but expected Y"."""
    other = world.tmp / "other"
    git("clone", "--quiet", str(world.remote), str(other))
    (other / "notes.txt").write_text("theirs\n")
    git("add", "notes.txt", cwd=other)
    git("-c", "user.name=o", "-c", "user.email=o@example.invalid", "commit", "-q", "-m", "theirs",
        cwd=other)
    once = world.tmp / "race-once"
    once.write_text("")
    hook = world.remote / "hooks" / "pre-receive"
    hook.write_text(f"""#!/bin/sh
cat >/dev/null
if [ -e "{once}" ]; then
  rm "{once}"
  env -i PATH="$PATH" git -C "{other}" push -q origin HEAD:main
fi
exit 0
""")
    hook.chmod(0o755)
    return once


def test_a_lost_ref_lock_race_is_retried(world: World) -> None:
    """Another pusher wins between our push's negotiation and its ref update: re-plan, push, exit 0."""
    world.sync()
    once = _racing_hook(world)
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    report = world.sync()
    assert not once.exists()  # the race did happen
    assert report.pushed and report.stats["pushAttempts"] == 2
    tree = remote_tree(world.remote)
    assert tree["notes.txt"] == b"theirs\n"
    assert b"workers: 4" in tree["trino-clusters/adhoc-dev/values.yaml"]
    assert commit_count(world.remote) == 3  # ours, theirs, ours again


@pytest.mark.parametrize(("text", "race"), [
    ("remote: error: cannot lock ref 'refs/heads/main': is at 803826b9 but expected dbd5b60b", True),
    (("[remote rejected] main -> main (cannot lock ref 'refs/heads/main': is at 1a2b3c4d5e6f "
      "but expected 0f9e8d7c6b5a)"), True),
    ("[remote rejected] main -> main (incorrect old value provided)", True),
    ("[remote rejected] main -> main (pre-receive hook declined)", False),
    ("[remote rejected] main -> main (failed to update ref)", False),  # e.g. the remote's disk
    ("! [rejected] main -> main (fetch first)", False),  # a plain conflict, handled elsewhere
])
def test_which_push_errors_are_a_lost_ref_race(text: str, race: bool) -> None:
    """Only git's ref-lock race texts count as the race; a hook's refusal never does."""
    assert lost_ref_race(text) is race


def test_a_retry_renders_a_cache_hit_someone_changed(world: World) -> None:
    """In process: etl-batch is a cache hit; a person edits its values before our push; the
    retry renders it again instead of failing with "no content for a changed file"."""
    world.sync()
    world.sync()  # the render cache now answers every cluster
    path = "trino-clusters/etl-batch/values.yaml"
    expected = remote_tree(world.remote)[path]
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    calls: list[int] = []

    def a_person_commits() -> None:
        if not calls:
            seed_remote(world.remote, {path: expected.decode() + "# tuned by hand\n"},
                        world.tmp, "tune etl-batch")
        calls.append(1)

    report = pipeline.sync(world.settings, world.mongo.source, world.repo,
                           options=SyncOptions(before_push=a_person_commits))
    assert report.pushed and report.stats["pushAttempts"] == 2
    tree = remote_tree(world.remote)
    assert tree[path] == expected
    assert b"workers: 4" in tree["trino-clusters/adhoc-dev/values.yaml"]
