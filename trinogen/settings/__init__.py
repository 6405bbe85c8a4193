"""Typed, frozen settings: command-line flags > environment > configuration file > defaults.

- `types`: one frozen dataclass per section, with the defaults (and `replace` for copies);
- `loader`: `load_settings()` stacks the layers (file, TRINOGEN_* and VAULT_* environment, flags);
- `coerce`: strings and YAML values -> each setting's declared type;
- `checks`: the rules a loaded `Settings` must satisfy;
- `tenants`: the teams documents belong to, what each may pick, require and use (quotas).
"""

from trinogen.settings.loader import is_local_path, load_settings
from trinogen.settings.types import (
    ArgoSettings,
    ChartSettings,
    GitSettings,
    LogSettings,
    MongoSettings,
    MonitoringSettings,
    OutputSettings,
    PodSettings,
    SecretSettings,
    Settings,
    SyncSettings,
    ValidationSettings,
    VaultSettings,
    WatchSettings,
    replace,
)

__all__ = [
    "ArgoSettings",
    "ChartSettings",
    "GitSettings",
    "LogSettings",
    "MongoSettings",
    "MonitoringSettings",
    "OutputSettings",
    "PodSettings",
    "SecretSettings",
    "Settings",
    "SyncSettings",
    "ValidationSettings",
    "VaultSettings",
    "WatchSettings",
    "is_local_path",
    "load_settings",
    "replace",
]
