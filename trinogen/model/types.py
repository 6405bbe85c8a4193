"""The validated model: what a cluster document becomes, and what the pipeline does with it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

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
