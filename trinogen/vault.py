"""HashiCorp Vault (or OpenBao): authenticate at the edge, read KV secrets. hvac only.

`connect()` builds the client and logs in before the run starts, so a Vault that is down or a
token that is wrong fails the run before anything is written. `VaultReader.read()` reads one KV
path (each distinct path once per run); per-path problems (missing, forbidden) fail only the
clusters that use the path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trinogen.errors import ConfigError, VaultUnavailable
from trinogen.render import SecretData
from trinogen.secrets import Secret
from trinogen.settings import VaultSettings

log = logging.getLogger(__name__)


class SecretProblem(Exception):
    """A KV path that cannot be used for the clusters referencing it (never a run failure)."""


class SecretNotFound(SecretProblem):
    pass


class SecretForbidden(SecretProblem):
    pass


class VaultReader:
    """Reads KV secrets with an authenticated client; counts requests."""

    def __init__(self, client: Any, settings: VaultSettings, kv_version: int) -> None:
        self.client = client
        self.settings = settings
        self.kv_version = kv_version
        self.requests = 0

    def read(self, secret_path: str) -> SecretData:
        """Read `<mount>/<path>`: its values (masked) and, for KV v2, its current version."""
        import hvac.exceptions as hx
        import requests

        mount, _, path = secret_path.partition("/")
        self.requests += 1
        try:
            if self.kv_version == 2:
                resp = self.client.secrets.kv.v2.read_secret_version(
                    path=path, mount_point=mount, raise_on_deleted_version=True
                )
                data = resp["data"]["data"] or {}
                version = resp["data"]["metadata"].get("version")
            else:
                resp = self.client.secrets.kv.v1.read_secret(path=path, mount_point=mount)
                data, version = resp["data"] or {}, None
        except hx.InvalidPath as e:
            raise SecretNotFound(f"Vault has no secret at {secret_path}") from e
        except hx.Forbidden as e:
            raise SecretForbidden(
                f"Vault denied reading {secret_path} (403): the token's policy does not allow it"
            ) from e
        except (hx.VaultDown, hx.InternalServerError, hx.BadGateway) as e:
            raise VaultUnavailable(f"Vault at {self.settings.addr} failed while reading "
                                   f"{secret_path}: {type(e).__name__}") from e
        except hx.VaultError as e:
            raise SecretProblem(f"Vault refused reading {secret_path}: {type(e).__name__}") from e
        except requests.exceptions.RequestException as e:
            raise VaultUnavailable(f"Vault at {self.settings.addr} is unreachable or too slow "
                                   f"while reading {secret_path}: {type(e).__name__}") from e
        values = {}
        for key, value in data.items():
            if isinstance(value, (dict, list)) or value is None:
                continue  # not usable as an environment variable; reported as a missing key
            values[str(key)] = Secret(value if isinstance(value, str) else str(value))
        return SecretData(version=int(version) if version is not None else None, values=values)


def connect(settings: VaultSettings, kv_version: int, environ: Mapping[str, str]) -> VaultReader:
    """An authenticated reader. Raises ConfigError or VaultUnavailable with what to do."""
    import hvac
    import hvac.exceptions as hx
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    if not settings.addr:
        raise ConfigError("secrets need Vault: set VAULT_ADDR (or vault.addr), or set "
                          "secrets.check: false to write references without checking them")
    session = requests.Session()
    retry = Retry(total=settings.retries, connect=settings.retries, read=settings.retries,
                  backoff_factor=0.3, status_forcelist=(500, 502, 503, 504),
                  allowed_methods=None, raise_on_status=False)
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    verify: bool | str = settings.cacert if settings.cacert else settings.verify
    client = hvac.Client(url=settings.addr, namespace=settings.namespace, verify=verify,
                         timeout=settings.timeout, session=session)
    try:
        _login(client, settings, environ)
        client.auth.token.lookup_self()
    except (hx.Forbidden, hx.Unauthorized, hx.InvalidRequest) as e:
        raise VaultUnavailable(
            f"Vault at {settings.addr} rejected trinogen's {settings.auth_method} login: "
            f"{_first_error(e)}; check the credentials"
        ) from e
    except hx.VaultError as e:
        raise VaultUnavailable(f"Vault at {settings.addr} failed at login: {type(e).__name__}") from e
    except requests.exceptions.RequestException as e:
        raise VaultUnavailable(
            f"Vault at {settings.addr} is unreachable ({type(e).__name__}); check VAULT_ADDR and "
            "the network"
        ) from e
    return VaultReader(client, settings, kv_version)


def _login(client: Any, s: VaultSettings, environ: Mapping[str, str]) -> None:
    if s.auth_method == "token":
        token = environ.get("VAULT_TOKEN") or _read_file(s.token_file)
        if not token:
            raise ConfigError(f"Vault token auth: set VAULT_TOKEN or write the token to {s.token_file}")
        client.token = token.strip()
    elif s.auth_method == "approle":
        role_id = s.role_id or environ.get("TRINOGEN_VAULT_ROLE_ID")
        secret_id = environ.get("TRINOGEN_VAULT_SECRET_ID") or _read_file(s.secret_id_file)
        if not role_id or not secret_id:
            raise ConfigError("Vault AppRole auth: set vault.role_id (or TRINOGEN_VAULT_ROLE_ID) and "
                              "TRINOGEN_VAULT_SECRET_ID (or vault.secret_id_file)")
        client.auth.approle.login(role_id=role_id, secret_id=secret_id.strip(),
                                  mount_point=s.approle_mount)
    elif s.auth_method == "kubernetes":
        jwt = _read_file(s.kubernetes_jwt_file)
        if not s.kubernetes_role or not jwt:
            raise ConfigError("Vault Kubernetes auth: set vault.kubernetes_role and mount the "
                              f"service-account token at {s.kubernetes_jwt_file}")
        client.auth.kubernetes.login(role=s.kubernetes_role, jwt=jwt.strip(),
                                     mount_point=s.kubernetes_mount)


def _read_file(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return Path(path).expanduser().read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _first_error(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if errors:
        return str(errors[0])[:200]
    return type(e).__name__
