"""Event listeners: which a cluster gets, and each one's properties file (issue 21, item 3).

A document picks listeners by name (`eventListeners: [audit, lineage]`, settings
`event_listeners.<name>`, `trinogen.kinds.event_listeners.options`); every option `required` for the
cluster's profile or owner (or for all) is added whatever the document (or its profile) says, so a
document cannot drop the platform's audit trail.
Each listener becomes one properties file, `/etc/trino/event-listener-<name>.properties`, and
`event-listener.config-files` lists them: trinogen writes that line itself (a document may not:
`trinogen.trino.paths.REFUSED`).

Which nodes: query created/completed events come from the coordinator (QueryMonitor), but split
completed events from the node that ran the split (io.trino.event.SplitMonitor, used by
SqlTaskExecution in trino-main-476), so a listener that logs splits is on every node.

Secrets (header values, the OpenLineage API key) are Vault references bound like the other
options' and written as `${ENV:<variable>}`, which Trino's secrets resolver fills from the
cluster's env Secret when it loads the file (EventListenerManager calls
SecretsResolver.getResolvedConfiguration): git only ever holds the variable's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from trinogen.kinds.event_listeners.options import (
    Header,
    HttpListener,
    KafkaListener,
    Listener,
    OpenLineageListener,
)
from trinogen.model.checker import Checker
from trinogen.model.server_secrets import env_reference
from trinogen.model.types import ServerSecret
from trinogen.secrets import PlaceholderError, SecretUse, settings_use
from trinogen.settings import Settings
from trinogen.settings.options import metadata

FIELD = "eventListeners"
KIND = "event_listeners"
CONFIG_DIR = "/etc/trino"  # the chart's server.config.path: additionalConfigFiles land here
CONFIG_FILES = "event-listener.config-files"
Role = Literal["coordinator", "worker"]
Lines = tuple[tuple[str, str], ...]
# The event names of each plugin's switches (HttpEventListenerConfig, KafkaEventListenerConfig)
_HTTP_EVENTS = {"created": "log-created", "completed": "log-completed", "split": "log-split"}
_KAFKA_EVENTS = {"created": "created-event", "completed": "completed-event",
                 "split": "split-completed-event"}
_KAFKA_PUBLISH = {"created": "publish-created-event", "completed": "publish-completed-event",
                  "split": "publish-split-completed-event"}


@dataclass(frozen=True)
class ListenerFile:
    """One listener's properties file (values with secrets as `${ENV:...}`)."""

    name: str  # the option's name
    lines: tuple[tuple[str, str], ...]
    every_node: bool  # it logs split events, which each worker emits

    @property
    def key(self) -> str:
        """The file's name in /etc/trino (and its key in the chart's additionalConfigFiles)."""
        return f"event-listener-{self.name}.properties"

    @property
    def text(self) -> str:
        """The file as java.util.Properties reads it: the keys are fixed ASCII names, and every
        value printable ASCII without a backslash (the option's checks, and clusterId, owner and
        variable names are narrower still), so `key=value` needs no escaping."""
        return "".join(f"{k}={v}\n" for k, v in self.lines)


@dataclass(frozen=True)
class ListenerParts:
    """What a cluster's listeners add (the kind's `Part`): their files, the
    `event-listener.config-files` line of each role that has one, the secrets the files name."""

    listeners: tuple[ListenerFile, ...]
    secrets: tuple[ServerSecret, ...]
    config: Lines = ()  # nothing for both roles alike: each role lists its own files

    def on(self, role: Role) -> tuple[ListenerFile, ...]:
        return tuple(f for f in self.listeners if role == "coordinator" or f.every_node)

    def config_files(self, role: Role) -> tuple[str, str] | None:
        """The `event-listener.config-files` line of a role's config.properties, if any."""
        files = self.on(role)
        if not files:
            return None
        return CONFIG_FILES, ",".join(f"{CONFIG_DIR}/{f.key}" for f in files)

    def _lines(self, role: Role) -> Lines:
        line = self.config_files(role)
        return () if line is None else (line,)

    def _files(self, role: Role) -> Lines:
        return tuple((f.key, f.text) for f in self.on(role))

    @property
    def coordinator(self) -> Lines:
        return self._lines("coordinator")

    @property
    def files(self) -> Lines:
        return self._files("coordinator")

    @property
    def worker(self) -> Lines:
        return self._lines("worker")

    @property
    def worker_files(self) -> Lines:
        return self._files("worker")


