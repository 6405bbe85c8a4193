"""A real Trino 476 loads the event listeners trinogen writes (issue 21, item 3).

Settings offering three listeners and a document picking them (`eventListeners`) go through
trinogen and the real chart (tests/test_trino_real.py's way, its REWRITES unchanged, plus the
several /etc/trino paths of `event-listener.config-files`); the coordinator boots from the
ConfigMaps the chart renders. Where the listener's header names a Vault secret, the test stands
in for External Secrets: the pod's environment holds the value under the variable trinogen named.

- The HTTP listener POSTs the completed event of a query (its id and text) to an HTTP server the
  test runs on loopback, with the Authorization header built from the secret; the OpenLineage
  listener POSTs its run events to the same server; a Kafka listener whose broker does not
  answer lets Trino start only with `exit_on_startup_failure: false` (Trino's default exits).
- One wrong property in a Kafka or OpenLineage listener's file makes Trino exit at startup
  ("was not used"): trinogen writes only names the plugins bind.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests import javaprops
from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python
from tests.test_trino_real import BOOT_TIMEOUT, for_laptop, heap_factor, render_pods
from trinogen.kinds.event_listeners.document import CONFIG_DIR
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind

pytestmark = REAL_TRINO

CONFIG = "/etc/trino/config.properties"
DOC = {
    "_id": "trino-real-listeners", "clusterId": "listen", "owner": "qa_team", "enabled": True,
    "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
}
TOKEN = "s3cr3t-from-vault"  # what Vault holds at the header's reference (fake-resolved)
SQL = "SELECT count(*) FROM tpch.tiny.nation"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """An HTTP server on loopback that keeps every POST it gets."""

    server: ThreadingHTTPServer
    posts: list[Received] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def wait(self, path: str, timeout: float, match: str = "") -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = [p for p in list(self.posts) if p.path == path and match.encode() in p.body]
            if got:
                return got
            time.sleep(0.5)
        return []


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    posts: list[Received] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            posts.append(Received(self.path, dict(self.headers.items()), body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Receiver(server, posts)
    finally:
        server.shutdown()
        server.server_close()


def options(port: int) -> dict[str, Any]:
    """The platform's `event_listeners:` section, pointing at the loopback server."""
    return {
        "audit": {"type": "http", "uri": f"http://127.0.0.1:{port}/audit/{{cluster}}",
                  "headers": {"Authorization": {"vault": "secret/platform/audit#token",
                                                "prefix": "Bearer "}},
                  "retry": {"count": 2, "delay": "1s"}},
        "stream": {"type": "kafka", "brokers": ["127.0.0.1:9"], "request_timeout": "5s",
                   "topics": {"completed": "trino.{cluster}.completed"},
                   "exit_on_startup_failure": False},
        "lineage": {"type": "openlineage", "url": f"http://127.0.0.1:{port}",
                    "endpoint": "/api/v1/lineage", "namespace": "{cluster}",
                    "query_types": ["SELECT"]},
    }


def settings_with(listeners: dict[str, Any]) -> Settings:
    s = demo_settings()
    return dataclasses.replace(s, named={
        **s.named, "event_listeners": parse_kind("event_listeners", listeners, "test")})


@dataclass
class Boot:
    node: ts.TrinoNode
    port: int


def boot(listeners: dict[str, Any], picked: list[str], root: Path,
         edit: dict[str, tuple[str, str]] | None = None) -> Boot:
    """The coordinator as trinogen and the chart render it for a document picking `picked`,
    started alone; `edit` adds a line to a file. Where the env Secret holds the header's
    token, the test puts TOKEN (it stands in for External Secrets reading Vault)."""
    doc = {**DOC, "eventListeners": picked}
    pods = render_pods(doc, settings_with(listeners), helm_python.Chart.load(CHART_DIR))
    pod = pods.role["coordinator"]
    files = dict(pod.files)
    listed = javaprops.loads(files[CONFIG])["event-listener.config-files"].split(",")
    assert listed == [f"{CONFIG_DIR}/event-listener-{n}.properties" for n in picked]
    assert all(p in files for p in listed), sorted(files)  # mounted from the ConfigMap
    for path, (key, value) in (edit or {}).items():
        files[path] = ts.properties_with(files[path], {key: value})
    env = {k: TOKEN if k.startswith("TRINO_VAULT_SECRET_PLATFORM_AUDIT") else v
           for k, v in pod.env.items()}
    port = ts.free_port()
    node = ts.TrinoNode("coordinator", root, ts.NodeFiles({}, {}))
    local = for_laptop(ts.NodeFiles(files, env), root, ts.distribution() / "plugin", port, port,
                       heap_factor(pods.role), coordinator_alone=True)
    # for_laptop moves a path value's first /etc/trino path only; the list names several
    local.files[CONFIG] = ts.properties_with(local.files[CONFIG], {
        "event-listener.config-files": ",".join(str(node.local(p)) for p in listed)})
    node.pod = local
    node.start(ts.distribution())
    return Boot(node, port)


