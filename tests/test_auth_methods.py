"""LDAP, JWT and several sign-in methods at once: what the settings may say, what Trino gets.

The property names and Trino's own rules are read from Trino 476's jars (see the module's
docstring); tests/test_trino_real_auth_methods.py boots what these functions produce.
"""

from __future__ import annotations

from typing import Any

import pytest

from trinogen.errors import ConfigError
from trinogen.trino.auth_methods import (
    Jwt,
    SecretFile,
    SecretValue,
    authentication_type,
    check_methods,
    fill_for,
    jwt_lines,
    ldap_lines,
    parse_jwt,
    parse_ldap,
)

W = "authentication.corp"
BIND = {"url": "ldaps://ldap.corp:636", "user_bind_pattern": "uid=${USER},ou=people,dc=corp"}
SEARCH = {"url": "ldaps://ldap.corp", "bind_dn": "cn=svc,dc=corp",
          "bind_password": "secret/trino/ldap#bind", "user_base_dn": "ou=people,dc=corp",
          "group_auth_pattern": "(&(uid=${USER})(memberOf=cn=trino-{cluster},dc=corp))"}
FILL = fill_for("sales", "team_a")


@pytest.mark.parametrize(("value", "methods"), [
    ("LDAP", ("LDAP",)),
    (["LDAP", "JWT"], ("LDAP", "JWT")),
    (["JWT", "PASSWORD", "OAUTH2"], ("JWT", "PASSWORD", "OAUTH2")),
])
def test_methods_are_one_name_or_an_ordered_list(value: Any, methods: tuple[str, ...]) -> None:
    """`type` is one method or a list of them, kept in the order given."""
    assert check_methods(W, value) == methods


@pytest.mark.parametrize(("value", "message"), [
    ("KERBEROS", "must be one of"),
    ([], "must be one of"),
    ("PASSWORD,JWT", "must be one of"),  # a list, not Trino's comma text
    (["JWT", "JWT"], "twice"),
    (["PASSWORD", "LDAP"], "both Trino's PASSWORD"),
    (["LDAP", "HEADER"], "must be one of"),
])
def test_methods_refused(value: Any, message: str) -> None:
    """Unknown methods, duplicates and two password authenticators are refused by name."""
    with pytest.raises(ConfigError, match=message):
        check_methods(W, value)


@pytest.mark.parametrize(("methods", "trino_type"), [
    (("LDAP",), "PASSWORD"),
    (("PASSWORD",), "PASSWORD"),
    (("LDAP", "JWT"), "PASSWORD,JWT"),
    (("JWT", "OAUTH2", "LDAP"), "JWT,OAUTH2,PASSWORD"),
])
def test_authentication_type_lists_trinos_names_in_order(methods: tuple[str, ...],
                                                        trino_type: str) -> None:
    """LDAP is Trino's PASSWORD authenticator; the order is the order Trino tries them in."""
    assert authentication_type(methods) == trino_type


def test_ldap_with_a_bind_pattern() -> None:
    """A bind pattern alone: Trino binds as the user; nothing secret is needed."""
    assert ldap_lines(parse_ldap(W, BIND), FILL) == (
        ("password-authenticator.name", "ldap"), ("ldap.url", "ldaps://ldap.corp:636"),
        ("ldap.user-bind-pattern", "uid=${USER},ou=people,dc=corp"))


def test_ldap_search_with_a_service_account_from_vault() -> None:
    """bind_dn searches the user with the group pattern ({cluster} filled); its password and
    the CA file are Vault references, never text."""
    raw = {**SEARCH, "truststore": "secret/trino/ldap#ca.pem", "cache_ttl": "5m"}
    lines = dict(ldap_lines(parse_ldap(W, raw), FILL))
    assert lines == {
        "password-authenticator.name": "ldap", "ldap.url": "ldaps://ldap.corp",
        "ldap.ssl.truststore.path": SecretFile("secret/trino/ldap#ca.pem",
                                               "/etc/trino/auth/ldap/ca.pem"),
        "ldap.user-base-dn": "ou=people,dc=corp", "ldap.bind-dn": "cn=svc,dc=corp",
        "ldap.group-auth-pattern": "(&(uid=${USER})(memberOf=cn=trino-sales,dc=corp))",
        "ldap.cache-ttl": "5m", "ldap.bind-password": SecretValue("secret/trino/ldap#bind")}


def test_several_bind_patterns_are_joined_with_colons() -> None:
    """A list of bind patterns becomes Trino's ':'-separated list, each tried in turn."""
    raw = {**BIND, "user_bind_pattern": ["uid=${USER},ou=a,dc=corp", "${USER}@corp.example"]}
    assert dict(ldap_lines(parse_ldap(W, raw), FILL))["ldap.user-bind-pattern"] == (
        "uid=${USER},ou=a,dc=corp:${USER}@corp.example")


