"""Authentication and TLS chosen by name (issue 13, item 2): the settings' options, the document's
pick, and what arrives in the chart's objects.

The options come from config/examples-secure.yaml as shipped; expectations are read from that
file (Vault paths formatted here with the cluster id) and from the chart's templates as the
README describes them (password.db at /etc/trino/auth/password, group.db at
/etc/trino/auth/group), never from trinogen's output.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import chart_pods, k8s_schema
from tests.conftest import CHART_DIR, ROOT, SCHEMAS, demo_settings, needs
from trinogen.desired import Secrets, secret_problems
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData
from trinogen.settings import Settings, load_settings
from trinogen.kinds.authentication.options import AuthOption, parse

EXAMPLE = ROOT / "config" / "examples-secure.yaml"
OPTIONS = yaml.safe_load(EXAMPLE.read_text())["authentication"]
CID = "finance"
OWNER = "fin_team"
needs_helm = needs(chart_pods.helm_python is not None, "helm-python-sdk is not installed")
needs_chart = needs((CHART_DIR / "Chart.yaml").is_file(), f"no Trino chart at {CHART_DIR}")


def secure_settings(options: dict[str, Any] | None = None) -> Settings:
    """The demo settings with the example file's authentication options (parsed as loaded)."""
    base = demo_settings()
    parsed = {name: parse(f"test: authentication.{name}", raw)
              for name, raw in (options or OPTIONS).items()}
    return dataclasses.replace(base, named={**base.named, "authentication": parsed})


