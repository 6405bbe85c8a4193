"""The cached clone's upkeep (issue 11, items 5 and 8): a corrupted pack is cloned again, a
full or read-only disk at the lock is exit 4, leftovers go, and piled-up packs are consolidated."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import commit_count, example_docs, git, remote_tree
from tests.test_sync import World, cli_env, run_cli, write_seed
from trinogen import clonecare
from trinogen.errors import ExitCode, GitUnavailable


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _packs(gitdir: Path) -> list[Path]:
    return sorted((gitdir / "objects" / "pack").glob("pack-*.pack"))


def _corrupt(path: Path) -> None:
    """Flip bytes in the middle of a file, as a bad disk sector does."""
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 16] = bytes(b ^ 0xFF for b in data[mid:mid + 16])
    path.write_bytes(bytes(data))


def test_a_corrupted_pack_is_cloned_again_through_the_cli(tmp_path: Path) -> None:
    """After a byte flip in the clone's pack, `trinogen sync` says so, clones again, exits 0."""
    remote, seed = tmp_path / "remote.git", tmp_path / "seed"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    docs = example_docs()
    write_seed(seed, docs)
    env = cli_env(tmp_path, remote, seed)
    assert run_cli(["sync"], env).returncode == ExitCode.OK
    workdir = Path(env["TRINOGEN_GIT_WORKDIR"])
    git("--git-dir", str(workdir), "repack", "-a", "-d", "-q")  # as a clone of a big remote is
    (pack,) = _packs(workdir)
    _corrupt(pack)
    docs[0]["clusterConfig"] = {**docs[0].get("clusterConfig", {}), "worker": {"replicas": 3}}
    write_seed(seed, docs)
    run = run_cli(["sync", "-o", "json"], env)
    assert "Traceback" not in run.stderr
    assert run.returncode == ExitCode.OK, run.stderr
    assert "corrupted" in run.stderr and "cloning again" in run.stderr
    assert json.loads(run.stdout)["pushed"]
    assert commit_count(remote) == 2
    assert git("--git-dir", str(workdir), "fsck", "--no-dangling").strip() == ""


def test_an_intact_pack_passes_and_a_flipped_one_fails_its_checksum(tmp_path: Path) -> None:
    """The checksum check reads git's own trailer: a pack git wrote passes, a changed byte fails."""
    repo = tmp_path / "r.git"
    git("init", "--quiet", "--bare", str(repo))
    _make_packs(repo, 1)
    (pack,) = _packs(repo)
    assert clonecare.checksum_ok(pack) and clonecare.checksum_ok(pack.with_suffix(".idx"))
    _corrupt(pack)
    assert not clonecare.checksum_ok(pack)
    with pytest.raises(clonecare.CorruptedPack):
        clonecare.verify_packs(repo)


def _loose(gitdir: Path, kind: str) -> list[Path]:
    """The loose object files of one type in a clone (read with plain git)."""
    out = git("--git-dir", str(gitdir), "cat-file", "--batch-all-objects", "--batch-check")
    files = [gitdir / "objects" / sha[:2] / sha[2:]
             for sha, typ, _ in (line.split() for line in out.splitlines()) if typ == kind]
    return [f for f in files if f.is_file()]


def test_unreadable_loose_trees_are_cloned_again_in_the_same_run(world: World) -> None:
    """Trees the fetch never reads are corrupted: listing them fails, so the run clones again and goes on."""
    world.sync()
    gitdir = world.repo.workdir
    trees = _loose(gitdir, "tree")
    assert trees
    for tree in trees:
        tree.chmod(0o644)
        _corrupt(tree)
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    report = world.sync()
    assert report.pushed
    assert b"workers: 4" in remote_tree(world.remote)["trino-clusters/adhoc-dev/values.yaml"]
    assert git("--git-dir", str(gitdir), "fsck", "--no-dangling").strip() == ""


