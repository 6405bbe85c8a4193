"""A real MongoDB-wire database for the tests: FerretDB v1 with its SQLite backend.

FerretDB is built from the Go module proxy on first use (a few minutes) and cached outside the
clone, so later runs, and CI's fresh clones on the same machine, start it in well under a second:

    ${TRINOGEN_TEST_CACHE:-~/.cache/trinogen}/ferretdb/<version>/ferretdb   the binary
    ${TRINOGEN_TEST_CACHE:-~/.cache/trinogen}/go/{mod,build}                  Go's own caches

`python -m tests.ferretdb` builds it (if needed) and prints the binary's path; `.ci/run` does
that before the tests so the build's time is visible on its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODULE = "github.com/FerretDB/FerretDB"
# The newest v1 (v2 needs PostgreSQL with Microsoft's DocumentDB extension; v1 runs on SQLite).
VERSION = "v1.24.2"


def _real_home() -> Path:
    # Read from the password database, not $HOME: tests/conftest.py points HOME at a fresh tmp
    # directory in every test, and the cache must outlive the test run.
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


# Resolved at import (collection), before any fixture clears TRINOGEN_* from the environment.
CACHE = Path(os.environ.get("TRINOGEN_TEST_CACHE") or _real_home() / ".cache" / "trinogen")
BINARY = CACHE / "ferretdb" / VERSION / "ferretdb"


def go_binary() -> str | None:
    return shutil.which("go")


def available() -> bool:
    """True when FerretDB is built already or can be built (Go is installed)."""
    return _usable(BINARY) or go_binary() is not None


def _usable(binary: Path) -> bool:
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        return False
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=False)
    return out.returncode == 0 and f"version: {VERSION}" in out.stdout


def _go_env(scratch: Path) -> dict[str, str]:
    """Go's environment with every cache in CACHE (the tests' HOME is a throwaway directory)."""
    keep = ("PATH", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY",
            "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({
        "HOME": str(scratch),
        "GOPATH": str(CACHE / "go"),
        "GOMODCACHE": str(CACHE / "go" / "mod"),
        "GOCACHE": str(CACHE / "go" / "build"),
        # -modcacherw: the module cache can be deleted with rm -rf; -buildvcs=false: the copied
        # source is no git checkout.
        "GOFLAGS": "-modcacherw -buildvcs=false",
        "GOTOOLCHAIN": "local",  # never download another Go
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "0",  # FerretDB's SQLite driver is pure Go
    })
    return env


def build(log: Any = sys.stderr) -> Path:
    """The FerretDB binary, built into the cache unless it is there already."""
    if _usable(BINARY):
        return BINARY
    go = go_binary()
    if go is None:
        raise FileNotFoundError("FerretDB is not built and `go` is not on PATH to build it")
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    # One builder at a time (two pytest runs, or CI next to a developer); the others wait and
    # then find the binary.
    with (BINARY.parent / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _usable(BINARY):
            return BINARY
        started = time.monotonic()
        print(f"building FerretDB {VERSION} into {BINARY} (first run only)...", file=log, flush=True)
        with tempfile.TemporaryDirectory(dir=BINARY.parent, prefix="build-") as tmp:
            scratch = Path(tmp)
            env = _go_env(scratch)
            info = _run([go, "mod", "download", "-json", f"{MODULE}@{VERSION}"], env, scratch)
            src = scratch / "src"
            shutil.copytree(json.loads(info)["Dir"], src)
            # FerretDB refuses to start without build/version/version.txt, which its release
            # tooling generates and the module zip leaves out.
            # (The module cache may be read-only: make that one directory writable.)
            version_dir = src / "build" / "version"
            version_dir.chmod(0o755)
            (version_dir / "version.txt").unlink(missing_ok=True)
            (version_dir / "version.txt").write_text(f"{VERSION}\n")
            out = scratch / "ferretdb"
            _run([go, "build", "-trimpath", "-o", str(out), "./cmd/ferretdb"], env, src)
            os.replace(out, BINARY)
        print(f"built FerretDB in {time.monotonic() - started:.0f} s", file=log, flush=True)
    if not _usable(BINARY):
        raise RuntimeError(f"{BINARY} was built but does not report version {VERSION}")
    return BINARY


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    out = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return out.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class FerretDB:
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/"

    def client(self, **options: Any) -> Any:
        import pymongo

        return pymongo.MongoClient(self.uri, **{"serverSelectionTimeoutMS": 5000, "tz_aware": True,
                                                **options})


@contextlib.contextmanager
def ferretdb(workdir: Path) -> Iterator[FerretDB]:
    """Run FerretDB on 127.0.0.1 with a free port and SQLite files in `workdir` until the block ends."""
    binary = build()
    data = workdir / "sqlite"
    data.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "ferretdb.log"
    for _ in range(5):  # a free port can be taken between choosing it and binding it
        port = free_port()
        args = [str(binary), "--handler=sqlite", f"--sqlite-url=file:{data}/",
                f"--state-dir={workdir}", f"--listen-addr=127.0.0.1:{port}",
                # no HTTP debug listener (its fixed default port would clash between runs), no
                # telemetry beacon
                "--debug-addr=-", "--telemetry=disable", "--log-level=WARN"]
        with log_path.open("ab") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                    env={"PATH": os.environ.get("PATH", ""), "HOME": str(workdir)})
        server = FerretDB(port, proc, log_path)
        try:
            if _wait_ready(server):
                break
        except BaseException:
            _stop(proc)
            raise
        _stop(proc)
    else:
        raise RuntimeError(f"FerretDB did not start: {log_path.read_text(errors='replace')[-2000:]}")
    try:
        yield server
    finally:
        _stop(proc)


def _wait_ready(server: FerretDB, timeout: float = 20.0) -> bool:
    """True once FerretDB answers `ping`; False when it exited (e.g. the port was taken)."""
    from pymongo.errors import PyMongoError

    deadline = time.monotonic() + timeout
    client = server.client(serverSelectionTimeoutMS=200, connectTimeoutMS=200)
    try:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                return False
            try:
                client.admin.command("ping")
                return True
            except PyMongoError:
                time.sleep(0.05)
    finally:
        client.close()
    raise RuntimeError(f"FerretDB did not answer ping in {timeout:.0f} s: "
                       f"{server.log.read_text(errors='replace')[-2000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    print(build())
