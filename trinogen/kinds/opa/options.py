"""`opa:` options: an Open Policy Agent endpoint a cluster's coordinator asks (issue 13, item 3).

```yaml
opa:
  central:
    policy_uri: https://opa.platform.svc:8181/v1/data/trino/allow
    batched_uri: https://opa.platform.svc:8181/v1/data/trino/batch   # optional
```

Each URI becomes the Trino 476 OPA plugin's property of the same meaning (`opa.policy.uri`,
`opa.policy.batched-uri`, `opa.policy.row-filters-uri`, `opa.policy.column-masking-uri`,
`opa.policy.batch-column-masking-uri`); `log_requests`, `log_responses` and
`allow_permission_management` its booleans. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.redact import has_credentials
from trinogen.settings.options.fields import is_http_url

# option field -> Trino property
URI_FIELDS = {
    "policy_uri": "opa.policy.uri",
    "batched_uri": "opa.policy.batched-uri",
    "row_filters_uri": "opa.policy.row-filters-uri",
    "column_masking_uri": "opa.policy.column-masking-uri",
    "batch_column_masking_uri": "opa.policy.batch-column-masking-uri",
}
FLAG_FIELDS = {
    "log_requests": "opa.log-requests",
    "log_responses": "opa.log-responses",
    "allow_permission_management": "opa.allow-permission-management-operations",
}


@dataclass(frozen=True)
class OpaOption:
    """An OPA endpoint: its Trino properties in a fixed order."""

    properties: tuple[tuple[str, str], ...]


def parse(where: str, raw: Mapping[str, Any]) -> OpaOption:
    """One `opa.<name>` entry; ConfigError names `opa.<name>.<field>`."""
    unknown = sorted(set(raw) - set(URI_FIELDS) - set(FLAG_FIELDS))
    if unknown:
        known = ", ".join([*URI_FIELDS, *FLAG_FIELDS])
        raise ConfigError(f"{where}.{unknown[0]}: unknown field (known: {known})")
    if "policy_uri" not in raw:
        raise ConfigError(f"{where}.policy_uri: is required (the OPA policy Trino asks)")
    props = [(prop, _uri(where, name, raw[name])) for name, prop in URI_FIELDS.items()
             if raw.get(name) is not None]
    props += [(prop, _flag(where, name, raw[name])) for name, prop in FLAG_FIELDS.items()
              if raw.get(name) is not None]
    return OpaOption(tuple(props))


def _uri(where: str, name: str, value: Any) -> str:
    if not is_http_url(value):
        raise ConfigError(f"{where}.{name}: must be an http:// or https:// URL")
    if has_credentials(value):
        raise ConfigError(f"{where}.{name}: must not carry credentials (it is committed to "
                          "git in every cluster that picks this option)")
    return str(value)


def _flag(where: str, name: str, value: Any) -> str:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{name}: must be true or false")
    return "true" if value else "false"
