"""A real Trino signing users in through LDAP, JWT, and both at once (issue 21 item 5).

The servers are real and on loopback: OpenLDAP's slapd (tests/ldap_server.py) with LDAPS and
plain LDAP, and a JWKS over HTTPS (tests/jwks.py) whose key signs the test's tokens. A document
picks an authentication option with the methods; trinogen renders it (settings and document in,
values.yaml and ExternalSecrets out), this module plays Vault and External Secrets as
tests/test_trino_real_auth.py does (keystore, shared secret, the LDAP bind password and the CA
files), the real chart renders the pods, and the coordinator boots alone from its ConfigMaps and
Secrets.

- LDAP alone (a bind pattern and a group filter, over plain ldap:// with allow_insecure): alice
  signs in; a wrong password, bob (not in the group) and a JWT get 401.
- JWT alone: a token signed by the JWKS key for this cluster's audience signs in; a token signed by
  another key, for another audience or expired gets 401, as does a password.
- PASSWORD,JWT (LDAP by search with a service account whose password is in Vault, over LDAPS with
  the CA from Vault): alice signs in with her LDAP password and with a token; a wrong password or
  a forged token gets 401; no secret value is in trinogen's files, the chart's objects or Trino's
  log.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import chart_pods, jwks
from tests import ldap_server as ldap
from tests import test_trino_real_auth as base
from tests.conftest import needs
from tests.marks import trino
from tests.test_auth import secure_settings
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer

pytestmark = [*base.pytestmark,
              needs(ldap.available(), "slapd is not installed (apt-get install slapd ldap-utils; "
                                      ".ci/run does it)")]

CID = base.CID
ISSUER, AUDIENCE = "https://idp.test", "trino-{cluster}"
ALICE, BOB = ldap.USERS
VAULT_PATTERN = "secret/trino/{cluster}/ldap"  # as the settings write it
VAULT_LDAP = VAULT_PATTERN.format(cluster=CID)


@dataclass
class Signed:
    booted: base.Booted
    key: jwks.SigningKey
    other_key: jwks.SigningKey


def boot(option: Mapping[str, Any], root: Path,
         vault_extra: Mapping[tuple[str, str], str]) -> base.Booted:
    """The document rendered by trinogen with `option` (Vault values known), the pods rendered
    by the chart, their Secrets filled as ESO would, and the coordinator booted alone."""
    vault = base.make_vault(root)
    vault.values.update(vault_extra)
    settings = secure_settings({"test-password": {
        "tls": "pod", "shared_secret": base.OPTION["shared_secret"],
        "keystore": base.OPTION["keystore"],
        "keystore_password": base.OPTION["keystore_password"], **option}})
    cluster = classify(RawDocument('"trino-real-secure"', base.DOC), settings)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, vault.resolved())
    values = files[f"{settings.output.clusters_dir}/{CID}/values.yaml"].decode()
    pods = chart_pods.render(values, CID)
    written = [b.decode() for b in files.values()] + [
        text for p in pods.values() for data in p.config_maps.values() for text in data.values()]
    secrets = base.eso_secrets(files, vault)
    role_files = {role: base.pod_files(p, secrets) for role, p in pods.items()}
    return base.start(role_files, root, vault, written, coordinator_alone=True)


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


def _booted(tmp_path_factory: pytest.TempPathFactory, name: str, option: Mapping[str, Any],
            ca: Path, extra: Mapping[tuple[str, str], str]) -> Iterator[base.Booted]:
    root = tmp_path_factory.mktemp(f"trino-auth-{name}")
    b = boot(option, root, {**extra, (VAULT_LDAP, "ca.pem"): ca.read_text()})
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
    return {"url": server.url, "truststore": f"{VAULT_PATTERN}#ca.pem",
            "bind_dn": ldap.SERVICE_DN, "bind_password": f"{VAULT_PATTERN}#bind-password",
            "user_base_dn": ldap.PEOPLE,
            "group_auth_pattern": "(&(uid=${USER})(departmentNumber=analysts))"}


def _jwt(keys: jwks.JwksServer) -> dict[str, Any]:
    return {"jwks_url": keys.url, "jwks_ca": f"{VAULT_PATTERN}#ca.pem", "required_issuer": ISSUER,
            "required_audience": AUDIENCE}


@pytest.fixture(scope="module")
def ldap_only(servers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """LDAP alone: a bind pattern, a group filter, plain ldap:// with allow_insecure."""
    server, _, key, other, ca = servers
    option = {"type": "LDAP", "ldap": _ldap_bind(server)}
    for b in _booted(tmp_path_factory, "ldap", option, ca, {}):
        yield Signed(b, key, other)


@pytest.fixture(scope="module")
def jwt_only(servers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """JWT alone, its keys from the JWKS over HTTPS (CA from Vault)."""
    _, keys, key, other, ca = servers
    option = {"type": "JWT", "jwt": _jwt(keys)}
    for b in _booted(tmp_path_factory, "jwt", option, ca, {}):
        yield Signed(b, key, other)


@pytest.fixture(scope="module")
def both(servers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """PASSWORD (LDAP by search, LDAPS) and JWT at once."""
    server, keys, key, other, ca = servers
    option = {"type": ["LDAP", "JWT"], "ldap": _ldap_search(server), "jwt": _jwt(keys)}
    extra = {(VAULT_LDAP, "bind-password"): ldap.SERVICE_PASSWORD}
    for b in _booted(tmp_path_factory, "both", option, ca, extra):
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
