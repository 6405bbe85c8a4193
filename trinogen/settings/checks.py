"""Rules a loaded `Settings` must satisfy, each failure a ConfigError that names the setting."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

from trinogen.errors import ConfigError
from trinogen.redact import has_credentials, redact_url
from trinogen.settings.options import metadata
from trinogen.settings.types import Settings

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

_CHOICES = {
    ("validation", "unknown_fields"): ("error", "warn"),
    ("validation", "trino_properties"): ("error", "warn", "off"),
    ("secrets", "mode"): ("external-secrets", "inline"),
    ("vault", "auth_method"): ("token", "approle", "kubernetes"),
    ("log", "format"): ("text", "json"),
    ("secrets", "creation_policy"): ("Owner", "Orphan", "Merge", "None"),
    ("secrets", "deletion_policy"): ("Retain", "Delete", "Merge"),
    ("secrets", "store_kind"): ("SecretStore", "ClusterSecretStore"),
    ("secrets", "kv_version"): (1, 2),
    ("pods", "security"): ("restricted", "chart"),
    ("argocd", "read_status"): ("auto", "always", "never"),
    ("monitoring", "exporter_pull_policy"): ("Always", "IfNotPresent", "Never"),
}
# Prometheus' duration format, as the ServiceMonitor CRD validates `interval`.
_DURATION = re.compile(r"(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?"
                       r"(([0-9]+)s)?(([0-9]+)ms)?")
# A reserved name: a Kubernetes name (lowercase) with the two wildcards fnmatch offers besides [.
_RESERVED = re.compile(r"[-a-z0-9.*?]+")
# An image reference part: no spaces, quotes or braces (the chart writes the image unquoted).
_IMAGE_PART = re.compile(r"[A-Za-z0-9][-A-Za-z0-9._:/@]*")


def check(s: Settings) -> None:
    """Raise ConfigError for the first rule `s` breaks."""
    _check_choices(s)
    _check_log_level(s)
    _check_limits(s)
    _check_output_roots(s)
    _check_reserved_names(s)
    _check_pins(s)
    _check_exchanges(s)
    _check_spool_prefixes(s)
    _check_secret_templates(s)
    _check_monitoring(s)
    _check_tenant_projects(s)
    for name, profile in s.profiles.items():
        if not isinstance(profile, Mapping):
            raise ConfigError(f"profile {name!r} must be a mapping")


def _check_choices(s: Settings) -> None:
    for (section, key), allowed in _CHOICES.items():
        value = getattr(getattr(s, section), key)
        if value not in allowed:
            choices = ", ".join(str(a) for a in allowed)
            raise ConfigError(f"setting {section}.{key} is {value!r}; choose one of: {choices}")


def _check_log_level(s: Settings) -> None:
    # Any case, as Python's logging and most tools accept (--log-level debug).
    if s.log.level.upper() not in LOG_LEVELS:
        raise ConfigError(f"setting log.level is {s.log.level!r}; choose one of: "
                          f"{', '.join(LOG_LEVELS)}")


def _check_limits(s: Settings) -> None:
    w, g = s.watch, s.git
    for ok, rule in (
        (w.debounce_seconds >= 0, "watch.debounce_seconds must be >= 0"),
        (w.max_batch >= 1, "watch.max_batch must be >= 1"),
        (w.max_wait_seconds >= w.debounce_seconds,
         "watch.max_wait_seconds must be >= watch.debounce_seconds"),
        (1 <= w.max_await_ms <= 1000, "watch.max_await_ms must be between 1 and 1000"),
        (w.lease_seconds > 0, "watch.lease_seconds must be > 0"),
        (w.reconcile_seconds > 0, "watch.reconcile_seconds must be > 0"),
        (s.validation.max_shutdown_seconds > 0, "validation.max_shutdown_seconds must be > 0"),
        (w.max_reconnects >= 0, "watch.max_reconnects must be >= 0"),
        (all(p is None or 0 <= p <= 65535 for p in (w.health_port, w.metrics_port)),
         "watch.health_port and watch.metrics_port must be between 0 and 65535"),
        (g.push_retries >= 0 and g.timeout > 0 and g.lock_timeout >= 0,
         "git.push_retries, git.timeout and git.lock_timeout must not be negative"),
        (0 <= s.sync.max_prune_share <= 1, "sync.max_prune_share must be between 0 and 1"),
        (0 <= s.sync.max_fleet_change_share <= 1 and s.sync.max_fleet_change_count >= 0,
         "sync.max_fleet_change_share must be between 0 and 1, max_fleet_change_count >= 0"),
        (s.sync.workers >= 0 and s.sync.parallel_min_clusters >= 0,
         "sync.workers and sync.parallel_min_clusters must be >= 0"),
        (0 < s.sync.worker_timeout_seconds <= 3600,
         "sync.worker_timeout_seconds must be above 0 and at most 3600"),
        (1 <= s.validation.max_problems <= 10_000,
         "validation.max_problems must be between 1 and 10000"),
        (1024 <= s.mongodb.max_document_bytes <= 16 * 1024 * 1024,
         "mongodb.max_document_bytes must be between 1024 and 16777216 (MongoDB's limit)"),
    ):
        if not ok:
            raise ConfigError(f"setting {rule}")


def _check_output_roots(s: Settings) -> None:
    """The output directories are relative, clean and disjoint: trinogen owns each subtree."""
    roots = {"output.clusters_dir": s.output.clusters_dir,
             "output.applications_dir": s.output.applications_dir}
    if s.output.root_app:
        roots["output.root_app"] = s.output.root_app
    if s.rollout is not None:  # the rollout's state is trinogen's file beside them
        roots["rollout.state_file"] = s.rollout.state_file
    for key, name in roots.items():
        _check_relative(key, name)
    for (key_a, a), (key_b, b) in itertools.combinations(roots.items(), 2):
        # Ignoring case: on a case-insensitive checkout a cluster's file would land on the
        # app-of-apps' (or another root's) file.
        la, lb = a.casefold(), b.casefold()
        if la == lb or la.startswith(lb + "/") or lb.startswith(la + "/"):
            raise ConfigError(f"settings {key_a} ({a!r}) and {key_b} ({b!r}) must not overlap "
                              "(compared ignoring case): trinogen owns what is under each of them")


def _check_reserved_names(s: Settings) -> None:
    """Each reserved name is a lowercase glob, as the Kubernetes names it is matched with."""
    for i, pattern in enumerate(s.argocd.reserved_names):
        if not _RESERVED.fullmatch(pattern):
            raise ConfigError(f"setting argocd.reserved_names[{i}] {pattern!r} is not a name "
                              "pattern: write lowercase letters, digits, '-' and '.', with '*' "
                              "(any run of characters) and '?' (one character) as wildcards, "
                              "e.g. trino-gateway*")


def _check_relative(key: str, name: str) -> None:
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ConfigError(f"setting {key} {name!r} must be a relative path inside the "
                          "repository, '/'-separated, without '.', '..' or empty segments")


def _check_pins(s: Settings) -> None:
    """The chart stays pinned, and no credential is committed in an Application."""
    if not s.chart.version.strip():
        raise ConfigError("setting chart.version is empty, which would let Argo CD take whatever "
                          "chart version is newest; set the chart version to deploy, e.g. 1.42.2")
    for key, url in (("argocd.repo_url", s.argocd.repo_url), ("chart.repo_url", s.chart.repo_url)):
        if url and has_credentials(url):
            raise ConfigError(f"setting {key} ({redact_url(url)}) carries credentials, which "
                              "would be committed in every Application; remove them and give "
                              "Argo CD repository credentials for it instead")


def _check_exchanges(s: Settings) -> None:
    """Each exchange option names a storage option its locations fit (issue 14 item 4)."""
    stores = s.options("storage")
    for name, ex in s.options("exchange").items():
        store = stores.get(ex.storage)
        if store is None:
            known = ", ".join(sorted(stores)) or "none are configured"
            raise ConfigError(f"exchange.{name}.storage: {ex.storage!r} is not a storage "
                              f"option ({known})")
        if store.type == "hdfs":  # trinogen writes the exchange for the object stores only
            raise ConfigError(f"exchange.{name}.storage: {ex.storage!r} is an hdfs store; the "
                              "exchange spools to an s3, gcs or azure store")
        if store.type == "azure" and store.vault and store.account is None:
            raise ConfigError(f"exchange.{name}.storage: the exchange takes an Azure access "
                              f"key only with its account: set storage.{ex.storage}.account")
        problem = ex.scheme_problem(store.type, store.account)
        if problem is not None:
            raise ConfigError(f"exchange.{name}.location: {problem}")


# A location template's first placeholder: the text before it is the same for every cluster.
_PLACEHOLDER = re.compile(r"\{(cluster|owner)\}")
_CLUSTER_SEGMENT = re.compile(r"\{cluster\}(/|$)")


def _check_secret_templates(s: Settings) -> None:
    """The Vault paths a document's placeholders may read (`secrets.scope`) and bind to
    (`default_ref`, `refs`) are one cluster's each (metadata.check_one_per_cluster)."""
    sec = s.secrets
    named = [(f"secrets.scope[{i}]", t) for i, t in enumerate(sec.scope)]
    named += [("secrets.default_ref", sec.default_ref)]
    named += [(f"secrets.refs.{k}", v) for k, v in sorted(sec.refs.items())]
    for at, template in named:
        metadata.check_one_per_cluster(f"setting {at}", template, "Vault path")


