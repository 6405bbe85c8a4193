"""A real Trino with PASSWORD authentication over HTTPS, as trinogen and the chart configure it (issue 13).

A document picks an authentication option; trinogen renders it with every Vault value known
(this module plays Vault), the real chart renders the pods, and this module plays External
Secrets: each ExternalSecret's entries are filled from the same Vault values into the Secret
files and environment the pods would get. The keystore comes from the JDK's keytool (converted
to the PEM text Vault can hold, its private key encrypted with the keystore password), the
password file holds a bcrypt hash (htpasswd's `$2y$`). Coordinator and one worker then boot as in
tests/test_trino_real.py (its REWRITES, plus the HTTPS port below), and:

- an anonymous query and a wrong password are refused over HTTPS; the right password answers,
  with the user's group from group.db and a query that runs on the worker (shared secret works);
- plain HTTP refuses queries (no sign-in with a bare user name) but serves /v1/info, which the
  chart's probes read;
- no secret value appears in trinogen's files or log, the chart's objects or either node's log.

The same document with `tls: ingress` boots a coordinator alone: a request that says it came
through a TLS proxy (`X-Forwarded-Proto: https`) signs in with the password (a wrong or missing
one gets 401), and a plain HTTP request without it is refused (403).
"""

from __future__ import annotations

import base64
import logging
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import chart_pods
from tests import trino_server as ts
from tests.conftest import needs
from tests.marks import INSTALL, REAL_TRINO, trino
from tests.test_auth import secure_settings
from tests.test_trino_real import BOOT_TIMEOUT, for_laptop, heap_factor
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData

try:
    import bcrypt
except ImportError:  # pragma: no cover - depends on the environment
    bcrypt = None

KEYTOOL = ts.JAVA_HOME / "bin" / "keytool"
pytestmark = [
    *REAL_TRINO,
    needs(bcrypt is not None, f"bcrypt is not installed ({INSTALL})"),
    needs(KEYTOOL.is_file(), f"no keytool at {ts.JAVA_HOME}"),
    needs(shutil.which("openssl") is not None, "openssl is not on PATH (PEM conversion)"),
]

# Besides tests/test_trino_real.py's REWRITES: the HTTPS port is a free port per run (a pod has
# its own 8443), and files the chart mounts from Secrets are written where the mounts would be.
EXTRA_REWRITE = "http-server.https.port"

CID = "secure"
USER, PASSWORD, GROUP = "alice", "correct horse battery", "analysts"
OPTION = {
    "type": "PASSWORD", "tls": "pod",
    "password_file": "secret/trino/{cluster}/auth#password.db",
    "group_file": "secret/trino/{cluster}/auth#group.db",
    "shared_secret": "secret/trino/{cluster}/auth#shared-secret",
    "keystore": "secret/trino/{cluster}/tls#keystore.pem",
    "keystore_password": "secret/trino/{cluster}/tls#password",
}
DOC = {"_id": "trino-real-secure", "clusterId": CID, "owner": "qa_team", "enabled": True,
       "authentication": "test-password",
       "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}]}


@dataclass
class Vault:
    """The values this module stores in "Vault": (path, key) -> text."""

    values: dict[tuple[str, str], str]
    ca_file: Path  # the certificate the client trusts

    def resolved(self) -> dict[str, SecretData]:
        out: dict[str, dict[str, Secret]] = {}
        for (path, key), text in self.values.items():
            out.setdefault(path, {})[key] = Secret(text)
        return {p: SecretData(1, v) for p, v in out.items()}

    def secret_texts(self) -> list[str]:
        """What must never be written or logged (the hashes included: the files stay in Vault)."""
        return [v for v in self.values.values()] + [PASSWORD]


def _run(*cmd: str, cwd: Path) -> None:
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    assert out.returncode == 0, f"{cmd[0]} failed: {out.stderr[-2000:]}"


def make_vault(root: Path) -> Vault:
    """A keystore from keytool as PEM (encrypted key), a bcrypt password file, a group file."""
    store_pw, key_pw, shared = "store-pw-x7", "key-pw-Q4tz", "shared-secret-9f2b6c1d-for-test"
    _run(str(KEYTOOL), "-genkeypair", "-alias", "trino", "-keyalg", "RSA", "-keysize", "2048",
         "-validity", "2", "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1",
         "-keystore", "ks.p12", "-storetype", "PKCS12", "-storepass", store_pw,
         "-keypass", store_pw, cwd=root)
    _run("openssl", "pkcs12", "-in", "ks.p12", "-passin", f"pass:{store_pw}", "-nokeys",
         "-out", "bag.pem", cwd=root)
    _run("openssl", "x509", "-in", "bag.pem", "-out", "cert.pem", cwd=root)
    _run("openssl", "pkcs12", "-in", "ks.p12", "-passin", f"pass:{store_pw}", "-nocerts",
         "-nodes", "-out", "key.pem", cwd=root)
    # A PBE scheme the JDK reads (Trino decrypts the key with http-server.https.keystore.key).
    _run("openssl", "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-in", "key.pem",
         "-passout", f"pass:{key_pw}", "-out", "enc.pem", cwd=root)
    keystore = (root / "enc.pem").read_text() + (root / "cert.pem").read_text()
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=10)).decode()
    hashed = "$2y$" + hashed[4:]  # htpasswd -B writes $2y$, the form Trino's docs show
    base = f"secret/trino/{CID}"
    return Vault({
        (f"{base}/auth", "password.db"): f"{USER}:{hashed}\n",
        (f"{base}/auth", "group.db"): f"{GROUP}:{USER}\n",
        (f"{base}/auth", "shared-secret"): shared,
        (f"{base}/tls", "keystore.pem"): keystore,
        (f"{base}/tls", "password"): key_pw,
    }, root / "cert.pem")


