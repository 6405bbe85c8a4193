"""The GitOps working copy: GitPython and the filesystem only.

trinogen keeps its own clone in a cache directory (`git.workdir`). Every run takes an exclusive
lock on it, refreshes it to exactly `origin/<branch>` (nothing from an earlier run can leak into
a commit), writes only the planned changes, commits once and pushes. A push rejected because the
remote moved on is reported to the caller, which re-plans and retries; nothing is ever merged.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trinogen.errors import GitUnavailable
from trinogen.plan import CurrentFile, FileChange, Layout
from trinogen.render import parse_header
from trinogen.settings import GitSettings

log = logging.getLogger(__name__)

HEAD_BYTES = 512  # enough for trinogen's two header lines


def default_workdir(remote: str, environ: Mapping[str, str] = os.environ) -> Path:
    cache = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(remote.encode()).hexdigest()[:12]
    return cache / "trinogen" / f"gitops-{digest}"


@dataclass(frozen=True)
class PushOutcome:
    pushed: bool
    rejected: bool = False  # the remote moved on: re-plan and retry
    summary: str = ""


class WorkingCopy:
    """trinogen's cached clone of the GitOps repository."""

    def __init__(self, settings: GitSettings, remote: str, workdir: Path) -> None:
        self.settings = settings
        self.remote = remote
        self.workdir = workdir
        self._repo: Any = None
        self.branch_exists = False

    # --- locking ---------------------------------------------------------------------------

    @contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """Exclusive lock on the working copy, released when the process ends, even by SIGKILL.

        flock() locks belong to the open file: a killed process cannot leave a stale lock.
        """
        timeout = self.settings.lock_timeout if timeout is None else timeout
        self.workdir.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.workdir.parent / f"{self.workdir.name}.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
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
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield
        finally:
            os.close(fd)  # releases the lock

    # --- refresh -----------------------------------------------------------------------------

    @property
    def repo(self) -> Any:
        if self._repo is None:
            raise RuntimeError("refresh() first")
        return self._repo

    def refresh(self) -> None:
        """Make the working copy exactly origin/<branch> (or an empty tree for a new remote).

        A corrupted working copy, one cloned from another remote, or one left on another branch is
        replaced by a fresh clone. If even a fresh clone fails, the remote is unavailable.
        """
        import git

        if self.settings.init_local_remote:
            self.ensure_local_remote()
        try:
            self._open_and_reset()
            return
        except (git.GitCommandError, git.InvalidGitRepositoryError, git.NoSuchPathError,
                _Unusable, OSError, ValueError) as e:
            if self.workdir.exists():
                log.warning("working copy %s is unusable (%s); cloning again", self.workdir,
                            _short(e))
        self._reclone()

    def _open_and_reset(self) -> None:
        import git

        if not (self.workdir / ".git").exists():
            raise _Unusable("no clone yet")
        repo = git.Repo(self.workdir)
        self._repo = repo
        lock = self.workdir / ".git" / "index.lock"
        if lock.exists():  # we hold the flock: no other trinogen uses this clone
            log.warning("removing stale %s left by an interrupted git command", lock)
            lock.unlink()
        urls = list(repo.remote("origin").urls)
        if urls != [self.remote]:
            raise _Unusable(f"cloned from {urls}, not {self.remote}")
        self._fetch(repo)
        self._reset(repo)

    def _reclone(self) -> None:
        import git

        self.workdir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.workdir.name}-", dir=self.workdir.parent))
        try:
            repo = git.Repo.clone_from(self.remote, tmp, no_checkout=True,
                                       env=_git_env(), kill_after_timeout=self.settings_timeout)
        except git.GitCommandError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise GitUnavailable(
                f"cannot clone the GitOps repository {self.remote}: {_stderr(e)}"
            ) from e
        repo.close()
        if self.workdir.exists():
            shutil.rmtree(self.workdir)
        os.replace(tmp, self.workdir)
        self._repo = git.Repo(self.workdir)
        self._reset(self._repo)

    @property
    def settings_timeout(self) -> float:
        return self.settings.timeout

    def ensure_local_remote(self) -> None:
        """git.init_local_remote: create an empty bare repository at a local remote path."""
        import git

        from trinogen.settings import is_local_path

        if not is_local_path(self.remote) or Path(self.remote).exists():
            return
        log.info("creating an empty bare repository at %s (git.init_local_remote)", self.remote)
        git.Repo.init(self.remote, bare=True, initial_branch=self.settings.branch)

    def _fetch(self, repo: Any) -> None:
        import git

        try:
            repo.git.fetch("--prune", "--quiet", "origin", env=_git_env(),
                           kill_after_timeout=self.settings_timeout)
        except git.GitCommandError as e:
            if _is_network(e):
                raise GitUnavailable(
                    f"cannot fetch from the GitOps repository {self.remote}: {_stderr(e)}"
                ) from e
            raise

    def _reset(self, repo: Any) -> None:
        branch = self.settings.branch
        g = repo.git
        remote_ref = f"refs/remotes/origin/{branch}"
        try:
            repo.git.rev_parse("--verify", "--quiet", remote_ref)
            self.branch_exists = True
        except Exception:
            self.branch_exists = False
        if self.branch_exists:
            g.checkout("--force", "-B", branch, remote_ref)
            g.reset("--hard", remote_ref)
        else:
            # An empty remote (or no such branch yet): start the branch with an empty tree.
            g.symbolic_ref("HEAD", f"refs/heads/{branch}")
            try:
                g.update_ref("-d", f"refs/heads/{branch}")
            except Exception:
                pass
            g.read_tree("--empty")
        g.clean("-ffdxq")

    # --- reading ---------------------------------------------------------------------------

    def current_files(self, layout: Layout) -> dict[str, CurrentFile]:
        """Every file under the output roots, with its blob id and trinogen header (if any)."""
        roots = [r for r in (layout.clusters_dir, layout.applications_dir, layout.root_app) if r]
        if not self.branch_exists:
            return {}
        out = self.repo.git.ls_files("-s", "-z", "--", *roots)
        files: dict[str, CurrentFile] = {}
        for entry in out.split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, blob, _stage = meta.split(" ")
            if mode not in ("100644", "100755"):
                continue  # symlinks and submodules are never ours
            files[path] = CurrentFile(blob=blob, header=parse_header(self._head(path)))
        return files

    def _head(self, path: str) -> bytes:
        try:
            with open(self.workdir / path, "rb") as f:
                return f.read(HEAD_BYTES)
        except OSError:
            return b""

    def read(self, path: str) -> bytes | None:
        try:
            return (self.workdir / path).read_bytes()
        except OSError:
            return None

    def head_commit(self) -> str | None:
        try:
            return str(self.repo.head.commit.hexsha)
        except ValueError:
            return None

    # --- writing ---------------------------------------------------------------------------

    def apply(self, changes: Iterable[FileChange]) -> int:
        """Write and delete the planned files and stage exactly them; returns files written."""
        import git

        changes = list(changes)
        written = 0
        try:
            for change in changes:
                target = self.workdir / change.path
                if change.action == "delete":
                    target.unlink(missing_ok=True)
                    _remove_empty_parents(target.parent, self.workdir)
                else:
                    assert change.content is not None
                    _atomic_write(target, change.content)
                    written += 1
        except OSError as e:
            hint = " (disk full)" if e.errno == errno.ENOSPC else ""
            raise GitUnavailable(
                f"cannot write to the working copy {self.workdir}{hint}: {e.strerror}; nothing "
                "was committed or pushed, the next run starts from a clean copy"
            ) from e
        pathspec = self._scratch("pathspec", "\0".join(c.path for c in changes).encode())
        try:
            self.repo.git.add("-A", f"--pathspec-from-file={pathspec}", "--pathspec-file-nul",
                              env=_git_env())
        except git.GitCommandError as e:
            raise GitUnavailable(f"cannot stage the changes in {self.workdir}: {_stderr(e)}") from e
        return written

    def _scratch(self, name: str, data: bytes) -> str:
        """A file inside .git (never part of the tree) to hand long input to git."""
        path = self.workdir / ".git" / f"trinogen-{name}"
        path.write_bytes(data)
        return str(path)

    def commit(self, message: str) -> str:
        import git

        s = self.settings
        env = {**_git_env(), "GIT_AUTHOR_NAME": s.author_name, "GIT_AUTHOR_EMAIL": s.author_email,
               "GIT_COMMITTER_NAME": s.author_name, "GIT_COMMITTER_EMAIL": s.author_email}
        try:
            self.repo.git.commit("--quiet", "--no-verify", "-F",
                                 self._scratch("message", message.encode()), env=env)
        except git.GitCommandError as e:
            raise GitUnavailable(f"cannot commit in {self.workdir}: {_stderr(e)}") from e
        return str(self.repo.head.commit.hexsha)

    def push(self) -> PushOutcome:
        """Push HEAD to origin/<branch>. A non-fast-forward rejection is returned, not raised."""
        import git

        branch = self.settings.branch
        try:
            infos = self.repo.remote("origin").push(
                f"HEAD:refs/heads/{branch}", env=_git_env(), kill_after_timeout=self.settings_timeout
            )
        except git.GitCommandError as e:
            text = _stderr(e)
            if "[rejected]" in text or "fetch first" in text or "non-fast-forward" in text:
                return PushOutcome(False, rejected=True, summary=text)
            if "[remote rejected]" in text or "pre-receive hook declined" in text:
                raise GitUnavailable(f"the GitOps remote refused the push: {text}") from e
            raise GitUnavailable(f"cannot push to {self.remote}: {text}") from e
        flags = git.PushInfo
        for info in infos:
            if info.flags & flags.REMOTE_REJECTED:
                raise GitUnavailable(f"the GitOps remote refused the push: {info.summary.strip()}")
            if info.flags & flags.REJECTED:
                return PushOutcome(False, rejected=True, summary=info.summary.strip())
            if info.flags & flags.ERROR:
                raise GitUnavailable(f"push to {self.remote} failed: {info.summary.strip()}")
        if not infos:
            raise GitUnavailable(f"push to {self.remote} reported nothing; was the push refused?")
        return PushOutcome(True, summary=infos[0].summary.strip())

    def git_objects(self) -> int:
        """Loose + packed objects in the clone (for benchmarks)."""
        out = self.repo.git.count_objects("-v")
        stats = dict(line.split(": ", 1) for line in out.splitlines())
        return int(stats.get("count", 0)) + int(stats.get("in-pack", 0))


