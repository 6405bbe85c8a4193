"""The settings as values: one frozen dataclass per section of the configuration file.

Defaults live here and nowhere else; `trinogen.settings.loader` fills them from the layers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trinogen.redact import strip_userinfo

if TYPE_CHECKING:  # imported by the loader only when a settings file declares them
    from trinogen.settings.rollout import RolloutSettings
    from trinogen.settings.tenants import Tenant


@dataclass(frozen=True)
class MongoSettings:
    uri: str = "mongodb://localhost:27017"
    database: str = "trino"
    collection: str = "trino_clusters"
    status_collection: str = "trino_cluster_status"
    state_collection: str = "trinogen_state"
    # The catalog library: shared catalogs that cluster documents reference by name.
    catalog_collection: str = "trino_catalogs"
    # With uri mongomock://: every *.json file here (Extended JSON) seeds the in-process database.
    seed_dir: str | None = None
    batch_size: int = 1000
    timeout_ms: int = 10000
    # A document larger than this (BSON bytes, as read) fails unread, its files kept: 4 MiB is
    # four times the largest Kubernetes object any of its parts can become (1 MiB), a quarter of
    # MongoDB's 16 MiB (issue 19).
    max_document_bytes: int = 4 * 1024 * 1024


@dataclass(frozen=True)
class ValidationSettings:
    min_trino_version: int = 400
    # "error": an unknown field fails its document (a typo would otherwise be silently ignored,
    # like Helm ignores unknown values keys); "warn": reported, the document still renders.
    unknown_fields: str = "error"
    # Trino properties against the registry of the document's trinoVersion: "error" (Trino would
    # refuse to start), "warn" (reported, rendered anyway), "off" (not checked, not loaded).
    trino_properties: str = "error"
    # connector.name values a platform deploys as its own plugins: their catalogs are not checked.
    unchecked_connectors: tuple[str, ...] = ()
    # Problems (and warnings) listed per document; later ones are counted, and the walk stops at
    # 100 times as many: one document of 300,000 mistakes must not cost every sync (issue 19).
    max_problems: int = 50
    # The longest worker shutdown budget (terminationGracePeriodSeconds, model/shutdown.py) a
    # document may ask for: a node drain waits that long for each worker. 1800 s is the longest
    # scale-down period an HPA accepts (one draining worker at a time) and AKS's default drain
    # timeout; cluster-autoscaler cuts a pod's grace at 600 s by default.
    max_shutdown_seconds: int = 1800


@dataclass(frozen=True)
class OutputSettings:
    clusters_dir: str = "trino-clusters"
    applications_dir: str = "trino-applications"
    # Root app-of-apps Application file, written outside applications_dir; empty = not written.
    root_app: str = ""
    # A directory with templates overriding the built-in ones (any subset of their names).
    templates_dir: str | None = None


@dataclass(frozen=True)
class ChartSettings:
    repo_url: str = "https://trinodb.github.io/charts"
    name: str = "trino"
    version: str = "1.42.2"
    image_repository: str = "trinodb/trino"


@dataclass(frozen=True)
class ArgoSettings:
    namespace: str = "argocd"
    project: str = "default"
    app_name_prefix: str = "trino-"
    # The GitOps repository as Argo CD reaches it; defaults to git.remote / git.branch.
    repo_url: str | None = None
    target_revision: str | None = None
    destination_server: str = "https://kubernetes.default.svc"
    destination_name: str | None = None
    # Destination cluster names or servers a document may choose with `destination`.
    allowed_destinations: tuple[str, ...] = ()
    root_app_name: str = "trino-clusters"
    # Names no cluster may get (issue 19): each a lowercase glob (`*`, `?`) matched against the
    # Application name (prefix + clusterId) and the namespace (trino-<clusterId>) of every
    # clusterId. root_app_name and the namespace argocd.namespace are always refused as well.
    reserved_names: tuple[str, ...] = ()
    # One AppProject per tenant (`tenants`), written next to the Applications; each cluster's
    # Application then uses its tenant's project instead of `project`.
    tenant_projects: bool = False
    # `trinogen status` reads the Applications back from the Kubernetes API (docs/status.md):
    # "auto" when a kubeconfig or an in-cluster service account is found, "always" (failing
    # when none is), "never". `--argocd/--no-argocd` overrides it for one run.
    read_status: str = "auto"
    # The kubeconfig context to read them through; empty = the kubeconfig's current-context.
    kube_context: str = ""


@dataclass(frozen=True)
class GitSettings:
    remote: str | None = None
    branch: str = "main"
    workdir: str = ""  # default: $XDG_CACHE_HOME/trinogen/gitops-<hash of remote>
    author_name: str = "trinogen"
    author_email: str = "trinogen@localhost"
    push_retries: int = 5
    lock_timeout: float = 300.0
    timeout: float = 120.0  # for each fetch, clone and push
    # Demo convenience: when remote is a local path that does not exist, create a bare repo there.
    init_local_remote: bool = False


@dataclass(frozen=True)
class SyncSettings:
    # A run that would prune more clusters than BOTH limits is refused without --allow-mass-prune.
    max_prune_count: int = 5
    max_prune_share: float = 0.25
    # With no `rollout` waves, a run that would change the files of more existing clusters than
    # BOTH limits is refused without --allow-fleet-change (issue 20: a settings, template or
    # chart change reaching the whole fleet in one commit).
    max_fleet_change_count: int = 20
    max_fleet_change_share: float = 0.5
    # Issue 22: classify, render and self-check of a large sync run in this many processes,
    # the sync's own and workers - 1 forked ones (0: one per CPU this process may use, at most
    # 4; 1: never fork). Below parallel_min_clusters documents to render, forking costs more
    # than it saves: serial. A worker silent for worker_timeout_seconds on one chunk of
    # clusters is killed and its chunk rendered by the sync's own process.
    workers: int = 0
    parallel_min_clusters: int = 200
    worker_timeout_seconds: float = 60.0


@dataclass(frozen=True)
class SecretSettings:
    mode: str = "external-secrets"  # or "inline" (unsafe; needs allow_inline AND --allow-inline)
    allow_inline: bool = False
    # {{ NAME }} -> "<mount>/<path>#<key>"; {cluster} and {owner} are substituted.
    refs: Mapping[str, str] = field(default_factory=dict)
    # Used for a {{ NAME }} missing from refs; empty = such a placeholder is an error.
    default_ref: str = "secret/trino/{cluster}#{name}"
    # Vault paths (<mount>/<path> prefixes) a document may reference; {cluster}, {owner} substituted.
    scope: tuple[str, ...] = ("secret/trino/{cluster}",)
    # Read every reference from Vault before writing (off only for the serverless demo).
    check: bool = True
    kv_version: int = 2
    store_kind: str = "ClusterSecretStore"
    store_name: str = "vault"
    refresh_interval: str = "1h0m0s"
    creation_policy: str = "Owner"
    deletion_policy: str = "Retain"


@dataclass(frozen=True)
class VaultSettings:
    addr: str | None = None  # VAULT_ADDR
    namespace: str | None = None  # VAULT_NAMESPACE
    cacert: str | None = None  # VAULT_CACERT
    verify: bool = True
    auth_method: str = "token"  # token | approle | kubernetes
    token_file: str = "~/.vault-token"  # read when VAULT_TOKEN is not set
    approle_mount: str = "approle"
    role_id: str | None = None
    secret_id_file: str | None = None  # or env TRINOGEN_VAULT_SECRET_ID
    kubernetes_mount: str = "kubernetes"
    kubernetes_role: str | None = None
    kubernetes_jwt_file: str = "/var/run/secrets/kubernetes.io/serviceaccount/token"
    timeout: float = 10.0
    retries: int = 3


@dataclass(frozen=True)
class WatchSettings:
    debounce_seconds: float = 2.0
    max_batch: int = 500
    max_wait_seconds: float = 10.0
    max_await_ms: int = 250
    reconcile_seconds: float = 600.0
    lease_seconds: float = 30.0
    liveness_file: str | None = None
    health_port: int | None = None
    metrics_port: int | None = None
    max_reconnects: int = 10


@dataclass(frozen=True)
class MonitoringSettings:
    """What a document's `monitoring` switch deploys (issue 14, item 5): the platform's choices."""

    # The chart's JMX exporter sidecar (one string `image:tag` in the chart; two settings here so
    # a registry mirror and a pinned tag are separate decisions).
    exporter_image: str = "bitnamilegacy/jmx-exporter"
    exporter_tag: str = "1.4.0"
    # The chart's default is Always; a pinned tag needs no pull on every pod start.
    exporter_pull_policy: str = "IfNotPresent"
    # The exporter's configuration (jmx_exporter YAML); empty = trinogen's built-in one, which
    # reads the Trino JVM's RMI registry and exports every MBean. Written literally: the chart's
    # tpl does not run over it, so it names the registry port (9080) itself.
    exporter_config: str = ""
    # Labels the platform's Prometheus selects ServiceMonitors by (the chart's default label
    # `prometheus: kube-prometheus` is dropped when this map does not name `prometheus`).
    service_monitor_labels: Mapping[str, str] = field(
        default_factory=lambda: {"prometheus": "kube-prometheus"})
    scrape_interval: str = "30s"


@dataclass(frozen=True)
class LogSettings:
    # Also --log-format / --log-level; the CLI configures logging from these once loaded.
    format: str = "text"  # or "json"
    level: str = "INFO"  # DEBUG, INFO, WARNING, ERROR or CRITICAL (any case)


@dataclass(frozen=True)
class PodSettings:
    # "restricted": the rendered pods pass the Kubernetes Pod Security Standards `restricted`
    # profile (non-root, seccomp RuntimeDefault, no privilege escalation, no capabilities);
    # "chart": the chart's own security contexts, for platforms whose images need them.
    security: str = "restricted"


@dataclass(frozen=True)
class Settings:
    mongodb: MongoSettings = MongoSettings()
    validation: ValidationSettings = ValidationSettings()
    output: OutputSettings = OutputSettings()
    chart: ChartSettings = ChartSettings()
    argocd: ArgoSettings = ArgoSettings()
    git: GitSettings = GitSettings()
    sync: SyncSettings = SyncSettings()
    secrets: SecretSettings = SecretSettings()
    vault: VaultSettings = VaultSettings()
    watch: WatchSettings = WatchSettings()
    log: LogSettings = LogSettings()
    pods: PodSettings = PodSettings()
    monitoring: MonitoringSettings = MonitoringSettings()
    # Document layers: deep-merged under every document (maps merge, lists and scalars replace).
    defaults: Mapping[str, Any] = field(default_factory=dict)
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Named options a document picks by name: kind -> name -> parsed value (`settings.named`).
    named: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The teams documents belong to (`settings.tenants`): owner -> what it may pick and use.
    # Empty: every document may pick every option and no quota applies.
    tenants: Mapping[str, Tenant] = field(default_factory=dict)
    # profile -> the option kinds a document on it must pick (a `null` cannot drop them).
    profile_requirements: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The waves a fleet change goes through (`settings.rollout`); None: no waves.
    rollout: RolloutSettings | None = None
    # Where the settings came from, for messages.
    source: str = "built-in defaults"

    @property
    def repo_url(self) -> str:
        """The GitOps repository as the Applications name it: never with git.remote's token.

        The Applications are committed, and Argo CD reaches the repository with its own
        repository credentials (matched by URL), so `https://oauth2:TOKEN@host/...` becomes
        `https://host/...` (issue 11, item 4).
        """
        return self.argocd.repo_url or strip_userinfo(self.git.remote or "")

    @property
    def target_revision(self) -> str:
        return self.argocd.target_revision or self.git.branch

    def tenant(self, owner: str | None) -> Tenant | None:
        """The tenant a document's owner names, or None (also when no tenants are declared)."""
        return self.tenants.get(owner) if owner is not None else None

    def options(self, kind: str) -> Mapping[str, Any]:
        """The named options of one kind (`storage`, `placement`...): name -> parsed value."""
        return self.named.get(kind, {})


def replace(settings: Settings, **sections: Mapping[str, Any]) -> Settings:
    """A copy of `settings` with some keys of some sections changed (used by tests and the CLI)."""
    changes = {
        name: dataclasses.replace(getattr(settings, name), **values)
        for name, values in sections.items()
    }
    return dataclasses.replace(settings, **changes)
