"""`event_listeners:` named options: where each cluster's query events go (issue 21, item 3).

The platform names each listener in the settings; a cluster gets the ones its document (or its
profile) picks, and every option `required` for it whatever the document says (`required: true`:
every cluster; `required: {profiles: [...], tenants: [...]}`: the clusters of those profiles or
owners). Three plugins of
Trino 476 are offered, each field mapped to the @Config names its jar binds
(`trinogen.kinds.event_listeners.document` writes them; tests/test_listeners.py checks them against the jars):

- `http` (plugin `http-event-listener`): `uri` (where events are POSTed), `headers` (literal, or a
  Vault reference with an optional literal prefix: `Bearer `), `events` (created, completed,
  split), `retry` (count, delay, max_delay, backoff_base);
- `kafka` (plugin `kafka-event-listener`): `brokers` (host:port), `topics` (event -> topic name;
  the events published are the keys), `client_id`, `request_timeout`, `exit_on_startup_failure`
  (Trino's default, true: a coordinator that cannot reach the brokers within the request timeout
  at startup exits; false: it starts and the listener publishes nothing until they answer);
- `openlineage` (plugin `openlineage`, HTTP transport): `url`, `endpoint`, `namespace`,
  `api_key` (a Vault reference), `headers`, `timeout`, `query_types` (Trino's default: the
  writes: INSERT, UPDATE, DELETE, MERGE, DATA_DEFINITION, ALTER_TABLE_EXECUTE; SELECT is not).

Text fields may hold `{cluster}` and `{owner}`; Vault references are `<mount>/<path>#<key>`
templates like every option's. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.secrets import PlaceholderError, settings_ref
from trinogen.settings.options.fields import is_http_url
from trinogen.settings.options.metadata import (
    SAMPLE,
    check_one_per_cluster,
    check_pattern,
    fill,
    known_fields,
)

EVENTS = ("created", "completed", "split")
_DURATION = re.compile(r"[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h|d)")  # airlift's Duration units
# RFC 9110's token: a header name (neither ':' nor ',', which Trino's header list splits on)
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BROKER = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?:[0-9]{1,5}")
# io.trino.spi.resourcegroups.QueryType in Trino 476 (javap of trino-spi)
QUERY_TYPES = ("SELECT", "EXPLAIN", "DESCRIBE", "INSERT", "UPDATE", "DELETE", "ANALYZE",
               "DATA_DEFINITION", "ALTER_TABLE_EXECUTE", "MERGE")
_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")  # Kafka's legal topic names
# An option's name becomes part of a ConfigMap key and a file name in /etc/trino.
NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@dataclass(frozen=True)
class Header:
    """One header sent with each event: `prefix` followed by the secret at `vault`, if any."""

    name: str
    prefix: str  # text, {cluster}/{owner} substituted (the whole value when `vault` is None)
    vault: str | None = None  # a Vault reference template


@dataclass(frozen=True)
class Required:
    """Which clusters get a listener whether or not their document names it."""

    every: bool = False
    profiles: frozenset[str] = frozenset()
    tenants: frozenset[str] = frozenset()  # documents' `owner`

    def applies(self, profile: object, owner: object) -> bool:
        # The document's raw values (their own checks report a wrong type): a list or an
        # object is no profile or owner, and would not hash into the sets.
        return self.every or (type(profile) is str and profile in self.profiles) or \
            (type(owner) is str and owner in self.tenants)


@dataclass(frozen=True)
class HttpListener:
    uri: str  # {cluster}/{owner} substituted per cluster
    headers: tuple[Header, ...] = ()
    events: tuple[str, ...] = ("completed",)
    retry_count: int | None = None
    retry_delay: str | None = None
    max_delay: str | None = None
    backoff_base: float | None = None
    required: Required = Required()
    type: str = "http"


@dataclass(frozen=True)
class KafkaListener:
    brokers: tuple[str, ...]
    topics: tuple[tuple[str, str], ...]  # (event, topic pattern), in EVENTS order
    client_id: str | None = None
    request_timeout: str | None = None
    exit_on_startup_failure: bool | None = None  # None: Trino's default (true)
    required: Required = Required()
    type: str = "kafka"

    @property
    def events(self) -> tuple[str, ...]:
        return tuple(event for event, _ in self.topics)


@dataclass(frozen=True)
class OpenLineageListener:
    url: str
    endpoint: str | None = None
    namespace: str | None = None  # {cluster}/{owner}; Trino's default is the coordinator's URI
    api_key: str | None = None  # a Vault reference template
    headers: tuple[Header, ...] = ()
    timeout: str | None = None
    query_types: tuple[str, ...] = ()  # (): Trino's default, the writes
    required: Required = Required()
    type: str = "openlineage"
    events: tuple[str, ...] = ("created", "completed")  # START and COMPLETE runs; not chosen


Listener = HttpListener | KafkaListener | OpenLineageListener
_COMMON = ("type", "required")


def parse(where: str, raw: Mapping[str, Any]) -> Listener:
    """One `event_listeners.<name>` entry; ConfigError naming `<name>.<field>` when it is wrong."""
    name = where.rpartition("event_listeners.")[2]
    if not NAME.fullmatch(name):
        raise ConfigError(f"{where}: a listener's name is lower-case letters, digits and '-' "
                          "(it names the listener's file in /etc/trino)")
    kind = raw.get("type")
    if type(kind) is not str or kind not in _BY_TYPE:  # a list would not hash
        raise ConfigError(f"{where}.type must be one of {', '.join(_BY_TYPE)}, not {kind!r}")
    return _BY_TYPE[kind](where, raw, _required(where, raw.get("required", False)))


def _required(where: str, value: Any) -> Required:
    if isinstance(value, bool):
        return Required(every=value)
    if isinstance(value, Mapping):
        known_fields(f"{where}.required", value, ("profiles", "tenants"))
        lists = {k: value.get(k, []) for k in ("profiles", "tenants")}
        if all(isinstance(v, list) and all(isinstance(n, str) for n in v)
               for v in lists.values()):
            return Required(profiles=frozenset(lists["profiles"]),
                            tenants=frozenset(lists["tenants"]))
    raise ConfigError(f"{where}.required must be true, false or {{profiles: [names], "
                      "tenants: [owners]}")


def _http(where: str, raw: Mapping[str, Any], required: Required) -> HttpListener:
    known_fields(where, raw, (*_COMMON, "uri", "headers", "events", "retry"))
    retry = raw.get("retry") or {}
    if not isinstance(retry, Mapping):
        raise ConfigError(f"{where}.retry must be a mapping (count, delay, max_delay, "
                          "backoff_base)")
    known_fields(f"{where}.retry", retry, ("count", "delay", "max_delay", "backoff_base"))
    count = retry.get("count")
    if count is not None and (type(count) is not int or not 0 <= count <= 100):
        raise ConfigError(f"{where}.retry.count must be a whole number from 0 to 100")
    base = retry.get("backoff_base")
    if base is not None and (type(base) not in (int, float) or not 1 <= base <= 10):
        raise ConfigError(f"{where}.retry.backoff_base must be a number from 1 to 10")
    return HttpListener(
        uri=_url(where, raw, "uri"), headers=_headers(where, raw.get("headers")),
        events=_events(f"{where}.events", raw.get("events", ["completed"])), retry_count=count,
        retry_delay=_duration(f"{where}.retry", retry, "delay"),
        max_delay=_duration(f"{where}.retry", retry, "max_delay"),
        backoff_base=None if base is None else float(base), required=required)


def _kafka(where: str, raw: Mapping[str, Any], required: Required) -> KafkaListener:
    known_fields(where, raw, (*_COMMON, "brokers", "topics", "client_id", "request_timeout",
                              "exit_on_startup_failure"))
    brokers = raw.get("brokers")
    if not isinstance(brokers, list) or not brokers or not all(
            isinstance(b, str) and _BROKER.fullmatch(b) for b in brokers):
        raise ConfigError(f"{where}.brokers must be a list of host:port")
    topics = _topics(where, raw.get("topics"))
    client_id = raw.get("client_id")
    if client_id is not None:
        _topic(f"{where}.client_id", client_id)
    return KafkaListener(
        brokers=tuple(brokers), topics=tuple((e, topics[e]) for e in EVENTS if e in topics),
        client_id=client_id, request_timeout=_duration(where, raw, "request_timeout"),
        exit_on_startup_failure=_flag(where, raw, "exit_on_startup_failure"), required=required)


def _topics(where: str, topics: Any) -> Mapping[str, str]:
    if not isinstance(topics, Mapping) or not topics:
        raise ConfigError(f"{where}.topics must map events ({', '.join(EVENTS)}) to topic "
                          "names; the events published are those named")
    _events(f"{where}.topics", list(topics))
    for event, topic in topics.items():
        _topic(f"{where}.topics.{event}", topic)
    return topics


def _openlineage(where: str, raw: Mapping[str, Any], required: Required) -> OpenLineageListener:
    known_fields(where, raw, (*_COMMON, "url", "endpoint", "namespace", "api_key", "headers",
                              "timeout", "query_types"))
    endpoint = raw.get("endpoint")
    if endpoint is not None and not (isinstance(endpoint, str)
                                     and re.fullmatch(r"/[-A-Za-z0-9._~/]*", endpoint)):
        raise ConfigError(f"{where}.endpoint must be a URL path such as /api/v1/lineage")
    namespace = raw.get("namespace")
    if namespace is not None:
        _pattern(f"{where}.namespace", namespace)
    api_key = raw.get("api_key")
    if api_key is not None:
        _ref(f"{where}.api_key", api_key)
    return OpenLineageListener(
        url=_url(where, raw, "url"), endpoint=endpoint, namespace=namespace, api_key=api_key,
        headers=_headers(where, raw.get("headers")), timeout=_duration(where, raw, "timeout"),
        query_types=_query_types(where, raw.get("query_types", [])), required=required)


def _query_types(where: str, types: Any) -> tuple[str, ...]:
    if not isinstance(types, list) or not all(t in QUERY_TYPES for t in types):
        raise ConfigError(f"{where}.query_types must list Trino query types among "
                          f"{', '.join(QUERY_TYPES)}")
    return tuple(t for t in QUERY_TYPES if t in types)


_BY_TYPE: dict[str, Callable[[str, Mapping[str, Any], Required], Listener]] = {
    "http": _http, "kafka": _kafka, "openlineage": _openlineage,
}


def _plain(where: str, text: str) -> str:
    """Text that reaches Trino as written: printable ASCII (a properties file then needs no
    escaping), no backslash, no `${` (Trino's secret resolver would read an environment
    variable), no `{{` (the chart passes listener files through Helm's `tpl`), no ',' (Trino
    splits these lists on it)."""
    if (not text or text[0] == " " or not all(" " <= ch <= "~" for ch in text)
            or any(ch in text for ch in "\\,")
            or "${" in text or "{{" in text):
        raise ConfigError(f"{where} must be one line of printable ASCII without ',', '\\', "
                          "'${' or '{{'")
    return text


def _pattern(where: str, value: Any) -> str:
    """Plain text in which `{cluster}` and `{owner}` are substituted."""
    return _plain(where, _own(where, check_pattern(where, value)))


def _own(where: str, template: str) -> str:
    """A text that names the cluster to the receiver (where its events go, under which name,
    with which secret) names that cluster alone."""
    check_one_per_cluster(where, template, "destination of events")
    return template


def _url(where: str, raw: Mapping[str, Any], key: str) -> str:
    value = _own(f"{where}.{key}", check_pattern(f"{where}.{key}", raw.get(key)))
    if not is_http_url(fill(value, **SAMPLE)):
        raise ConfigError(f"{where}.{key} must be an http:// or https:// URL")
    host = value.partition("://")[2].split("/", 1)[0].rpartition("@")[2].split(":", 1)[0]
    if host.endswith(("{cluster}", "{owner}")):
        # A document names both: it would choose the domain its events (and a header's Vault
        # token) go to, `{owner}` = evil.example.net.
        raise ConfigError(f"{where}.{key} {value!r}: the host must end with the platform's own "
                          "text, not {cluster} or {owner} (a document names both)")
    return _plain(f"{where}.{key}", value)


def _flag(where: str, raw: Mapping[str, Any], key: str) -> bool | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{where}.{key} must be true or false")
    return value


def _duration(where: str, raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not (isinstance(value, str) and _DURATION.fullmatch(value)):
        raise ConfigError(f"{where}.{key} must be a Trino duration such as \"10s\"")
    return value


def _events(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(v in EVENTS for v in value):
        raise ConfigError(f"{where} must list events among {', '.join(EVENTS)}")
    return tuple(e for e in EVENTS if e in value)


def _topic(where: str, value: Any) -> None:
    if not _TOPIC.fullmatch(fill(_own(where, check_pattern(where, value)), **SAMPLE)):
        raise ConfigError(f"{where} must be a Kafka topic name: A-Z a-z 0-9 . _ - "
                          "({cluster} and {owner} may be substituted)")


def _ref(where: str, value: Any) -> str:
    try:  # the grammar the model parses each cluster's reference with, on a sample cluster
        if isinstance(value, str):
            settings_ref(value, **SAMPLE)
            return _own(where, value)
    except PlaceholderError:
        pass
    raise ConfigError(f"{where} must be a Vault reference <mount>/<path>#<key> (only {{cluster}} "
                      f"and {{owner}} may be substituted), not {value!r}")


def _headers(where: str, raw: Any) -> tuple[Header, ...]:
    """`{Name: "literal"}` or `{Name: {vault: <ref>, prefix: "Bearer "}}`, sorted by name."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}.headers must map header names to values")
    return tuple(_header(f"{where}.headers.{name}", name, value)
                 for name, value in sorted(raw.items(), key=lambda kv: str(kv[0])))


def _header(at: str, name: Any, value: Any) -> Header:
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise ConfigError(f"{at}: not an HTTP header name")
    if isinstance(value, str):
        return Header(name, _pattern(at, value))
    if not isinstance(value, Mapping):
        raise ConfigError(f"{at} must be text or {{vault: <mount>/<path>#<key>, prefix: <text>}}")
    known_fields(at, value, ("vault", "prefix"))
    prefix = value.get("prefix", "")
    return Header(name, _pattern(f"{at}.prefix", prefix) if prefix != "" else "",
                  _ref(f"{at}.vault", value.get("vault")))
