"""Health: the verdict (pure), the liveness file, and the HTTP server for /healthz and /metrics.

States (`status` in the body of GET /healthz):
- ok (200): the loop runs, came round recently, and nothing it depends on is failing;
- degraded (200): as ok, but a prune guard refused a sync that is not retried: a person has to
  look (a restart would not help, so the probes keep the pod);
- unavailable (503): not running, stopping, the loop has not come round for `stale_after`, or a
  stage (lease, stream, sync) is failing and being retried: the watcher is stuck.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from trinogen.watch.metrics import Metrics

log = logging.getLogger("trinogen.watch")

LIVENESS_TOUCH_SECONDS = 1.0


@dataclass(frozen=True)
class Refusal:
    """A sync a prune guard refused (kept for health until a full sync succeeds)."""

    kind: str
    message: str
    documents: int
    at: str  # ISO time


@dataclass(frozen=True)
class Snapshot:
    """What the loop reports about itself, for the verdict."""

    running: bool
    stopping: bool
    role: str
    loop_age: float | None  # seconds since the loop last came round; None: never
    stale_after: float
    failing: Mapping[str, int] = field(default_factory=dict)  # stage -> failures in a row
    refused: Refusal | None = None
    events: int = 0
    commits: int = 0


def status(s: Snapshot) -> str:
    """ok, degraded or unavailable (see the module docstring)."""
    alive = s.running and not s.stopping and s.loop_age is not None and s.loop_age <= s.stale_after
    if not alive or any(n > 0 for n in s.failing.values()):
        return "unavailable"
    return "degraded" if s.refused is not None else "ok"


def verdict(s: Snapshot) -> tuple[int, dict[str, Any]]:
    """The HTTP code and body of /healthz for a snapshot."""
    state = status(s)
    refused = s.refused
    body: dict[str, Any] = {
        "status": state, "role": s.role, "running": s.running, "stopping": s.stopping,
        "lastLoopSecondsAgo": None if s.loop_age is None else round(s.loop_age, 3),
        "failing": {stage: n for stage, n in s.failing.items() if n > 0},
        "events": s.events, "commits": s.commits,
        "refused": None if refused is None else {
            "kind": refused.kind, "message": refused.message,
            "documents": refused.documents, "at": refused.at},
    }
    return (503 if state == "unavailable" else 200), body


class Liveness:
    """Touches `watch.liveness_file` at most once a second (the loop beats while healthy)."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        self._touched_at = float("-inf")

    def beat(self, now: float) -> None:
        if self.path is None or now - self._touched_at < LIVENESS_TOUCH_SECONDS:
            return
        try:
            self.path.touch()
            os.utime(self.path)
            self._touched_at = now
        except OSError as e:
            log.warning("cannot touch the liveness file %s: %s", self.path, e.strerror)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        exposition = self.server.metrics.exposition() if path == "/metrics" else None
        if path in ("/healthz", "/livez"):
            code, body = self.server.health()
            self._send(code, json.dumps(body).encode() + b"\n", "application/json")
        elif exposition is not None:
            self._send(200, *exposition)
        else:
            self._send(404, b"not found\n", "text/plain")

    def _send(self, code: int, data: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, health: Callable[[], tuple[int, dict[str, Any]]],
                 metrics: Metrics) -> None:
        super().__init__(("", port), _Handler)
        self.health = health
        self.metrics = metrics


class HealthServer:
    """Serves /healthz (and /livez) and /metrics on each configured port (0 = any free port)."""

    def __init__(self, ports: set[int], health: Callable[[], tuple[int, dict[str, Any]]],
                 metrics: Metrics) -> None:
        self._wanted = sorted(ports)
        self._health = health
        self._metrics = metrics
        self._servers: list[_Server] = []

    @property
    def ports(self) -> list[int]:
        return [int(s.server_address[1]) for s in self._servers]

    def start(self) -> None:
        for port in self._wanted:
            server = _Server(port, self._health, self._metrics)
            threading.Thread(target=server.serve_forever, name=f"trinogen-http-{port}",
                             daemon=True).start()
            self._servers.append(server)
            log.info("serving /healthz and /metrics on port %d", server.server_address[1])

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    @contextmanager
    def serving(self) -> Iterator[HealthServer]:
        self.start()
        try:
            yield self
        finally:
            self.stop()
