"""Cluster documents -> validated `Cluster` values. Pure: no I/O, no clock, no environment.

`classify()` takes one raw document (with its defaults and profile merged underneath) and returns
either a `Cluster`, a `Disabled` marker or a `Failed` carrying every problem found, each naming
the cluster and the field path. `classify_all()` adds the rules that span documents (duplicate
clusterIds). See the README's document reference for every field and rule.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from trinogen.errors import Problem
from trinogen.secrets import (
    BoundSegment,
    Placeholder,
    PlaceholderError,
    SecretUse,
    bind,
    parse_value,
)
from trinogen.settings import SecretSettings, Settings

# --- limits (a ConfigMap holds at most 1 MiB; Helm release names at most 53 characters) -------
# Helm limits release names to 53 characters, but the chart names the worker Service
# "<release>-trino-worker" without truncating it, and a Service name has at most 63.
MAX_CLUSTER_ID = 50
MAX_CONNECTORS = 500
MAX_CONNECTOR_NAME = 128
MAX_STRING = 65536
MAX_CATALOG_BYTES = 900_000
MAX_DEPTH = 8
# The document _id is recorded in every file header, and gitops reads only the first 512 bytes of a
# file to find it again; a longer _id would be cut there, and a failing document's files could then
# look orphaned and be pruned. 256 leaves room for the rest of the header.
MAX_DOC_ID = 256
MAX_INT = 2**63 - 1  # BSON int64: larger numbers never come from MongoDB (nor print past 4300 digits)

_CLUSTER_ID = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_CONNECTOR_NAME = re.compile(r"[-._a-zA-Z0-9]+")
_VERSION = re.compile(r"[1-9][0-9]{0,5}")
_NODE_ENV = re.compile(r"[a-z0-9][_a-z0-9]*")
_JVM_SIZE = re.compile(r"([1-9][0-9]*)([kKmMgGtT]?)")
_DATA_SIZE = re.compile(r"(\d+(?:\.\d+)?)(B|kB|MB|GB|TB|PB)")
_QUANTITY = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?")
_PROP_KEY = re.compile(r"[^\s\x00-\x1f\x7f]+")
_RESOURCE_NAME = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

_JVM_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_DATA_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5}
_QUANTITY_UNITS = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip

# Documents are dicts (pymongo, mongomock, JSON, YAML all give dict or a subclass); checking dict
# first spares the abstract-base-class machinery on every field of every document.
_MAPS = (dict, Mapping)

HEAP_HEADROOM = 0.3  # Trino's default memory.heap-headroom-per-node: 30% of the heap
CHART_DEFAULT_PER_NODE = "1GB"  # the chart's <role>.config.query.maxMemoryPerNode

# Document fields that are recorded but never rendered.
METADATA_FIELDS = frozenset({"_id", "lastUpdated", "createdAt", "updatedAt", "description"})

# Fields a document may NOT set, with the reason shown to its author (docs/security.md).
RESERVED_FIELDS = {
    "project": "the Argo CD project comes from the settings (argocd.project), never from a document",
    "namespace": "the namespace is always trino-<clusterId>",
    "repoURL": "the repositories come from the settings (chart.repo_url, argocd.repo_url)",
    "repository": "the repositories come from the settings (chart.repo_url, argocd.repo_url)",
    "chart": "the chart and its version come from the settings (chart.*)",
    "chartVersion": "the chart and its version come from the settings (chart.*)",
    "values": "raw Helm values are not accepted from documents; use the documented fields",
    "helm": "raw Helm values are not accepted from documents; use the documented fields",
    "syncPolicy": "the Argo CD sync policy comes from trinogen's templates",
}

# Trino properties the chart writes itself, and the chart key trinogen maps each one to.
# None = the chart owns it and a document may not set it.
CHART_CONFIG_KEYS: dict[str, str | None] = {
    "query.max-memory": "server.config.query.maxMemory",
    "query.max-memory-per-node": "<role>.config.query.maxMemoryPerNode",
    "memory.heap-headroom-per-node": "<role>.config.memory.heapHeadroomPerNode",
    "node-scheduler.include-coordinator": "coordinator.config.nodeScheduler.includeCoordinator",
    "coordinator": None,
    "http-server.http.port": None,
    "discovery.uri": None,
    "http-server.authentication.type": None,
    "http-server.https.enabled": None,
    "http-server.https.port": None,
    "http-server.https.keystore.path": None,
    "shutdown.grace-period": None,
    "jmx.rmiregistry.port": None,
    "jmx.rmiserver.port": None,
    "plugin.dir": None,
}
CHART_NODE_KEYS: dict[str, str | None] = {
    "node.environment": "server.node.environment",
    "node.data-dir": None,
}
# Node properties that must differ on every pod: the chart writes one node.properties per role,
# so a value from a document would be shared by all workers. Trino chooses them itself.
PER_POD_NODE_KEYS = frozenset({"node.id", "node.internal-address"})
# Catalog names Trino keeps for itself.
RESERVED_CATALOGS = frozenset({"system"})

_TOP_FIELDS = frozenset(
    {"clusterId", "owner", "enabled", "trinoVersion", "profile", "clusterConfig",
     "properties", "connectors", "destination"}
) | METADATA_FIELDS  # fmt: skip
_ROLE_FIELDS = frozenset({"replicas", "resources", "jvm", "properties"})
_WORKER_FIELDS = _ROLE_FIELDS | {"autoscaling", "gracefulShutdown"}


# --- the validated model ------------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """Coordinator or worker sizing."""

    resources: Mapping[str, Mapping[str, str]]  # {"requests": {...}, "limits": {...}}
    max_heap: str
    min_heap: str | None
    max_memory_per_node: str | None  # role value for the chart's <role>.config.query...
    heap_headroom: str | None
    extra_properties: tuple[tuple[str, str], ...]  # role-only lines (server.<role>ExtraConfig)


@dataclass(frozen=True)
class Autoscaling:
    kind: str  # "hpa" or "keda"
    min_replicas: int
    max_replicas: int
    target_cpu: int | None = None
    target_memory: int | None = None
    triggers: tuple[Mapping[str, Any], ...] = ()
    polling_interval: int | None = None
    cooldown_period: int | None = None


@dataclass(frozen=True)
class Connector:
    name: str
    # connector.name first, then the other keys sorted; values split around placeholders
    properties: tuple[tuple[str, tuple[BoundSegment, ...]], ...]

    @property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        return tuple(s for _, v in self.properties for s in v if isinstance(s, SecretUse))


@dataclass(frozen=True)
class Cluster:
    """One valid, enabled cluster, ready to render."""

    cluster_id: str
    doc_id: str  # canonical Extended JSON of the document's _id
    owner: str
    trino_version: str
    workers: int
    coordinator: Role
    worker: Role
    max_memory: str | None
    node_environment: str | None
    include_coordinator: bool | None
    config_properties: tuple[tuple[str, str], ...]  # both roles: additionalConfigProperties
    node_properties: tuple[tuple[str, str], ...]  # additionalNodeProperties
    connectors: tuple[Connector, ...]
    autoscaling: Autoscaling | None = None
    grace_period_seconds: int | None = None
    destination_name: str | None = None
    destination_server: str | None = None
    profile: str | None = None
    warnings: tuple[Problem, ...] = ()

    @property
    def namespace(self) -> str:
        return f"trino-{self.cluster_id}"

    @property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        seen: dict[str, SecretUse] = {}
        for c in self.connectors:
            for use in c.secret_uses:
                seen.setdefault(use.env, use)
        return tuple(sorted(seen.values(), key=lambda u: u.env))


@dataclass(frozen=True)
class Disabled:
    """A document with `enabled: false`: its cluster is pruned."""

    doc_id: str
    cluster_id: str | None


@dataclass(frozen=True)
class Failed:
    """A document that cannot be used now: its cluster's files stay as they are."""

    doc_id: str
    cluster_id: str | None  # the clusterId it claims, when that is a usable string
    problems: tuple[Problem, ...]
    stage: str = "validate"  # validate | secrets | render


