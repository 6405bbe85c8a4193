"""One-off check: start a real Trino (coordinator and worker) and compare the properties its
Bootstrap logs as bound with the registry. Not part of the test suite; run by hand:

    python -m tools.trino_registry.crosscheck --server-dir /path/to/trino-server-476 --version 476

The server directory is an unpacked ``trino-server-<v>.tar.gz`` from the Maven cache. Every
catalog in CATALOGS is loaded at startup (static catalogs), so each connector's Bootstrap table
is logged; nothing connects to an external system at startup with these settings.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trinogen.trino.registry import Role

JAVA = "/usr/lib/jvm/temurin-25-jdk-amd64"

# A catalog per connector the examples and the issue name; values need no running service.
CATALOGS = {
    "tpch": {"connector.name": "tpch"},
    "tpcds": {"connector.name": "tpcds"},
    "memory": {"connector.name": "memory"},
    "blackhole": {"connector.name": "blackhole"},
    "hive": {"connector.name": "hive", "hive.metastore.uri": "thrift://localhost:9083",
             "fs.native-s3.enabled": "true", "s3.region": "us-east-1"},
    "iceberg": {"connector.name": "iceberg", "iceberg.catalog.type": "hive_metastore",
                "hive.metastore.uri": "thrift://localhost:9083", "fs.native-s3.enabled": "true",
                "s3.region": "us-east-1"},
    "delta": {"connector.name": "delta_lake", "hive.metastore.uri": "thrift://localhost:9083",
              "fs.native-gcs.enabled": "true"},
    "pg": {"connector.name": "postgresql", "connection-url": "jdbc:postgresql://localhost:5432/x",
           "connection-user": "u", "connection-password": "p"},
    "my": {"connector.name": "mysql", "connection-url": "jdbc:mysql://localhost:3306",
           "connection-user": "u", "connection-password": "p"},
    "kafka": {"connector.name": "kafka", "kafka.nodes": "localhost:9092",
              "kafka.table-names": "t"},
    "os": {"connector.name": "opensearch", "opensearch.host": "localhost"},
}


def _write_etc(etc: Path, data: Path, coordinator: bool, port: int, discovery: int) -> None:
    (etc / "catalog").mkdir(parents=True)
    lines = [f"coordinator={'true' if coordinator else 'false'}", f"http-server.http.port={port}",
             f"discovery.uri=http://127.0.0.1:{discovery}", "query.max-memory=1GB",
             "query.max-memory-per-node=256MB", "catalog.management=static"]
    if coordinator:
        lines.append("node-scheduler.include-coordinator=true")
    (etc / "config.properties").write_text("\n".join(lines) + "\n")
    (etc / "node.properties").write_text(
        f"node.environment=check\nnode.id={'c' if coordinator else 'w'}\nnode.data-dir={data}\n")
    # The container image ships bin/libjvmkill.so for -agentpath; the tarball does not.
    (etc / "jvm.config").write_text("-server\n-Xmx1G\n-XX:+UseG1GC\n-Djdk.attach.allowAttachSelf=true\n")
    (etc / "log.properties").write_text("io.trino=INFO\n")
    if coordinator:
        for name, props in CATALOGS.items():
            text = "".join(f"{k}={v}\n" for k, v in props.items())
            (etc / "catalog" / f"{name}.properties").write_text(text)


_LINE = re.compile(r"^\S+\t(\w+)\t(\S+)\t(\S+)\t(.*)$")


def parse_log(text: str) -> dict[str, set[str]]:
    """Bound property names per scope ("server" or a catalog name), from Bootstrap's tables.

    A catalog's table follows its "-- Loading catalog X --" line in the same thread.
    """
    scopes: dict[str, set[str]] = {}
    thread_scope: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        _level, thread, logger, message = m.groups()
        loading = re.match(r"-- Loading catalog (\S+) --", message)
        if loading:
            thread_scope[thread] = loading.group(1)
            continue
        if logger != "Bootstrap" and not logger.endswith(".Bootstrap"):
            continue
        token = message.split()[0] if message.split() else ""
        # Rows of the table start with a property name; Bootstrap's own messages with a word.
        if token in ("PROPERTY", "") or token[0].isupper() or not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+", token):
            continue
        scopes.setdefault(thread_scope.get(thread, "server"), set()).add(token)
    return scopes


def _run(server_dir: Path, etc: Path, data: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, JAVA_HOME=JAVA, PATH=f"{JAVA}/bin:{os.environ['PATH']}")
    return subprocess.Popen(
        [str(server_dir / "bin/launcher"), "run", f"--etc-dir={etc}", f"--data-dir={data}"],
        stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _wait(log: Path, proc: subprocess.Popen[bytes], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if "======== SERVER STARTED ========" in text or proc.poll() is not None:
            return text
        time.sleep(2)
    return log.read_text(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-dir", type=Path, required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--keep", type=Path, help="copy the logs here")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from trinogen.trino.registry import registry_for

    registry = registry_for(args.version)
    if registry is None:
        print(f"no registry for {args.version}")
        return 2
    work = Path(tempfile.mkdtemp(prefix="trino-check-"))
    logs: dict[str, str] = {}
    procs = []
    try:
        for role, port in (("coordinator", 18080), ("worker", 18081)):
            etc, data = work / role / "etc", work / role / "data"
            _write_etc(etc, data, role == "coordinator", port, 18080)
            procs.append((role, _run(args.server_dir, etc, data, work / f"{role}.log"),
                          work / f"{role}.log"))
        for role, proc, log in procs:
            logs[role] = _wait(log, proc, 300)
    finally:
        for _role, proc, _log in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for role, text in logs.items():
            (args.keep / f"{role}.log").write_text(text)
    report: dict[str, object] = {}
    failures = 0
    roles: tuple[Role, ...] = ("coordinator", "worker")
    for role in roles:
        text = logs.get(role, "")
        started = "======== SERVER STARTED ========" in text
        scopes = parse_log(text)
        for scope, names in sorted(scopes.items()):
            if scope == "server":
                props = registry.server(role)
            else:
                props = registry.connector(CATALOGS[scope]["connector.name"])
            missing = sorted(n for n in names if props is None or not props.accepts(n))
            failures += len(missing)
            report[f"{role}/{scope}"] = {"logged": len(names), "missing": missing}
        report[f"{role}/started"] = started
        failures += 0 if started else 1
    worker_logged = parse_log(logs.get("worker", "")).get("server", set())
    coordinator_logged = parse_log(logs.get("coordinator", "")).get("server", set())
    report["coordinator_only_observed"] = sorted(coordinator_logged - worker_logged)
    report["worker_only_observed"] = sorted(worker_logged - coordinator_logged)
    # A property the registry keeps off workers that a worker binds would be a false refusal.
    wrongly_coordinator_only = sorted(registry.coordinator_only & worker_logged)
    report["registry_coordinator_only"] = len(registry.coordinator_only)
    report["registry_coordinator_only_but_worker_binds"] = wrongly_coordinator_only
    failures += len(wrongly_coordinator_only)
    print(json.dumps(report, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
