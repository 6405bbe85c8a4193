"""Running git: one command, a `cat-file --batch`, a `fast-import` stream, and the error texts.

Used by `trinogen.gitops` only. `GitFailed` and `Unusable` are internal signals (the working
copy recovers from some of them); `git_boundary` turns whatever is left into GitUnavailable at
the working copy's public methods, so no git failure escapes the error tree.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from trinogen import clonecare
from trinogen.errors import GitUnavailable
from trinogen.plan import FileChange

if TYPE_CHECKING:  # GitPython is imported when a push runs, not at start-up
    import git

log = logging.getLogger(__name__)


class Unusable(Exception):
    """The cached clone cannot be used as it is (missing, not bare, another remote)."""


class GitFailed(subprocess.SubprocessError):
    def __init__(self, args: tuple[str, ...], stderr: str) -> None:
        self.stderr = first_lines(stderr)
        super().__init__(f"git {' '.join(args[:2])}: {self.stderr}")


class _HasWorkdir(Protocol):
    @property
    def workdir(self) -> Path: ...


_S = TypeVar("_S", bound=_HasWorkdir)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def git_boundary(
    what: str,
) -> Callable[[Callable[Concatenate[_S, _P], _R]], Callable[Concatenate[_S, _P], _R]]:
    """Every git failure leaving a public method is a GitUnavailable (exit 4), never a bug.

    Inside, `GitFailed` and `Unusable` steer recovery (a broken cache clone is cloned again);
    what is left when a method gives up is wrapped here, naming the step and git's message.
    """

    def wrap(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
        def wrapped(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return method(self, *args, **kwargs)
            except (GitFailed, Unusable) as e:
                raise GitUnavailable(f"{what} in the working copy {self.workdir} failed: {e}; "
                                     f"nothing was pushed{_corrupted(self.workdir, e)}") from e
            except OSError as e:
                raise GitUnavailable(f"{what} in the working copy {self.workdir} failed: "
                                     f"{e.strerror or e}; nothing was pushed") from e

        # (functools.wraps would do this, but its return type loses the signature for mypy)
        wrapped.__name__, wrapped.__qualname__ = method.__name__, method.__qualname__
        wrapped.__doc__ = method.__doc__
        return wrapped

    return wrap


def _corrupted(workdir: Path, e: Exception) -> str:
    """"; ..." when git's error says the clone is corrupted (marked: the next run clones again)."""
    if isinstance(e, GitFailed) and clonecare.mark_if_corrupted(workdir, e.stderr):
        return "; the cached clone is corrupted: the next run clones it again"
    return ""


