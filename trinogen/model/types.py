"""The validated model: what a cluster document becomes, and what the pipeline does with it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Protocol

from trinogen.errors import Problem
from trinogen.secrets import BoundSegment, SecretUse


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
    # (name, document _id) of the library catalog it came from, recorded in its reviewable copy:
    # how the repository knows which catalog document holds a name (model.claims)
    shared: tuple[str, str] | None = None

    @property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        return tuple(s for _, v in self.properties for s in v if isinstance(s, SecretUse))


@dataclass(frozen=True)
class Mount:
    """A file or directory the chart mounts into every Trino pod (`configMounts`/`secretMounts`).

    `source` names the ConfigMap (or, with `secret`, the Secret) in the cluster's namespace.
    """

    name: str  # the volume name: a DNS label, unique among the cluster's mounts
    source: str
    path: str  # where it appears in the container
    sub_path: str | None = None  # one key of the source, mounted as the file `path`
    secret: bool = False


@dataclass(frozen=True)
class FileSecret:
    """A Secret that ESO fills from Vault with one key per file (a keystore, a password file).

    Rendered as its own ExternalSecret under `secrets/`; the value never enters git.
    """

    name: str  # the Kubernetes Secret (and ExternalSecret) name
    files: tuple[tuple[str, SecretUse], ...]  # key in the Secret -> the Vault value
    # key -> ESO decodingStrategy ("Base64": Vault holds the file base64-encoded, e.g. a
    # keytab); a key not listed is stored as Vault returns it
    decoding: tuple[tuple[str, str], ...] = ()

    @property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        return tuple(use for _, use in self.files)


@dataclass(frozen=True)
class FileConfigMap:
    """A ConfigMap of small text files, rendered as a manifest under `manifests/`.

    Its content is plain data from the document (never a secret); a change rolls the pods.
    """

    name: str  # the ConfigMap name
    files: tuple[tuple[str, str], ...]  # key (the file name) -> content, sorted by key


class Identity(NamedTuple):
    """Whose Vault paths a platform option's references name ({cluster}, {owner}): a store's
    credentials (trinogen.kinds.storage), read by a catalog, a spool or the exchange. Either is
    None when the document's own was invalid (reported already)."""

    cluster_id: str | None
    owner: str | None


@dataclass(frozen=True)
class ServerSecret:
    """A placeholder in a server property, bound to Vault; the property holds `${ENV:<env>}`."""

    path: str  # where it was written ("properties.x", or "authentication" for the option's)
    key: str  # the Trino property
    use: SecretUse


@dataclass(frozen=True)
class Authentication:
    """The authentication option a cluster picked, as the chart's values take it.

    Its properties are already in the cluster's config lines; this is what values.yaml needs
    besides them (the chart's own keys for authentication, HTTPS and the password files).
    """

    name: str  # the option's name in the settings
    type: str  # server.config.authenticationType: PASSWORD | OAUTH2
    tls: str  # pod | ingress
    https_port: int | None = None  # tls: pod: server.config.https.port
    keystore_path: str | None = None  # tls: pod: server.config.https.keystore.path
    keystore_secret: str | None = None  # tls: pod: the Secret mounted on the coordinator
    keystore_dir: str | None = None  # where that Secret is mounted
    password_secret: str | None = None  # auth.passwordAuthSecret (key password.db)
    groups_secret: str | None = None  # auth.groupsAuthSecret (key group.db)
    refresh_period: str | None = None  # auth.refreshPeriod
    # LDAP: password-authenticator.properties (coordinator.additionalConfigFiles replaces the
    # chart's file authenticator); CA files of the LDAP and JWKS servers: coordinator
    # secretMounts (name, secretName, path)
    password_authenticator: tuple[tuple[str, str], ...] = ()
    mounts: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class AccessControl:
    """The coordinator's file-based access control, the document's own rules (an OPA endpoint
    is the `opa` option kind, `trinogen.kinds.opa`).

    `rules_json` is the rules file Trino reads (re-read every `refresh_period`, no restart).
    """

    rules_json: str | None = None
    refresh_period: str = "60s"