def pick(value: object, d: Mapping[str, Any], s: Settings, c: Checker
         ) -> tuple[tuple[str, Listener], ...] | None:
    """The listeners the cluster gets (None: none), read from `eventListeners` and the options
    required for the document's profile and owner."""
    offered: Mapping[str, Listener] = s.options(KIND)
    names = chosen(value, offered, d.get("profile"), d.get("owner"), c)
    return tuple((n, offered[n]) for n in names) or None


def fill(option: tuple[tuple[str, Listener], ...], cluster_id: str, owner: str,
         d: Mapping[str, Any], s: Settings, c: Checker) -> ListenerParts | None:
    """Each picked listener's file for this cluster; None when a reference fails (reported)."""
    return listener_parts([n for n, _ in option], dict(option), cluster_id, owner,
                          coordinator_uri(cluster_id), c)


def coordinator_uri(cluster_id: str) -> str:
    """The coordinator's Service inside the cluster (OpenLineage's `trino.uri`, which names the
    datasets' namespace): the chart's `trino.fullname` in namespace `trino-<clusterId>`, as
    `trinogen.render.names.chart_fullname` derives it (tests/test_event_listeners.py holds
    them equal)."""
    name = "trino" if "trino".startswith(cluster_id) else f"{cluster_id}-trino"
    return f"http://{name[:63].rstrip('-')}.trino-{cluster_id}.svc:8080"


def chosen(value: object, offered: Mapping[str, Listener], profile: object, owner: object,
           c: Checker) -> list[str]:
    """The listeners a cluster gets: the document's picks in its order (each checked like any
    pick), then every option required for its profile or owner that it did not name, by name."""
    names: list[str] = []
    if value is not None and not isinstance(value, list):
        c.error(FIELD, "must be a list of event listener names")
    for i, item in enumerate(value if isinstance(value, list) else []):
        # required: a null entry names no listener (skipping it would hide a typo'd layer)
        if c.pick(item, f"{FIELD}[{i}]", offered, KIND, required=True) is not None and \
                item not in names:
            names.append(item)
    return names + sorted(n for n, o in offered.items()
                          if o.required.applies(profile, owner) and n not in names)


def listener_parts(names: Sequence[str], offered: Mapping[str, Listener], cluster: str,
                   owner: str, trino_uri: str, c: Checker) -> ListenerParts | None:
    """Each chosen listener's file for one cluster; None when a reference fails (reported)."""
    builder = _Builder(cluster, owner, c)
    files = [builder.file(name, offered[name], trino_uri) for name in names]
    if builder.failed:
        return None
    return ListenerParts(tuple(files), tuple(builder.secrets))


def check_private(parts: ListenerParts, uses: Iterable[tuple[str, SecretUse]],
                  c: Checker) -> None:
    """Report a document placeholder (field path, use) naming a listener's secret.

    A listener's token lets its holder write into the platform's audit or lineage store: a
    document must not copy it into a property of its own (where a catalog could send it
    anywhere), even when the platform keeps that secret inside `secrets.scope`.
    """
    private = {s.use.ref: s.path for s in parts.secrets}
    for path, use in uses:
        if use.ref in private:
            c.error(path, f"placeholder {use.placeholder.text} names a secret of the event "
                    f"listener at {private[use.ref]}; documents may not use it")


