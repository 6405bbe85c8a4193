"""The GitOps repository: GitPython, git plumbing and the filesystem only.

trinogen keeps its own **bare** clone in a cache directory (`git.workdir`) and never checks files
out. Every run takes an exclusive lock on it and fetches `origin/<branch>`; a commit is built
from that fetched tip plus the planned changes with one `git fast-import` (no files written to
disk, no index), then pushed. Nothing from an earlier run can leak into a commit: the new commit's
only parent is the tip just fetched. A push rejected because the remote moved on is reported to the
caller, which re-plans and retries; nothing is ever merged.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trinogen.errors import GitUnavailable
from trinogen.plan import FileChange, Layout
from trinogen.render import HEAD_BYTES, parse_header
from trinogen.settings import GitSettings, is_local_path

log = logging.getLogger(__name__)

PENDING_REF = "refs/trinogen/pending"


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
    """trinogen's cached bare clone of the GitOps repository."""

    def __init__(self, settings: GitSettings, remote: str, workdir: Path) -> None:
        self.settings = settings
        self.remote = remote
        self.workdir = workdir
        self.tip: str | None = None  # origin/<branch> after refresh(); None for an empty remote
        self._pending: str | None = None

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
            self._remove_stale_locks()
            self._fetch()
            return
        except GitUnavailable:
            raise
        except (subprocess.SubprocessError, _Unusable, OSError) as e:
            if self.workdir.exists():
                log.warning("cached clone %s is unusable (%s); cloning again", self.workdir,
                            str(e)[:200])
        self._reclone()

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
            raise _Unusable("no clone yet")
        if self._git("rev-parse", "--is-bare-repository").strip() != "true":
            raise _Unusable("not a bare clone")
        url = self._git("config", "--get", "remote.origin.url", check=False).strip()
        if url != self.remote:
            raise _Unusable(f"cloned from {url!r}, not {self.remote!r}")

    def _remove_stale_locks(self) -> None:
        # We hold the flock: no other trinogen process uses this clone, so any git lock file
        # left here is from a killed git command.
        for lock in [self.workdir / "index.lock", self.workdir / "packed-refs.lock",
                     self.workdir / "config.lock", self.workdir / "shallow.lock",
                     *(self.workdir / "refs").rglob("*.lock")]:
            if lock.exists():
                log.warning("removing stale %s left by an interrupted git command", lock)
                lock.unlink()

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
        except _GitFailed as e:
            if "couldn't find remote ref" in e.stderr:
                # An empty remote, or no such branch yet: the first sync creates it.
                self._git("update-ref", "-d", self.remote_ref, cwd=cwd, check=False)
            elif _is_network(e.stderr) or cwd is not None:
                raise GitUnavailable(
                    f"cannot fetch from the GitOps repository {self.remote}: {e.stderr}"
                ) from e
            else:
                raise
        tip = self._git("rev-parse", "--verify", "--quiet", f"{self.remote_ref}^{{commit}}",
                        cwd=cwd, check=False).strip()
        self.tip = tip or None

    # --- reading ---------------------------------------------------------------------------

    def tree(self, layout: Layout) -> dict[str, str]:
        """Path -> blob id of every regular file under the output roots at origin/<branch>."""
        if self.tip is None:
            return {}
        roots = [r for r in (layout.clusters_dir, layout.applications_dir, layout.root_app) if r]
        out = self._git("ls-tree", "-r", "-z", "--full-tree", self.tip, "--", *roots)
        files: dict[str, str] = {}
        for entry in out.split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, blob = meta.split(" ")
            if kind == "blob" and mode in ("100644", "100755"):
                files[path] = blob  # symlinks and submodules are never ours
        return files

    def heads(self, blobs: Iterable[str]) -> dict[str, bytes]:
        """The first bytes (where the header is) of each blob, in one `git cat-file --batch`."""
        wanted = sorted(set(blobs))
        if not wanted:
            return {}
        data = self._cat(wanted)
        return {b: c[:HEAD_BYTES] for b, c in data.items()}

    def read(self, path: str) -> bytes | None:
        """A file's content at origin/<branch>, or None."""
        if self.tip is None:
            return None
        blob = self._git("rev-parse", "--verify", "--quiet", f"{self.tip}:{path}", check=False).strip()
        if not blob:
            return None
        return self._cat([blob]).get(blob)

    def _cat(self, blobs: list[str]) -> dict[str, bytes]:
        proc = subprocess.run(["git", "cat-file", "--batch"], cwd=self.workdir, env=_git_env(),
                              input=("\n".join(blobs) + "\n").encode(), capture_output=True,
                              check=False)
        if proc.returncode != 0:
            raise GitUnavailable(f"cannot read objects in {self.workdir}: {proc.stderr.decode()[:300]}")
        out: dict[str, bytes] = {}
        buf = proc.stdout
        pos = 0
        for blob in blobs:
            nl = buf.index(b"\n", pos)
            header = buf[pos:nl].split(b" ")
            pos = nl + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            out[blob] = buf[pos : pos + size]
            pos += size + 1
        return out

    def head_commit(self) -> str | None:
        return self.tip

    # --- writing ---------------------------------------------------------------------------

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
        # The stream is written as it is produced: holding it whole would double the memory of a
        # large commit (every file's content twice).
        proc = subprocess.Popen(
            ["git", "fast-import", "--quiet", "--done", "--date-format=raw"],
            cwd=self.workdir, env=_git_env(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stderr is not None
        stderr = proc.stderr
        errors: list[bytes] = []
        drain = threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True)
        drain.start()
        try:
            out = proc.stdin
            out.write(b"commit %s\nauthor %s\ncommitter %s\ndata %d\n%s\n"
                      % (PENDING_REF.encode(), who, who, len(msg), msg))
            if self.tip:
                out.write(b"from %s\n" % self.tip.encode())
            for ch in changes:
                path = _quote_path(ch.path)
                if ch.action == "delete":
                    out.write(b"D %s\n" % path)
                else:
                    assert ch.content is not None
                    out.write(b"M 100644 inline %s\ndata %d\n" % (path, len(ch.content)))
                    out.write(ch.content)
                    out.write(b"\n")
            out.write(b"done\n")
            out.close()
        except BrokenPipeError:
            pass  # fast-import stopped early; its stderr says why
        code = proc.wait()
        drain.join()
        if code != 0:
            text = b"".join(errors).decode("utf-8", "replace")
            hint = " (disk full)" if "No space left" in text else ""
            raise GitUnavailable(
                f"cannot write the commit into {self.workdir}{hint}: {_first_lines(text)}; nothing "
                "was pushed, the next run starts again from the remote"
            )
        self._pending = self._git("rev-parse", PENDING_REF).strip()
        return self._pending

    def commit(self) -> str:
        """Point the local branch at the pending commit (the step before the push)."""
        if self._pending is None:
            raise RuntimeError("apply() first")
        self._git("update-ref", f"refs/heads/{self.settings.branch}", self._pending)
        return self._pending

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
                env=_git_env(),
                kill_after_timeout=self.settings.timeout,
                progress=progress,
            )
        except git.GitCommandError as e:
            text = _stderr(e) + _remote_says(progress)
            if "[remote rejected]" in text or "hook declined" in text:
                raise GitUnavailable(f"the GitOps remote refused the push: {text}") from e
            if "[rejected]" in text or "fetch first" in text or "non-fast-forward" in text:
                return PushOutcome(False, rejected=True, summary=text)
            raise GitUnavailable(f"cannot push to {self.remote}: {text}") from e
        finally:
            repo.close()
        flags = git.PushInfo
        for info in infos:
            if info.flags & flags.REMOTE_REJECTED:
                raise GitUnavailable(f"the GitOps remote refused the push: {info.summary.strip()}"
                                     f"{_remote_says(progress)}")
            if info.flags & flags.REJECTED:
                return PushOutcome(False, rejected=True, summary=info.summary.strip())
            if info.flags & flags.ERROR:
                raise GitUnavailable(f"push to {self.remote} failed: {info.summary.strip()}")
        if not infos:
            raise GitUnavailable(f"push to {self.remote} reported nothing; was it refused?")
        self._git("update-ref", self.remote_ref, self._pending)
        self.tip = self._pending
        return PushOutcome(True, summary=infos[0].summary.strip())

    def render_cache(self, fingerprint: str) -> Any:
        """The render cache kept inside the clone's git directory (never committed)."""
        from trinogen.cache import RenderCache

        return RenderCache.load(self.workdir / "trinogen-render-cache", fingerprint)

    # --- plumbing ----------------------------------------------------------------------------

    def _git(self, *args: str, cwd: Path | None = None, check: bool = True,
             timeout: float | None = None) -> str:
        try:
            proc = subprocess.run(["git", *args], cwd=cwd or self.workdir, env=_git_env(),
                                  capture_output=True, check=False, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise GitUnavailable(f"git {args[0]} against {self.remote} timed out after "
                                 f"{timeout:.0f}s (git.timeout)") from e
        except OSError as e:
            if e.errno == errno.ENOENT and not Path(cwd or self.workdir).exists():
                raise _Unusable(f"{cwd or self.workdir} does not exist") from e
            raise
        if check and proc.returncode != 0:
            raise _GitFailed(args, proc.stderr.decode("utf-8", "replace"))
        return proc.stdout.decode("utf-8", "surrogateescape")


class _Unusable(Exception):
    pass


class _GitFailed(subprocess.SubprocessError):
    def __init__(self, args: tuple[str, ...], stderr: str) -> None:
        self.stderr = _first_lines(stderr)
        super().__init__(f"git {' '.join(args[:2])}: {self.stderr}")


def _git_env() -> dict[str, str]:
    # Literal pathspecs (a file name is never a glob), no prompts in cron or CI, stable messages.
    env = dict(os.environ)
    env.update({"GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
                "GIT_OPTIONAL_LOCKS": "0"})
    # fast-import and index-pack grow their heap in tiny steps: tens of thousands of brk() calls
    # for a few thousand files, which was half of a large commit's cost. A 64 MiB top pad (a
    # glibc malloc tunable, ignored elsewhere) makes each growth step count.
    env.setdefault("MALLOC_TOP_PAD_", str(64 << 20))
    return env


def _quote_path(path: str) -> bytes:
    """A path for fast-import: C-style quoted when it has anything unusual."""
    if all(c.isalnum() or c in "-._/@+=," for c in path) and not path.startswith('"'):
        return path.encode()
    out = ['"']
    for b in path.encode():
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    out.append('"')
    return "".join(out).encode()


def _remote_says(progress: Any) -> str:
    """What the remote printed (a hook's reason for refusing), as "; remote says: ..."."""
    lines = [ln[len("remote:"):].strip() for ln in getattr(progress, "other_lines", [])
             if ln.startswith("remote:") and ln[len("remote:"):].strip()]
    return f"; remote says: {_first_lines(chr(10).join(lines), 400)}" if lines else ""


def _first_lines(text: str, limit: int = 600) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " ".join(lines)[:limit]


def _stderr(e: Any) -> str:
    text = (getattr(e, "stderr", "") or str(e)).strip()
    text = _first_lines(text)
    if text.startswith("stderr:"):
        text = text[len("stderr:") :].strip().strip("'")
    return text


_NETWORK_HINTS = (
    "could not read from remote", "does not appear to be a git repository", "unable to access",
    "could not resolve host", "connection refused", "connection timed out", "repository not found",
    "authentication failed", "permission denied", "operation timed out", "no such file or directory",
)


def _is_network(stderr: str) -> bool:
    text = stderr.lower()
    return any(h in text for h in _NETWORK_HINTS)


# --- `trinogen render`: a plain directory ---------------------------------------------------------


def write_tree(
    out_dir: Path,
    files: Mapping[str, Mapping[str, bytes]],
    extra: Mapping[str, bytes],
    layout: Layout,
    *,
    prune_stale: bool,
) -> int:
    """Write the desired files into a plain directory (no git); returns files written.

    Files that are already identical are not rewritten. With `prune_stale`, trinogen files under
    the output roots that are no longer desired are removed; files without the header never are.
    """
    wanted: dict[str, bytes] = dict(extra)
    for cluster_files in files.values():
        wanted.update(cluster_files)
    written = 0
    made: set[Path] = set()
    try:
        for path, content in sorted(wanted.items()):
            target = out_dir / path
            try:
                if target.read_bytes() == content:
                    continue
            except OSError:
                pass
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            # A plain directory, not the GitOps repository: written in place, no temp files.
            with open(target, "wb") as f:
                f.write(content)
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
        hint = " (disk full)" if e.errno == errno.ENOSPC else ""
        raise GitUnavailable(f"cannot write to {out_dir}{hint}: {e.strerror}") from e
    return written


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def _is_ours(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return parse_header(f.read(HEAD_BYTES)) is not None
    except OSError:
        return False