class _Unusable(Exception):
    pass


def _git_env() -> dict[str, str]:
    # Literal pathspecs: a file name is never a glob. No terminal prompts in cron or CI.
    return {"GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def _atomic_write(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".trinogen-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def _stderr(e: Any) -> str:
    text = (getattr(e, "stderr", "") or str(e)).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    text = " ".join(lines)
    if text.startswith("stderr:"):
        text = text[len("stderr:") :].strip().strip("'")
    return text[:600]


def _short(e: BaseException) -> str:
    return (_stderr(e) if hasattr(e, "stderr") else str(e))[:200]


_NETWORK_HINTS = (
    "could not read from remote", "does not appear to be a git repository", "unable to access",
    "could not resolve host", "connection refused", "connection timed out", "repository not found",
    "authentication failed", "permission denied", "operation timed out", "no such file or directory",
)


def _is_network(e: Any) -> bool:
    text = _stderr(e).lower()
    return any(h in text for h in _NETWORK_HINTS) or getattr(e, "status", None) in (None, -9)


def write_tree(
    out_dir: Path,
    files: Mapping[str, Mapping[str, bytes]],
    extra: Mapping[str, bytes],
    layout: Layout,
    *,
    prune_stale: bool,
) -> int:
    """`trinogen render`: write the desired files into a plain directory (no git).

    Files that are already identical are not rewritten. With `prune_stale`, trinogen files under
    the output roots that are no longer desired are removed; files without the header never are.
    """
    wanted: dict[str, bytes] = dict(extra)
    for cluster_files in files.values():
        wanted.update(cluster_files)
    written = 0
    try:
        for path, content in sorted(wanted.items()):
            target = out_dir / path
            try:
                if target.read_bytes() == content:
                    continue
            except OSError:
                pass
            _atomic_write(target, content)
            written += 1
        if prune_stale:
            for root in (layout.clusters_dir, layout.applications_dir):
                base = out_dir / root
                if not base.is_dir():
                    continue
                for found in sorted(base.rglob("*")):
                    rel = found.relative_to(out_dir).as_posix()
                    if found.is_file() and rel not in wanted and _is_ours(found):
                        found.unlink()
                        _remove_empty_parents(found.parent, out_dir)
    except OSError as e:
        raise GitUnavailable(f"cannot write to {out_dir}: {e.strerror}") from e
    return written


def _is_ours(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return parse_header(f.read(HEAD_BYTES)) is not None
    except OSError:
        return False
