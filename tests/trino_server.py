"""A real Trino for the tests: the release from Maven Central, run with its own launcher on 127.0.0.1.

The distribution (`io.trino:trino-server:<v>:tar.gz`, every plugin included) is downloaded once
into `${TRINOGEN_TEST_CACHE:-~/.cache/trinogen}/maven/` in Maven's layout, checked against the
`.sha1` Maven Central serves and renamed into place only when complete, so concurrent runs (and a
CI clone on the same machine) share it and a second run is offline. It is unpacked once per
version into `<cache>/unpacked/`; every node loads all its plugins, as the container image does
(a subset is not faithful: the postgresql connector needs the geospatial plugin's types).

A node is started as the container image starts it: `bin/launcher run --etc-dir <etc>
-Dnode.id=<name>`, with the files the chart's ConfigMaps put under `/etc/trino` written below the
node's own directory. What is rewritten for a laptop is decided by the test module, not here.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

# Maven Central of this machine serves the complete distribution (with all plugins) for 476;
# the separate plugin ZIPs of 476 exist there only for a few plugins (tpch, memory, hive,
# iceberg), and the ZIPs of postgresql, mysql, delta-lake, tpcds, blackhole, kafka are missing.
TRINO_VERSION = "476"
MAVEN_URL = os.environ.get("TRINOGEN_TEST_MAVEN_URL", "https://repo1.maven.org/maven2")
MIN_JAVA = 24  # Trino 476 refuses an older Java; Temurin 25 runs it


def _java_major(home: Path) -> int:
    """JAVA_VERSION's major number from a JDK's `release` file (0 when it cannot be read)."""
    try:
        text = (home / "release").read_text(encoding="utf-8")
    except OSError:
        return 0
    m = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(m.group(1)) if m else 0


def _find_java() -> Path:
    explicit = os.environ.get("TRINOGEN_TEST_JAVA_HOME")
    if explicit:
        return Path(explicit)
    homes = sorted(Path("/usr/lib/jvm").glob("*"), key=_java_major, reverse=True)
    good = [h for h in homes if _java_major(h) >= MIN_JAVA and (h / "bin" / "java").is_file()]
    return good[0] if good else Path("/usr/lib/jvm/temurin-25-jdk-amd64")


JAVA_HOME = _find_java()


def _real_home() -> Path:
    # tests/conftest.py points HOME at a temporary directory for every test (a tripwire);
    # the download cache must survive the test, so it is found from the account, not from HOME.
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


CACHE_DIR = Path(os.environ.get("TRINOGEN_TEST_CACHE") or _real_home() / ".cache" / "trinogen")

class TrinoHarnessError(AssertionError):
    """Trino could not be had or did not behave as a test expected (message says what to do)."""


def java_available() -> bool:
    return (JAVA_HOME / "bin" / "java").is_file() and _java_major(JAVA_HOME) >= MIN_JAVA


# --- download and unpack ----------------------------------------------------------------------


def maven_file(group: str, artifact: str, version: str, ext: str, *,
               cache: Path = CACHE_DIR, base_url: str = MAVEN_URL) -> Path:
    """The artifact in the cache, downloaded and checked against Maven's .sha1 the first time."""
    rel = f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.{ext}"
    path = cache / "maven" / rel
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    url = f"{base_url}/{rel}"
    try:
        with urllib.request.urlopen(f"{url}.sha1", timeout=60) as r:
            expected = r.read().decode("ascii").split()[0].strip().lower()
        # a unique name in the same directory: concurrent downloads never share a partial file
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.part")
        digest = hashlib.sha1()
        try:
            with urllib.request.urlopen(url, timeout=60) as r, tmp.open("wb") as out:
                while chunk := r.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
            if digest.hexdigest() != expected:
                raise TrinoHarnessError(
                    f"{url}: sha1 {digest.hexdigest()} does not match the published {expected}")
            os.replace(tmp, path)  # atomic: readers see no file or the whole, checked file
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as e:
        raise TrinoHarnessError(f"cannot download {url} into {path}: {e}") from e
    return path


