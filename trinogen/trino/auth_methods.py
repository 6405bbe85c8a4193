"""Sign-in methods beyond the password file and OAuth 2.0: LDAP, JWT, and several at once. Pure.

Read from Trino 476's jars (javap): the LDAP password authenticator
(`plugin/password-authenticators`, LdapAuthenticatorConfig and the toolkit's LdapClientConfig)
takes `ldap.url` (ldap:// or ldaps://; ldap:// needs `ldap.allow-insecure=true`),
`ldap.user-bind-pattern` (`:`-separated, each with `${USER}`), `ldap.user-base-dn`,
`ldap.group-auth-pattern`, `ldap.bind-dn`/`ldap.bind-password` (both or neither; with them the
group pattern is required; without them a bind pattern is; a group pattern needs the base DN),
`ldap.ssl.truststore.path` (PEM or JKS) and `ldap.cache-ttl`. The JWT authenticator
(JwtAuthenticatorConfig) takes `http-server.authentication.jwt.key-file` (a JWKS when it starts
with http:// or https://), `.required-issuer`, `.required-audience` and `.principal-field`; it
fetches the JWKS with the airlift HTTP client named `jwk`, whose trust store is
`jwk.http-client.trust-store-path` (PEM read as such). `http-server.authentication.type` is an
ordered list: Trino tries each authenticator in turn and answers 401 when none accepts.

What the platform refuses here, beyond Trino's own rules: an LDAP server reached without TLS
unless the option says `allow_insecure: true` (the users' passwords cross the network as sent),
and a JWKS fetched over plain HTTP (whoever can change the keys can sign in as anyone). Where
HTTPS ends for the clients (`tls: pod | ingress`) is the option's common part and applies to every
method alike (trinogen.kinds.authentication.options).

Secrets stay Vault reference templates (`<mount>/<path>#<key>`): `SecretValue` for a property
the pod reads from its environment, `SecretFile` for a file mounted from a Secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.secrets import PlaceholderError, settings_ref

# The methods an option may list, and the value each adds to http-server.authentication.type.
TRINO_TYPE = {"PASSWORD": "PASSWORD", "LDAP": "PASSWORD", "OAUTH2": "OAUTH2", "JWT": "JWT"}
METHODS = tuple(TRINO_TYPE)
LDAP_DIR = "/etc/trino/auth/ldap"  # the LDAP server's CA certificates (a Secret's key)
JWT_DIR = "/etc/trino/auth/jwt"  # the JWKS server's CA certificates
CA_FILE = "ca.pem"
JWT = "http-server.authentication.jwt."
_SAMPLE = {"cluster": "c", "owner": "o"}
_DURATION = re.compile(r"[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h|d)")
_LDAP_URL = re.compile(r"(?P<scheme>ldaps?)://(?P<host>[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)"
                       r"(:(?P<port>[0-9]{1,5}))?")
_HTTPS_URL = re.compile(r"https://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?"
                        r"(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?")
_BRACES = re.compile(r"\$\{USER\}|\{cluster\}|\{owner\}")
LDAP_FIELDS = frozenset({"url", "allow_insecure", "truststore", "user_bind_pattern",
                         "user_base_dn", "group_auth_pattern", "bind_dn", "bind_password",
                         "cache_ttl"})
JWT_FIELDS = frozenset({"jwks_url", "jwks_ca", "required_issuer", "required_audience",
                        "principal_field"})


@dataclass(frozen=True)
class SecretValue:
    """A property value kept in Vault, read by Trino from the pod's environment."""

    ref: str  # Vault reference template


@dataclass(frozen=True)
class SecretFile:
    """A file kept in Vault and mounted at `path`; the property's value is that path."""

    ref: str
    path: str


Value = str | SecretValue | SecretFile
Lines = tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Ldap:
    """Trino's LDAP password authenticator, as the platform names it."""

    url: str
    user_bind_patterns: tuple[str, ...] = ()  # each with ${USER}; {cluster}/{owner} filled
    user_base_dn: str | None = None
    group_auth_pattern: str | None = None  # who may sign in to this cluster
    bind_dn: str | None = None
    bind_password: str | None = None  # a Vault reference
    truststore: str | None = None  # a Vault reference: PEM CA certificates of the LDAP server
    allow_insecure: bool = False  # ldap:// (no TLS): only when the option says so
    cache_ttl: str | None = None


@dataclass(frozen=True)
class Jwt:
    """Trino's JWT authenticator with its keys from a JWKS URL."""

    jwks_url: str
    jwks_ca: str | None = None  # a Vault reference: PEM CA certificates of the JWKS server
    required_issuer: str | None = None
    required_audience: str | None = None
    principal_field: str | None = None


