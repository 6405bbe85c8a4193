"""A real Trino signing users in through LDAP, JWT, and both at once (issue 21 item 5).

The servers are real and on loopback: OpenLDAP's slapd (tests/ldap_server.py) with LDAPS and
plain LDAP, and a JWKS over HTTPS (tests/jwks.py) whose key signs the test's tokens. The chart
values start from what trinogen renders for the document with a PASSWORD option over pod HTTPS
(tests/test_trino_real_auth.py: keystore, shared secret; this module plays Vault and External
Secrets the same way). `with_methods` then writes what trinogen.trino.auth_methods produces for
the methods into those values: the authentication types, LDAP's password-authenticator.properties
(the chart's `coordinator.additionalConfigFiles`), JWT's lines (`server.coordinatorExtraConfig`),
CA files as Secret mounts and the bind password as `${ENV:...}` from an env Secret. The real
chart renders the pods, and the coordinator boots alone from its ConfigMaps and Secrets.

- LDAP alone (a bind pattern and a group filter, over plain ldap:// with allow_insecure): alice
  signs in; a wrong password, bob (not in the group) and a JWT get 401.
- JWT alone: a token signed by the JWKS key for this cluster's audience signs in; a token signed by
  another key, for another audience or expired gets 401, as does a password.
- PASSWORD,JWT (LDAP by search with a service account whose password is in Vault, over LDAPS with
  the CA from Vault): alice signs in with her LDAP password and with a token; a wrong password or
  a forged token gets 401; no secret value is in the chart's objects or Trino's log.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import chart_pods, jwks
from tests import ldap_server as ldap
from tests import test_trino_real_auth as base
from tests.conftest import needs
from tests.marks import trino
from trinogen.secrets import settings_use
from trinogen.trino import auth_methods as am

pytestmark = [*base.pytestmark,
              needs(ldap.available(), "slapd is not installed (apt-get install slapd ldap-utils; "
                                      ".ci/run does it)")]

CID, OWNER = base.CID, "qa_team"
ISSUER, AUDIENCE = "https://idp.test", "trino-{cluster}"
ALICE, BOB = ldap.USERS
VAULT_LDAP = f"secret/trino/{CID}/ldap"


@dataclass
class Methods:
    """One boot's methods as an option names them (None: not used)."""

    types: tuple[str, ...]
    ldap: Mapping[str, Any] | None = None
    jwt: Mapping[str, Any] | None = None


@dataclass
class Signed:
    booted: base.Booted
    key: jwks.SigningKey
    other_key: jwks.SigningKey


def _props(lines: am.Lines, env: dict[str, str], mounts: dict[str, tuple[str, str]]) -> str:
    """Properties text; a SecretValue becomes ${ENV:VAR}, a SecretFile its mounted path."""
    out = []
    for key, value in lines:
        if isinstance(value, am.SecretValue):
            use = settings_use(value.ref, CID, OWNER)
            env[use.env] = value.ref
            value = f"${{ENV:{use.env}}}"
        elif isinstance(value, am.SecretFile):
            mounts[value.path] = (value.ref, value.path.rsplit("/", 1)[1])
            value = value.path
        out.append(f"{key}={value}")
    return "\n".join(out) + "\n"


def with_methods(values: dict[str, Any], methods: Methods) -> tuple[
        dict[str, Any], dict[str, str], dict[str, tuple[str, str]]]:
    """The values with the methods written in (what the option kind's fragment will write), the
    env Secret's entries (variable -> Vault ref) and the Secret files (path -> (ref, key))."""
    fill = am.fill_for(CID, OWNER)
    env: dict[str, str] = {}
    mounts: dict[str, tuple[str, str]] = {}
    values["server"]["config"]["authenticationType"] = am.authentication_type(methods.types)
    values.pop("auth", None)  # the PASSWORD (file) option's password.db and group.db
    if methods.ldap is not None:
        lines = am.ldap_lines(am.parse_ldap("test", methods.ldap), fill)
        values["coordinator"]["additionalConfigFiles"] = {
            "password-authenticator.properties": _props(lines, env, mounts)}
    if methods.jwt is not None:
        lines = am.jwt_lines(am.parse_jwt("test", methods.jwt), fill)
        extra = values["server"].get("coordinatorExtraConfig", "")
        values["server"]["coordinatorExtraConfig"] = extra + "\n" + _props(lines, env, mounts)
    for path in mounts:
        name = path.rsplit("/", 2)[1]  # ldap | jwt
        values["coordinator"]["secretMounts"].append(
            {"name": f"auth-{name}", "secretName": f"{CID}-trino-{name}-ca",
             "path": path.rsplit("/", 1)[0]})
    if env:
        values["envFrom"].append({"secretRef": {"name": f"{CID}-trino-auth-methods"}})
    return values, env, mounts