def distribution(version: str = TRINO_VERSION) -> Path:
    """The unpacked trino-server-<version> directory (bin/, lib/, plugin/), unpacked once."""
    target = CACHE_DIR / "unpacked" / f"trino-server-{version}"
    if (target / "lib").is_dir():
        return target
    archive = maven_file("io.trino", "trino-server", version, "tar.gz")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".trino-server-{version}.", dir=target.parent))
    try:
        with tarfile.open(archive) as tar:
            # one sequential pass; the archive's hard links between plugins stay hard links
            tar.extractall(staging, filter="data")
        (unpacked,) = staging.iterdir()
        try:
            os.rename(unpacked, target)
        except OSError:
            if not (target / "lib").is_dir():  # someone else won the race: use theirs
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def aot_cache_path(version: str = TRINO_VERSION) -> Path:
    """Where the JVM's AOT cache for this Trino and this exact JDK build is kept.

    A cache made by another JDK build is refused by the JVM, so the JDK's `release` file is
    part of the name; the JVM also checks the class path itself and ignores a stale cache.
    """
    try:
        release = (JAVA_HOME / "release").read_bytes()
    except OSError:
        release = b""
    jdk = hashlib.sha1(release).hexdigest()[:12]
    return CACHE_DIR / "aot" / f"trino-server-{version}-jdk-{jdk}.aot"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- one node ---------------------------------------------------------------------------------


@dataclass
class NodeFiles:
    """What a pod sees: files by their absolute path in the pod, plus its environment."""

    files: dict[str, str]  # e.g. "/etc/trino/config.properties" -> text
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class TrinoNode:
    """One Trino server process started with the distribution's launcher."""

    name: str
    root: Path  # the node's directory: pod files below <root>/pod, log at <root>/server.log
    pod: NodeFiles
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0

    @property
    def log_path(self) -> Path:
        return self.root / "server.log"

    def local(self, pod_path: str) -> Path:
        """Where a file the pod sees at `pod_path` lives on this machine."""
        return self.root / "pod" / pod_path.lstrip("/")

    def start(self, dist: Path) -> None:
        for pod_path, text in self.pod.files.items():
            p = self.local(pod_path)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        env = {
            "PATH": f"{JAVA_HOME / 'bin'}:/usr/bin:/bin",
            "JAVA_HOME": str(JAVA_HOME),
            "LANG": "C.UTF-8",
            **self.pod.env,
        }
        cmd = [str(dist / "bin" / "launcher"), "run",
               "--etc-dir", str(self.local("/etc/trino")), f"-Dnode.id={self.name}"]
        log = self.log_path.open("wb")
        self.started_at = time.monotonic()
        # its own process group: stop() ends the launcher and the JVM it runs, nothing else
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        _LIVE[self.proc.pid] = self.proc

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def tail(self, lines: int = 15) -> str:
        """The log's error lines (no stack frames) and its last lines: what a failure shows."""
        log = self.log().splitlines()
        errors = [ln for ln in log if re.match(r"\s*(\d+\) |Caused by|.*\tERROR\t|.*Exception)", ln)
                  and not ln.lstrip().startswith("at ")]
        return "\n".join([*errors[:40], "...", *log[-lines:]])

    def wait_started(self, timeout: float) -> float:
        """Seconds until `SERVER STARTED`; fails with the log's tail if it exits or times out."""
        assert self.proc is not None
        deadline = self.started_at + timeout
        while time.monotonic() < deadline:
            if "======== SERVER STARTED ========" in self.log():
                return time.monotonic() - self.started_at
            if self.proc.poll() is not None:
                raise TrinoHarnessError(
                    f"Trino node {self.name} exited with {self.proc.returncode} before "
                    f"SERVER STARTED; log tail:\n{self.tail()}")
            time.sleep(0.5)
        raise TrinoHarnessError(
            f"Trino node {self.name}: no SERVER STARTED within {timeout:.0f}s; log tail:\n"
            f"{self.tail()}")

    def wait_outcome(self, timeout: float) -> tuple[str, int | None]:
        """Either ("started", None) or ("exited", exit code), whichever comes first."""
        assert self.proc is not None
        deadline = self.started_at + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited", self.proc.returncode
            if "======== SERVER STARTED ========" in self.log():
                return "started", None
            time.sleep(0.5)
        raise TrinoHarnessError(
            f"Trino node {self.name}: neither started nor exited within {timeout:.0f}s; "
            f"log tail:\n{self.tail()}")

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM to the node's process group, SIGKILL after `timeout`; safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        _signal_group(proc.pid, signal.SIGKILL)  # anything the launcher left in its group
        _LIVE.pop(proc.pid, None)