def test_plain_ldap_only_when_the_option_says_so() -> None:
    """ldap:// with allow_insecure: true writes ldap.allow-insecure=true, which Trino needs."""
    ldap = parse_ldap(W, {**BIND, "url": "ldap://ldap.corp:389", "allow_insecure": True})
    assert ("ldap.allow-insecure", "true") in ldap_lines(ldap, FILL)


@pytest.mark.parametrize(("change", "message"), [
    ({"url": "ldap://ldap.corp"}, r"has no TLS.*allow_insecure: true"),
    ({"allow_insecure": True}, "is for ldap:// URLs"),
    ({"url": "ldap://x", "allow_insecure": True, "truststore": "s/p#k"}, "truststore is for"),
    ({"url": "ldap://x", "allow_insecure": "yes"}, "true or false"),
    ({"url": "https://ldap.corp"}, "must be ldaps://"),
    ({"url": "ldaps://ldap.corp/dc=corp"}, "must be ldaps://"),
    ({"url": "ldaps://a ldaps://b"}, "must be ldaps://"),
    ({"url": "ldaps://ldap.corp:70000"}, "must be ldaps://"),
    ({"user_bind_pattern": "uid=bob,dc=corp"}, r"must contain \$\{USER\}"),
    ({"user_bind_pattern": "uid=${USER}:x"}, "no ':'"),
    ({"user_bind_pattern": []}, "a pattern or a list"),
    ({"user_bind_pattern": "uid=${USER}\nldap.allow-insecure=true"}, "single line"),
    ({"user_bind_pattern": "uid=${USER},dc=a\\,b"}, "without backslashes"),
    ({"user_bind_pattern": "uid=${USER},ou={team}"}, "only"),
    ({"cache_ttl": "5 minutes"}, "duration"),
    ({"bind_password": "plaintext-password"}, "Vault reference"),
    ({"truststore": "-----BEGIN CERTIFICATE-----"}, "Vault reference"),
])
def test_ldap_refused(change: dict[str, Any], message: str) -> None:
    """Plain LDAP without saying so, a URL Trino would not take, a pattern without ${USER}, a
    property-file injection and a secret written as text are refused by field."""
    with pytest.raises(ConfigError, match=message):
        parse_ldap(W, {**BIND, **change})


@pytest.mark.parametrize(("drop", "add", "message"), [
    ("bind_password", {}, "bind_dn and bind_password go together"),
    ("group_auth_pattern", {}, "group_auth_pattern is required with bind_dn"),
    ("user_base_dn", {}, "user_base_dn is required with group_auth_pattern"),
    ("bind_dn", {"bind_password": None}, "either user_bind_pattern or bind_dn"),
])
def test_ldap_search_mode_needs_trinos_companions(drop: str, add: dict[str, Any],
                                                 message: str) -> None:
    """Trino's LdapAuthenticator refuses to start without these pairs; the settings say so."""
    raw = {k: v for k, v in {**SEARCH, **add}.items() if k != drop and v is not None}
    with pytest.raises(ConfigError, match=message):
        parse_ldap(W, raw)


def test_jwt_with_every_field() -> None:
    """The JWKS URL is the key file; its CA comes from Vault; the audience is per cluster."""
    jwt = parse_jwt(W, {"jwks_url": "https://idp.corp/.well-known/jwks.json",
                        "jwks_ca": "secret/trino/idp#ca.pem", "required_issuer": "https://idp",
                        "required_audience": "trino-{cluster}", "principal_field": "email"})
    assert jwt == Jwt("https://idp.corp/.well-known/jwks.json", "secret/trino/idp#ca.pem",
                      "https://idp", "trino-{cluster}", "email")
    assert dict(jwt_lines(jwt, FILL)) == {
        "http-server.authentication.jwt.key-file": "https://idp.corp/.well-known/jwks.json",
        "jwk.http-client.trust-store-path": SecretFile("secret/trino/idp#ca.pem",
                                                       "/etc/trino/auth/jwt/ca.pem"),
        "http-server.authentication.jwt.required-issuer": "https://idp",
        "http-server.authentication.jwt.required-audience": "trino-sales",
        "http-server.authentication.jwt.principal-field": "email"}


@pytest.mark.parametrize(("raw", "message"), [
    ({}, "jwks_url must be an https:// URL"),
    ({"jwks_url": "http://idp.corp/jwks"}, "jwks_url must be an https:// URL"),
    ({"jwks_url": "/etc/trino/jwt.pem"}, "jwks_url must be an https:// URL"),
    ({"jwks_url": "https://idp.corp/jwks\nx=y"}, "jwks_url must be an https:// URL"),
    ({"jwks_url": "https://idp.corp/jwks", "jwks_ca": "text"}, "Vault reference"),
    ({"jwks_url": "https://idp.corp/jwks", "principal_field": ""}, "non-empty"),
])
def test_jwt_refused(raw: dict[str, Any], message: str) -> None:
    """A JWKS over plain HTTP, a key file path, an injected line and a CA written as text."""
    with pytest.raises(ConfigError, match=message):
        parse_jwt(W, raw)