def _check_spool_prefixes(s: Settings) -> None:
    """No cluster's spooling or exchange prefix holds another cluster's (issue 21): cluster `x`
    of `s3://b/{cluster}` would hold every prefix of `s3://b/x/{cluster}`, and its pruner
    deletes (its prefix-scoped credentials read) what the other clusters spooled there."""
    found = [(f"storage.{n}.spooling.location", "spooling", st.spooling.location)
             for n, st in sorted(s.options("storage").items()) if st.spooling is not None]
    found += [(f"exchange.{n}.location", "exchange", loc)
              for n, ex in sorted(s.options("exchange").items()) for loc in ex.locations]
    for (at1, kind1, t1), (at2, kind2, t2) in itertools.combinations(found, 2):
        if _may_nest(t1.rstrip("/"), t2.rstrip("/"), same_kind=kind1 == kind2):
            raise ConfigError(f"{at1} {t1!r} and {at2} {t2!r} could give one cluster a prefix "
                              "holding another cluster's (one's fixed start begins the "
                              "other's): give each its own bucket or top directory")


def _may_nest(t1: str, t2: str, *, same_kind: bool) -> bool:
    """Whether a filling of one template can begin a filling of the other for two clusters.
    Fixed starts that differ somewhere keep every filling apart; one template used twice, or
    two that both go on with a whole `{cluster}` segment, give each cluster its own."""
    p1, p2 = t1[:_start(t1)], t2[:_start(t2)]
    if not (p1.startswith(p2) or p2.startswith(p1)):
        return False
    if not same_kind:  # one cluster's spool and exchange apart too (the pruner walks it all)
        return True
    if t1 == t2:
        return False
    return not (p1 == p2 and _CLUSTER_SEGMENT.match(t1, len(p1)) is not None
                and _CLUSTER_SEGMENT.match(t2, len(p2)) is not None)