Outcome = Cluster | Disabled | Failed


@dataclass(frozen=True)
class RawDocument:
    """A document as read from MongoDB, with its _id in canonical Extended JSON."""

    doc_id: str
    body: Mapping[str, Any]
    # Set when the document could not be read as stored (the embedded database refused a seed
    # document): it fails, and its cluster keeps its files.
    unreadable: str | None = None


# --- merging defaults -----------------------------------------------------------------------


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Maps merge key by key; lists and scalars in `over` replace; None removes the key."""
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, _MAPS) and isinstance(out.get(key), _MAPS):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


# --- validation ------------------------------------------------------------------------------


def type_name(value: Any) -> str:
    """How a value's type is named in messages, BSON types included."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if type(value) is str:  # bson's Code is a str subclass, but not text
        return "a string"
    if isinstance(value, _MAPS):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (bytes, bytearray)):
        return "binary data"
    name = type(value).__name__
    return {"datetime": "a date", "ObjectId": "an ObjectId", "Binary": "binary data",
            "Code": "JavaScript code"}.get(name, name)


def field_path(base: str, *parts: str | int) -> str:
    """Extend a field path: `.key` for simple keys, `["odd.key"]` for the rest, `[n]` for indexes."""
    out = base
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif len(part) <= 80 and _SIMPLE_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:  # odd or huge keys (a 10 MB key must not become a 10 MB message)
            out += f"[{json.dumps(part[:60])}{'...' if len(part) > 60 else ''}]"
    return out


def _show(value: Any) -> str:
    """A value for a message: repr-like, single line, truncated."""
    text = json.dumps(value) if isinstance(value, str) else type_name(value)
    return text if len(text) <= 70 else text[:60] + "...(" + str(len(text)) + " chars)"