def boot(methods: Methods, root: Path, vault_extra: Mapping[tuple[str, str], str]) -> base.Booted:
    """The document rendered by trinogen with the PASSWORD option, the methods written into its
    values, rendered by the chart and booted (coordinator alone)."""
    vault = base.make_vault(root)
    vault.values.update(vault_extra)
    files, values_text, written = _trinogen(vault)
    values, env, mounts = with_methods(yaml.safe_load(values_text), methods)
    pods = chart_pods.render(yaml.safe_dump(values), CID)
    secrets = base.eso_secrets(files, vault)
    split = [ref.partition("#")[::2] for ref in env.values()]
    secrets[f"{CID}-trino-auth-methods"] = {
        var: vault.values[(p, k)] for var, (p, k) in zip(env, split, strict=True)}
    for path, (ref, key) in mounts.items():
        p, _, k = ref.partition("#")
        secrets[f"{CID}-trino-{path.rsplit('/', 2)[1]}-ca"] = {key: vault.values[(p, k)]}
    written += [text for p in pods.values() for data in p.config_maps.values()
                for text in data.values()]
    role_files = {role: base.pod_files(p, secrets) for role, p in pods.items()}
    return base.start(role_files, root, vault, written, coordinator_alone=True)


def _trinogen(vault: base.Vault) -> tuple[dict[str, bytes], str, list[str]]:
    from tests.test_auth import secure_settings
    from trinogen.model import Cluster, RawDocument, classify
    from trinogen.render import Renderer

    settings = secure_settings({"test-password": dict(base.OPTION)})
    cluster = classify(RawDocument('"trino-real-secure"', base.DOC), settings)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, vault.resolved())
    values = files[f"{settings.output.clusters_dir}/{CID}/values.yaml"].decode()
    return files, values, [b.decode() for b in files.values()]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[
        ldap.LdapServer, jwks.JwksServer, jwks.SigningKey, jwks.SigningKey, Path]]:
    """slapd and the JWKS server, both with one certificate the test's CA file holds."""
    root = tmp_path_factory.mktemp("auth-methods-servers")
    cert = ldap.certificate(root)
    key = jwks.SigningKey.generate(root / "jwt", "k1")
    other = jwks.SigningKey.generate(root / "jwt-other", "k1")  # same kid, different key
    with ldap.running(root / "ldap", cert=cert) as server, \
            jwks.serving([key], *cert) as keys:
        yield server, keys, key, other, cert[0]
    shutil.rmtree(root, ignore_errors=True)


def _booted(tmp_path_factory: pytest.TempPathFactory, name: str, methods: Methods,
            ca: Path, extra: Mapping[tuple[str, str], str]) -> Iterator[base.Booted]:
    root = tmp_path_factory.mktemp(f"trino-auth-{name}")
    b = boot(methods, root, {**extra, (VAULT_LDAP, "ca.pem"): ca.read_text()})
    try:
        yield b
    finally:
        b.cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


def _ldap_bind(server: ldap.LdapServer) -> dict[str, Any]:
    return {"url": server.plain_url, "allow_insecure": True,
            "user_bind_pattern": f"uid=${{USER}},{ldap.PEOPLE}", "user_base_dn": ldap.PEOPLE,
            "group_auth_pattern": "(&(uid=${USER})(departmentNumber=analysts))"}


def _ldap_search(server: ldap.LdapServer) -> dict[str, Any]:
    return {"url": server.url, "truststore": f"{VAULT_LDAP}#ca.pem",
            "bind_dn": ldap.SERVICE_DN, "bind_password": f"{VAULT_LDAP}#bind-password",
            "user_base_dn": ldap.PEOPLE,
            "group_auth_pattern": "(&(uid=${USER})(departmentNumber=analysts))"}


def _jwt(keys: jwks.JwksServer) -> dict[str, Any]:
    return {"jwks_url": keys.url, "jwks_ca": f"{VAULT_LDAP}#ca.pem", "required_issuer": ISSUER,
            "required_audience": AUDIENCE}


