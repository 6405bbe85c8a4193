"""Typed, frozen settings: command-line flags > environment > configuration file > defaults.

Every scalar setting `<section>.<key>` can also come from the environment variable
`TRINOGEN_<SECTION>_<KEY>` (e.g. `TRINOGEN_MONGODB_URI`). Services with conventions of their own
keep them: `VAULT_ADDR`, `VAULT_TOKEN`, `VAULT_NAMESPACE`, `VAULT_CACERT` fill the `vault` section.
Relative paths in a configuration file are relative to that file.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trinogen.errors import ConfigError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class MongoSettings:
    uri: str = "mongodb://localhost:27017"
    database: str = "trino"
    collection: str = "trino_clusters"
    status_collection: str = "trino_cluster_status"
    state_collection: str = "trinogen_state"
    # With uri mongomock://: every *.json file here (Extended JSON) seeds the in-process database.
    seed_dir: str | None = None
    batch_size: int = 1000
    timeout_ms: int = 10000


@dataclass(frozen=True)
class ValidationSettings:
    min_trino_version: int = 400
    # "error": an unknown field fails its document (a typo would otherwise be silently ignored,
    # like Helm ignores unknown values keys); "warn": reported, the document still renders.
    unknown_fields: str = "error"


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
class LogSettings:
    format: str = "text"  # or "json"
    level: str = "INFO"


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
    # Document layers: deep-merged under every document (maps merge, lists and scalars replace).
    defaults: Mapping[str, Any] = field(default_factory=dict)
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Where the settings came from, for messages.
    source: str = "built-in defaults"

    @property
    def repo_url(self) -> str:
        return self.argocd.repo_url or self.git.remote or ""

    @property
    def target_revision(self) -> str:
        return self.argocd.target_revision or self.git.branch


@functools.cache
def _sections() -> dict[str, type]:
    """Section name -> its dataclass (resolved once, when settings are first loaded)."""
    return {
        name: hint
        for name, hint in typing.get_type_hints(Settings).items()
        if name not in {"defaults", "profiles", "source"}
    }

# Environment variables other tools own, mapped onto settings.
_FOREIGN_ENV = {
    "VAULT_ADDR": ("vault", "addr"),
    "VAULT_NAMESPACE": ("vault", "namespace"),
    "VAULT_CACERT": ("vault", "cacert"),
}

_PATH_KEYS = {
    ("mongodb", "seed_dir"),
    ("output", "templates_dir"),
    ("git", "workdir"),
    ("git", "remote"),
    ("vault", "cacert"),
    ("vault", "token_file"),
    ("vault", "secret_id_file"),
    ("watch", "liveness_file"),
}


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Build settings from defaults, a YAML file, the environment and flag overrides.

    `config_file` falls back to `$TRINOGEN_CONFIG`; `overrides` maps "section.key" to values
    given on the command line (None values are ignored).
    """
    env = os.environ if environ is None else environ
    raw: dict[str, dict[str, Any]] = {name: {} for name in _sections()}
    layers: dict[str, Any] = {"defaults": {}, "profiles": {}}
    path = config_file or env.get("TRINOGEN_CONFIG") or None
    source = "built-in defaults"
    if path:
        source = str(path)
        _merge_file(Path(path), raw, layers)
    for var, (section, key) in _FOREIGN_ENV.items():
        if env.get(var):
            raw[section][key] = env[var]
    prefix = "TRINOGEN_"
    for section, cls in _sections().items():
        for f in dataclasses.fields(cls):
            var = f"{prefix}{section.upper()}_{f.name.upper()}"
            if var in env and _is_scalar(cls, f.name):
                raw[section][f.name] = env[var]
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        raw[section][key] = value
    sections = {name: _build(cls, name, raw[name]) for name, cls in _sections().items()}
    settings = Settings(
        **sections,
        defaults=layers["defaults"],
        profiles=layers["profiles"],
        source=source,
    )
    _check(settings)
    return settings


def _merge_file(path: Path, raw: dict[str, dict[str, Any]], layers: dict[str, Any]) -> None:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read configuration file {path}: {e.strerror}") from e
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"configuration file {path} is not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"configuration file {path}: the top level must be a mapping")
    base = path.resolve().parent
    for section, values in data.items():
        if section in ("defaults", "profiles"):
            if not isinstance(values, dict):
                raise ConfigError(f"{path}: {section} must be a mapping")
            if section == "profiles" and not all(isinstance(v, dict) for v in values.values()):
                raise ConfigError(f"{path}: every profile must be a mapping")
            layers[section] = values
            continue
        if section not in _sections():
            known = ", ".join(sorted([*_sections(), "defaults", "profiles"]))
            raise ConfigError(f"{path}: unknown section {section!r} (known: {known})")
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: section {section} must be a mapping")
        names = {f.name for f in dataclasses.fields(_sections()[section])}
        for key, value in values.items():
            if key not in names:
                raise ConfigError(
                    f"{path}: unknown setting {section}.{key} (known: {', '.join(sorted(names))})"
                )
            if (section, key) in _PATH_KEYS and isinstance(value, str) and is_local_path(value):
                value = str((base / Path(value).expanduser()).resolve())
            raw[section][key] = value