def eso_secrets(files: Mapping[str, bytes], vault: Vault) -> dict[str, dict[str, str]]:
    """What External Secrets would create: Secret name -> {key: value read from Vault}."""
    return {name: {d["secretKey"]: vault.values[(d["remoteRef"]["key"], d["remoteRef"]["property"])]
                   for d in es["spec"]["data"]}
            for name, es in chart_pods.external_secrets(files).items()}


def pod_files(pod: chart_pods.RolePod, secrets: Mapping[str, Mapping[str, str]]) -> ts.NodeFiles:
    """A role's files at their paths in the pod (ConfigMaps and Secrets), and its environment."""
    volumes = {v["name"]: v for v in pod.spec["volumes"]}
    files: dict[str, str] = {}
    for mount in pod.container.get("volumeMounts", []):
        volume = volumes[mount["name"]]
        if "configMap" in volume:
            source, data = volume["configMap"], pod.config_maps[volume["configMap"]["name"]]
        else:
            source, data = volume["secret"], secrets[volume["secret"]["secretName"]]
        items = source.get("items") or [{"key": k, "path": k} for k in data]
        for item in items:
            files[f"{mount['mountPath'].rstrip('/')}/{item['path']}"] = data[item["key"]]
    env: dict[str, str] = {}
    for name in pod.env_secrets():
        env.update(secrets[name])
    return ts.NodeFiles(files, env)


@dataclass
class Booted:
    cluster: ts.TrinoCluster
    http_port: int
    https_port: int
    vault: Vault
    written: list[str]  # trinogen's files, the chart's objects and trinogen's log lines


def boot(option: Mapping[str, str], root: Path, *, coordinator_alone: bool = False) -> Booted:
    """The document rendered with `option` (Vault values known), booted and started."""
    vault = make_vault(root)
    settings = secure_settings({"test-password": dict(option)})
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda r: records.append(r.getMessage())  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    try:
        cluster = classify(RawDocument('"trino-real-secure"', DOC), settings)
        assert isinstance(cluster, Cluster), cluster
        files = Renderer(settings).render_cluster(cluster, vault.resolved())
    finally:
        logging.getLogger().removeHandler(handler)
    values = files[f"{settings.output.clusters_dir}/{CID}/values.yaml"].decode()
    pods = chart_pods.render(values, CID)
    written = [b.decode() for b in files.values()] + records + [
        text for p in pods.values() for data in p.config_maps.values() for text in data.values()]
    secrets = eso_secrets(files, vault)
    role_files = {role: pod_files(p, secrets) for role, p in pods.items()}
    return start(role_files, root, vault, written, coordinator_alone=coordinator_alone)


def start(role_files: Mapping[str, ts.NodeFiles], root: Path, vault: Vault, written: list[str],
          *, coordinator_alone: bool = False) -> Booted:
    """Boot the pods' files as local Trino nodes (coordinator, and a worker unless alone), the
    HTTPS port moved to a free one."""
    factor = heap_factor(role_files)
    aot = ts.aot_cache_path()
    aot_line = f"-XX:AOTCache={aot}" if aot.is_file() else None
    cport, wport, sport = ts.free_port(), ts.free_port(), ts.free_port()
    roles = [("coordinator", "coordinator", cport)]
    if not coordinator_alone:
        roles.append(("worker-0", "worker", wport))
    nodes = []
    dist = ts.distribution()
    for name, role, port in roles:
        local = for_laptop(role_files[role], root / name, dist / "plugin", port, cport, factor,
                           coordinator_alone=coordinator_alone, aot=aot_line)
        config = local.files["/etc/trino/config.properties"]
        if EXTRA_REWRITE in config:
            local.files["/etc/trino/config.properties"] = ts.properties_with(
                config, {EXTRA_REWRITE: str(sport)})
        nodes.append(ts.TrinoNode(name, root / name, local))
    trino_cluster = ts.TrinoCluster(nodes[0], nodes[1:], cport)
    trino_cluster.start(dist, BOOT_TIMEOUT)
    return Booted(trino_cluster, cport, sport, vault, written)