def _doc(**body: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"_id": f"test-{CID}", "clusterId": CID, "owner": OWNER,
                           "enabled": True,
                           "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}]}
    doc.update(copy.deepcopy(body))
    return doc


def _classify(doc: dict[str, Any], settings: Settings | None = None) -> Cluster | Failed:
    out = classify(RawDocument(f'"{doc["_id"]}"', doc), settings or secure_settings())
    assert isinstance(out, (Cluster, Failed))
    return out


def _cluster(option: str, **body: Any) -> Cluster:
    out = _classify(_doc(authentication=option, **body))
    assert isinstance(out, Cluster), out
    return out


def _ref(option: str, field: str) -> tuple[str, str]:
    """(Vault path, key) of one option field for CID, formatted from the example file."""
    where, _, key = OPTIONS[option][field].format(cluster=CID, owner=OWNER).partition("#")
    return where, key


def _env(option: str, field: str) -> str:
    """The variable README's Secrets section names a `{{ vault:<ref> }}` by."""
    ref = OPTIONS[option][field].format(cluster=CID, owner=OWNER)
    slug = re.sub(r"[^A-Za-z0-9]+", "_", ref).strip("_").upper()[:80]
    return f"TRINO_VAULT_{slug}_{hashlib.sha256(ref.encode()).hexdigest()[:8].upper()}"


# --- the settings' options -------------------------------------------------------------------


def test_the_example_file_loads_with_both_options() -> None:
    """config/examples-secure.yaml is a valid settings file offering its two options."""
    settings = load_settings(EXAMPLE, environ={})
    options = settings.options("authentication")
    assert sorted(options) == ["corp-password", "corp-sso"]
    assert options["corp-password"] == AuthOption(
        type="PASSWORD", tls="pod", shared_secret=OPTIONS["corp-password"]["shared_secret"],
        keystore=OPTIONS["corp-password"]["keystore"],
        keystore_password=OPTIONS["corp-password"]["keystore_password"], https_port=8443,
        password_file=OPTIONS["corp-password"]["password_file"],
        group_file=OPTIONS["corp-password"]["group_file"], refresh_period="30s",
        methods=("PASSWORD",))


PASSWORD = {"type": "PASSWORD", "tls": "ingress", "password_file": "secret/t/{cluster}#pw",
            "shared_secret": "secret/t/{cluster}#shared"}


@pytest.mark.parametrize(("change", "needle"), [
    ({"type": "KERBEROS"}, "type must be one of PASSWORD, LDAP, OAUTH2, JWT"),
    ({"tls": None}, "over plain HTTP Trino lets anyone in"),
    ({"tls": "none"}, "tls must be \"pod\""),
    ({"shared_secret": None}, "shared_secret is required"),
    ({"password_file": None}, "password_file is required"),
    ({"password_file": "trino/x"}, "must be a Vault reference"),
    ({"password_file": "secret/{team}/x#k"}, "only {cluster} and {owner}"),
    ({"password_file": "secret/a b#k"}, "must be a Vault reference"),
    ({"tls": "pod"}, "keystore is required"),
    ({"keystore": "secret/t/ks#pem"}, "belong to tls: pod"),
    ({"https_port": 9443}, "belong to tls: pod"),
    ({"tls": "pod", "keystore": "secret/t/ks#pem", "https_port": 8080}, "chart's HTTP port"),
    ({"tls": "pod", "keystore": "secret/t/ks#pem", "https_port": "8443"}, "port number"),
    ({"refresh_period": "soon"}, "refresh_period must be a Trino duration"),
    ({"issuer": "https://sso"}, "x.issuer: unknown field for type PASSWORD"),
])
def test_a_wrong_password_option_is_a_configuration_error(change: dict[str, Any],
                                                          needle: str) -> None:
    """Each malformed PASSWORD option fails loading, naming the field and what to write."""
    raw = {k: v for k, v in {**PASSWORD, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=re.escape(needle)):
        parse("s.yaml: authentication.x", raw)


OAUTH = {"type": "OAUTH2", "tls": "ingress", "issuer": "https://sso.example.com",
         "client_id": "trino-{cluster}", "client_secret": "secret/t/{cluster}#cs",
         "shared_secret": "secret/t/{cluster}#shared"}


@pytest.mark.parametrize(("change", "needle"), [
    ({"issuer": "http://sso.example.com"}, "issuer must be an https:// URL"),
    ({"issuer": None}, "issuer must be a non-empty"),
    ({"client_id": "trino-{tenant}"}, "only {cluster} and {owner}"),
    ({"client_secret": None}, "client_secret is required"),
    ({"client_secret": "plain-text-secret"}, "must be a Vault reference"),
    ({"scopes": "openid"}, "scopes must be a list"),
    ({"scopes": ["openid,profile"]}, "scopes must be a list"),
    ({"password_file": "secret/t/x#pw"}, "x.password_file: unknown field for type OAUTH2"),
])
def test_a_wrong_oauth2_option_is_a_configuration_error(change: dict[str, Any],
                                                        needle: str) -> None:
    """Each malformed OAUTH2 option fails loading, naming the field."""
    raw = {k: v for k, v in {**OAUTH, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=re.escape(needle)):
        parse("s.yaml: authentication.x", raw)


def test_a_settings_file_with_a_bad_option_names_it(tmp_path: Path) -> None:
    """Loading reports <file>: authentication.<name>.<field>."""
    path = tmp_path / "s.yaml"
    path.write_text("authentication:\n  weak:\n    type: PASSWORD\n    tls: none\n")
    with pytest.raises(ConfigError, match=r"s\.yaml: authentication\.weak\.tls must be"):
        load_settings(path, environ={})


# --- a document's pick -----------------------------------------------------------------------


@pytest.mark.parametrize(("body", "field", "needle"), [
    ({"authentication": "corp-pasword"}, "authentication", "did you mean corp-password"),
    ({"authentication": 3}, "authentication", "must be a string"),
    ({"authentication": "corp-password",
      "properties": {"http-server": {"authentication.allow-insecure-over-http": "true"}}},
     'properties.http-server["authentication.allow-insecure-over-http"]',
     "set by the authentication option 'corp-password'"),
    ({"authentication": "corp-sso",
      "properties": {"internal-communication": {"shared-secret": "{{ MINE }}"}}},
     "properties.internal-communication.shared-secret", "set by the authentication option"),
    ({"authentication": "corp-sso",
      "clusterConfig": {"coordinator": {"properties": {
          "http-server": {"process-forwarded": "false"}}}}},
     "clusterConfig.coordinator.properties", "http-server.process-forwarded is set by"),
    ({"authentication": "corp-password",
      "properties": {"http-server": {"http.enabled": "false"}}},
     'properties.http-server["http.enabled"]', "set by the authentication option"),
    # the platform's TLS (http-server.https.*): its keystore key, its ciphers (issue 19)
    ({"authentication": "corp-password",
      "properties": {"http-server": {"https.keystore.key": "{{ MINE }}"}}},
     'properties.http-server["https.keystore.key"]', "set by the authentication option"),
    ({"authentication": "corp-password",
      "properties": {"http-server.https.included-cipher": "TLS_RSA_WITH_NULL_SHA256"}},
     'properties["http-server.https.included-cipher"]', "set by the authentication option"),
    ({"authentication": "corp-sso",
      "clusterConfig": {"coordinator": {"properties": {
          "http-server": {"https.excluded-cipher": ""}}}}},
     "clusterConfig.coordinator.properties", "http-server.https.excluded-cipher is set by"),
])
def test_a_document_cannot_pick_an_unknown_option_or_override_it(
    body: dict[str, Any], field: str, needle: str
) -> None:
    """An unknown name, or a property the picked option owns, fails the document at its field."""
    out = _classify(_doc(**body))
    assert isinstance(out, Failed)
    assert any(p.field == field and needle in p.message for p in out.problems), out.problems


def test_without_authentication_the_option_keys_stay_the_documents() -> None:
    """A document that picks nothing may still set internal-communication.shared-secret (as a
    placeholder) and nothing about authentication is rendered."""
    out = _classify(_doc(properties={"internal-communication": {"shared-secret": "{{ MINE }}"}}))
    assert isinstance(out, Cluster) and out.authentication is None and out.file_secrets == ()


def test_an_option_reference_missing_in_vault_fails_the_cluster_naming_the_secret() -> None:
    """A file Secret whose Vault key is missing is a problem before anything is written."""
    cluster = _cluster("corp-password")
    path, key = _ref("corp-password", "password_file")
    data = {p: SecretData(1, {}) for p in {u.ref.secret_path for u in cluster.vault_uses}}
    problems = secret_problems(cluster, Secrets(data))
    assert f"Secret {CID}-trino-passwd, key password.db" in [p.field for p in problems]
    assert any(f"Vault secret {path} has no key {key!r}" in p.message for p in problems)


# --- rendered and through the chart ----------------------------------------------------------


def _render(cluster: Cluster, resolved: Any = None) -> dict[str, bytes]:
    return Renderer(secure_settings()).render_cluster(cluster, resolved or {})


def _values(files: dict[str, bytes]) -> dict[str, Any]:
    return yaml.safe_load(files[f"trino-clusters/{CID}/values.yaml"])  # type: ignore[no-any-return]


@needs_helm
@needs_chart
def test_password_over_https_in_the_pod_reaches_the_charts_objects() -> None:
    """corp-password: the coordinator authenticates with PASSWORD and serves HTTPS with the
    keystore from its own Secret; password.db and group.db come from the Secrets ESO fills and
    are mounted where the chart's authenticator files point; workers get only the shared secret."""
    files = _render(_cluster("corp-password"))
    pods = chart_pods.render(files[f"trino-clusters/{CID}/values.yaml"].decode(), CID)
    es = chart_pods.external_secrets(files)
    coord, worker = pods["coordinator"], pods["worker"]
    config = coord.config()
    assert config["http-server.authentication.type"] == "PASSWORD"
    assert config["http-server.https.enabled"] == "true"
    assert config["http-server.https.port"] == "8443"
    keystore_dir, _, keystore_file = config["http-server.https.keystore.path"].rpartition("/")
    assert config["http-server.https.keystore.key"] == \
        f"${{ENV:{_env('corp-password', 'keystore_password')}}}"
    shared = f"${{ENV:{_env('corp-password', 'shared_secret')}}}"
    assert config["internal-communication.shared-secret"] == shared
    assert "http-server.authentication.allow-insecure-over-http" not in config
    # the files the chart's authenticator configuration reads, and the Secrets behind them
    password = chart_pods.javaprops.loads(coord.file("password-authenticator.properties"))
    groups = chart_pods.javaprops.loads(coord.file("group-provider.properties"))
    assert password["file.password-file"] == "/etc/trino/auth/password/password.db"
    assert groups["file.group-file"] == "/etc/trino/auth/group/group.db"
    assert groups["file.refresh-period"] == "30s"
    mounts = coord.secret_mounts()
    assert mounts["/etc/trino/auth/password"] == (f"{CID}-trino-passwd", ["password.db"])
    assert mounts["/etc/trino/auth/group"] == (f"{CID}-trino-groups", ["group.db"])
    assert mounts[keystore_dir] == (f"{CID}-trino-tls", None)
    for secret, key, field in ((f"{CID}-trino-passwd", "password.db", "password_file"),
                               (f"{CID}-trino-groups", "group.db", "group_file"),
                               (f"{CID}-trino-tls", keystore_file, "keystore")):
        path, prop = _ref("corp-password", field)
        assert es[secret]["spec"]["data"] == [
            {"secretKey": key, "remoteRef": {"key": path, "property": prop}}]
    # the HTTPS port is exposed; the probes stay on HTTP, where /v1/info is public
    assert {"name": "https", "containerPort": 8443, "protocol": "TCP"} in coord.container["ports"]
    assert coord.container["livenessProbe"]["httpGet"]["port"] == "http"
    # workers: the shared secret, no authenticator, no keystore or password files
    wconfig = worker.config()
    assert wconfig["internal-communication.shared-secret"] == shared
    assert "http-server.authentication.type" not in wconfig
    assert worker.secret_mounts() == {}
    # every ${ENV:...} is a key of the env Secret both roles take
    env_keys = {d["secretKey"] for d in es[f"{CID}-trino-secrets"]["spec"]["data"]}
    for pod in (coord, worker):
        (name,) = pod.env_secrets()
        assert name == f"{CID}-trino-secrets"
        for value in pod.config().values():
            assert set(re.findall(r"\$\{ENV:([A-Z0-9_]+)\}", value)) <= env_keys


@needs_helm
@needs_chart
def test_oauth2_behind_an_ingress_reaches_the_coordinator() -> None:
    """corp-sso: OAUTH2 with the issuer, the cluster's client id and the client secret from the
    env Secret; TLS ends at the proxy, so Trino processes X-Forwarded headers and serves no HTTPS."""
    files = _render(_cluster("corp-sso"))
    pods = chart_pods.render(files[f"trino-clusters/{CID}/values.yaml"].decode(), CID)
    config = pods["coordinator"].config()
    raw = OPTIONS["corp-sso"]
    assert config["http-server.authentication.type"] == "OAUTH2"
    assert config["http-server.authentication.oauth2.issuer"] == raw["issuer"]
    assert config["http-server.authentication.oauth2.client-id"] == \
        raw["client_id"].format(cluster=CID, owner=OWNER)
    assert config["http-server.authentication.oauth2.client-secret"] == \
        f"${{ENV:{_env('corp-sso', 'client_secret')}}}"
    assert config["http-server.authentication.oauth2.principal-field"] == raw["principal_field"]
    assert config["http-server.authentication.oauth2.scopes"] == ",".join(raw["scopes"])
    assert config["http-server.process-forwarded"] == "true"
    assert "http-server.https.enabled" not in config
    assert "http-server.process-forwarded" not in pods["worker"].config()
    assert not any(m.startswith("/etc/trino/auth") for m in pods["coordinator"].secret_mounts())
    assert sorted(chart_pods.external_secrets(files)) == [f"{CID}-trino-secrets"]


def test_the_options_external_secrets_match_the_crd_schema() -> None:
    """Every ExternalSecret of a PASSWORD/HTTPS cluster is valid for the ESO CRD (strict)."""
    schema = k8s_schema.load(SCHEMAS / "externalsecret.schema.json")
    for name, es in chart_pods.external_secrets(_render(_cluster("corp-password"))).items():
        assert (es["apiVersion"], es["kind"]) == ("external-secrets.io/v1", "ExternalSecret")
        assert k8s_schema.schema_errors(es, schema) == [], name
        assert k8s_schema.object_meta_errors(es["metadata"]) == [], name


def test_a_rotated_password_file_rolls_the_pods() -> None:
    """A new Vault version of password.db changes the pods' checksum (the chart would not roll)."""
    cluster = _cluster("corp-password")
    paths = {u.ref.secret_path for u in cluster.vault_uses}
    password_path, _ = _ref("corp-password", "password_file")
    sums = set()
    for version in (4, 5):
        resolved = {p: SecretData(version if p == password_path else 1, {}) for p in paths}
        values = _values(_render(cluster, resolved))
        sums.add(values["coordinator"]["annotations"]["trinogen.io/secrets-checksum"])
    assert len(sums) == 2


def test_no_secret_value_is_written_even_when_vault_answers() -> None:
    """With every Vault value known, none of them appears in any rendered file."""
    cluster = _cluster("corp-password")
    values = {u.ref.key: Secret(f"VALUE-{i}-not-for-git") for i, u in enumerate(cluster.vault_uses)}
    resolved = {u.ref.secret_path: SecretData(1, values) for u in cluster.vault_uses}
    blob = b"".join(_render(cluster, resolved).values())
    for secret in values.values():
        assert secret.reveal().encode() not in blob


def test_a_document_without_authentication_renders_no_auth_keys() -> None:
    """The example documents pick nothing: values.yaml has no auth, https or authenticationType."""
    out = _classify(_doc())
    assert isinstance(out, Cluster)
    text = _render(out)[f"trino-clusters/{CID}/values.yaml"].decode()
    for needle in ("authenticationType", "https:", "\nauth:", "secretMounts", "shared-secret"):
        assert needle not in text


IN_SCOPE = {"in-scope": {"type": "PASSWORD", "tls": "ingress",
                         "password_file": "secret/trino/{cluster}/auth#password.db",
                         "shared_secret": "secret/trino/{cluster}/auth#shared-secret"}}


@pytest.mark.parametrize(("body", "field"), [
    ({"properties": {"query": {"x": f"{{{{ vault:secret/trino/{CID}/auth#shared-secret }}}}"}}},
     "properties.query.x"),
    ({"connectors": [{"name": "pg", "properties": {
        "connector.name": "postgresql", "connection-url": "jdbc:postgresql://db/x",
        "connection-password": f"{{{{ vault:secret/trino/{CID}/auth#password.db }}}}"}}]},
     'connectors["pg"].properties.connection-password'),
])
def test_a_document_cannot_copy_the_options_secrets_even_inside_its_scope(
    body: dict[str, Any], field: str
) -> None:
    """When the platform keeps the option's secrets inside secrets.scope, a document placeholder
    naming one of them (the shared secret signs internal requests) is still refused."""
    out = _classify(_doc(authentication="in-scope", **body), secure_settings(IN_SCOPE))
    assert isinstance(out, Failed)
    assert any(p.field == field and "names a secret of the authentication option" in p.message
               for p in out.problems), out.problems


def test_another_key_beside_the_options_secrets_stays_usable() -> None:
    """Only the option's own references are private: another key at the same path is not."""
    ref = f"secret/trino/{CID}/auth#db-password"
    out = _classify(_doc(authentication="in-scope",
                         properties={"query": {"x": f"{{{{ vault:{ref} }}}}"}}),
                    secure_settings(IN_SCOPE))
    assert not (isinstance(out, Failed) and any("authentication option" in p.message
                                                for p in out.problems)), out