class _Checker:
    """Collects problems for one document."""

    def __init__(self, label: str, unknown_fields: str) -> None:
        self.label = label
        self.unknown_fields = unknown_fields
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []

    def error(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.label, path, message))

    def mapping(self, value: Any, path: str, *, required: bool = True) -> Mapping[str, Any] | None:
        if value is None:
            if required:
                self.error(path, "is required")
            return None
        if not isinstance(value, _MAPS):
            self.error(path, f"must be an object, not {type_name(value)}")
            return None
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            self.error(path, "has keys that are not strings")
            return None
        return value

    def fields(self, obj: Mapping[str, Any], path: str, known: Iterable[str]) -> None:
        known = set(known)
        for key in obj:
            if key in known:
                continue
            where = field_path(path, key)
            if key in RESERVED_FIELDS:
                self.error(where, f"may not be set: {RESERVED_FIELDS[key]}")
                continue
            hint = _closest(key, known)
            msg = (f"unknown field{f' (did you mean {hint}?)' if hint else ''}; remove it or "
                   "correct its name")
            if self.unknown_fields == "warn":
                self.warnings.append(Problem(self.label, where, msg + "; ignored"))
            else:
                self.error(where, msg)

    def string(
        self, value: Any, path: str, *, required: bool = True, pattern: re.Pattern[str] | None = None,
        rule: str = "", max_len: int = MAX_STRING,
    ) -> str | None:
        if value is None:
            if required:
                self.error(path, "is required")
            return None
        if type(value) is not str:  # not even a str subclass such as bson's Code
            self.error(path, f"must be a string, not {type_name(value)}")
            return None
        if not text_ok(value):
            self.error(path, "contains a newline, carriage return, NUL or invalid unicode")
            return None
        if len(value) > max_len:
            self.error(path, f"is {len(value)} characters long; at most {max_len} are allowed")
            return None
        if pattern is not None and not pattern.fullmatch(value):
            self.error(path, f"{_show(value)} is not valid: {rule}")
            return None
        return value

    def integer(
        self, value: Any, path: str, *, required: bool = True, minimum: int | None = None,
        maximum: int | None = None,
    ) -> int | None:
        if value is None:
            if required:
                self.error(path, "is required")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                value = int(value)
            else:
                self.error(path, f"must be a whole number, not {_show_number(value)}")
                return None
        number = int(value)
        if abs(number) > MAX_INT:
            self.error(path, "is a number too large for MongoDB's 64-bit integers; write a "
                       f"whole number{f' of at most {maximum}' if maximum is not None else ''}")
            return None
        if minimum is not None and number < minimum:
            self.error(path, f"is {number}; it must be at least {minimum}")
            return None
        if maximum is not None and number > maximum:
            self.error(path, f"is {number}; it must be at most {maximum}")
            return None
        return number

    def boolean(self, value: Any, path: str, *, required: bool = True) -> bool | None:
        if value is None:
            if required:
                self.error(path, "is required")
            return None
        if not isinstance(value, bool):
            self.error(path, f"must be true or false (a boolean), not {_show(value)}")
            return None
        return value


def _show_number(value: Any) -> str:
    if isinstance(value, float):
        return "NaN/Infinity" if not math.isfinite(value) else repr(value)
    return _show(value)


def text_ok(text: str) -> bool:
    """No line breaks, NUL or lone surrogates: such text cannot be a Trino property."""
    if "\n" in text or "\r" in text or "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _closest(key: str, known: Iterable[str]) -> str | None:
    import difflib

    if len(key) > 100:  # no field name is that long; difflib would take seconds on a huge key
        return None
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    return match[0] if match else None