class _Builder:
    def __init__(self, cluster: str, owner: str, c: Checker) -> None:
        self.cluster, self.owner, self.c = cluster, owner, c
        self.failed = False
        self.secrets: list[ServerSecret] = []
        self.name = ""

    def fill(self, pattern: str) -> str:
        return metadata.fill(pattern, self.cluster, self.owner)

    def secret(self, key: str, template: str) -> str:
        """`${ENV:<variable>}` for a Vault reference of the option, kept for the env Secret."""
        try:
            use = settings_use(template, self.cluster, self.owner)
        except PlaceholderError as e:
            self.c.error(FIELD, f"event listener {self.name!r}: reference {template!r}: {e}")
            self.failed = True
            return ""
        self.secrets.append(ServerSecret(f"{FIELD}.{self.name}", key, use))
        return env_reference(use)

    def headers(self, key: str, headers: Sequence[Header]) -> list[tuple[str, str]]:
        """Trino's `Name:value, Name:value` list (split on ',', then on the first ':')."""
        if not headers:
            return []
        values = [f"{h.name}:{self.fill(h.prefix)}{self.secret(key, h.vault) if h.vault else ''}"
                  for h in headers]
        return [(key, ",".join(values))]

    def file(self, name: str, option: Listener, trino_uri: str) -> ListenerFile:
        self.name = name
        if isinstance(option, HttpListener):
            return ListenerFile(name, tuple(self.http(option)), "split" in option.events)
        if isinstance(option, KafkaListener):
            return ListenerFile(name, tuple(self.kafka(option)), "split" in option.events)
        return ListenerFile(name, tuple(self.openlineage(option, trino_uri)), False)

    def http(self, o: HttpListener) -> list[tuple[str, str]]:
        p = "http-event-listener."
        lines = [("event-listener.name", "http"), (f"{p}connect-ingest-uri", self.fill(o.uri))]
        lines += [(f"{p}{flag}", str(event in o.events).lower())
                  for event, flag in _HTTP_EVENTS.items()]
        lines += self.headers(f"{p}connect-http-headers", o.headers)
        optional = {"connect-retry-count": o.retry_count, "connect-retry-delay": o.retry_delay,
                    "connect-max-delay": o.max_delay, "connect-backoff-base": o.backoff_base}
        lines += [(f"{p}{k}", str(v)) for k, v in optional.items() if v is not None]
        return lines

    def kafka(self, o: KafkaListener) -> list[tuple[str, str]]:
        p = "kafka-event-listener."
        topics = dict(o.topics)
        lines = [("event-listener.name", "kafka"), (f"{p}broker-endpoints", ",".join(o.brokers))]
        lines += [(f"{p}{flag}", str(event in topics).lower())
                  for event, flag in _KAFKA_PUBLISH.items()]
        lines += [(f"{p}{_KAFKA_EVENTS[e]}.topic", self.fill(t)) for e, t in o.topics]
        if o.client_id:
            lines.append((f"{p}client-id", self.fill(o.client_id)))
        if o.request_timeout:
            lines.append((f"{p}request-timeout", o.request_timeout))
        if o.exit_on_startup_failure is not None:
            lines.append((f"{p}terminate-on-initialization-failure",
                          str(o.exit_on_startup_failure).lower()))
        return lines

    def openlineage(self, o: OpenLineageListener, trino_uri: str) -> list[tuple[str, str]]:
        p = "openlineage-event-listener."
        lines = [("event-listener.name", "openlineage"), (f"{p}trino.uri", trino_uri),
                 (f"{p}transport.type", "HTTP"), (f"{p}transport.url", self.fill(o.url))]
        if o.endpoint:
            lines.append((f"{p}transport.endpoint", o.endpoint))
        if o.namespace:
            lines.append((f"{p}namespace", self.fill(o.namespace)))
        if o.api_key:
            lines.append((f"{p}transport.api-key", self.secret(f"{p}transport.api-key",
                                                              o.api_key)))
        if o.timeout:
            lines.append((f"{p}transport.timeout", o.timeout))
        if o.query_types:
            lines.append((f"{p}trino.include-query-types", ",".join(o.query_types)))
        lines += self.headers(f"{p}transport.headers", o.headers)
        return lines