@pytest.fixture(scope="module")
def booted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Booted]:
    """PASSWORD with HTTPS in the pod: coordinator plus one worker."""
    root = tmp_path_factory.mktemp("trino-auth")
    b = boot(OPTION, root)
    try:
        yield b
    finally:
        b.cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def behind_ingress(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Booted]:
    """PASSWORD with TLS ending at a proxy: the coordinator alone (one boot fewer)."""
    root = tmp_path_factory.mktemp("trino-auth-ingress")
    option = {k: v for k, v in OPTION.items() if k not in ("keystore", "keystore_password")}
    b = boot({**option, "tls": "ingress"}, root, coordinator_alone=True)
    try:
        yield b
    finally:
        b.cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


def _https_query(b: Booted, sql: str, password: str | None) -> list[list[Any]]:
    import requests

    auth = trino.auth.BasicAuthentication(USER, password) if password is not None else None
    session = requests.Session()
    # The machine's REQUESTS_CA_BUNDLE would replace a session's own CA file in requests: the
    # client must trust exactly the test's certificate.
    session.trust_env = False
    session.verify = str(b.vault.ca_file)
    conn = trino.dbapi.connect(host="localhost", port=b.https_port, user=USER,
                               http_scheme="https", auth=auth, http_session=session,
                               request_timeout=120)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()


def _status(url: str, headers: Mapping[str, str] | None = None,
            data: bytes | None = None) -> int:
    """The HTTP status of one request (urllib, no proxy from the environment)."""
    request = urllib.request.Request(url, data=data, headers=dict(headers or {}))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_the_right_password_answers_with_the_users_group_on_the_worker(booted: Booted) -> None:
    """Over HTTPS, alice with her password runs a query on the worker; group.db gives her group."""
    deadline = time.monotonic() + BOOT_TIMEOUT
    nodes: list[list[Any]] = []
    while time.monotonic() < deadline:  # the worker announces itself with the shared secret
        nodes = _https_query(booted, "SELECT coordinator, state FROM system.runtime.nodes",
                             PASSWORD)
        if [False, "active"] in nodes:
            break
        time.sleep(1)
    assert [False, "active"] in nodes, nodes
    assert _https_query(booted, "SELECT current_user, contains(current_groups(), "
                        f"'{GROUP}')", PASSWORD) == [[USER, True]]
    assert _https_query(booted, "SELECT count(*) FROM tpch.tiny.nation", PASSWORD) == [[25]]


@pytest.mark.parametrize("password", [None, "wrong password"])
def test_an_anonymous_or_wrong_sign_in_is_refused(booted: Booted, password: str | None) -> None:
    """Without a password, or with a wrong one, the coordinator answers 401 over HTTPS."""
    with pytest.raises(trino.exceptions.HttpError, match="401"):
        _https_query(booted, "SELECT 1", password)


def test_plain_http_refuses_queries_but_serves_the_probes(booted: Booted) -> None:
    """On the HTTP port a bare user name gets 403 (no insecure sign-in); /v1/info stays public."""
    base = f"http://127.0.0.1:{booted.http_port}"
    assert _status(f"{base}/v1/statement", {"X-Trino-User": USER}, b"SELECT 1") == 403
    assert _status(f"{base}/v1/info") == 200


def test_no_secret_value_is_written_or_logged(booted: Booted) -> None:
    """The Vault values (and alice's password) are in no rendered file, chart object, trinogen
    log line or Trino log, though both nodes used them."""
    logs = [node.log() for node in booted.cluster.nodes]
    assert all("======== SERVER STARTED ========" in log for log in logs)
    for text in booted.vault.secret_texts():
        for needle in {text, text.strip()}:
            assert not any(needle in w for w in booted.written)
            assert not any(needle in log for log in logs)


def _basic(password: str) -> dict[str, str]:
    token = base64.b64encode(f"{USER}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}", "X-Trino-User": USER}


@pytest.mark.parametrize(("forwarded", "password", "status"), [
    (True, PASSWORD, 200),  # what the ingress sends after terminating TLS
    (True, "wrong password", 401),
    (True, None, 401),
    (False, PASSWORD, 403),  # plain HTTP without the proxy: refused, password or not
])
def test_behind_an_ingress_only_forwarded_https_requests_sign_in(
    behind_ingress: Booted, forwarded: bool, password: str | None, status: int
) -> None:
    """With tls: ingress Trino serves plain HTTP, takes X-Forwarded-Proto: https as a secure
    request and checks the password then; without that header it refuses to authenticate."""
    headers = _basic(password) if password is not None else {"X-Trino-User": USER}
    if forwarded:
        headers["X-Forwarded-Proto"] = "https"
    url = f"http://127.0.0.1:{behind_ingress.http_port}/v1/statement"
    assert _status(url, headers, b"SELECT 1") == status


def test_behind_an_ingress_no_secret_value_is_written_or_logged(behind_ingress: Booted) -> None:
    """As over pod HTTPS: the Vault values are in no file, chart object or log."""
    logs = [node.log() for node in behind_ingress.cluster.nodes]
    for text in behind_ingress.vault.secret_texts():
        for needle in {text, text.strip()}:
            assert not any(needle in w for w in behind_ingress.written)
            assert not any(needle in log for log in logs)