def _depth(value: Any, limit: int) -> bool:
    """True when `value` nests deeper than `limit` (checked before anything recurses)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
    return False


def document_label(raw: RawDocument) -> str:
    """How messages name a document: its clusterId when usable, else its _id."""
    cid = raw.body.get("clusterId") if isinstance(raw.body, _MAPS) else None
    if type(cid) is str and _CLUSTER_ID.fullmatch(cid) and len(cid) <= MAX_CLUSTER_ID:
        return cid
    return f"_id={raw.doc_id}"


def claimed_cluster_id(raw: RawDocument) -> str | None:
    """The clusterId a document claims, when it is a valid one (used to keep its files)."""
    label = document_label(raw)
    return None if label.startswith("_id=") else label


def classify(raw: RawDocument, settings: Settings) -> Outcome:
    """Validate one document (defaults and profile merged underneath it)."""
    label = document_label(raw)
    cid = claimed_cluster_id(raw)
    body = raw.body
    if raw.unreadable:
        return Failed(raw.doc_id, cid, (Problem(label, "", raw.unreadable),))
    if not isinstance(body, _MAPS):
        return Failed(raw.doc_id, None, (Problem(label, "", "the document is not an object"),))
    if _depth(body, MAX_DEPTH):
        return Failed(raw.doc_id, cid, (Problem(label, "", f"nests deeper than {MAX_DEPTH} levels; "
                                                "no field does: remove the extra levels"),))
    if len(raw.doc_id) > MAX_DOC_ID:
        short = label if cid else label[:100] + "..."
        return Failed(raw.doc_id, cid, (Problem(
            short, "_id", f"is {len(raw.doc_id)} characters long as Extended JSON; "
            f"trinogen records it in every file header, which holds at most {MAX_DOC_ID}: give "
            "the document a shorter _id"),))
    enabled = body.get("enabled")
    if enabled is False:
        return Disabled(raw.doc_id, cid)
    c = _Checker(label, settings.validation.unknown_fields)
    merged = _merged(body, settings, c)
    cluster = _cluster(merged, raw.doc_id, settings, c)
    if c.problems or cluster is None:
        if not c.problems:  # pragma: no cover - _cluster returns None only with problems
            c.error("", "invalid document")
        return Failed(raw.doc_id, cid, tuple(dict.fromkeys(c.problems)))
    return cluster


def classify_all(raws: Iterable[RawDocument], settings: Settings) -> list[Outcome]:
    """Classify every document, then fail every document whose clusterId another one also claims.

    Two enabled documents with the same clusterId are an error for both, never a silent pick; a
    disabled document sharing the id of an enabled one does not count.
    """
    raws = list(raws)
    outcomes = [classify(raw, settings) for raw in raws]
    for cid, idxs in enabled_claims(raws).items():
        if len(idxs) < 2:
            continue
        ids = ", ".join(outcomes[i].doc_id for i in idxs)
        for i in idxs:
            o = outcomes[i]
            problem = Problem(cid, "clusterId", f"is used by {len(idxs)} enabled documents "
                              f"(_id {ids}); make it unique or disable all but one")
            prior = o.problems if isinstance(o, Failed) else ()
            outcomes[i] = Failed(o.doc_id, cid, (*prior, problem))
    return outcomes


def enabled_claims(raws: Sequence[RawDocument]) -> dict[str, list[int]]:
    """clusterId -> indexes of the documents claiming it, disabled documents left out.

    More than one index means duplicates. Needs only the raw documents, so the render cache can
    ask it without validating anything.
    """
    claims: dict[str, list[int]] = {}
    for i, raw in enumerate(raws):
        if isinstance(raw.body, _MAPS) and raw.body.get("enabled") is not False:
            cid = claimed_cluster_id(raw)
            if cid is not None:
                claims.setdefault(cid, []).append(i)
    return claims


def _merged(body: Mapping[str, Any], settings: Settings, c: _Checker) -> Mapping[str, Any]:
    merged: Mapping[str, Any] = deep_merge(settings.defaults, {})
    profile = body.get("profile")
    if profile is not None:
        if type(profile) is not str or profile not in settings.profiles:
            known = ", ".join(sorted(settings.profiles)) or "none are configured"
            c.error("profile", f"{_show(profile)} is not a known profile ({known})")
        else:
            merged = deep_merge(merged, settings.profiles[profile])
    return deep_merge(merged, body)


def _cluster(d: Mapping[str, Any], doc_id: str, s: Settings, c: _Checker) -> Cluster | None:
    c.fields(d, "", _TOP_FIELDS)
    cluster_id = c.string(
        d.get("clusterId"), "clusterId", pattern=_CLUSTER_ID, max_len=253,
        rule="use lowercase letters, digits and '-', start with a letter, end with a letter or "
        f"digit, at most {MAX_CLUSTER_ID} characters (it names the Helm release and the "
        "namespace trino-<clusterId>)",
    )
    if cluster_id is not None and len(cluster_id) > MAX_CLUSTER_ID:
        c.error("clusterId", f"is {len(cluster_id)} characters long; at most {MAX_CLUSTER_ID} are "
                f"allowed: the chart names the worker Service \"<clusterId>-trino-worker\", and "
                "Kubernetes limits Service names to 63 characters")
        cluster_id = None
    owner = c.string(
        d.get("owner"), "owner", pattern=_LABEL_VALUE, max_len=63,
        rule="use letters, digits, '-', '_' and '.', start and end with a letter or digit, at "
        "most 63 characters (it becomes a Kubernetes label)",
    )
    c.boolean(d.get("enabled"), "enabled")
    version = _trino_version(d.get("trinoVersion"), s.validation.min_trino_version, c)
    cc = c.mapping(d.get("clusterConfig"), "clusterConfig")
    props = _properties(d.get("properties"), "properties", c, required=False)
    coordinator = worker = None
    workers = 0
    autoscaling = None
    grace = None
    if cc is not None:
        c.fields(cc, "clusterConfig", {"coordinator", "worker"})
        coord_raw = c.mapping(cc.get("coordinator"), "clusterConfig.coordinator")
        worker_raw = c.mapping(cc.get("worker"), "clusterConfig.worker")
        if coord_raw is not None:
            c.fields(coord_raw, "clusterConfig.coordinator", _ROLE_FIELDS)
            replicas = coord_raw.get("replicas")
            if replicas is not None and replicas != 1:
                c.integer(replicas, "clusterConfig.coordinator.replicas")
                if isinstance(replicas, int) and not isinstance(replicas, bool):
                    c.error("clusterConfig.coordinator.replicas", f"is {replicas}, but the Trino "
                            "chart always runs exactly one coordinator; remove it or set it to 1")
            coordinator = _role(coord_raw, "coordinator", props, c)
        if worker_raw is not None:
            c.fields(worker_raw, "clusterConfig.worker", _WORKER_FIELDS)
            autoscaling = _autoscaling(worker_raw.get("autoscaling"), c)
            if autoscaling is None:
                workers = c.integer(worker_raw.get("replicas"), "clusterConfig.worker.replicas",
                                    minimum=1, maximum=1000) or 0
            else:
                c.integer(worker_raw.get("replicas"), "clusterConfig.worker.replicas",
                          required=False, minimum=0, maximum=1000)
                workers = autoscaling.min_replicas
            grace = _graceful(worker_raw.get("gracefulShutdown"), c)
            worker = _role(worker_raw, "worker", props, c)
    destination = _destination(d.get("destination"), s, c)
    connectors = _connectors(d.get("connectors"), cluster_id, owner, s.secrets, c)
    config_props, node_props, node_env, max_memory, include_coord = _split_properties(props, c)
    if coordinator is not None and worker is not None:
        _check_memory(coordinator, "coordinator", c)
        _check_memory(worker, "worker", c)
    if c.problems or None in (cluster_id, owner, version, coordinator, worker, connectors):
        return None
    assert cluster_id and owner and version and coordinator and worker and connectors is not None
    profile = d.get("profile")
    return Cluster(
        cluster_id=cluster_id,
        doc_id=doc_id,
        owner=owner,
        trino_version=version,
        workers=workers,
        coordinator=coordinator,
        worker=worker,
        max_memory=max_memory,
        node_environment=node_env,
        include_coordinator=include_coord,
        config_properties=config_props,
        node_properties=node_props,
        connectors=connectors,
        autoscaling=autoscaling,
        grace_period_seconds=grace,
        destination_name=destination[0],
        destination_server=destination[1],
        profile=profile if isinstance(profile, str) else None,
        warnings=tuple(c.warnings),
    )


def _trino_version(value: Any, minimum: int, c: _Checker) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INT:
        value = str(value)
    text = c.string(value, "trinoVersion", pattern=_VERSION,
                    rule="write a Trino release number such as \"476\"")
    if text is None:
        return None
    if int(text) < minimum:
        c.error("trinoVersion", f"is {text}; the oldest Trino release supported here is "
                f"{minimum} (validation.min_trino_version)")
        return None
    return text


# Properties: {section: {key: value}} flattened to "section.key".
_Props = dict[str, tuple[str, str]]  # flat key -> (value, field path)


def _properties(value: Any, path: str, c: _Checker, *, required: bool) -> _Props:
    out: _Props = {}
    sections = c.mapping(value, path, required=required)
    if sections is None:
        return out
    for section, entries in sections.items():
        spath = field_path(path, section)
        entries = c.mapping(entries, spath)
        if entries is None:
            continue
        for key, raw in entries.items():
            flat = f"{section}.{key}"
            kpath = field_path(path, section, key)
            if not section or not key or not _PROP_KEY.fullmatch(flat) or not text_ok(flat):
                c.error(kpath, "property names may not be empty or contain spaces or control "
                        "characters; write {\"section\": {\"key\": value}} for section.key")
                continue
            if flat in out:  # {"a": {"b.c": ..}} and {"a.b": {"c": ..}} are both a.b.c
                c.error(kpath, f"names the property {flat} again (also {out[flat][1]}); set it once")
                continue
            text = c.string(raw, kpath)
            if text is None:
                continue
            if not _plain_text(text, kpath, c):
                continue
            out[flat] = (text, kpath)
    return out


def _plain_text(text: str, path: str, c: _Checker) -> bool:
    """Text outside connectors may not carry placeholders or Trino's own ${ENV:...}."""
    if "${ENV:" in text:
        c.error(path, "${ENV:...} is reserved for trinogen's secret wiring; use a {{ NAME }} "
                "placeholder in a connector property instead")
        return False
    try:
        segments = parse_value(text)
    except PlaceholderError as e:
        c.error(path, str(e))
        return False
    if any(isinstance(s, Placeholder) for s in segments):
        c.error(path, "secret placeholders are resolved only in connector properties")
        return False
    return True