# Every node still running, by process-group id: killed when the interpreter exits, so that a
# crashed or interrupted test run leaves no JVM behind.
_LIVE: dict[int, subprocess.Popen[bytes]] = {}


@atexit.register
def _kill_leftovers() -> None:
    for pgid, proc in list(_LIVE.items()):
        _signal_group(pgid, signal.SIGKILL)
        proc.wait(timeout=30)
    _LIVE.clear()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


# --- a cluster ----------------------------------------------------------------------------------


@dataclass
class TrinoCluster:
    """Coordinator plus workers, started together, stopped together."""

    coordinator: TrinoNode
    workers: list[TrinoNode]
    port: int  # the coordinator's HTTP port on 127.0.0.1
    boot_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def nodes(self) -> list[TrinoNode]:
        return [self.coordinator, *self.workers]

    def start(self, dist: Path, timeout: float) -> None:
        try:
            for node in self.nodes:  # all at once: the workers retry discovery until it is up
                node.start(dist)
            for node in self.nodes:
                self.boot_seconds[node.name] = node.wait_started(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def connect(port: int, catalog: str | None = None) -> object:
    import trino

    return trino.dbapi.connect(host="127.0.0.1", port=port, user="trinogen-test",
                               catalog=catalog, http_scheme="http", request_timeout=120)


def query(port: int, sql: str) -> list[list[object]]:
    conn = connect(port)
    try:
        cur = conn.cursor()  # type: ignore[attr-defined]
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()  # type: ignore[attr-defined]


_T = TypeVar("_T")


def when_scheduled(run: Callable[[], _T], timeout: float = 90.0) -> _T:
    """`run()`'s answer once the coordinator schedules it: right after SERVER STARTED its own
    node may not be announced yet, and on a loaded machine a later query can meet the node list
    refreshing; both answer NO_NODES_AVAILABLE, the only error retried here."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return run()
        except Exception as e:
            if "NO_NODES_AVAILABLE" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(1)


def wait_for_active_workers(port: int, count: int, timeout: float) -> list[list[object]]:
    """system.runtime.nodes once `count` workers are active; fails with what it saw."""
    deadline = time.monotonic() + timeout
    rows: list[list[object]] = []
    while time.monotonic() < deadline:
        rows = query(port, "SELECT node_id, coordinator, state FROM system.runtime.nodes")
        if sum(1 for _, coord, state in rows if not coord and state == "active") >= count:
            return rows
        time.sleep(1)
    raise TrinoHarnessError(f"{count} active worker(s) expected within {timeout:.0f}s, saw {rows}")


def properties_with(text: str, changes: Mapping[str, str | None]) -> str:
    """`text` with each key's line replaced (value None: removed), new keys appended.

    Works on the simple `key=value` lines the chart writes; the tests never rewrite a key that
    is escaped or continued.
    """
    out, seen = [], set()
    for line in text.splitlines():
        key = line.split("=", 1)[0].strip() if "=" in line and not line.lstrip().startswith(
            ("#", "!")) else None
        if key is not None and key in changes:
            seen.add(key)
            if changes[key] is not None:
                out.append(f"{key}={changes[key]}")
            continue
        out.append(line)
    out.extend(f"{k}={v}" for k, v in changes.items() if k not in seen and v is not None)
    return "\n".join(out) + "\n"
