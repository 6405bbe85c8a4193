"""HashiCorp Vault (or OpenBao): authenticate at the edge, read KV secrets. hvac only.

`connect()` builds the client and logs in before the run starts, so a Vault that is down or a
token that is wrong fails the run before anything is written. `VaultReader.read()` reads one KV
path (each distinct path once per reader, i.e. once per run); per-path problems (missing,
forbidden) fail only the clusters that use the path.

Secret values leave this module only inside `Secret`; messages name paths, never values.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trinogen.errors import (
    ConfigError,
    SecretForbidden,
    SecretNotFound,
    SecretProblem,
    VaultUnavailable,
)
from trinogen.redact import redact_url
from trinogen.secrets import Secret, SecretData
from trinogen.settings import VaultSettings

# SecretProblem and its kinds live in the error tree; they stay importable from here.
__all__ = ["SecretForbidden", "SecretNotFound", "SecretProblem", "VaultReader", "connect"]

log = logging.getLogger(__name__)

# Retried (bounded, with backoff) before the run gives up: Vault overloaded, sealed, behind a
# proxy that failed, or rate-limiting us.
_RETRY_STATUSES = (429, 500, 502, 503, 504)
_BACKOFF_FACTOR = 0.3
_BACKOFF_MAX = 5.0


class VaultReader:
    """Reads KV secrets with an authenticated client; each path once; counts requests."""

    def __init__(self, client: Any, settings: VaultSettings, kv_version: int) -> None:
        self.client = client
        self.settings = settings
        self.kv_version = kv_version
        self.requests = 0  # KV reads sent to Vault (the run's stats.vaultRequests)
        self._cache: dict[str, SecretData | SecretProblem] = {}
        self._count = threading.Lock()  # reads may run in parallel threads

    def read(self, secret_path: str) -> SecretData:
        """Read `<mount>/<path>`: its values (masked) and, for KV v2, its current version.

        Raises SecretProblem (this path only) or VaultUnavailable (the whole run). A path read
        before, successfully or not, is answered from this reader's cache.
        """
        cached = self._cache.get(secret_path)
        if isinstance(cached, SecretProblem):
            raise cached
        if cached is not None:
            return cached
        try:
            data = self._fetch(secret_path)
        except SecretProblem as e:
            self._cache[secret_path] = e
            raise
        self._cache[secret_path] = data
        return data

    def _fetch(self, secret_path: str) -> SecretData:
        import hvac.exceptions as hx
        import requests

        mount, _, path = secret_path.partition("/")
        with self._count:
            self.requests += 1
        try:
            raw, version = self._read_kv(mount, path)
        except hx.InvalidPath as e:
            raise SecretNotFound(
                f"Vault has no secret at {secret_path} (or its current version is deleted)"
            ) from e
        except hx.Forbidden as e:
            raise SecretForbidden(
                f"Vault denied reading {secret_path} (403): trinogen's token policy does not "
                "allow it"
            ) from e
        except (hx.VaultDown, hx.InternalServerError, hx.BadGateway, hx.RateLimitExceeded,
                hx.VaultNotInitialized, hx.UnexpectedError) as e:
            raise VaultUnavailable(
                f"Vault at {redact_url(self.settings.addr or '')} failed while reading {secret_path} "
                f"({type(e).__name__}, after {self.settings.retries} retries); nothing was "
                "written, run again when Vault is healthy"
            ) from e
        except hx.VaultError as e:
            raise SecretProblem(f"Vault refused reading {secret_path}: {type(e).__name__}") from e
        except requests.exceptions.RequestException as e:
            raise VaultUnavailable(
                f"Vault at {redact_url(self.settings.addr or '')} failed while reading {secret_path}: "
                f"{_describe(e, self.settings)}; nothing was written"
            ) from e
        return SecretData(version=version, values=_mask(raw))

    def _read_kv(self, mount: str, path: str) -> tuple[Mapping[str, Any], int | None]:
        try:
            if self.kv_version == 2:
                return _kv2(self.client, mount, path)
            return _kv1(self.client, mount, path)
        except _Unexpected as e:
            raise VaultUnavailable(
                f"Vault at {redact_url(self.settings.addr or '')} answered the read of "
                f"{mount}/{path} with an unexpected body ({e}); check that VAULT_ADDR is Vault "
                "itself (not a proxy or login page) and that secrets.kv_version matches the "
                "mount; nothing was written"
            ) from None


class _Unexpected(Exception):
    """Vault answered 200 with a body that is not a KV response (what it was is the message)."""


def _kv2(client: Any, mount: str, path: str) -> tuple[Mapping[str, Any], int | None]:
    resp = client.secrets.kv.v2.read_secret_version(
        path=path, mount_point=mount, raise_on_deleted_version=True
    )
    body = _part(resp, "data", "the response")
    version = _part(body, "metadata", "data").get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise _Unexpected(f"data.metadata.version is {type(version).__name__}, not a number")
    return _part(body, "data", "data"), version


def _kv1(client: Any, mount: str, path: str) -> tuple[Mapping[str, Any], int | None]:
    resp = client.secrets.kv.v1.read_secret(path=path, mount_point=mount)
    return _part(resp, "data", "the response"), None


def _part(obj: Any, key: str, where: str) -> Mapping[str, Any]:
    """`obj[key]` as an object ({} when absent or null). hvac hands back the raw HTTP response
    when a 200 body is not JSON (a proxy's HTML page), so `obj` is checked too."""
    if not isinstance(obj, Mapping):
        plain = obj is None or isinstance(obj, (list, str, int, float))
        raise _Unexpected(f"{where} is {type(obj).__name__ if plain else 'not JSON'}")
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Unexpected(f"{key} in {where} is a {type(value).__name__}, not an object")
    return value


def _mask(raw: Mapping[str, Any]) -> dict[str, Secret]:
    """Usable values as Secrets; nested or null values are left out (reported as a missing key)."""
    values: dict[str, Secret] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            values[str(key)] = Secret(value)
        elif isinstance(value, (bool, int, float)):
            # What External Secrets Operator makes of a non-string property: its JSON text.
            values[str(key)] = Secret(json.dumps(value))
    return values


def connect(settings: VaultSettings, kv_version: int, environ: Mapping[str, str]) -> VaultReader:
    """An authenticated reader. Raises ConfigError or VaultUnavailable with what to do."""
    import hvac
    import hvac.exceptions as hx
    import requests

    if not settings.addr:
        raise ConfigError("secrets need Vault: set VAULT_ADDR (or vault.addr), or set "
                          "secrets.check: false to write references without checking them")
    if kv_version not in (1, 2):
        raise ConfigError(f"secrets.kv_version is {kv_version!r}; choose 1 or 2")
    verify: bool | str = settings.cacert if settings.cacert else settings.verify
    if verify is False:
        log.warning("vault.verify is false: Vault's TLS certificate is not checked")
    # token="" and an explicit verify: hvac would otherwise read VAULT_TOKEN, ~/.vault-token and
    # VAULT_CACERT from the process behind our back; `environ` is the only input.
    client = hvac.Client(url=settings.addr, token="", namespace=settings.namespace or None,
                         verify=verify, timeout=settings.timeout,
                         session=_session(settings, verify))
    try:
        _login(client, settings, environ)
        client.auth.token.lookup_self()
    except (hx.Forbidden, hx.Unauthorized, hx.InvalidRequest) as e:
        raise VaultUnavailable(
            f"Vault at {redact_url(settings.addr)} rejected trinogen's {settings.auth_method} login: "
            f"{_first_error(e)}; check the credentials"
        ) from e
    except hx.VaultError as e:
        raise VaultUnavailable(
            f"Vault at {redact_url(settings.addr)} failed at login: {type(e).__name__}; nothing was written"
        ) from e
    except requests.exceptions.RequestException as e:
        raise VaultUnavailable(
            f"Vault at {redact_url(settings.addr)} could not be used: {_describe(e, settings)}; nothing was "
            "written"
        ) from e
    return VaultReader(client, settings, kv_version)


def _session(settings: VaultSettings, verify: bool | str) -> Any:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    retry = Retry(
        total=settings.retries, connect=settings.retries, read=settings.retries,
        status=settings.retries, other=0, backoff_factor=_BACKOFF_FACTOR,
        backoff_max=_BACKOFF_MAX, status_forcelist=_RETRY_STATUSES,
        allowed_methods=None,  # Vault reads, logins and lookups are all safe to repeat
        raise_on_status=False,  # the last answer reaches hvac, which raises its typed error
        respect_retry_after_header=False,  # keep the total wait bounded by our own backoff
    )
    session = requests.Session()
    # hvac uses a given session's `verify` instead of its own argument whenever it is truthy,
    # and a new Session says True: without this, VAULT_CACERT would be silently ignored.
    session.verify = verify
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def _login(client: Any, s: VaultSettings, environ: Mapping[str, str]) -> None:
    login = _LOGINS.get(s.auth_method)
    if login is None:
        raise ConfigError(f"vault.auth_method {s.auth_method!r}: choose token, approle or kubernetes")
    login(client, s, environ)


def _token_login(client: Any, s: VaultSettings, environ: Mapping[str, str]) -> None:
    token = environ.get("VAULT_TOKEN") or _read_file(s.token_file, "vault.token_file")
    if not token:
        raise ConfigError(f"Vault token auth: set VAULT_TOKEN or write the token to {s.token_file}")
    client.token = token.strip()


def _approle_login(client: Any, s: VaultSettings, environ: Mapping[str, str]) -> None:
    role_id = s.role_id or environ.get("TRINOGEN_VAULT_ROLE_ID")
    secret_id = environ.get("TRINOGEN_VAULT_SECRET_ID") or _read_file(
        s.secret_id_file, "vault.secret_id_file")
    if not role_id or not secret_id:
        raise ConfigError("Vault AppRole auth: set vault.role_id (or TRINOGEN_VAULT_ROLE_ID) and "
                          "TRINOGEN_VAULT_SECRET_ID (or vault.secret_id_file)")
    client.auth.approle.login(role_id=role_id, secret_id=secret_id.strip(),
                              mount_point=s.approle_mount)


def _kubernetes_login(client: Any, s: VaultSettings, environ: Mapping[str, str]) -> None:
    jwt = _read_file(s.kubernetes_jwt_file, "vault.kubernetes_jwt_file")
    if not s.kubernetes_role or not jwt:
        raise ConfigError("Vault Kubernetes auth: set vault.kubernetes_role and mount the "
                          f"service-account token at {s.kubernetes_jwt_file}")
    client.auth.kubernetes.login(role=s.kubernetes_role, jwt=jwt.strip(),
                                 mount_point=s.kubernetes_mount)


_LOGINS: dict[str, Callable[[Any, VaultSettings, Mapping[str, str]], None]] = {
    "token": _token_login, "approle": _approle_login, "kubernetes": _kubernetes_login,
}


def _read_file(path: str | None, setting: str) -> str | None:
    """A credential file's content; None when it does not exist. Unreadable is a ConfigError."""
    if not path:
        return None
    p = Path(path).expanduser()
    try:
        return p.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or type(e).__name__
        raise ConfigError(f"{setting} {p}: cannot read it ({reason})") from None


def _describe(e: BaseException, s: VaultSettings) -> str:
    """What went wrong talking to Vault, and what to check; never the response body."""
    import requests

    names = {type(x).__name__ for x in _causes(e)}
    tries = f"{s.retries + 1} attempts"
    if isinstance(e, requests.exceptions.SSLError) or "SSLError" in names:
        return ("TLS verification failed; set VAULT_CACERT (vault.cacert) to the CA that signed "
                "Vault's certificate")
    if isinstance(e, requests.exceptions.Timeout) or names & _TIMEOUTS:
        return f"no answer within vault.timeout={s.timeout:g}s ({tries}); check Vault's health"
    if isinstance(e, requests.exceptions.ConnectionError):
        return f"unreachable ({tries}); check VAULT_ADDR and the network"
    return type(e).__name__


_TIMEOUTS = {"ReadTimeoutError", "ReadTimeout", "ConnectTimeoutError", "TimeoutError"}


def _causes(e: BaseException) -> list[BaseException]:
    """The exception and what caused it (at most 8 deep), including urllib3's last reason."""
    chain: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and len(chain) < 8:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__ or _reason(cur)
    return chain


def _reason(e: BaseException) -> BaseException | None:
    # requests wraps urllib3's MaxRetryError in args[0]; its `.reason` is the last failure.
    for arg in getattr(e, "args", ()):
        reason = getattr(arg, "reason", None)
        if isinstance(reason, BaseException):
            return reason
        if isinstance(arg, BaseException):
            return arg
    return None


def _first_error(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if errors:
        return str(errors[0])[:200]
    return type(e).__name__