def namespace_of(cluster_id: str) -> str:
    """The namespace a cluster is deployed into (always trino-<clusterId>)."""
    return f"trino-{cluster_id}"


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
    log_level: str | None = None  # server.log.trino.level (the io.trino line of log.properties)
    log_properties: tuple[tuple[str, str], ...] = ()  # additionalLogProperties: other loggers
    mounts: tuple[Mount, ...] = ()  # configMounts / secretMounts, in this order
    file_secrets: tuple[FileSecret, ...] = ()  # Secrets of files, filled by ESO from Vault
    file_config_maps: tuple[FileConfigMap, ...] = ()  # ConfigMaps of text files (manifests/)
    # spooling-manager.properties of both roles (`spooling`), secrets as ${ENV:...}; () = none
    spooling_manager: tuple[tuple[str, str], ...] = ()
    server_secrets: tuple[ServerSecret, ...] = ()  # placeholders in server properties
    authentication: Authentication | None = None
    access: AccessControl | None = None  # accessControl's rules (an OPA pick: kind "opa")
    # The option kinds in their own home (`trinogen.kinds`): (kind, its value), in
    # `trinogen.kinds.HOMED` order, only the kinds the document picked.
    kinds: tuple[tuple[str, Any], ...] = ()
    jmx_exporter: bool = False  # the chart's JMX exporter sidecar on both roles
    service_monitor: bool = False  # ServiceMonitors for the exporter (needs jmx_exporter)
    # How the cluster is operated (model/operation.py): the drain time of a graceful shutdown,
    # and whether its compute is stopped (then `workers` is 0 and `autoscaling` None; files,
    # namespace and Application stay).
    drain_seconds: int | None = None
    stopped: bool = False
    warnings: tuple[Problem, ...] = ()

    @property
    def namespace(self) -> str:
        return namespace_of(self.cluster_id)

    def kind(self, name: str) -> Any:
        """The value of one option kind for this cluster (`trinogen.kinds`), None if not picked."""
        for kind, value in self.kinds:
            if kind == name:
                return value
        return None

    @property
    def ingress(self) -> Any:
        """The coordinator's Ingress (`trinogen.kinds.ingress.document.Ingress`), or None."""
        return self.kind("ingress")

    @property
    def coordinator_placement(self) -> Any:
        """The coordinator's placement option (`trinogen.kinds.placement.options.Placement`),
        or None: anywhere the chart's pods may run."""
        placements = self.kind("placement")
        return placements.of("coordinator") if placements is not None else None

    @property
    def worker_placement(self) -> Any:
        """The workers' placement option, or None."""
        placements = self.kind("placement")
        return placements.of("worker") if placements is not None else None

    @property
    def exchange(self) -> Any:
        """Fault-tolerant execution's exchange manager
        (`trinogen.kinds.exchange.document.ExchangeManager`), or None."""
        return self.kind("exchange")

    @property
    def disruption(self) -> Any:
        """The disruption budgets and coordinator rollout
        (`trinogen.kinds.disruption.document.Budgets`), or None: no PDBs, a RollingUpdate."""
        return self.kind("disruption")

    @property
    def service_account(self) -> Any:
        """The identity (`trinogen.kinds.service_accounts.document.ServiceAccount`), or None:
        the chart's (the namespace's default)."""
        return self.kind("service_accounts")

    # Asked by the renderer, the render cache and the secret reads: computed once per Cluster
    # (a frozen value, so the answer cannot change).
    @cached_property
    def secret_uses(self) -> tuple[SecretUse, ...]:
        """The placeholders carried as environment variables (the cluster's env Secret)."""
        seen: dict[str, SecretUse] = {}
        for c in self.connectors:
            for use in c.secret_uses:
                seen.setdefault(use.env, use)
        for use in self.exchange.secret_uses if self.exchange else ():
            seen.setdefault(use.env, use)  # the same Secret: exchange-manager.properties reads env
        for s in self.server_secrets:
            seen.setdefault(s.use.env, s.use)
        return tuple(sorted(seen.values(), key=lambda u: u.env))

    @cached_property
    def vault_uses(self) -> tuple[SecretUse, ...]:
        """Every Vault value the cluster needs: its environment and its file Secrets."""
        return (*self.secret_uses, *(u for f in self.file_secrets for u in f.secret_uses))


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