def authentication_type(methods: Sequence[str]) -> str:
    """`http-server.authentication.type` for the methods in the order Trino should try them."""
    return ",".join(TRINO_TYPE[m] for m in methods)


def check_methods(where: str, value: Any) -> tuple[str, ...]:
    """The option's `type` (one method or a list of them, tried in that order), checked."""
    methods = [value] if isinstance(value, str) else value
    if not isinstance(methods, list) or not methods or not all(m in METHODS for m in methods):
        raise ConfigError(f"{where}.type must be one of {', '.join(METHODS)} or a list of them "
                          f"(tried in that order), not {value!r}")
    if len(set(methods)) != len(methods):
        raise ConfigError(f"{where}.type lists a method twice: {value!r}")
    if "PASSWORD" in methods and "LDAP" in methods:
        raise ConfigError(f"{where}.type: PASSWORD (file) and LDAP are both Trino's PASSWORD "
                          "authenticator; pick one of them")
    return tuple(methods)


def parse_ldap(where: str, raw: Mapping[str, Any]) -> Ldap:
    """The LDAP fields of one option; ConfigError names `<where>.<field>` when one is wrong."""
    url, insecure = _ldap_url(where, raw)
    patterns = _patterns(where, raw.get("user_bind_pattern"))
    ldap = Ldap(
        url=url, user_bind_patterns=patterns, allow_insecure=insecure,
        user_base_dn=_text(where, raw, "user_base_dn"),
        group_auth_pattern=_text(where, raw, "group_auth_pattern"),
        bind_dn=_text(where, raw, "bind_dn"), bind_password=_ref(where, raw, "bind_password"),
        truststore=_ref(where, raw, "truststore"), cache_ttl=_duration(where, raw, "cache_ttl"))
    _ldap_modes(where, ldap)
    return ldap


def _ldap_url(where: str, raw: Mapping[str, Any]) -> tuple[str, bool]:
    url, insecure = raw.get("url"), raw.get("allow_insecure", False)
    m = _LDAP_URL.fullmatch(url) if isinstance(url, str) else None
    if m is None or (m.group("port") and not 1 <= int(m.group("port")) <= 65535):
        raise ConfigError(f"{where}.url must be ldaps://<host>[:<port>] (or ldap:// with "
                          f"allow_insecure: true), not {url!r}")
    if not isinstance(insecure, bool):
        raise ConfigError(f"{where}.allow_insecure must be true or false")
    _tls_choice(where, str(url), m.group("scheme") == "ldaps", insecure, "truststore" in raw)
    return str(url), insecure


def _tls_choice(where: str, url: str, tls: bool, insecure: bool, truststore: bool) -> None:
    """ldap:// only when the option says allow_insecure, and nothing of TLS's with it."""
    if not tls and not insecure:
        raise ConfigError(f"{where}.url {url!r} has no TLS: the users' passwords would cross "
                          "the network as typed; use ldaps://, or say allow_insecure: true")
    if tls and insecure:
        raise ConfigError(f"{where}.allow_insecure is for ldap:// URLs; {url!r} uses TLS")
    if insecure and truststore:
        raise ConfigError(f"{where}.truststore is for ldaps:// URLs")


def _ldap_modes(where: str, ldap: Ldap) -> None:
    """Trino's own rules (LdapAuthenticator's constructor), refused when the settings load."""
    if (ldap.bind_dn is None) != (ldap.bind_password is None):
        raise ConfigError(f"{where}: bind_dn and bind_password go together")
    if ldap.bind_dn is not None and ldap.group_auth_pattern is None:
        raise ConfigError(f"{where}.group_auth_pattern is required with bind_dn (Trino finds "
                          "the user with it)")
    if ldap.bind_dn is None and not ldap.user_bind_patterns:
        raise ConfigError(f"{where}: either user_bind_pattern or bind_dn (with bind_password, "
                          "user_base_dn and group_auth_pattern) is required")
    if ldap.group_auth_pattern is not None and ldap.user_base_dn is None:
        raise ConfigError(f"{where}.user_base_dn is required with group_auth_pattern")


def parse_jwt(where: str, raw: Mapping[str, Any]) -> Jwt:
    """The JWT fields of one option; ConfigError names `<where>.<field>` when one is wrong."""
    url = raw.get("jwks_url")
    if not isinstance(url, str) or not _HTTPS_URL.fullmatch(url):
        raise ConfigError(f"{where}.jwks_url must be an https:// URL of a JWKS (whoever can "
                          f"change the keys on the way can sign in as anyone), not {url!r}")
    return Jwt(jwks_url=url, jwks_ca=_ref(where, raw, "jwks_ca"),
               required_issuer=_text(where, raw, "required_issuer"),
               required_audience=_text(where, raw, "required_audience"),
               principal_field=_text(where, raw, "principal_field"))


