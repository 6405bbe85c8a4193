"""The GitOps repository: GitPython, git plumbing and the filesystem only.

trinogen keeps its own **bare** clone in a cache directory (`git.workdir`) and never checks files
out. Every run takes an exclusive lock on it and fetches `origin/<branch>`; a commit is built
from that fetched tip plus the planned changes with one `git fast-import` (no files written to
disk, no index), then pushed. Nothing from an earlier run can leak into a commit: the new commit's
only parent is the tip just fetched. A push rejected because the remote moved on is reported to the
caller, which re-plans and retries; nothing is ever merged.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from trinogen import clonecare
from trinogen.cache import RenderCache
from trinogen.errors import GitUnavailable
from trinogen.gitcmd import (
    GitFailed,
    Listing,
    Unusable,
    cat_blobs,
    fast_import,
    git_boundary,
    git_env,
    is_network,
    listing,
    lost_ref_race,
    remote_says,
    run_git,
    stderr_text,
)
from trinogen.outdir import write_tree
from trinogen.plan import FileChange, Layout
from trinogen.ports import PushOutcome
from trinogen.render import HEAD_BYTES
from trinogen.settings import GitSettings, is_local_path

if TYPE_CHECKING:  # GitPython is imported when a push runs, not at start-up
    import git

log = logging.getLogger(__name__)

PENDING_REF = "refs/trinogen/pending"


def default_workdir(remote: str, environ: Mapping[str, str] = os.environ) -> Path:
    cache = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(remote.encode()).hexdigest()[:12]
    return cache / "trinogen" / f"gitops-{digest}"


__all__ = ["PushOutcome", "WorkingCopy", "default_workdir", "write_tree"]


def _record_holder(fd: int, lock_path: Path) -> None:
    """Write our pid into the lock file (for a person looking); a full or read-only disk here
    means every later step fails too, so it is said now, as the documented exit 4."""
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as e:
        raise GitUnavailable(f"cannot write the lock {lock_path} of the working copy: "
                             f"{e.strerror or e} (is the disk full or read-only?)") from e


class WorkingCopy:
    """trinogen's cached bare clone of the GitOps repository."""

    def __init__(self, settings: GitSettings, remote: str, workdir: Path) -> None:
        self.settings = settings
        self.remote = remote
        self.workdir = workdir
        self.tip: str | None = None  # origin/<branch> after refresh(); None for an empty remote
        self._pending: str | None = None
        self._cache: RenderCache | None = None  # the last render cache handed out (issue 22)
        self._listed: Listing | None = None  # the last tree listed (issue 22)

    @property
    def remote_ref(self) -> str:
        return f"refs/remotes/origin/{self.settings.branch}"

    # --- locking ---------------------------------------------------------------------------

    @contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """Exclusive lock on the clone, released when the process ends, even by SIGKILL.

        flock() locks belong to the open file: a killed process cannot leave a stale lock.
        """
        timeout = self.settings.lock_timeout if timeout is None else timeout
        lock_path = self.workdir.parent / f"{self.workdir.name}.lock"
        try:
            self.workdir.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise GitUnavailable(f"cannot create the lock {lock_path} for the working copy: "
                                 f"{e.strerror or e}") from e
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise GitUnavailable(
                            f"another trinogen run holds the working copy {self.workdir} "
                            f"(lock {lock_path}) for more than {timeout:.0f}s; try again later"
                        ) from None
                    time.sleep(0.05)
            _record_holder(fd, lock_path)
            yield
        finally:
            os.close(fd)  # releases the lock

    # --- refresh -----------------------------------------------------------------------------

    @git_boundary("fetching the GitOps repository")
    def refresh(self) -> None:
        """Fetch origin/<branch> into the cache clone (cloning it first if needed).

        A cache that is not a bare clone of this remote, or is corrupted, is replaced by a fresh
        clone; if even that fails, the remote is unavailable.
        """
        if self.settings.init_local_remote:
            self.ensure_local_remote()
        self._pending = None
        try:
            self._check_clone()
            clonecare.verify_packs(self.workdir)
            self._remove_stale_locks()
            self._fetch()
            self._maintain()
            return
        except GitUnavailable:
            raise
        except (subprocess.SubprocessError, Unusable, clonecare.CorruptedPack, OSError) as e:
            if self.workdir.exists():
                log.warning("cached clone %s is unusable (%s); cloning again", self.workdir,
                            str(e)[:200])
        self._reclone()

    @git_boundary("creating the local remote")
    def ensure_local_remote(self) -> None:
        """git.init_local_remote: create an empty bare repository at a local remote path."""
        if not is_local_path(self.remote) or Path(self.remote).exists():
            return
        log.info("creating an empty bare repository at %s (git.init_local_remote)", self.remote)
        Path(self.remote).mkdir(parents=True)
        self._git("init", "--quiet", "--bare", f"--initial-branch={self.settings.branch}",
                  cwd=Path(self.remote))

    def _check_clone(self) -> None:
        if not (self.workdir / "HEAD").is_file() or not (self.workdir / "objects").is_dir():
            raise Unusable("no clone yet")
        if clonecare.marked_corrupted(self.workdir):
            raise Unusable("an earlier run found corrupted objects in it")
        if self._git("rev-parse", "--is-bare-repository").strip() != "true":
            raise Unusable("not a bare clone")
        url = self._git("config", "--get", "remote.origin.url", check=False).strip()
        if url != self.remote:
            raise Unusable(f"cloned from {url!r}, not {self.remote!r}")

    def _remove_stale_locks(self) -> None:
        # We hold the flock: no other trinogen process uses this clone, so any git lock file
        # left here is from a killed git command.
        for lock in [self.workdir / "index.lock", self.workdir / "packed-refs.lock",
                     self.workdir / "config.lock", self.workdir / "shallow.lock",
                     *(self.workdir / "refs").rglob("*.lock")]:
            if lock.exists():
                log.warning("removing stale %s left by an interrupted git command", lock)
                lock.unlink()

    def _maintain(self) -> None:
        """Leftovers removed, packs consolidated when they pile up (trinogen.clonecare)."""
        try:
            clonecare.remove_leftovers(self.workdir)
            if clonecare.needs_consolidation(self.workdir):
                clonecare.consolidate(self.workdir, self._git)
        except (GitFailed, OSError) as e:  # upkeep never fails a run; the next one tries again
            log.warning("could not tidy the cached clone %s: %s", self.workdir, e)

    def _reclone(self) -> None:
        self.workdir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.workdir.name}-", dir=self.workdir.parent))
        try:
            self._git("init", "--quiet", "--bare", cwd=tmp)
            self._git("remote", "add", "origin", self.remote, cwd=tmp)
            self._git("config", "remote.origin.fetch",
                      f"+refs/heads/{self.settings.branch}:{self.remote_ref}", cwd=tmp)
            self._git("config", "gc.auto", "0", cwd=tmp)  # gc runs on our terms, not mid-sync
        except subprocess.SubprocessError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise GitUnavailable(f"cannot create the cache clone in {tmp}: {e}") from e
        try:
            self._fetch(cwd=tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if self.workdir.is_dir() and not self.workdir.is_symlink():
            shutil.rmtree(self.workdir)
        elif self.workdir.exists() or self.workdir.is_symlink():
            self.workdir.unlink()  # a file or a link where the clone belongs
        os.replace(tmp, self.workdir)

    def _fetch(self, cwd: Path | None = None) -> None:
        branch = self.settings.branch
        try:
            self._git("fetch", "--quiet", "--no-tags", "--prune", "origin",
                      f"+refs/heads/{branch}:{self.remote_ref}", cwd=cwd,
                      timeout=self.settings.timeout)
        except GitFailed as e:
            if "couldn't find remote ref" in e.stderr:
                # An empty remote, or no such branch yet: the first sync creates it.
                self._git("update-ref", "-d", self.remote_ref, cwd=cwd, check=False)
            elif is_network(e.stderr) or cwd is not None:
                raise GitUnavailable(
                    f"cannot fetch from the GitOps repository {self.remote}: {e.stderr}"
                ) from e
            else:
                raise
        tip = self._git("rev-parse", "--verify", "--quiet", f"{self.remote_ref}^{{commit}}",
                        cwd=cwd, check=False).strip()
        self.tip = tip or None

    # --- reading ---------------------------------------------------------------------------

    @git_boundary("listing the tree")
    def tree(self, layout: Layout) -> dict[str, str]:
        """Path -> blob id of every regular file under the output roots at origin/<branch>.

        Called right after refresh(), before anything is planned: a tree git cannot read back
        (a corrupted loose object the fetch did not touch) is cloned again here and listed
        from the fresh clone.
        """
        try:
            return self._list(layout)
        except GitFailed as e:
            if not clonecare.mark_if_corrupted(self.workdir, e.stderr):
                raise
            log.warning("cached clone %s has unreadable objects (%s); cloning again",
                        self.workdir, e.stderr[:200])
        self._reclone()
        return self._list(layout)

    def _list(self, layout: Layout) -> dict[str, str]:
        if self.tip is None:
            return {}
        roots = tuple(r for r in (layout.clusters_dir, layout.applications_dir, layout.root_app)
                      if r)
        self._listed = listing(self._git, self.tip, roots, self._listed)
        return dict(self._listed.files)  # the caller's own copy

    @git_boundary("reading file headers")
    def heads(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """The first bytes (where the header is) of each blob, in one `git cat-file --batch`."""
        wanted = sorted(set(blobs))
        if not wanted:
            return {}
        data = self._cat(wanted)
        return {b: c[:HEAD_BYTES] for b, c in data.items()}

    @git_boundary("reading files")
    def blobs(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """The whole content of each blob, in one `git cat-file --batch`."""
        wanted = sorted(set(blobs))
        return self._cat(wanted) if wanted else {}

    @git_boundary("reading a file")
    def read(self, path: str) -> bytes | None:
        """A file's content at origin/<branch>, or None."""
        if self.tip is None:
            return None
        blob = self._git("rev-parse", "--verify", "--quiet", f"{self.tip}:{path}", check=False).strip()
        if not blob:
            return None
        return self._cat([blob]).get(blob)

    def _cat(self, blobs: list[str]) -> dict[str, bytes]:
        return cat_blobs(self.workdir, blobs)

    def head_commit(self) -> str | None:
        return self.tip

    # --- writing ---------------------------------------------------------------------------

    @git_boundary("writing the commit")
    def apply(self, changes: Iterable[FileChange], message: str) -> str:
        """Write the planned changes as one commit on top of origin/<branch> (nothing pushed).

        One `git fast-import` writes every blob and the commit into the object store (a single
        pack); the commit is recorded on a private ref until commit() moves the branch.
        """
        s = self.settings
        now = int(time.time())
        who = f"{s.author_name} <{s.author_email}> {now} +0000".encode()
        msg = message.encode()
        self._git("update-ref", "-d", PENDING_REF, check=False)
        header = (b"commit %s\nauthor %s\ncommitter %s\ndata %d\n%s\n"
                  % (PENDING_REF.encode(), who, who, len(msg), msg))
        if self.tip:
            header += b"from %s\n" % self.tip.encode()
        fast_import(self.workdir, header, changes)
        self._pending = self._git("rev-parse", PENDING_REF).strip()
        return self._pending

    @git_boundary("moving the branch")
    def commit(self) -> str:
        """Point the local branch at the pending commit (the step before the push)."""
        if self._pending is None:
            raise RuntimeError("apply() first")
        self._git("update-ref", f"refs/heads/{self.settings.branch}", self._pending)
        return self._pending

    @git_boundary("pushing")
    def push(self) -> PushOutcome:
        """Push the pending commit to origin/<branch>; a non-fast-forward rejection is returned."""
        import git

        if self._pending is None:
            raise RuntimeError("commit() first")
        repo = git.Repo(self.workdir)
        progress = git.RemoteProgress()  # collects what the remote's hooks print ("remote: ...")
        try:
            infos = repo.remote("origin").push(
                f"refs/heads/{self.settings.branch}:refs/heads/{self.settings.branch}",
                env=git_env(),
                kill_after_timeout=self.settings.timeout,
                progress=progress,
            )
        except git.GitCommandError as e:
            return self._push_failed(e, stderr_text(e) + remote_says(progress))
        finally:
            repo.close()
        outcome = self._push_result(infos, progress)
        if outcome.pushed:
            self._git("update-ref", self.remote_ref, self._pending)
            self.tip = self._pending
        return outcome

    def _push_failed(self, e: Exception, text: str) -> PushOutcome:
        """git push exited non-zero: the remote moved on (retry), or it refused or is away."""
        if lost_ref_race(text):
            return PushOutcome(False, rejected=True, summary=text)
        if "[remote rejected]" in text or "hook declined" in text:
            raise GitUnavailable(f"the GitOps remote refused the push: {text}") from e
        if "[rejected]" in text or "fetch first" in text or "non-fast-forward" in text:
            return PushOutcome(False, rejected=True, summary=text)
        raise GitUnavailable(f"cannot push to {self.remote}: {text}") from e

    def _push_result(self, infos: git.remote.PushInfoList, progress: git.RemoteProgress
                     ) -> PushOutcome:
        """What the push reported (GitPython does not raise for a rejected push)."""
        import git

        flags = git.PushInfo
        for info in infos:
            summary = info.summary.strip()
            if info.flags & flags.REMOTE_REJECTED and lost_ref_race(summary + remote_says(progress)):
                return PushOutcome(False, rejected=True, summary=summary)
            if info.flags & flags.REMOTE_REJECTED:
                raise GitUnavailable(f"the GitOps remote refused the push: {summary}"
                                     f"{remote_says(progress)}")
            if info.flags & flags.REJECTED:
                return PushOutcome(False, rejected=True, summary=summary)
            if info.flags & flags.ERROR:
                raise GitUnavailable(f"push to {self.remote} failed: {summary}")
        if not infos:
            raise GitUnavailable(f"push to {self.remote} reported nothing; was it refused?")
        return PushOutcome(True, summary=infos[0].summary.strip())

    def render_cache(self, fingerprint: str) -> RenderCache:
        """The render cache kept inside the clone's git directory (never committed). A long-lived
        process (`watch`) reuses the entries of its last run while the file is the one that run
        read or saved (`RenderCache.load`): a batch no longer reads and parses the whole file."""
        self._cache = RenderCache.load(self.workdir / "trinogen-render-cache", fingerprint,
                                       previous=self._cache)
        return self._cache

    # --- plumbing ----------------------------------------------------------------------------

    def _git(self, *args: str, cwd: Path | None = None, check: bool = True,
             timeout: float | None = None) -> str:
        return run_git(args, cwd or self.workdir, self.remote, check=check, timeout=timeout)