def _split_properties(
    props: _Props, c: _Checker
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], str | None, str | None, bool | None]:
    config: list[tuple[str, str]] = []
    node: list[tuple[str, str]] = []
    node_env = max_memory = None
    include_coord = None
    for key, (value, path) in sorted(props.items()):
        if key.startswith("node."):
            if key == "node.environment":
                if _NODE_ENV.fullmatch(value):
                    node_env = value
                else:
                    c.error(path, f"{_show(value)} is not a valid node.environment: Trino accepts "
                            "only lowercase letters, digits and '_', starting with a letter or digit")
            elif key in CHART_NODE_KEYS:
                c.error(path, "is set by the chart and cannot be changed from a document")
            elif key in PER_POD_NODE_KEYS:
                c.error(path, "must differ on every pod, but the chart writes one node.properties "
                        "for all pods of a role; leave it out and Trino chooses it per pod")
            else:
                node.append((key, value))
            continue
        if key in CHART_CONFIG_KEYS:
            target = CHART_CONFIG_KEYS[key]
            if target is None:
                c.error(path, "is set by the chart and cannot be changed from a document")
            elif key == "query.max-memory":
                if _data_size(value) is None:
                    c.error(path, f"{_show(value)} is not a Trino data size such as \"100GB\"")
                else:
                    max_memory = value
            elif key == "node-scheduler.include-coordinator":
                if value not in ("true", "false"):
                    c.error(path, f"must be \"true\" or \"false\", not {_show(value)}")
                else:
                    include_coord = value == "true"
            # the per-node keys are read per role by _role()
            continue
        config.append((key, value))
    return tuple(config), tuple(node), node_env, max_memory, include_coord


def _role(raw: Mapping[str, Any], role: str, props: _Props, c: _Checker) -> Role | None:
    base = f"clusterConfig.{role}"
    resources = _resources(raw.get("resources"), f"{base}.resources", c)
    jvm = c.mapping(raw.get("jvm"), f"{base}.jvm")
    max_heap = min_heap = None
    if jvm is not None:
        c.fields(jvm, f"{base}.jvm", {"maxHeapSize", "minHeapSize"})
        max_heap = _jvm_size(jvm.get("maxHeapSize"), f"{base}.jvm.maxHeapSize", c, required=True)
        min_heap = _jvm_size(jvm.get("minHeapSize"), f"{base}.jvm.minHeapSize", c, required=False)
        if max_heap and min_heap and _jvm_bytes(min_heap) > _jvm_bytes(max_heap):
            c.error(f"{base}.jvm.minHeapSize", f"{min_heap} is larger than maxHeapSize {max_heap}")
    role_props = _properties(raw.get("properties"), f"{base}.properties", c, required=False)
    extra: list[tuple[str, str]] = []
    for key, (value, path) in sorted(role_props.items()):
        if key in ("query.max-memory-per-node", "memory.heap-headroom-per-node"):
            continue
        elif key.startswith("node.") or key in CHART_CONFIG_KEYS:
            c.error(path, "cannot be set per role; set it in the top-level properties")
        elif key in props:
            c.error(path, f"is also set in properties.{key.partition('.')[0]}; set it in one place")
        else:
            extra.append((key, value))
    per_node = role_props.get("query.max-memory-per-node") or props.get("query.max-memory-per-node")
    headroom = (role_props.get("memory.heap-headroom-per-node")
                or props.get("memory.heap-headroom-per-node"))
    for entry in (per_node, headroom):
        if entry is not None and _data_size(entry[0]) is None:
            c.error(entry[1], f"{_show(entry[0])} is not a Trino data size such as \"8GB\"")
    if max_heap is None or resources is None:
        return None
    limit = resources.get("limits", {}).get("memory") or resources.get("requests", {}).get("memory")
    limit_bytes = _quantity_bytes(limit) if limit is not None else None
    if limit_bytes is not None and _jvm_bytes(max_heap) >= limit_bytes:
        which = "limit" if resources.get("limits", {}).get("memory") else "request"
        c.error(f"{base}.jvm.maxHeapSize", f"{max_heap} is not below the container memory "
                f"{which} {limit}; leave room for the JVM's off-heap memory")
    return Role(resources=resources, max_heap=max_heap, min_heap=min_heap,
                max_memory_per_node=per_node[0] if per_node else None,
                heap_headroom=headroom[0] if headroom else None,
                extra_properties=tuple(extra))