def ldap_lines(ldap: Ldap, fill: Callable[[str], str]) -> Lines:
    """password-authenticator.properties for LDAP; `fill` substitutes {cluster} and {owner}."""
    lines: list[tuple[str, Value]] = [("password-authenticator.name", "ldap"),
                                      ("ldap.url", ldap.url)]
    if ldap.allow_insecure:
        lines.append(("ldap.allow-insecure", "true"))
    if ldap.truststore:
        lines.append(("ldap.ssl.truststore.path",
                      SecretFile(ldap.truststore, f"{LDAP_DIR}/{CA_FILE}")))
    if ldap.user_bind_patterns:
        lines.append(("ldap.user-bind-pattern", ":".join(fill(p) for p in ldap.user_bind_patterns)))
    texts = (("ldap.user-base-dn", ldap.user_base_dn), ("ldap.bind-dn", ldap.bind_dn),
             ("ldap.group-auth-pattern", ldap.group_auth_pattern),
             ("ldap.cache-ttl", ldap.cache_ttl))
    lines.extend((key, fill(value)) for key, value in texts if value is not None)
    if ldap.bind_password:
        lines.append(("ldap.bind-password", SecretValue(ldap.bind_password)))
    return tuple(lines)


def jwt_lines(jwt: Jwt, fill: Callable[[str], str]) -> Lines:
    """The coordinator's config.properties lines for JWT (`fill` as for LDAP: an audience per
    cluster, `trino-{cluster}`, keeps one cluster's tokens out of another)."""
    lines: list[tuple[str, Value]] = [(f"{JWT}key-file", jwt.jwks_url)]
    if jwt.jwks_ca:
        lines.append(("jwk.http-client.trust-store-path",
                      SecretFile(jwt.jwks_ca, f"{JWT_DIR}/{CA_FILE}")))
    optional = (("required-issuer", jwt.required_issuer),
                ("required-audience", jwt.required_audience),
                ("principal-field", jwt.principal_field))
    lines.extend((f"{JWT}{key}", fill(value)) for key, value in optional if value is not None)
    return tuple(lines)


def fill_for(cluster: str, owner: str) -> Callable[[str], str]:
    """The substitution of `{cluster}` and `{owner}` in LDAP texts (`${USER}` stays Trino's).

    Safe inside an LDAP filter or DN: the model gives a DNS label and a Kubernetes label value
    (letters, digits, `-`, `_`, `.`), none of LDAP's special characters."""
    def fill(text: str) -> str:
        return text.replace("{cluster}", cluster).replace("{owner}", owner)
    return fill


def _patterns(where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{where}.user_bind_pattern must be a pattern or a list of them")
    out = []
    for item in items:
        text = _checked_text(f"{where}.user_bind_pattern", item)
        if "${USER}" not in text or ":" in text:
            raise ConfigError(f"{where}.user_bind_pattern {text!r} must contain ${{USER}} and "
                              "no ':' (Trino separates patterns with ':')")
        out.append(text)
    return tuple(out)


def _text(where: str, raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return None if value is None else _checked_text(f"{where}.{key}", value)


def _checked_text(where: str, value: Any) -> str:
    """One line of a properties file: printable, no backslash (Java reads it as an escape), no
    braces but `${USER}`, `{cluster}` and `{owner}`."""
    if not isinstance(value, str) or not value.strip() or not value.isprintable() or "\\" in value:
        raise ConfigError(f"{where} must be a non-empty single line without backslashes")
    if "{" in _BRACES.sub("", value) or "}" in _BRACES.sub("", value):
        raise ConfigError(f"{where}: only ${{USER}}, {{cluster}} and {{owner}} may be written "
                          f"in braces, not {value!r}")
    if value != value.strip():
        raise ConfigError(f"{where} must not start or end with spaces")
    return value


def _duration(where: str, raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not (isinstance(value, str) and _DURATION.fullmatch(value)):
        raise ConfigError(f"{where}.{key} must be a Trino duration such as \"1h\"")
    return value


def _ref(where: str, raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    try:  # the grammar the model parses each cluster's reference with, on a sample cluster
        if not isinstance(value, str):
            raise PlaceholderError("not a string")
        settings_ref(value, **_SAMPLE)
    except PlaceholderError:
        raise ConfigError(f"{where}.{key} must be a Vault reference <mount>/<path>#<key> (only "
                          "{cluster} and {owner} may be substituted), not " + repr(value)) from None
    return value