@pytest.fixture(scope="module")
def ldap_only(servers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """LDAP alone: a bind pattern, a group filter, plain ldap:// with allow_insecure."""
    server, _, key, other, ca = servers
    methods = Methods(("LDAP",), ldap=_ldap_bind(server))
    for b in _booted(tmp_path_factory, "ldap", methods, ca, {}):
        yield Signed(b, key, other)


@pytest.fixture(scope="module")
def jwt_only(servers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """JWT alone, its keys from the JWKS over HTTPS (CA from Vault)."""
    _, keys, key, other, ca = servers
    for b in _booted(tmp_path_factory, "jwt", Methods(("JWT",), jwt=_jwt(keys)), ca, {}):
        yield Signed(b, key, other)


@pytest.fixture(scope="module")
def both(servers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """PASSWORD (LDAP by search, LDAPS) and JWT at once."""
    server, keys, key, other, ca = servers
    methods = Methods(("LDAP", "JWT"), ldap=_ldap_search(server), jwt=_jwt(keys))
    extra = {(VAULT_LDAP, "bind-password"): ldap.SERVICE_PASSWORD}
    for b in _booted(tmp_path_factory, "both", methods, ca, extra):
        yield Signed(b, key, other)


def _query(b: base.Booted, user: str, auth: Any) -> list[list[Any]]:
    import requests

    session = requests.Session()
    session.trust_env = False
    session.verify = str(b.vault.ca_file)
    conn = trino.dbapi.connect(host="localhost", port=b.https_port, user=user,
                               http_scheme="https", auth=auth, http_session=session,
                               request_timeout=120)
    try:
        cur = conn.cursor()
        cur.execute("SELECT current_user")
        return list(cur.fetchall())
    finally:
        conn.close()


def _password(user: ldap.User, password: str | None = None) -> Any:
    return trino.auth.BasicAuthentication(user.uid, password or user.password)


def _token(s: Signed, *, key: jwks.SigningKey | None = None, audience: str | None = None,
           ttl: int = 600) -> Any:
    aud = audience or AUDIENCE.format(cluster=CID)
    token = (key or s.key).token(jwks.claims(ALICE.uid, ISSUER, aud, ttl=ttl))
    return trino.auth.JWTAuthentication(token)


def _refused(b: base.Booted, auth: Any) -> None:
    with pytest.raises(trino.exceptions.HttpError, match="401"):
        _query(b, ALICE.uid, auth)


def test_ldap_signs_in_a_member_of_the_group(ldap_only: Signed) -> None:
    """alice, in the group the filter names, signs in with her LDAP password."""
    assert _query(ldap_only.booted, ALICE.uid, _password(ALICE)) == [[ALICE.uid]]


def test_ldap_refuses_a_wrong_password_another_group_and_a_token(ldap_only: Signed) -> None:
    """A wrong password, bob (right password, other group) and a valid JWT all get 401."""
    _refused(ldap_only.booted, _password(ALICE, "wrong password"))
    with pytest.raises(trino.exceptions.HttpError, match="401"):
        _query(ldap_only.booted, BOB.uid, _password(BOB))
    _refused(ldap_only.booted, _token(ldap_only))


def test_jwt_signs_in_with_a_token_for_this_cluster(jwt_only: Signed) -> None:
    """A token signed by the JWKS key, for issuer and audience trino-<cluster>, signs in."""
    assert _query(jwt_only.booted, ALICE.uid, _token(jwt_only)) == [[ALICE.uid]]


def test_jwt_refuses_forged_foreign_and_expired_tokens(jwt_only: Signed) -> None:
    """Another key, another cluster's audience, an expired token and a password get 401."""
    _refused(jwt_only.booted, _token(jwt_only, key=jwt_only.other_key))
    _refused(jwt_only.booted, _token(jwt_only, audience="trino-other"))
    _refused(jwt_only.booted, _token(jwt_only, ttl=-600))
    _refused(jwt_only.booted, _password(ALICE))


def test_both_methods_sign_in_the_same_user(both: Signed) -> None:
    """With PASSWORD,JWT alice signs in with her LDAP password and with a token."""
    assert _query(both.booted, ALICE.uid, _password(ALICE)) == [[ALICE.uid]]
    assert _query(both.booted, ALICE.uid, _token(both)) == [[ALICE.uid]]


def test_both_methods_refuse_a_wrong_password_and_a_forged_token(both: Signed) -> None:
    """Each method still refuses what it should: 401 for either mistake, and for bob."""
    _refused(both.booted, _password(ALICE, "wrong password"))
    _refused(both.booted, _token(both, key=both.other_key))
    with pytest.raises(trino.exceptions.HttpError, match="401"):
        _query(both.booted, BOB.uid, _password(BOB))


def test_both_methods_write_and_log_no_secret(both: Signed) -> None:
    """The bind password and the other Vault values are in no chart object or Trino log."""
    logs = [node.log() for node in both.booted.cluster.nodes]
    assert all("======== SERVER STARTED ========" in log for log in logs)
    for text in [*both.booted.vault.secret_texts(), ldap.SERVICE_PASSWORD, ALICE.password]:
        for needle in {text, text.strip()}:
            assert not any(needle in w for w in both.booted.written)
            assert not any(needle in log for log in logs)