def _check_memory(role: Role, name: str, c: _Checker) -> None:
    """Trino refuses to start when max-memory-per-node + heap headroom exceed the heap."""
    heap = _jvm_bytes(role.max_heap)
    per_node_text = role.max_memory_per_node or CHART_DEFAULT_PER_NODE
    per_node = _data_size(per_node_text)
    explicit = _data_size(role.heap_headroom) if role.heap_headroom else None
    if per_node is None or (role.heap_headroom and explicit is None):
        return  # reported as a format error already
    if explicit is not None:
        headroom, needed = explicit, per_node + explicit
        headroom_text = str(role.heap_headroom)
    else:
        headroom = int(heap * HEAP_HEADROOM)
        needed = math.ceil(per_node / (1 - HEAP_HEADROOM))
        headroom_text = f"30% of the heap = {_human(headroom)}"
    if per_node + headroom > heap:
        source = "" if role.max_memory_per_node else " (the chart's default)"
        c.error(
            f"clusterConfig.{name}.jvm.maxHeapSize",
            f"the {name} heap {role.max_heap} is too small: query.max-memory-per-node "
            f"{per_node_text}{source} plus the heap headroom ({headroom_text}) is "
            f"{_human(per_node + headroom, up=True)}, and Trino refuses to start when that exceeds the "
            f"heap; raise the heap to at least {_jvm_text(needed)} or lower "
            f"query.max-memory-per-node to at most {_human(max(heap - headroom, 0))}",
        )


def _human(n: float, *, up: bool = False) -> str:
    """A byte count as a Trino data size, rounded down (or up) to one decimal."""
    rnd = math.ceil if up else math.floor
    for unit, size in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if n >= size:
            value = rnd(n / size * 10) / 10
            return f"{value:.1f}".rstrip("0").rstrip(".") + unit
    return f"{int(n)}B"


def _jvm_text(n: int) -> str:
    """A byte count as a JVM size, rounded up to whole gigabytes (or megabytes below 1G)."""
    if n > 1024**3:
        return f"{math.ceil(n / 1024**3)}G"
    return f"{math.ceil(n / 1024**2)}M"


def _resources(value: Any, path: str, c: _Checker) -> dict[str, dict[str, str]] | None:
    res = c.mapping(value, path, required=False)
    if res is None:
        return {} if value is None else None
    c.fields(res, path, {"requests", "limits"})
    out: dict[str, dict[str, str]] = {}
    ok = True
    for kind in ("requests", "limits"):
        entries = c.mapping(res.get(kind), f"{path}.{kind}", required=False)
        if entries is None:
            ok = ok and res.get(kind) is None
            continue
        out[kind] = {}
        for name, q in entries.items():
            qpath = field_path(path, kind, name)
            if not _RESOURCE_NAME.fullmatch(name) or len(name) > 253:
                c.error(qpath, "is not a valid Kubernetes resource name")
                ok = False
                continue
            if isinstance(q, (int, float)) and not isinstance(q, bool):
                if (isinstance(q, float) and not math.isfinite(q)) or abs(q) > MAX_INT:
                    c.error(qpath, "must be a Kubernetes quantity such as \"4\" or \"16Gi\", not "
                            f"{_show_number(q) if isinstance(q, float) else 'a number this large'}")
                    ok = False
                    continue
                q = repr(q) if isinstance(q, float) else str(q)
            text = c.string(q, qpath, pattern=_QUANTITY, max_len=64,
                            rule="use a Kubernetes quantity such as \"500m\", \"4\" or \"16Gi\"")
            if text is None:
                ok = False
                continue
            out[kind][name] = text
    for name, req in out.get("requests", {}).items():
        lim = out.get("limits", {}).get(name)
        if lim is not None:
            rq, lq = _quantity_bytes(req), _quantity_bytes(lim)
            if rq is not None and lq is not None and rq > lq:
                c.error(field_path(path, "requests", name),
                        f"{req} is more than the limit {lim}; Kubernetes rejects such a pod")
    return out if ok else None


def _jvm_size(value: Any, path: str, c: _Checker, *, required: bool) -> str | None:
    return c.string(value, path, required=required, pattern=_JVM_SIZE, max_len=24,
                    rule="use a JVM size such as \"20G\", \"512M\" or \"16384m\"")


def _jvm_bytes(text: str) -> int:
    m = _JVM_SIZE.fullmatch(text)
    assert m
    return int(m.group(1)) * _JVM_UNITS[m.group(2).lower()]


def _data_size(text: str) -> int | None:
    m = _DATA_SIZE.fullmatch(text)
    if not m:
        return None
    return int(Decimal(m.group(1)) * _DATA_UNITS[m.group(2)])