def is_local_path(value: str) -> bool:
    """A plain filesystem path, not a URL (https://, file://) or scp-like git@host:repo."""
    if not value or "://" in value:
        return False
    first = value.split("/", 1)[0]
    return ":" not in first


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_scalar(cls: type, name: str) -> bool:
    hint = _hints(cls)[name]
    return _scalar_type(hint) is not None


def _scalar_type(hint: Any) -> type | None:
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 and rest[0] in (str, int, float, bool) else None
    if hint == tuple[str, ...]:
        return tuple
    return hint if hint in (str, int, float, bool) else None


def _build(cls: type, section: str, values: dict[str, Any]) -> Any:
    hints = _hints(cls)
    kwargs = {k: _coerce(v, hints[k], f"{section}.{k}") for k, v in values.items()}
    return cls(**kwargs)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    optional = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
    if value is None or (optional and value == ""):
        if optional:
            return None
        raise ConfigError(f"setting {where} must not be empty")
    target = _scalar_type(hint)
    if target is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ConfigError(f"setting {where} must be true or false, not {value!r}")
    if target in (int, float):
        try:
            if isinstance(value, bool):  # True is an int to Python, not a number to a user
                raise TypeError(value)
            return target(value)
        except (TypeError, ValueError):
            raise ConfigError(f"setting {where} must be a number, not {value!r}") from None
    if target is str:
        if isinstance(value, (dict, list)):
            raise ConfigError(f"setting {where} must be a string")
        return str(value)
    if target is tuple:
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ConfigError(f"setting {where} must be a list of strings")
    # Mapping[str, str]
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        return dict(value)
    raise ConfigError(f"setting {where} must be a mapping of strings")


_CHOICES = {
    ("validation", "unknown_fields"): ("error", "warn"),
    ("secrets", "mode"): ("external-secrets", "inline"),
    ("vault", "auth_method"): ("token", "approle", "kubernetes"),
    ("log", "format"): ("text", "json"),
    ("secrets", "creation_policy"): ("Owner", "Orphan", "Merge", "None"),
    ("secrets", "deletion_policy"): ("Retain", "Delete", "Merge"),
    ("secrets", "store_kind"): ("SecretStore", "ClusterSecretStore"),
    ("secrets", "kv_version"): (1, 2),
}


def _check(s: Settings) -> None:
    for (section, key), allowed in _CHOICES.items():
        value = getattr(getattr(s, section), key)
        if value not in allowed:
            choices = ", ".join(str(a) for a in allowed)
            raise ConfigError(f"setting {section}.{key} is {value!r}; choose one of: {choices}")
    w = s.watch
    for ok, rule in (
        (w.debounce_seconds >= 0, "watch.debounce_seconds must be >= 0"),
        (w.max_batch >= 1, "watch.max_batch must be >= 1"),
        (w.max_wait_seconds >= w.debounce_seconds,
         "watch.max_wait_seconds must be >= watch.debounce_seconds"),
        (1 <= w.max_await_ms <= 1000, "watch.max_await_ms must be between 1 and 1000"),
        (w.lease_seconds > 0, "watch.lease_seconds must be > 0"),
        (w.reconcile_seconds > 0, "watch.reconcile_seconds must be > 0"),
        (w.max_reconnects >= 0, "watch.max_reconnects must be >= 0"),
        (all(p is None or 0 <= p <= 65535 for p in (w.health_port, w.metrics_port)),
         "watch.health_port and watch.metrics_port must be between 0 and 65535"),
        (s.git.push_retries >= 0 and s.git.timeout > 0 and s.git.lock_timeout >= 0,
         "git.push_retries, git.timeout and git.lock_timeout must not be negative"),
    ):
        if not ok:
            raise ConfigError(f"setting {rule}")
    if not 0 <= s.sync.max_prune_share <= 1:
        raise ConfigError("setting sync.max_prune_share must be between 0 and 1")
    roots = {"output.clusters_dir": s.output.clusters_dir,
             "output.applications_dir": s.output.applications_dir}
    if s.output.root_app:
        roots["output.root_app"] = s.output.root_app
    for key, name in roots.items():
        parts = name.split("/")
        if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ConfigError(f"setting {key} {name!r} must be a relative path inside the "
                              "repository, '/'-separated, without '.', '..' or empty segments")
    for (key_a, a), (key_b, b) in itertools.combinations(roots.items(), 2):
        if a == b or a.startswith(b + "/") or b.startswith(a + "/"):
            raise ConfigError(f"settings {key_a} ({a!r}) and {key_b} ({b!r}) must not overlap: "
                              "trinogen owns what is under each of them")
    for name, profile in s.profiles.items():
        if not isinstance(profile, Mapping):
            raise ConfigError(f"profile {name!r} must be a mapping")


def replace(settings: Settings, **sections: Mapping[str, Any]) -> Settings:
    """A copy of `settings` with some keys of some sections changed (used by tests and the CLI)."""
    changes = {
        name: dataclasses.replace(getattr(settings, name), **values)
        for name, values in sections.items()
    }
    return dataclasses.replace(settings, **changes)