def _start(template: str) -> int:
    m = _PLACEHOLDER.search(template)
    return len(template) if m is None else m.start()


# Argo CD's own project, which allows everything: never a tenant's.
DEFAULT_PROJECT = "default"


def _check_tenant_projects(s: Settings) -> None:
    """argocd.tenant_projects needs tenants, each with a project no one else owns."""
    if not s.argocd.tenant_projects:
        return
    if not s.tenants:
        raise ConfigError("setting argocd.tenant_projects is true but the settings declare no "
                          "tenants: declare them under `tenants` (each gets its AppProject)")
    for name, tenant in s.tenants.items():
        for reserved, what in ((DEFAULT_PROJECT, "Argo CD's default project (it allows all)"),
                               (s.argocd.project, "argocd.project, the app-of-apps' project")):
            if tenant.project == reserved:
                raise ConfigError(f"tenants.{name}.project: {reserved!r} is {what}; a tenant's "
                                  "AppProject needs a name of its own")


def _check_monitoring(s: Settings) -> None:
    """The exporter image and the ServiceMonitor's labels and interval, as Kubernetes takes them."""
    m = s.monitoring
    for key, value in (("exporter_image", m.exporter_image), ("exporter_tag", m.exporter_tag)):
        if not _IMAGE_PART.fullmatch(value):
            raise ConfigError(f"setting monitoring.{key} {value!r} is not an image reference part")
    if not m.scrape_interval or not _DURATION.fullmatch(m.scrape_interval):
        raise ConfigError(f"setting monitoring.scrape_interval {m.scrape_interval!r} is not a "
                          "Prometheus duration such as 30s or 1m30s")
    if m.exporter_config:
        _check_exporter_config(m.exporter_config)
    for key, value in m.service_monitor_labels.items():
        wrong = metadata.qualified_name(key) or metadata.label_value(value)
        if wrong:
            raise ConfigError(f"setting monitoring.service_monitor_labels.{key}: {wrong}")


def _check_exporter_config(text: str) -> None:
    """The platform's exporter configuration is YAML naming the JVM to read: without hostPort or
    jmxUrl the standalone exporter would not read Trino at all, in every pod that runs it."""
    import yaml  # only when a platform writes its own configuration

    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"setting monitoring.exporter_config is not YAML: {e}") from e
    if not isinstance(config, Mapping) or not ({"hostPort", "jmxUrl"} & set(config)):
        raise ConfigError("setting monitoring.exporter_config must be a YAML mapping with hostPort "
                          "(localhost:9080, the pod's JMX registry) or jmxUrl")