@pytest.mark.parametrize(("git_said", "corrupted"), [
    ("error: corrupt loose object 'bd5c7eaae18db9d814e9999b181d9bcc9fff3784'", True),
    ("error: inflate: data stream error (incorrect header check)", True),
    ("fatal: packed object 1a2b (stored in ./objects/pack/pack-9f.pack) is corrupt", True),
    ("error: unable to unpack 1a2b header", True),
    ("fatal: unable to read tree 6da9d963493501939d9f60cd348979e4cee0e969", True),
    ("fatal: unable to access 'https://git.example.com/x.git/': Could not resolve host", False),
    ("fatal: unable to write new object file: No space left on device", False),
])
def test_which_git_errors_mark_the_clone_corrupted(
    tmp_path: Path, git_said: str, corrupted: bool
) -> None:
    """Only git's words for an unreadable object mark the clone to be cloned again."""
    assert clonecare.mark_if_corrupted(tmp_path, git_said) is corrupted
    assert clonecare.marked_corrupted(tmp_path) is corrupted


def test_a_clone_marked_corrupted_is_cloned_again(world: World) -> None:
    """A run that met an unreadable object leaves a mark; the next run starts from a fresh clone."""
    world.sync()
    gitdir = world.repo.workdir
    junk = gitdir / "junk-from-the-old-clone"
    junk.write_text("x\n")
    clonecare.mark_if_corrupted(gitdir, "error: corrupt loose object 'abc'")
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    assert world.sync().pushed
    assert not junk.exists() and not clonecare.marked_corrupted(gitdir)


@pytest.mark.parametrize(("call", "code"), [
    ("open", errno.EROFS), ("ftruncate", errno.ENOSPC), ("write", errno.ENOSPC),
])
def test_a_full_or_read_only_disk_at_the_lock_is_unavailable(
    world: World, monkeypatch: pytest.MonkeyPatch, call: str, code: int
) -> None:
    """The lock file cannot be created or written: GitUnavailable (exit 4) naming the lock."""
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    with monkeypatch.context() as m:
        m.setattr(os, call, fail)
        with (pytest.raises(GitUnavailable, match=r"lock .*(Read-only|No space)") as caught,
              world.repo.locked()):
            pass
    assert caught.value.exit_code == ExitCode.UNAVAILABLE


def _make_packs(gitdir: Path, count: int) -> None:
    """`count` small packs, one per `git repack` of a fresh loose object (as many runs leave)."""
    scratch = gitdir.parent / "scratch-object"
    for i in range(count):
        scratch.write_text(f"an unreachable object {i} {time.time()}\n")
        blob = git("--git-dir", str(gitdir), "hash-object", "-w", str(scratch))
        subprocess.run(["git", "--git-dir", str(gitdir), "pack-objects", "-q",
                        str(gitdir / "objects" / "pack" / "pack")], input=blob.encode(),
                       capture_output=True, check=True)
    scratch.unlink()


def test_piled_up_packs_and_stale_leftovers_are_cleaned_and_the_run_still_works(world: World) -> None:
    """Past the pack limit the clone is consolidated; old tmp packs and crash reports go, fresh ones stay."""
    world.sync()
    gitdir = world.repo.workdir
    _make_packs(gitdir, clonecare.PACK_LIMIT + 5)
    assert len(_packs(gitdir)) > clonecare.PACK_LIMIT
    old = time.time() - 2 * clonecare.STALE_AFTER
    leftovers = [gitdir / "objects" / "pack" / "tmp_pack_AbC123", gitdir / "fast_import_crash_4242"]
    for path in leftovers:
        path.write_text("left by a killed git\n")
        os.utime(path, (old, old))
    world.mongo.set("adhoc-dev", "clusterConfig.worker.replicas", 4)
    report = world.sync()
    assert report.pushed
    assert b"workers: 4" in remote_tree(world.remote)["trino-clusters/adhoc-dev/values.yaml"]
    assert len(_packs(gitdir)) <= 2  # everything in one pack (+ this run's commit)
    assert not any(p.exists() for p in leftovers)
    assert git("--git-dir", str(gitdir), "fsck", "--no-dangling").strip() == ""
    again = world.sync()
    assert again.plan is not None and again.plan.empty


def test_a_few_packs_and_fresh_temporary_files_are_left_alone(world: World) -> None:
    """Below the limit nothing is repacked, and a young tmp pack (a git running) is kept."""
    world.sync()
    gitdir = world.repo.workdir
    _make_packs(gitdir, 3)
    before = _packs(gitdir)
    fresh = gitdir / "objects" / "pack" / "tmp_pack_running"
    fresh.write_text("a git command running right now\n")
    world.sync()
    assert set(before) <= set(_packs(gitdir)) and fresh.exists()
