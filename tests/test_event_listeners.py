"""Event listeners as platform options: parsing, the choice, each listener's file (issue 21, 3).

Expected property lines are written out here from the plugins' @Config names (Trino 476's
http-event-listener, kafka-event-listener and openlineage jars); the last test reads those jars
with the registry's own class-file scanner, so a name trinogen writes that Trino does not bind
fails here before a real Trino refuses to start (tests/test_trino_real_event_listeners.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import javaprops
from tests.conftest import CHART_DIR, ROOT
from tests.marks import CHART, helm_python
from tests.test_chart import render_through_chart
from trinogen.errors import ConfigError
from trinogen.kinds.event_listeners.document import (
    ListenerParts,
    chosen,
    coordinator_uri,
    listener_parts,
)
from trinogen.kinds.event_listeners.options import Listener, parse
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.model.checker import Checker
from trinogen.render import Renderer
from trinogen.render.names import chart_fullname
from trinogen.settings import Settings, load_settings

TRINO_URI = "http://etl-trino.trino-etl.svc:8080"
VAULT_TOKEN = "secret/platform/audit/{cluster}#token"
AUDIT = {"type": "http", "uri": "https://audit.example.com/trino/{cluster}",
         "headers": {"Authorization": {"vault": VAULT_TOKEN, "prefix": "Bearer "},
                     "X-Team": "{owner}"},
         "events": ["completed", "created"], "retry": {"count": 3, "delay": "2s",
                                                       "max_delay": "1m", "backoff_base": 2}}
STREAM = {"type": "kafka", "brokers": ["kafka-0.kafka:9092", "kafka-1.kafka:9092"],
          "topics": {"split": "trino.splits", "completed": "trino.{cluster}.completed"},
          "client_id": "trino-{cluster}", "request_timeout": "10s",
          "exit_on_startup_failure": False}
LINEAGE = {"type": "openlineage", "url": "https://marquez.example.com", "namespace": "{cluster}",
           "endpoint": "/api/v1/lineage", "api_key": "secret/platform/marquez#key",
           "timeout": "5s", "query_types": ["SELECT", "INSERT"]}


def offered(**raw: dict[str, Any]) -> dict[str, Listener]:
    return {name: parse(f"settings.yaml: event_listeners.{name}", r) for name, r in raw.items()}


def build(names: list[str], options: dict[str, Listener]) -> ListenerParts:
    c = Checker("etl", "error")
    parts = listener_parts(names, options, "etl", "data_team", TRINO_URI, c)
    assert parts is not None and not c.problems, c.problems
    return parts


def test_an_http_listener_file_names_each_setting_and_its_secret_by_variable() -> None:
    """The HTTP listener's file holds the endpoint, the chosen events, the retries and the
    header whose value is a Vault secret as an ${ENV:...} reference, never the secret."""
    parts = build(["audit"], offered(audit=AUDIT))
    (secret,) = parts.secrets
    assert str(secret.use.ref) == "secret/platform/audit/etl#token"
    assert parts.listeners[0].text.splitlines() == [
        "event-listener.name=http",
        "http-event-listener.connect-ingest-uri=https://audit.example.com/trino/etl",
        "http-event-listener.log-created=true",
        "http-event-listener.log-completed=true",
        "http-event-listener.log-split=false",
        ("http-event-listener.connect-http-headers="
         f"Authorization:Bearer ${{ENV:{secret.use.env}}},X-Team:data_team"),
        "http-event-listener.connect-retry-count=3",
        "http-event-listener.connect-retry-delay=2s",
        "http-event-listener.connect-max-delay=1m",
        "http-event-listener.connect-backoff-base=2.0",
    ]


def test_a_kafka_listener_publishes_exactly_the_events_it_names_a_topic_for() -> None:
    """Each event with a topic is published to it; the others are switched off explicitly
    (Trino refuses a published event without a topic)."""
    parts = build(["stream"], offered(stream=STREAM))
    assert parts.listeners[0].text.splitlines() == [
        "event-listener.name=kafka",
        "kafka-event-listener.broker-endpoints=kafka-0.kafka:9092,kafka-1.kafka:9092",
        "kafka-event-listener.publish-created-event=false",
        "kafka-event-listener.publish-completed-event=true",
        "kafka-event-listener.publish-split-completed-event=true",
        "kafka-event-listener.completed-event.topic=trino.etl.completed",
        "kafka-event-listener.split-completed-event.topic=trino.splits",
        "kafka-event-listener.client-id=trino-etl",
        "kafka-event-listener.request-timeout=10s",
        "kafka-event-listener.terminate-on-initialization-failure=false",
    ]
    assert parts.secrets == ()


def test_an_openlineage_listener_posts_over_http_with_its_key_from_vault() -> None:
    """The OpenLineage listener uses the HTTP transport, the coordinator's URI and the cluster's
    namespace; its API key is an ${ENV:...} reference."""
    parts = build(["lineage"], offered(lineage=LINEAGE))
    (secret,) = parts.secrets
    assert parts.listeners[0].text.splitlines() == [
        "event-listener.name=openlineage",
        f"openlineage-event-listener.trino.uri={TRINO_URI}",
        "openlineage-event-listener.transport.type=HTTP",
        "openlineage-event-listener.transport.url=https://marquez.example.com",
        "openlineage-event-listener.transport.endpoint=/api/v1/lineage",
        "openlineage-event-listener.namespace=etl",
        f"openlineage-event-listener.transport.api-key=${{ENV:{secret.use.env}}}",
        "openlineage-event-listener.transport.timeout=5s",
        "openlineage-event-listener.trino.include-query-types=SELECT,INSERT",
    ]


def test_split_listeners_are_on_every_node_the_others_on_the_coordinator_only() -> None:
    """Split events come from the nodes that run splits: a listener logging them is on the
    workers too; created/completed listeners only on the coordinator."""
    parts = build(["audit", "stream", "lineage"],
                  offered(audit=AUDIT, stream=STREAM, lineage=LINEAGE))
    assert parts.coordinator == (("event-listener.config-files",
                                  ("/etc/trino/event-listener-audit.properties,"
                                   "/etc/trino/event-listener-stream.properties,"
                                   "/etc/trino/event-listener-lineage.properties")),)
    assert parts.worker == (("event-listener.config-files",
                             "/etc/trino/event-listener-stream.properties"),)
    assert [name for name, _ in parts.files] == [
        "event-listener-audit.properties", "event-listener-stream.properties",
        "event-listener-lineage.properties"]
    assert [name for name, _ in parts.worker_files] == ["event-listener-stream.properties"]
    assert parts.config == ()


def test_no_listener_writes_no_line() -> None:
    """A cluster without listeners gets no config-files line and no file on either role."""
    parts = build([], {})
    assert (parts.coordinator, parts.worker, parts.files, parts.worker_files) == ((),) * 4


@pytest.mark.parametrize(("picked", "expected", "problems"), [
    (None, ["audit"], []),                              # required: there without a pick
    ([], ["audit"], []),                                 # an empty list cannot drop it
    (["lineage"], ["lineage", "audit"], []),
    (["audit", "lineage", "audit"], ["audit", "lineage"], []),  # named twice: once
    (["nope"], ["audit"], ["eventListeners[0]"]),
    ("lineage", ["audit"], ["eventListeners"]),          # not a list
])
def test_a_document_picks_listeners_and_cannot_drop_a_required_one(
        picked: Any, expected: list[str], problems: list[str]) -> None:
    """The document's picks come in its order, unknown names are refused at their index, and
    every required option is added whatever the document says."""
    options = offered(audit={**AUDIT, "required": True}, lineage=LINEAGE)
    c = Checker("etl", "error")
    assert chosen(picked, options, None, "data_team", c) == expected
    assert [p.field for p in c.problems] == problems


def test_a_listener_file_reads_back_as_written() -> None:
    """java.util.Properties (tests/javaprops) reads each listener file as its lines."""
    parts = build(["audit", "stream", "lineage"],
                  offered(audit=AUDIT, stream=STREAM, lineage=LINEAGE))
    for f in parts.listeners:
        assert javaprops.loads(f.text) == dict(f.lines)


BAD = [
    ("type", {"type": "mysql"}, "type must be one of"),
    ("unknown field", {**AUDIT, "url": "x"}, "url: unknown field"),
    ("no uri", {"type": "http"}, "uri must be a string"),
    ("not a url", {**AUDIT, "uri": "audit.example.com"}, "http:// or https://"),
    ("other placeholder", {**AUDIT, "uri": "https://a/{clusterId}"}, "may use only"),
    ("comma in uri", {**AUDIT, "uri": "https://a/x,y"}, "without ','"),
    ("event", {**AUDIT, "events": ["finished"]}, "events must list events"),
    ("no events", {**AUDIT, "events": []}, "events must list events"),
    ("retry count", {**AUDIT, "retry": {"count": -1}}, "retry.count"),
    ("retry field", {**AUDIT, "retry": {"times": 2}}, "retry.times: unknown field"),
    ("backoff", {**AUDIT, "retry": {"backoff_base": 0.5}}, "backoff_base"),
    ("duration", {**AUDIT, "retry": {"delay": "2 seconds"}}, "retry.delay must be a Trino"),
    ("header name", {**AUDIT, "headers": {"X Team": "a"}}, "not an HTTP header name"),
    ("header comma", {**AUDIT, "headers": {"X-A": "a,b"}}, "without ','"),
    ("header env", {**AUDIT, "headers": {"X-A": "${ENV:PATH}"}}, "may use only"),
    ("header tpl", {**AUDIT, "headers": {"X-A": "{{ .Release.Name }}"}}, "may use only"),
    ("prefix env", {**AUDIT, "headers": {"X-A": {"vault": VAULT_TOKEN, "prefix": "${cluster}"}}},
     "'${'"),
    ("header newline", {**AUDIT, "headers": {"X-A": "a\nb"}}, "one line"),
    ("header ref", {**AUDIT, "headers": {"X-A": {"vault": "token"}}}, "Vault reference"),
    ("header field", {**AUDIT, "headers": {"X-A": {"vault": VAULT_TOKEN, "suffix": "x"}}},
     "suffix: unknown field"),
    ("header type", {**AUDIT, "headers": {"X-A": 3}}, "must be text or"),
    ("required", {**AUDIT, "required": "yes"}, "required must be true, false or"),
    ("required list", {**AUDIT, "required": {"profiles": "prod"}}, "required must be true"),
    ("required field", {**AUDIT, "required": {"owners": ["a"]}}, "owners: unknown field"),
    ("exit flag", {**STREAM, "exit_on_startup_failure": "no"}, "must be true or false"),
    ("brokers", {**STREAM, "brokers": ["kafka"]}, "host:port"),
    ("no brokers", {**STREAM, "brokers": []}, "host:port"),
    ("no topics", {**STREAM, "topics": {}}, "topics must map events"),
    ("topic event", {**STREAM, "topics": {"done": "t"}}, "topics must list events"),
    ("topic name", {**STREAM, "topics": {"completed": "a/b"}}, "Kafka topic name"),
    ("lineage url", {**LINEAGE, "url": "marquez"}, "http:// or https://"),
    ("lineage endpoint", {**LINEAGE, "endpoint": "api"}, "URL path"),
    ("lineage key", {**LINEAGE, "api_key": "plain-key"}, "Vault reference"),
    ("query type", {**LINEAGE, "query_types": ["select"]}, "query_types must list"),
    ("lineage namespace", {**LINEAGE, "namespace": "a,b"}, "without ','"),
    ("non-ascii", {**LINEAGE, "namespace": "caf\u00e9"}, "printable ASCII"),
    ("backslash", {**AUDIT, "headers": {"X-A": "a\\b"}}, "printable ASCII"),
    ("leading space", {**AUDIT, "headers": {"X-A": " a"}}, "printable ASCII"),
]


@pytest.mark.parametrize(("case", "raw", "said"), BAD, ids=[b[0] for b in BAD])
def test_a_wrong_option_is_refused_naming_its_field(case: str, raw: dict[str, Any],
                                                     said: str) -> None:
    """Each wrong field fails when the settings load, with a message naming it."""
    with pytest.raises(ConfigError) as e:
        parse("settings.yaml: event_listeners.audit", raw)
    assert said in str(e.value) and "event_listeners.audit" in str(e.value)


@pytest.mark.parametrize("name", ["Audit", "audit.x", "a_b", "-a", ""])
def test_a_listener_name_that_cannot_name_a_file_is_refused(name: str) -> None:
    """A listener's name becomes its file's name: lower-case words and '-' only."""
    with pytest.raises(ConfigError, match="lower-case letters"):
        parse(f"settings.yaml: event_listeners.{name}", AUDIT)


def test_every_property_written_is_bound_by_trino_476s_listener_plugins() -> None:
    """Each key of each listener file is an @Config name of its Trino 476 plugin (read from the
    jars with the registry's class-file scanner), or event-listener.name."""
    from tests import trino_server as ts
    from tools.trino_registry.build import property_set
    from tools.trino_registry.scan import scan_jar, unit_facts

    plugins = {"http": "http-event-listener", "kafka": "kafka-event-listener",
               "openlineage": "openlineage"}
    parts = build(["audit", "stream", "lineage"],
                  offered(audit=AUDIT, stream=STREAM, lineage=LINEAGE))
    for f in parts.listeners:
        lines = dict(f.lines)
        plugin = ts.distribution("476") / "plugin" / plugins[lines.pop("event-listener.name")]
        bound = property_set(unit_facts(
            scan_jar(p.read_bytes()) for p in plugin.glob("io.trino_*.jar"))).known
        assert set(lines) - bound == set(), f.name


# --- wired: the settings file, a document, the render, the real chart --------------------------


def load(tmp_path: Path, **sections: Any) -> Settings:
    """The demo settings file with the listeners above offered (and `sections` added)."""
    text = (ROOT / "config" / "demo.yaml").read_text(encoding="utf-8")
    listeners = {"event_listeners": {"audit": {**AUDIT, "required": {"profiles": ["small"]}},
                                     "stream": STREAM, "lineage": LINEAGE}}
    path = tmp_path / "settings.yaml"
    path.write_text(text + "\n" + yaml.safe_dump({**listeners, **sections}), encoding="utf-8")
    return load_settings(path, environ={})


def judge(s: Settings, **body: Any) -> Cluster | Failed:
    doc = {"_id": "t-etl", "clusterId": "etl", "owner": "data_team", "enabled": True,
           "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}], **body}
    out = classify(RawDocument('"t-etl"', doc), s)
    assert isinstance(out, (Cluster, Failed)), out
    return out


def fields(out: Cluster | Failed) -> list[str]:
    assert isinstance(out, Failed), "the document was accepted"
    return [p.field for p in out.problems]


@pytest.mark.parametrize(("body", "expected"), [
    ({}, []),
    ({"eventListeners": ["lineage"]}, ["lineage"]),
    ({"profile": "small"}, ["audit"]),                                 # required for the profile
    ({"profile": "small", "eventListeners": []}, ["audit"]),           # cannot be dropped
    ({"profile": "small", "eventListeners": ["stream"]}, ["stream", "audit"]),
])
def test_a_document_gets_what_it_picks_and_what_its_profile_requires(
        tmp_path: Path, body: dict[str, Any], expected: list[str]) -> None:
    """Through the settings loader and the model: the cluster's listeners are its picks and the
    ones required for its profile."""
    out = judge(load(tmp_path), **body)
    assert isinstance(out, Cluster), out
    part = out.kind("event_listeners")
    assert ([f.name for f in part.listeners] if part else []) == expected


def test_an_unknown_or_foreign_listener_is_refused_at_its_index(tmp_path: Path) -> None:
    """A name the settings do not offer, or one the document's tenant may not pick, fails at
    `eventListeners[i]`; a required listener is added whatever the tenant's list says."""
    assert fields(judge(load(tmp_path), eventListeners=["nope"])) == ["eventListeners[0]"]
    s = load(tmp_path, tenants={"data_team": {"options": {"event_listeners": ["lineage"]}}})
    assert fields(judge(s, eventListeners=["lineage", "stream"])) == ["eventListeners[1]"]
    out = judge(s, profile="small", eventListeners=["lineage"])
    assert isinstance(out, Cluster), out
    assert [f.name for f in out.kind("event_listeners").listeners] == ["lineage", "audit"]


@pytest.mark.parametrize(("body", "refused"), [
    ({}, True), ({"eventListeners": []}, True), ({"eventListeners": ["lineage"]}, False),
    ({"profile": "small"}, True),  # the required audit listener is not the document's pick
])
def test_a_tenant_requiring_the_kind_needs_a_listener_picked(
        tmp_path: Path, body: dict[str, Any], refused: bool) -> None:
    """`require: [event_listeners]` is met by a document naming a listener, not by an empty
    list."""
    s = load(tmp_path, tenants={"data_team": {"options": "all", "require": ["event_listeners"]}})
    out = judge(s, **body)
    assert (isinstance(out, Failed) and fields(out) == ["eventListeners"]) == refused, out


def test_a_document_may_not_copy_a_listeners_secret(tmp_path: Path) -> None:
    """A document placeholder naming the audit listener's Vault secret is refused at its field
    (a catalog could send the audit store's write token anywhere)."""
    s = load(tmp_path)
    s = dataclasses.replace(s, secrets=dataclasses.replace(
        s.secrets, scope=("secret/platform/audit/{cluster}",)))
    props = {"x.password": "{{ vault:secret/platform/audit/etl#token }}"}
    body = {"profile": "small", "connectors": [
        {"name": "pg", "properties": {"connector.name": "postgresql",
                                      "connection-url": "jdbc:postgresql://db:5432/x",
                                      "connection-password": props["x.password"]}}]}
    assert 'connectors["pg"].properties.connection-password' in fields(judge(s, **body))
    body["connectors"][0]["properties"]["connection-password"] = (
        "{{ vault:secret/platform/audit/etl#other }}")
    assert isinstance(judge(s, **body), Cluster)


def test_the_coordinator_uri_is_the_charts_service() -> None:
    """OpenLineage's trino.uri names the Service the chart creates for the coordinator."""
    for cid in ("etl", "t", "trino", "a" * 40):
        assert coordinator_uri(cid) == f"http://{chart_fullname(cid)}.trino-{cid}.svc:8080"


def test_the_listeners_reach_each_roles_configmap_and_the_env_secret(tmp_path: Path) -> None:
    """Through the real chart: the coordinator's ConfigMap holds every listener file and lists
    them all; the worker's holds and lists only the split listener; the ExternalSecret carries
    the header's variable from the option's Vault reference, and no rendered file holds a
    value of it."""
    s = load(tmp_path)
    out = judge(s, profile="small", eventListeners=["stream", "lineage"])
    assert isinstance(out, Cluster), out
    files = Renderer(s).render_cluster(out, {})
    text = files[f"{s.output.clusters_dir}/etl/values.yaml"].decode()
    _, objects = render_through_chart(helm_python.Chart.load(CHART_DIR), text, "etl", "trino-etl")
    maps = {o["metadata"]["name"]: o.get("data", {}) for o in objects if o["kind"] == "ConfigMap"}
    coordinator, worker = maps["etl-trino-coordinator"], maps["etl-trino-worker"]
    names = ["stream", "lineage", "audit"]
    for name in names:
        assert javaprops.loads(coordinator[f"event-listener-{name}.properties"])[
            "event-listener.name"] == {"stream": "kafka", "lineage": "openlineage",
                                       "audit": "http"}[name]
    assert javaprops.loads(coordinator["config.properties"])["event-listener.config-files"] == (
        ",".join(f"/etc/trino/event-listener-{n}.properties" for n in names))
    assert [k for k in worker if k.startswith("event-listener-")] == [
        "event-listener-stream.properties"]
    assert javaprops.loads(worker["config.properties"])["event-listener.config-files"] == (
        "/etc/trino/event-listener-stream.properties")
    header = javaprops.loads(coordinator["event-listener-audit.properties"])[
        "http-event-listener.connect-http-headers"]
    env = header.split("${ENV:")[1].split("}")[0]
    (es,) = [yaml.safe_load(v) for k, v in files.items() if k.endswith("externalsecret.yaml")]
    data = {d["secretKey"]: d["remoteRef"] for d in es["spec"]["data"]}
    assert data[env]["key"].endswith("platform/audit/etl") and data[env]["property"] == "token"


for _mark in CHART:  # needs the chart and helm-python-sdk (fails under CI=true without them)
    test_the_listeners_reach_each_roles_configmap_and_the_env_secret = _mark(
        test_the_listeners_reach_each_roles_configmap_and_the_env_secret)


def test_a_spooling_worker_holds_its_split_listener_and_the_spooling_manager(
        tmp_path: Path) -> None:
    """A cluster that spools and logs split events: the worker's values have one
    additionalConfigFiles, and its ConfigMap (the real chart's) holds both the spooling
    manager and the split listener's file."""
    from tests.test_spooling import SPOOLING, STORAGE

    s = load(tmp_path, storage={"s3-keys": {**STORAGE["s3-keys"],
                                             "spooling": SPOOLING["s3-keys"]}})
    out = judge(s, trinoVersion="476", profile="small", eventListeners=["stream"],
                spooling={"storage": "s3-keys"})
    assert isinstance(out, Cluster), out
    files = Renderer(s).render_cluster(out, {})
    text = files[f"{s.output.clusters_dir}/etl/values.yaml"].decode()
    assert yaml.safe_load(text)["worker"]["additionalConfigFiles"].keys() == {
        "spooling-manager.properties", "event-listener-stream.properties"}
    _, objects = render_through_chart(helm_python.Chart.load(CHART_DIR), text, "etl", "trino-etl")
    (worker,) = [o.get("data", {}) for o in objects
                 if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "etl-trino-worker"]
    assert javaprops.loads(worker["spooling-manager.properties"])[
        "spooling-manager.name"] == "filesystem"
    assert javaprops.loads(worker["event-listener-stream.properties"])[
        "event-listener.name"] == "kafka"


for _mark in CHART:
    test_a_spooling_worker_holds_its_split_listener_and_the_spooling_manager = _mark(
        test_a_spooling_worker_holds_its_split_listener_and_the_spooling_manager)
