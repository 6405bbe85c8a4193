"""The authentication option with LDAP, JWT and several methods: settings, document, chart.

The option's new shape (docs/options.md, "Authentication and TLS"): `type` one method or a
list; LDAP's fields under `ldap:`, JWT's under `jwt:`. What reaches the pods is read back from
the real chart's objects with the independent java.util.Properties reader (tests/javaprops.py).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml

from tests import chart_pods
from tests.conftest import ROOT
from tests.marks import CHART
from tests.test_auth import secure_settings
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.kinds.authentication.options import parse

CID, OWNER = "sales", "sales_team"
COMMON = {"tls": "pod", "shared_secret": "secret/trino/{cluster}/auth#shared-secret",
          "keystore": "secret/trino/{cluster}/tls#keystore.pem"}
LDAP = {"url": "ldaps://ldap.corp:636", "truststore": "secret/trino/ldap#ca.pem",
        "bind_dn": "cn=trino,dc=corp", "bind_password": "secret/trino/{cluster}/ldap#bind-password",
        "user_base_dn": "ou=people,dc=corp",
        "group_auth_pattern": "(&(uid=${USER})(memberOf=cn=trino-{cluster},dc=corp))"}
JWT = {"jwks_url": "https://idp.corp/jwks.json", "required_audience": "trino-{cluster}",
       "jwks_ca": "secret/trino/idp#ca.pem"}
OAUTH2 = {"issuer": "https://idp.corp", "client_id": "trino-{cluster}",
          "client_secret": "secret/trino/{cluster}/oidc#client-secret"}
OPTIONS = {
    "corp-ldap": {**COMMON, "type": "LDAP", "ldap": LDAP},
    "corp-jwt": {**COMMON, "type": "JWT", "jwt": JWT},
    "corp-both": {**COMMON, "type": ["LDAP", "JWT"], "ldap": LDAP, "jwt": JWT},
    "corp-sso-jwt": {**COMMON, "type": ["OAUTH2", "JWT"], "jwt": JWT, **OAUTH2},
    # plain LDAP, allowed explicitly; a cache time: the section's non-text fields
    "lab-ldap": {**COMMON, "type": "LDAP", "ldap": {
        **{k: v for k, v in LDAP.items() if k != "truststore"}, "url": "ldap://ldap.lab:389",
        "allow_insecure": True, "cache_ttl": "1m"}},
}


@pytest.mark.parametrize(("name", "trino_type", "methods"), [
    ("corp-ldap", "PASSWORD", ("LDAP",)),
    ("corp-jwt", "JWT", ("JWT",)),
    ("corp-both", "PASSWORD,JWT", ("LDAP", "JWT")),
    ("corp-sso-jwt", "OAUTH2,JWT", ("OAUTH2", "JWT")),
    ("lab-ldap", "PASSWORD", ("LDAP",)),
])
def test_an_option_names_its_methods_in_order(name: str, trino_type: str,
                                              methods: tuple[str, ...]) -> None:
    """`type` gives Trino's authentication type list (LDAP is its PASSWORD) in the given order."""
    option = parse(f"authentication.{name}", OPTIONS[name])
    assert (option.type, option.methods) == (trino_type, methods)
    assert (option.ldap is not None, option.jwt is not None) == (
        "LDAP" in methods, "JWT" in methods)


def test_an_ldap_section_with_allow_insecure_loads() -> None:
    """A plain ldap:// section with `allow_insecure: true` (a bool among its texts, as
    docs/options.md allows it) loads, its flag kept."""
    ldap = {"url": "ldap://ldap.corp:389", "allow_insecure": True,
            "user_bind_pattern": "uid=${USER},ou=people,dc=corp"}
    option = parse("authentication.plain-ldap", {**COMMON, "type": "LDAP", "ldap": ldap})
    assert option.ldap is not None and option.ldap.allow_insecure is True


@pytest.mark.parametrize(("raw", "message"), [
    ({**COMMON, "type": "LDAP"}, r"x\.ldap is required for type LDAP"),
    ({**COMMON, "type": "LDAP", "ldap": "ldaps://x"}, r"x\.ldap must be a mapping of LDAP's"),
    ({**COMMON, "type": "JWT", "jwt": JWT, "ldap": LDAP}, r"x\.ldap: unknown field for type JWT"),
    ({**COMMON, "type": "JWT", "jwt": {**JWT, "issuer": "x"}}, r"x\.jwt\.issuer: unknown field"),
    ({**COMMON, "type": "LDAP", "ldap": {**LDAP, "url": "ldap://x"}}, r"x\.ldap\.url .* no TLS"),
    ({**COMMON, "type": "JWT", "jwt": JWT, "principal_field": "email"},
     r"x\.principal_field: unknown field for type JWT"),  # OAUTH2's, not JWT's
    ({**COMMON, "type": "PASSWORD,JWT", "jwt": JWT}, r"x\.type must be one of"),
    ({**COMMON, "type": ["PASSWORD", "LDAP"], "ldap": LDAP,
      "password_file": "s/p#k"}, "pick one of them"),
    ({**{k: v for k, v in COMMON.items() if k != "tls"}, "type": "JWT", "jwt": JWT},
     r"x\.tls must be"),  # the TLS rule holds for every method
    ({**COMMON, "type": "LDAP", "tls": "ingress", "ldap": LDAP}, "belong to tls: pod"),
])
def test_a_wrong_option_is_refused_by_field(raw: dict[str, Any], message: str) -> None:
    """A method without its section, a section of a method not listed, an unknown field, plain
    LDAP, Trino's comma text, two password methods and a missing TLS choice are refused."""
    with pytest.raises(ConfigError, match=message):
        parse("x", raw)