def _quantity_bytes(text: str) -> Decimal | None:
    m = _QUANTITY.fullmatch(text)
    if not m:
        return None
    suffix = m.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(m.group(1)) * (Decimal(10) ** int(suffix[1:]))
        return Decimal(m.group(1)) * Decimal(str(_QUANTITY_UNITS[suffix]))
    except (InvalidOperation, OverflowError, ValueError):
        return None


def _autoscaling(value: Any, c: _Checker) -> Autoscaling | None:
    path = "clusterConfig.worker.autoscaling"
    a = c.mapping(value, path, required=False)
    if a is None:
        return None
    kind = a.get("type", "hpa")
    if kind not in ("hpa", "keda"):
        c.error(f"{path}.type", f"{_show(kind)} is not \"hpa\" or \"keda\"")
        return None
    common = {"type", "minReplicas", "maxReplicas"}
    if kind == "hpa":
        c.fields(a, path, common | {"targetCPUUtilizationPercentage",
                                    "targetMemoryUtilizationPercentage"})
    else:
        c.fields(a, path, common | {"triggers", "pollingInterval", "cooldownPeriod"})
    lowest = 1 if kind == "hpa" else 0
    min_r = c.integer(a.get("minReplicas"), f"{path}.minReplicas", minimum=lowest, maximum=1000)
    max_r = c.integer(a.get("maxReplicas"), f"{path}.maxReplicas", minimum=1, maximum=1000)
    if min_r is not None and max_r is not None and min_r > max_r:
        c.error(f"{path}.maxReplicas", f"is {max_r}, below minReplicas {min_r}")
        return None
    if min_r is None or max_r is None:
        return None
    if kind == "hpa":
        cpu = c.integer(a.get("targetCPUUtilizationPercentage"),
                        f"{path}.targetCPUUtilizationPercentage", required=False, minimum=1, maximum=100)
        mem = c.integer(a.get("targetMemoryUtilizationPercentage"),
                        f"{path}.targetMemoryUtilizationPercentage", required=False, minimum=1, maximum=100)
        return Autoscaling("hpa", min_r, max_r, target_cpu=cpu, target_memory=mem)
    triggers = _triggers(a.get("triggers"), f"{path}.triggers", c)
    polling = c.integer(a.get("pollingInterval"), f"{path}.pollingInterval", required=False,
                        minimum=1, maximum=86400)
    cooldown = c.integer(a.get("cooldownPeriod"), f"{path}.cooldownPeriod", required=False,
                         minimum=0, maximum=86400)
    if triggers is None:
        return None
    return Autoscaling("keda", min_r, max_r, triggers=triggers, polling_interval=polling,
                       cooldown_period=cooldown)


def _triggers(value: Any, path: str, c: _Checker) -> tuple[Mapping[str, Any], ...] | None:
    """KEDA triggers: {type, metadata: {str: str}, name?, metricType?, authenticationRef?}.

    The chart passes triggers through Helm's `tpl`, so `{{` is rejected here.
    """
    if not isinstance(value, list) or not value:
        c.error(path, "KEDA needs a non-empty list of triggers (the chart refuses to render "
                "without one)")
        return None
    out = []
    for i, t in enumerate(value[:20]):
        tpath = f"{path}[{i}]"
        t = c.mapping(t, tpath)
        if t is None:
            continue
        c.fields(t, tpath, {"type", "metadata", "name", "metricType", "authenticationRef"})
        trig: dict[str, Any] = {}
        for key in ("type", "name", "metricType"):
            text = c.string(t.get(key), f"{tpath}.{key}", required=key == "type", max_len=253)
            if text is not None:
                if "{{" in text:
                    c.error(f"{tpath}.{key}", "may not contain '{{' (the chart runs it through tpl)")
                trig[key] = text
        meta = c.mapping(t.get("metadata"), f"{tpath}.metadata")
        if meta is not None:
            trig["metadata"] = {}
            for k, v in meta.items():
                mpath = field_path(tpath, "metadata", k)
                text = c.string(v, mpath, max_len=4096)
                if text is not None and "{{" in text:
                    c.error(mpath, "may not contain '{{' (the chart runs triggers through tpl)")
                elif text is not None:
                    trig["metadata"][k] = text
        auth = t.get("authenticationRef")
        if auth is not None:
            auth = c.mapping(auth, f"{tpath}.authenticationRef")
            if auth is not None:
                c.fields(auth, f"{tpath}.authenticationRef", {"name"})
                name = c.string(auth.get("name"), f"{tpath}.authenticationRef.name",
                                pattern=_CLUSTER_ID, max_len=253, rule="use a Kubernetes name")
                if name:
                    trig["authenticationRef"] = {"name": name}
        out.append(trig)
    if len(value) > 20:
        c.error(path, f"has {len(value)} triggers; at most 20 are allowed")
    return tuple(out)


def _graceful(value: Any, c: _Checker) -> int | None:
    path = "clusterConfig.worker.gracefulShutdown"
    g = c.mapping(value, path, required=False)
    if g is None:
        return None
    c.fields(g, path, {"enabled", "gracePeriodSeconds"})
    enabled = c.boolean(g.get("enabled"), f"{path}.enabled", required=False)
    seconds = c.integer(g.get("gracePeriodSeconds"), f"{path}.gracePeriodSeconds",
                        required=enabled is not False, minimum=1, maximum=86400)
    return seconds if enabled is not False else None