def test_the_http_listener_posts_each_completed_query_with_its_secret_header(
        receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> None:
    """With three listeners at once, a query's completed event reaches the loopback server as
    JSON naming the query id and text, with `Authorization: Bearer <the Vault value>`; the
    OpenLineage listener posts its run events there too, and Kafka does not stop the boot."""
    root = tmp_path_factory.mktemp("trino-listeners")
    b = boot(options(receiver.port), ["audit", "stream", "lineage"], root)
    try:
        b.node.wait_started(BOOT_TIMEOUT)
        assert ts.query(b.port, SQL) == [[25]]
        audit = receiver.wait("/audit/listen", 60, match='"' + SQL + '"')
        lineage = receiver.wait("/api/v1/lineage", 60)
        log = b.node.log()
    finally:
        b.node.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert audit, f"no completed event; got {[p.path for p in receiver.posts]}\n{log[-3000:]}"
    event = json.loads(audit[0].body)
    assert event["metadata"]["query"] == SQL
    assert event["metadata"]["queryId"]
    assert audit[0].headers.get("Authorization") == f"Bearer {TOKEN}"
    assert lineage, f"no OpenLineage event; got {[p.path for p in receiver.posts]}"
    assert json.loads(lineage[0].body)["job"]["namespace"] == "listen"


WRONG = [
    ("stream", "kafka-event-listener.broker-endpoint", "127.0.0.1:9"),
    ("lineage", "openlineage-event-listener.transport.uri", "http://127.0.0.1:9"),
]


@pytest.mark.parametrize(("listener", "key", "value"), WRONG, ids=[w[0] for w in WRONG])
def test_a_property_the_plugin_does_not_bind_stops_trino(
        listener: str, key: str, value: str, receiver: Receiver,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The listener file trinogen writes, plus one property its plugin does not bind, makes the
    coordinator exit before SERVER STARTED, naming that property (the right file starts: above)."""
    root = tmp_path_factory.mktemp(f"trino-listener-{listener}")
    b = boot(options(receiver.port), [listener], root,
             edit={f"{CONFIG_DIR}/event-listener-{listener}.properties": (key, value)})
    try:
        state, code = b.node.wait_outcome(BOOT_TIMEOUT)
        log, tail = b.node.log(), b.node.tail()
    finally:
        b.node.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert (state, f"Configuration property '{key}' was not used" in log) == ("exited", True), (
        f"{state} {code}:\n{tail}")


def test_a_kafka_listener_that_must_reach_its_brokers_stops_trino_without_them(
        receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Left at Trino's default (exit_on_startup_failure unset), a Kafka listener whose brokers do
    not answer within its request timeout makes the coordinator exit at startup."""
    listeners = options(receiver.port)
    del listeners["stream"]["exit_on_startup_failure"]
    root = tmp_path_factory.mktemp("trino-listener-kafka-down")
    b = boot(listeners, ["stream"], root)
    try:
        state, code = b.node.wait_outcome(BOOT_TIMEOUT)
        log, tail = b.node.log(), b.node.tail()
    finally:
        b.node.stop()
        shutil.rmtree(root, ignore_errors=True)
    said = "TimeoutException" in log and "EventListenerManager.loadEventListeners" in log
    assert (state, said) == ("exited", True), (
        f"{state} {code}:\n{tail}")