def _classify(option: str, **body: Any) -> Cluster | Failed:
    doc = {"_id": f"test-{CID}", "clusterId": CID, "owner": OWNER, "enabled": True,
           "authentication": option,
           "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}]}
    doc.update(copy.deepcopy(body))
    out = classify(RawDocument(f'"{doc["_id"]}"', doc), secure_settings(OPTIONS))
    assert isinstance(out, (Cluster, Failed))
    return out


@pytest.mark.parametrize(("body", "field", "needle"), [
    ({"properties": {"jwk": {"http-client.trust-store-path": "/tmp/mine.pem"}}},
     'properties.jwk["http-client.trust-store-path"]', "set by the authentication option"),
    ({"properties": {"http-server": {"authentication.jwt.required-audience": "any"}}},
     'properties.http-server["authentication.jwt.required-audience"]', "set by the authentication"),
    # inside the document's secrets.scope (secret/trino/<cluster>), and still refused
    ({"properties": {"query": {"x": f"{{{{ vault:secret/trino/{CID}/ldap#bind-password }}}}"}}},
     "properties.query.x", "names a secret of the authentication option"),
])
def test_a_document_cannot_change_or_copy_what_the_option_owns(
        body: dict[str, Any], field: str, needle: str) -> None:
    """The JWKS trust store, the JWT checks and the LDAP bind password are the option's."""
    out = _classify("corp-both", **body)
    assert isinstance(out, Failed)
    assert any(p.field == field and needle in p.message for p in out.problems), out.problems


def _pods(option: str) -> tuple[dict[str, chart_pods.RolePod], dict[str, Any]]:
    cluster = _classify(option)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(secure_settings(OPTIONS)).render_cluster(cluster, {})
    pods = chart_pods.render(files[f"trino-clusters/{CID}/values.yaml"].decode(), CID)
    return pods, chart_pods.external_secrets(files)


def _env_ref(es: dict[str, Any], value: str) -> tuple[str, str]:
    """The (Vault path, key) behind a `${ENV:VAR}` value, from the env ExternalSecret."""
    var = value.removeprefix("${ENV:").removesuffix("}")
    (entry,) = [d for d in es[f"{CID}-trino-secrets"]["spec"]["data"] if d["secretKey"] == var]
    return entry["remoteRef"]["key"], entry["remoteRef"]["property"]


@CHART[0]
@CHART[1]
def test_ldap_and_jwt_reach_the_coordinator_through_the_chart() -> None:
    """corp-both: the chart writes LDAP's password-authenticator.properties instead of its file
    authenticator, JWT's lines in config.properties, mounts both CA Secrets where the properties
    point, and the bind password arrives from Vault through the env Secret; workers get none."""
    pods, es = _pods("corp-both")
    coord, worker = pods["coordinator"], pods["worker"]
    config = coord.config()
    assert config["http-server.authentication.type"] == "PASSWORD,JWT"
    assert config["http-server.authentication.jwt.key-file"] == JWT["jwks_url"]
    assert config["http-server.authentication.jwt.required-audience"] == f"trino-{CID}"
    ldap = chart_pods.javaprops.loads(coord.file("password-authenticator.properties"))
    assert _env_ref(es, ldap.pop("ldap.bind-password")) == (f"secret/trino/{CID}/ldap",
                                                                "bind-password")
    assert ldap == {
        "password-authenticator.name": "ldap", "ldap.url": LDAP["url"],
        "ldap.ssl.truststore.path": "/etc/trino/auth/ldap/ca.pem",
        "ldap.user-base-dn": LDAP["user_base_dn"], "ldap.bind-dn": LDAP["bind_dn"],
        "ldap.group-auth-pattern": f"(&(uid=${{USER}})(memberOf=cn=trino-{CID},dc=corp))"}
    mounts = coord.secret_mounts()
    for method, ref, prop in (("ldap", "ldap.ssl.truststore.path", ldap),
                              ("jwt", "jwk.http-client.trust-store-path", config)):
        directory, _, key = prop[ref].rpartition("/")
        assert mounts[directory] == (f"{CID}-trino-{method}-ca", None)
        source = {"ldap": LDAP["truststore"], "jwt": JWT["jwks_ca"]}[method].split("#")
        assert es[f"{CID}-trino-{method}-ca"]["spec"]["data"] == [
            {"secretKey": key, "remoteRef": {"key": source[0], "property": source[1]}}]
    assert "/etc/trino/auth/password" not in mounts  # no password.db: LDAP replaces the file
    assert "http-server.authentication.type" not in worker.config()
    assert worker.secret_mounts() == {}


@CHART[0]
@CHART[1]
def test_jwt_alone_writes_no_password_authenticator() -> None:
    """corp-jwt: JWT only; the chart writes no password-authenticator.properties."""
    pods, _ = _pods("corp-jwt")
    coord = pods["coordinator"]
    assert coord.config()["http-server.authentication.type"] == "JWT"
    with pytest.raises(KeyError):
        coord.file("password-authenticator.properties")


def test_the_examples_in_docs_options_md_are_valid_options() -> None:
    """Every authentication example in docs/options.md loads, with the methods it says."""
    text = (ROOT / "docs" / "options.md").read_text()
    section = text[text.index("### Authentication and TLS"):text.index("### Access control")]
    loaded = {name: parse(name, raw).type
              for block in re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
              for name, raw in yaml.safe_load(block)["authentication"].items()}
    assert loaded == {"corp-password": "PASSWORD", "corp-ldap": "PASSWORD",
                      "corp-ldap-and-jwt": "PASSWORD,JWT"}