def _destination(value: Any, s: Settings, c: _Checker) -> tuple[str | None, str | None]:
    d = c.mapping(value, "destination", required=False)
    if d is None:
        return None, None
    c.fields(d, "destination", {"name", "server"})
    name = c.string(d.get("name"), "destination.name", required=False, max_len=253)
    server = c.string(d.get("server"), "destination.server", required=False, max_len=2048)
    if (name is None) == (server is None):
        c.error("destination", "set exactly one of name or server (Argo CD accepts one)")
        return None, None
    chosen = name or server
    if chosen not in s.argocd.allowed_destinations:
        allowed = ", ".join(s.argocd.allowed_destinations) or "none are allowed"
        c.error(f"destination.{'name' if name else 'server'}",
                f"{_show(chosen)} is not an allowed destination (argocd.allowed_destinations: {allowed})")
        return None, None
    return name, server


def _connectors(
    value: Any, cluster_id: str | None, owner: str | None, secrets: SecretSettings, c: _Checker
) -> tuple[Connector, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list):
        c.error("connectors", f"must be a list, not {type_name(value)}")
        return None
    if len(value) > MAX_CONNECTORS:
        c.error("connectors", f"has {len(value)} entries; at most {MAX_CONNECTORS} are allowed "
                "(all catalogs share one ConfigMap, limited to 1 MiB)")
        return None
    out: list[Connector] = []
    seen: dict[str, int] = {}
    total = 0
    for i, raw in enumerate(value):
        path = f"connectors[{i}]"
        conn = c.mapping(raw, path)
        if conn is None:
            continue
        c.fields(conn, path, {"name", "properties"})
        name = c.string(conn.get("name"), f"{path}.name", pattern=_CONNECTOR_NAME,
                        max_len=MAX_CONNECTOR_NAME,
                        rule="use letters, digits, '-', '_' and '.' (it names the catalog, its "
                        "file and its ConfigMap key)")
        if name is not None and (name.startswith(".") or name.endswith(".") or ".." in name):
            # a trailing dot makes "<name>..properties" and collides with <name> on filesystems
            # that drop trailing dots
            c.error(f"{path}.name", f"{_show(name)} may not start or end with '.' or contain "
                    "'..'; rename the connector")
            name = None
        if name is not None and name.lower() in RESERVED_CATALOGS:
            c.error(f"{path}.name", f"{_show(name)} is reserved by Trino for its internal catalog "
                    "(Trino refuses to start); rename the connector")
            name = None
        if name is not None and name != name.lower():
            c.warnings.append(Problem(c.label, f"{path}.name", f"{_show(name)} has uppercase "
                                      "letters: Trino matches catalog names in SQL in lowercase, "
                                      "so prefer a lowercase name"))
        if name is not None:
            folded = name.lower()
            if folded in seen:
                c.error(f"{path}.name", f"{_show(name)} repeats connectors[{seen[folded]}].name "
                        "(names must be unique, ignoring case)")
            seen.setdefault(folded, i)
            path = f"connectors[{json.dumps(name)}]"
        props = c.mapping(conn.get("properties"), f"{path}.properties")
        if props is None:
            continue
        if "connector.name" not in props:
            c.error(f"{path}.properties", "needs \"connector.name\" (e.g. \"hive\", \"mysql\")")
        entries: list[tuple[str, tuple[BoundSegment, ...]]] = []
        for key, raw_value in props.items():
            kpath = field_path(path, "properties", key)
            if not _PROP_KEY.fullmatch(key) or not text_ok(key) or len(key) > 256:
                c.error(kpath, "property names may not be empty or contain spaces or control characters")
                continue
            text = c.string(raw_value, kpath)
            if text is None:
                continue
            total += len(key) + len(text)
            bound = _bind_value(text, kpath, cluster_id, owner, secrets, c)
            if bound is not None:
                entries.append((key, bound))
        if name is not None:
            entries.sort(key=lambda kv: (kv[0] != "connector.name", kv[0]))
            out.append(Connector(name=name, properties=tuple(entries)))
    if total > MAX_CATALOG_BYTES:
        c.error("connectors", f"the catalogs add up to {total} bytes; the chart puts them all "
                "in one ConfigMap, which Kubernetes limits to 1 MiB")
    return tuple(out)


def _bind_value(
    text: str, path: str, cluster_id: str | None, owner: str | None, secrets: SecretSettings,
    c: _Checker,
) -> tuple[BoundSegment, ...] | None:
    if "${ENV:" in text:
        c.error(path, "${ENV:...} is reserved for trinogen's secret wiring; write a {{ NAME }} "
                "placeholder instead")
        return None
    try:
        segments = parse_value(text)
    except PlaceholderError as e:
        c.error(path, str(e))
        return None
    out: list[BoundSegment] = []
    for seg in segments:
        if isinstance(seg, str):
            out.append(seg)
            continue
        if cluster_id is None or owner is None:
            return None  # reported already; scope cannot be decided without them
        try:
            out.append(bind(seg, cluster=cluster_id, owner=owner, refs=secrets.refs,
                            default_ref=secrets.default_ref, scope=secrets.scope))
        except PlaceholderError as e:
            c.error(path, str(e))
            return None
    return tuple(out)


@dataclass
class Classified:
    """Documents sorted into what the pipeline does with them."""

    clusters: list[Cluster] = field(default_factory=list)
    disabled: list[Disabled] = field(default_factory=list)
    failed: list[Failed] = field(default_factory=list)

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> Classified:
        out = cls()
        for o in outcomes:
            if isinstance(o, Cluster):
                out.clusters.append(o)
            elif isinstance(o, Disabled):
                out.disabled.append(o)
            else:
                out.failed.append(o)
        return out