# The top-level fields read of a document the render cache serves (its label, its claim,
# whether it is disabled or stopped, its wave's facts, the shared catalogs it may use): a
# `RawDocument.head` holds them, and only them, until its body is decoded (issue 22).
HEAD_FIELDS = frozenset({"_id", "clusterId", "enabled", "stopped", "profile", "owner",
                         "connectors"})


class Undecoded(Protocol):
    """A document's bytes as read, not decoded yet (`trinogen.bsonread.Undecoded`)."""

    def head(self) -> Mapping[str, Any]:
        """The HEAD_FIELDS the document holds, decoded as the whole document would decode them."""

    def decode(self) -> tuple[Mapping[str, Any], str | None]:
        """The body, or what names the document and why it cannot be decoded."""


class RawDocument:
    """A document as read from MongoDB, with its _id in canonical Extended JSON.

    Read as BSON, its body is decoded when first asked for (issue 22): a no-op sync serves
    ~every document from the render cache, which reads only a few top-level fields (`head`),
    so those documents never become dicts (~7 kB each, and the CPU to build them). A value
    Python cannot decode is found then, and the document is `unreadable` as if found at the
    read: the cache never serves such a document (its bytes never rendered)."""

    __slots__ = ("_body", "_head", "_undecoded", "_unreadable", "digest", "doc_id")

    def __init__(self, doc_id: str, body: Mapping[str, Any] | None = None,
                 unreadable: str | None = None, digest: bytes | None = None, *,
                 undecoded: Undecoded | None = None) -> None:
        self.doc_id = doc_id
        self._body = {} if body is None and undecoded is None else body
        # Set when the document could not be read as stored (the embedded database refused a
        # seed document, a value cannot be decoded): it fails, and its cluster keeps its files.
        self._unreadable = unreadable
        # A hash of its BSON bytes as read, when the source measured them (the render cache's
        # key then needs no second encoding of the document).
        self.digest = digest
        self._undecoded = undecoded
        self._head: Mapping[str, Any] | None = None

    @property
    def body(self) -> Mapping[str, Any]:
        if self._body is None:
            assert self._undecoded is not None
            self._body, self._unreadable = self._undecoded.decode()
            self._undecoded = self._head = None  # the bytes and the head are not needed now
        return self._body

    @property
    def unreadable(self) -> str | None:
        if self._body is None:
            self.body  # noqa: B018 - decoded now: a value that cannot be is found here
        return self._unreadable

    @property
    def unread(self) -> str | None:
        """`unreadable` as far as known without decoding: why the read refused the document
        (too large, refused by the embedded database); a value that cannot be decoded is only
        found when its body is asked for."""
        return self._unreadable

    @property
    def head(self) -> Mapping[str, Any]:
        """The HEAD_FIELDS of the body (the body itself, once decoded): what is read of a
        document the render cache serves."""
        if self._body is not None:
            return self._body
        if self._head is None:
            assert self._undecoded is not None
            self._head = self._undecoded.head()
        return self._head

    def __eq__(self, other: object) -> bool:
        if type(other) is not RawDocument:
            return NotImplemented
        return (self.doc_id, self.body, self.unreadable) == (
            other.doc_id, other.body, other.unreadable)

    __hash__ = None  # type: ignore[assignment]  # as the frozen dataclass it was: a dict body

    def __repr__(self) -> str:
        return (f"RawDocument(doc_id={self.doc_id!r}, body={self.body!r}, "
                f"unreadable={self.unreadable!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled decoded (a worker gets the body, never the read's shared state)."""
        return (RawDocument, (self.doc_id, self.body, self.unreadable, self.digest))


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
