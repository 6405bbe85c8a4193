"""`authentication:` named options: how a cluster's users sign in, and where HTTPS ends.

The platform names each way in the settings; a document picks one with
`"authentication": "<name>"`. Every secret is a Vault reference template
(`<mount>/<path>#<key>`, `{cluster}` and `{owner}` substituted per cluster): the values stay in
Vault and reach the pods through External Secrets. Pure: no I/O.

What Trino 476 does (read from its server classes) decides what is refused here:
- with an authenticator configured, `internal-communication.shared-secret` is required
  ("Shared secret ... is required when authentication is enabled"), so `shared_secret` is;
- `http-server.authentication.allow-insecure-over-http` stays true unless HTTPS or
  `http-server.process-forwarded` is on, and then plain HTTP requests sign in with a bare user
  name and no password. So an option must say where TLS ends: `tls: pod` (the coordinator serves
  HTTPS with a keystore from Vault) or `tls: ingress` (a proxy in front terminates TLS and sends
  `X-Forwarded-Proto: https`); there is no plain-HTTP choice.

`type` is one method or a list of them, tried by Trino in that order (issue 21): PASSWORD (the
password file) and OAUTH2 keep their fields beside the common ones; LDAP's fields sit under
`ldap:` and JWT's under `jwt:` (trinogen.trino.auth_methods reads and renders those two). The
TLS rules above hold for every method alike.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from trinogen.errors import ConfigError
from trinogen.secrets import PlaceholderError, settings_ref
from trinogen.settings.options.metadata import SAMPLE, check_one_per_cluster
from trinogen.trino.auth_methods import (
    JWT_FIELDS,
    LDAP_FIELDS,
    METHODS,
    Jwt,
    Ldap,
    authentication_type,
    check_methods,
    parse_jwt,
    parse_ldap,
)

TYPES = METHODS
TLS_MODES = ("pod", "ingress")
_DURATION = re.compile(r"[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h|d)")
_FIELDS = {
    "PASSWORD": {"password_file", "group_file", "refresh_period"},
    "OAUTH2": {"issuer", "client_id", "client_secret", "principal_field", "scopes"},
    "LDAP": {"ldap"},
    "JWT": {"jwt"},
}
_COMMON = {"type", "tls", "shared_secret", "keystore", "keystore_password", "https_port"}


@dataclass(frozen=True)
class AuthOption:
    """One way to sign in, as the platform offers it (Vault references still templates)."""

    type: str  # http-server.authentication.type: PASSWORD, OAUTH2, JWT or a list (PASSWORD,JWT)
    tls: str  # pod | ingress
    shared_secret: str  # internal-communication.shared-secret
    keystore: str | None = None  # tls: pod: a PEM file (private key + certificate chain)
    keystore_password: str | None = None  # http-server.https.keystore.key, when the key is encrypted
    https_port: int = 8443
    password_file: str | None = None  # PASSWORD: users and bcrypt hashes (password.db)
    group_file: str | None = None  # PASSWORD: group.db, optional
    refresh_period: str | None = None  # auth.refreshPeriod: how often Trino rereads group.db
    issuer: str | None = None  # OAUTH2
    client_id: str | None = None  # OAUTH2; {cluster} and {owner} substituted
    client_secret: str | None = None  # OAUTH2: a Vault reference
    principal_field: str | None = None  # OAUTH2: the claim that names the user
    scopes: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()  # PASSWORD | LDAP | OAUTH2 | JWT, in the order Trino tries them
    ldap: Ldap | None = None
    jwt: Jwt | None = None


def parse(where: str, raw: Mapping[str, Any]) -> AuthOption:
    """One `authentication.<name>` entry; ConfigError naming `<name>.<field>` when it is wrong."""
    methods = check_methods(where, raw.get("type"))
    known = _COMMON.union(*(_FIELDS[m] for m in methods))
    unknown = sorted(str(k) for k in set(raw) - known)
    if unknown:
        # Named like every other kind's (`<kind>.<name>.<field>`), the first one first.
        raise ConfigError(f"{where}.{unknown[0]}: unknown field for type "
                          f"{'/'.join(methods)} (known: {', '.join(sorted(known))})")
    tls, keystore = _tls(where, raw)
    common: dict[str, Any] = {
        "type": authentication_type(methods), "tls": tls, "methods": methods,
        "shared_secret": _ref(where, raw, "shared_secret", required=True),
        "keystore": keystore, "keystore_password": _ref(where, raw, "keystore_password"),
        "https_port": _port(where, raw.get("https_port", 8443)),
    }
    for method in methods:
        common.update(_BY_TYPE[method](where, raw))
    return AuthOption(**common)


def _tls(where: str, raw: Mapping[str, Any]) -> tuple[str, str | None]:
    """Where TLS ends, and the keystore the coordinator serves HTTPS with (tls: pod only)."""
    tls = raw.get("tls")
    if tls not in TLS_MODES:
        raise ConfigError(
            f"{where}.tls must be \"pod\" (HTTPS in the coordinator) or \"ingress\" (TLS ends at "
            f"a proxy that sends X-Forwarded-Proto), not {tls!r}: over plain HTTP Trino lets "
            "anyone in with a bare user name")
    keystore = _ref(where, raw, "keystore", required=tls == "pod")
    if tls == "ingress" and (keystore or raw.get("keystore_password") or "https_port" in raw):
        raise ConfigError(f"{where}: keystore, keystore_password and https_port belong to "
                          "tls: pod; with tls: ingress the proxy holds the certificate")
    return str(tls), keystore


def _password(where: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    period = raw.get("refresh_period")
    if period is not None and not (isinstance(period, str) and _DURATION.fullmatch(period)):
        raise ConfigError(f"{where}.refresh_period must be a Trino duration such as \"5s\"")
    return {"password_file": _ref(where, raw, "password_file", required=True),
            "group_file": _ref(where, raw, "group_file"), "refresh_period": period}


def _oauth2(where: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    return {"issuer": _url(where, raw), "client_id": _text(where, raw, "client_id"),
            "client_secret": _ref(where, raw, "client_secret", required=True),
            "principal_field": _text(where, raw, "principal_field", required=False),
            "scopes": _scopes(where, raw.get("scopes"))}


def _section(where: str, raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """The fields of LDAP or JWT, under their own key (JWT's principal_field is not OAUTH2's)."""
    value = raw.get(key)
    if value is None:
        raise ConfigError(f"{where}.{key} is required for type {key.upper()}: a mapping of "
                          "its fields (docs/options.md)")
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}.{key} must be a mapping of {key.upper()}'s fields, not "
                          f"{type(value).__name__}")
    return value


def _ldap(where: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    section = _section(where, raw, "ldap")
    _known(f"{where}.ldap", section, LDAP_FIELDS)
    return {"ldap": _own(f"{where}.ldap", parse_ldap(f"{where}.ldap", section))}


def _jwt(where: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    section = _section(where, raw, "jwt")
    _known(f"{where}.jwt", section, JWT_FIELDS)
    return {"jwt": _own(f"{where}.jwt", parse_jwt(f"{where}.jwt", section))}


_Method = TypeVar("_Method", Ldap, Jwt)


def _own(where: str, method: _Method) -> _Method:
    """Every text of an LDAP or JWT section names its cluster alone (a JWT audience, an LDAP
    group: who may sign in to which cluster)."""
    for f in dataclasses.fields(method):
        value = getattr(method, f.name)
        texts = (value,) if isinstance(value, str) else value if isinstance(value, tuple) else ()
        for text in texts:  # a flag (allow_insecure), a number or None holds no text
            if isinstance(text, str):
                check_one_per_cluster(f"{where}.{f.name}", text, "sign-in")
    return method


def _known(where: str, raw: Mapping[str, Any], known: frozenset[str]) -> None:
    unknown = sorted(str(k) for k in set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown field (known: "
                          f"{', '.join(sorted(known))})")


def _ref(where: str, raw: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise ConfigError(f"{where}.{key} is required: a Vault reference "
                              "<mount>/<path>#<key> ({cluster} and {owner} are substituted)")
        return None
    usable = isinstance(value, str)
    try:  # the grammar the model parses each cluster's reference with, on a sample cluster
        if usable:
            settings_ref(value, **SAMPLE)
    except PlaceholderError:
        usable = False
    if not usable:
        raise ConfigError(f"{where}.{key} must be a Vault reference <mount>/<path>#<key> (only "
                          "{cluster} and {owner} may be substituted), not " + repr(value))
    check_one_per_cluster(f"{where}.{key}", str(value), "secret")
    return str(value)


def _text(where: str, raw: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or any(ch in value for ch in "\n\r\x00"):
        raise ConfigError(f"{where}.{key} must be a non-empty single-line string")
    try:
        value.format(**SAMPLE)
    except (KeyError, IndexError, ValueError) as e:
        raise ConfigError(f"{where}.{key}: only {{cluster}} and {{owner}} may be substituted "
                          f"({e})") from e
    check_one_per_cluster(f"{where}.{key}", value, "sign-in")
    return value


def _url(where: str, raw: Mapping[str, Any]) -> str:
    value = _text(where, raw, "issuer")
    assert value is not None
    if not value.startswith("https://"):
        raise ConfigError(f"{where}.issuer must be an https:// URL (Trino fetches the issuer's "
                          "keys and endpoints from it)")
    return value


def _port(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ConfigError(f"{where}.https_port must be a port number (1-65535)")
    if value == 8080:
        raise ConfigError(f"{where}.https_port 8080 is the chart's HTTP port; choose another")
    return value


def _scopes(where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
            isinstance(s, str) and "," not in s and re.fullmatch(r"[!#-\[\]-~]+", s)
            for s in value):
        raise ConfigError(f"{where}.scopes must be a list of OAuth 2.0 scope names")
    return tuple(value)


_BY_TYPE: dict[str, Callable[[str, Mapping[str, Any]], dict[str, Any]]] = {
    "PASSWORD": _password, "OAUTH2": _oauth2, "LDAP": _ldap, "JWT": _jwt,
}
