"""Event listeners as platform options: parsing, the choice, each listener's file (issue 21, 3).

Expected property lines are written out here from the plugins' @Config names (Trino 476's
http-event-listener, kafka-event-listener and openlineage jars); the last test reads those jars
with the registry's own class-file scanner, so a name trinogen writes that Trino does not bind
fails here before a real Trino refuses to start (tests/test_trino_real_event_listeners.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from trinogen.errors import ConfigError
from trinogen.model.checker import Checker
from trinogen.model.listeners import ListenerParts, check_private, chosen, listener_parts
from trinogen.render.escape import helm_unescape
from trinogen.render.listeners import config_files, config_line, file_text
from trinogen.secrets import settings_use
from trinogen.settings.listeners import Listener, parse

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
    assert file_text(parts.files[0]).splitlines() == [
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
    assert file_text(parts.files[0]).splitlines() == [
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
    assert file_text(parts.files[0]).splitlines() == [
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
    assert config_line(parts, "coordinator") == (
        "event-listener.config-files=/etc/trino/event-listener-audit.properties,"
        "/etc/trino/event-listener-stream.properties,/etc/trino/event-listener-lineage.properties")
    assert config_line(parts, "worker") == (
        "event-listener.config-files=/etc/trino/event-listener-stream.properties")
    assert sorted(config_files(parts, "coordinator")) == [
        "event-listener-audit.properties", "event-listener-lineage.properties",
        "event-listener-stream.properties"]
    assert list(config_files(parts, "worker")) == ["event-listener-stream.properties"]


def test_no_listener_writes_no_line() -> None:
    """A cluster without listeners gets no config-files line and no file on either role."""
    parts = build([], {})
    assert (config_line(parts, "coordinator"), config_line(parts, "worker")) == (None, None)
    assert config_files(parts, "coordinator") == {}


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


def test_the_coordinator_file_survives_the_charts_tpl() -> None:
    """What the chart's `tpl` makes of the file is the file (nothing in it is a template)."""
    parts = build(["audit"], offered(audit=AUDIT))
    (text,) = config_files(parts, "coordinator").values()
    assert helm_unescape(text) == file_text(parts.files[0])


@pytest.mark.parametrize(("ref", "refused"), [
    ("secret/platform/audit/etl#token", True),   # the header's secret, as the cluster binds it
    ("secret/platform/audit/etl#other", False),
    ("secret/platform/audit/ops#token", False),  # another cluster's token is another secret
])
def test_a_document_may_not_copy_a_listeners_secret(ref: str, refused: bool) -> None:
    """A document placeholder naming a listener's Vault secret is refused at its field."""
    parts = build(["audit"], offered(audit=AUDIT))
    c = Checker("etl", "error")
    check_private(parts, [("properties.x", settings_use(ref, "etl", "data_team"))], c)
    assert [p.field for p in c.problems] == (["properties.x"] if refused else [])


@pytest.mark.parametrize(("required", "profile", "owner", "added"), [
    (False, "prod", "data_team", False),
    (True, None, "data_team", True),
    ({"profiles": ["prod"]}, "prod", "data_team", True),
    ({"profiles": ["prod"]}, "dev", "data_team", False),
    ({"profiles": ["prod"]}, None, "data_team", False),
    ({"tenants": ["finance"]}, "dev", "finance", True),
    ({"tenants": ["finance"]}, "dev", "data_team", False),
    ({"profiles": ["prod"], "tenants": ["finance"]}, "dev", "finance", True),
])
def test_a_listener_is_required_for_all_or_for_some_profiles_and_owners(
        required: Any, profile: str | None, owner: str, added: bool) -> None:
    """`required` adds the listener to every cluster, or to those of the profiles and owners
    it names, though the document names none."""
    options = offered(audit={**AUDIT, "required": required})
    c = Checker("etl", "error")
    assert chosen([], options, profile, owner, c) == (["audit"] if added else [])


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
    for f in parts.files:
        lines = dict(f.lines)
        plugin = ts.distribution("476") / "plugin" / plugins[lines.pop("event-listener.name")]
        bound = property_set(unit_facts(
            scan_jar(p.read_bytes()) for p in plugin.glob("io.trino_*.jar"))).known
        assert set(lines) - bound == set(), f.name