def run_git(args: tuple[str, ...], cwd: Path, remote: str, *, check: bool = True,
            timeout: float | None = None) -> str:
    """One git command's stdout; a non-zero exit raises GitFailed when `check`."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, env=git_env(),
                              capture_output=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise GitUnavailable(f"git {args[0]} against {remote} timed out after "
                             f"{timeout:.0f}s (git.timeout)") from e
    except OSError as e:
        if e.errno == errno.ENOENT and not Path(cwd).exists():
            raise Unusable(f"{cwd} does not exist") from e
        raise
    if check and proc.returncode != 0:
        raise GitFailed(args, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Listing:
    """The regular files under `roots` at commit `tip` (path -> blob id)."""

    tip: str
    roots: tuple[str, ...]
    files: dict[str, str]


def listing(git: Callable[..., str], tip: str, roots: tuple[str, ...],
            last: Listing | None) -> Listing:
    """The files under `roots` at `tip`, from `last` (the listing this process made before)
    where it can: the same tip lists nothing (the remote is where we listed or pushed it), another
    reads only what changed since (`patched`); anything else lists the whole tree (issue 22)."""
    if last is not None and last.roots == roots and last.tip == tip:
        return last
    if last is not None and last.roots == roots:  # (pathspecs are literal: `git_env`)
        try:
            out = git("diff-tree", "-r", "-z", "--no-renames", last.tip, tip, "--", *roots)
            return Listing(tip, roots, patched(last.files, out))
        except (GitFailed, ValueError) as e:  # e.g. the old tip is gone: list it all
            log.debug("listing the whole tree at %s: %s", tip, e)
    out = git("ls-tree", "-r", "-z", "--full-tree", tip, "--", *roots)
    return Listing(tip, roots, listed_files(out))


REGULAR = ("100644", "100755")  # file modes of regular files: symlinks and submodules are never ours


def listed_files(out: str) -> dict[str, str]:
    """Path -> blob id of the regular files in `git ls-tree -r -z` output."""
    files: dict[str, str] = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split(" ")
        if kind == "blob" and mode in REGULAR:
            files[path] = blob
    return files


def patched(files: Mapping[str, str], out: str) -> dict[str, str]:
    """The listing of a commit from `files`, the listing of another, and the output of
    `git diff-tree -r -z --no-renames <other> <commit>` (issue 22: a watch batch lists only what
    changed since the tip it listed or pushed, not 63,586 paths)."""
    result = dict(files)
    fields = out.split("\0")
    # each change is ":<old mode> <new mode> <old id> <new id> <status>", then its path
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            raise ValueError(f"unexpected git diff-tree output: {meta[:80]!r}")
        new_mode, blob = meta[1:].split(" ")[1:4:2]
        if new_mode in REGULAR:
            result[path] = blob
        else:  # deleted (mode 000000), or no longer a regular file
            result.pop(path, None)
    return result


def cat_blobs(workdir: Path, blobs: list[str]) -> dict[str, bytes]:
    """The content of each blob, in one `git cat-file --batch`; missing ones are left out."""
    proc = subprocess.run(["git", "cat-file", "--batch"], cwd=workdir, env=git_env(),
                          input=("\n".join(blobs) + "\n").encode(), capture_output=True,
                          check=False)
    if proc.returncode != 0:
        text = first_lines(proc.stderr.decode("utf-8", "replace"), 300)
        hint = ("; the cached clone is corrupted: the next run clones it again"
                if clonecare.mark_if_corrupted(workdir, text) else "")
        raise GitUnavailable(f"cannot read objects in {workdir}: {text}{hint}")
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


def fast_import(workdir: Path, commit_header: bytes, changes: Iterable[FileChange]) -> None:
    """Write every change and the commit (`commit_header` starts it) in one `git fast-import`."""
    # The stream is written as it is produced: holding it whole would double the memory of a
    # large commit (every file's content twice).
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done", "--date-format=raw"],
        cwd=workdir, env=git_env(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stderr is not None
    stderr = proc.stderr
    errors: list[bytes] = []
    drain = threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True)
    drain.start()
    try:
        _stream(proc.stdin, commit_header, changes)
    except BrokenPipeError:
        pass  # fast-import stopped early; its stderr says why
    code = proc.wait()
    drain.join()
    if code != 0:
        text = b"".join(errors).decode("utf-8", "replace")
        hint = " (disk full)" if "No space left" in text else ""
        if clonecare.mark_if_corrupted(workdir, text):
            hint = " (the cached clone is corrupted: the next run clones it again)"
        raise GitUnavailable(
            f"cannot write the commit into {workdir}{hint}: {first_lines(text)}; nothing "
            "was pushed, the next run starts again from the remote"
        )


def _stream(out: Any, commit_header: bytes, changes: Iterable[FileChange]) -> None:
    out.write(commit_header)
    for ch in stream_order(changes):
        path = quote_path(ch.path)
        if ch.action == "delete":
            out.write(b"D %s\n" % path)
        else:
            assert ch.content is not None
            out.write(b"M 100644 inline %s\ndata %d\n" % (path, len(ch.content)))
            out.write(ch.content)
            out.write(b"\n")
    out.write(b"done\n")
    out.close()


def stream_order(changes: Iterable[FileChange]) -> list[FileChange]:
    """Deletions first, then every write grouped by its place in a cluster (all the clusters'
    `values.yaml` together, then each catalog name, ...), in the plan's order within a group.

    The tree committed is the same in any order (deletions first only keeps a file that turns
    into a directory from being deleted after it was written). The order is for fast-import,
    which stores a blob as a delta against the blob written just before it: the same file of
    the previous cluster is nearly identical, a cluster's next file is not. At 10,000 clusters
    this halves the pack (23.1 -> 13.4 MB, also what the push sends) and takes a third off the
    CPU of fast-import and of the push (issue 22).
    """
    deletions: list[FileChange] = []
    writes: list[FileChange] = []
    for ch in changes:
        (deletions if ch.action == "delete" else writes).append(ch)
    writes.sort(key=_place)  # stable: a group keeps the plan's order
    return deletions + writes


def _place(ch: FileChange) -> str:
    """The path with its cluster's id taken out: the same for the same file of every cluster."""
    return ch.path.replace(ch.cluster, "\0", 1) if ch.cluster else ch.path


def git_env() -> dict[str, str]:
    # Literal pathspecs (a file name is never a glob), no prompts in cron or CI, stable messages.
    env = dict(os.environ)
    env.update({"GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
                "GIT_OPTIONAL_LOCKS": "0"})
    # fast-import and index-pack grow their heap in tiny steps: tens of thousands of brk() calls
    # for a few thousand files, which was half of a large commit's cost. A 64 MiB top pad (a
    # glibc malloc tunable, ignored elsewhere) makes each growth step count.
    env.setdefault("MALLOC_TOP_PAD_", str(64 << 20))
    return env


def quote_path(path: str) -> bytes:
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


def remote_says(progress: git.RemoteProgress) -> str:
    """What the remote printed (a hook's reason for refusing), as "; remote says: ..."."""
    lines = [ln[len("remote:"):].strip() for ln in progress.other_lines
             if ln.startswith("remote:") and ln[len("remote:"):].strip()]
    return f"; remote says: {first_lines(chr(10).join(lines), 400)}" if lines else ""


def first_lines(text: str, limit: int = 600) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " ".join(lines)[:limit]


def stderr_text(e: git.GitCommandError) -> str:
    text = (str(e.stderr or "") or str(e)).strip()
    text = first_lines(text)
    if text.startswith("stderr:"):
        text = text[len("stderr:") :].strip().strip("'")
    return text


NETWORK_HINTS = (
    "could not read from remote", "does not appear to be a git repository", "unable to access",
    "could not resolve host", "connection refused", "connection timed out", "repository not found",
    "authentication failed", "permission denied", "operation timed out", "no such file or directory",
)


# The remote moved the branch between our push's negotiation and its ref update (another
# pusher won git's ref-lock race): the same situation as a non-fast-forward rejection, so it
# is retried, not reported as a refusal (issue 11, item 7).
_REF_RACE = re.compile(r"cannot lock ref|is at [0-9a-f]{7,} but expected|incorrect old value")


def lost_ref_race(text: str) -> bool:
    return _REF_RACE.search(text) is not None


def is_network(stderr: str) -> bool:
    text = stderr.lower()
    return any(h in text for h in NETWORK_HINTS)
