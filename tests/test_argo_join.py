"""Argo CD's view without a server: the join with the status records (pure), an Application
object read into an AppView, credentials found the way Kubernetes clients find them, and the
`status` command's choice to read Argo CD or not. tests/test_argoview.py does the real reads."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import ferretdb
from tests.conftest import ROOT, demo_env, example_docs, needs
from tests.fakes import FakeSource
from trinogen import pipeline
from trinogen.argocd import app_view, has_access, kube_access
from trinogen.errors import ConfigError
from trinogen.ports import AppView
from trinogen.report import format_status
from trinogen.settings import Settings
from trinogen.status.argo import join_argo, revision_is

T1 = datetime(2026, 12, 1, tzinfo=UTC)
T2 = T1 + timedelta(hours=1)
A, B, C = "a" * 40, "b" * 40, "c" * 40  # commits: A at T1, B at T2; C recorded by no one


def app(name: str, cluster: str | None, revision: str | None = None) -> AppView:
    return AppView(name, cluster, "team", "Synced", "Healthy", revision=revision)


RECORDS: dict[str, dict[str, Any]] = {
    "one": {"state": "synced", "commit": A, "syncedAt": T1},
    "two": {"state": "synced", "commit": B, "syncedAt": T2},
    "broken": {"state": "failed", "commit": A, "syncedAt": T1, "lastError": "x"},
    "never": {"state": "failed", "lastError": "x"},  # failed before its first sync: no files
    "gone": {"state": "pruned", "commit": B, "syncedAt": T2, "reason": "document deleted"},
    "_id=\"x\"": {"state": "failed", "lastError": "no clusterId"},
}


@pytest.mark.parametrize(("apps", "missing", "unexplained"), [
    # every expected Application there, none else: nothing flagged
    ([app("trino-one", "one"), app("trino-two", "two"), app("trino-broken", "broken")],
     [], {}),
    # an expected one absent (a failed cluster keeps its last good files, so it is expected too)
    ([app("trino-one", "one")], ["broken", "two"], {}),
    # labelled Applications no synced cluster accounts for, each with its reason
    ([app("trino-one", "one"), app("trino-two", "two"), app("trino-broken", "broken"),
      app("trino-gone", "gone"), app("trino-new", "new"), app("trino-never", "never"),
      app("nolabel", None), app("old-one", "one")], [],
     {"trino-gone": "was pruned", "trino-new": "no status record names cluster new",
      "trino-never": "never synced", "nolabel": "no trinogen.io/cluster label",
      "old-one": "Application is trino-one, not this one"}),
    # named for one cluster, labelled for another: not the first one's Application
    ([app("trino-one", "two"), app("trino-two", "two"), app("trino-broken", "broken")],
     ["one"], {"trino-one": "its label says cluster two"}),
    # the app-of-apps (templates/root-application.yaml.j2: managed-by, no cluster label) is
    # trinogen's own; one bearing its name and a cluster label is not
    ([app("trino-one", "one"), app("trino-two", "two"), app("trino-broken", "broken"),
      app("trino-clusters", None)], [], {}),
    ([app("trino-one", "one"), app("trino-two", "two"), app("trino-broken", "broken"),
      app("trino-clusters", "clusters")], [],
     {"trino-clusters": "no status record names cluster clusters"}),
], ids=["all-there", "missing", "unexplained", "label-mismatch", "root", "root-labelled"])
def test_join_flags_missing_and_unexplained_applications(
        apps: list[AppView], missing: list[str], unexplained: dict[str, str]) -> None:
    """An Application is expected for each synced cluster (and each failed one that synced
    before) and the app-of-apps is trinogen's; an expected one not listed is missing; a listed
    one nothing expects is flagged with why."""
    join = join_argo(RECORDS, {a.name: a for a in apps}, "trino-", root="trino-clusters")
    assert join.missing == missing
    assert {u.application: u.reason for u in join.unexplained}.keys() == unexplained.keys()
    for u in join.unexplained:
        assert unexplained[u.application] in u.reason
    assert set(join.rows) == {"one", "two", "broken"}
    assert all(r.app is None or r.app.cluster_id == cid for cid, r in join.rows.items())


def test_join_without_records_lists_applications_by_label_and_flags_nothing() -> None:
    """With no status records to judge by (the embedded database), each labelled Application
    is a row under its cluster label and nothing is flagged."""
    join = join_argo({}, {"trino-x": app("trino-x", "x"), "y": app("y", None)}, "trino-",
                     judged=False)
    assert (join.missing, join.unexplained) == ([], [])
    assert set(join.rows) == {"x"} and join.rows["x"].app is not None


@pytest.mark.parametrize(("revision", "cluster", "expected"), [
    (None, "one", None),  # Argo CD has compared against nothing yet
    (A, "one", "current"),  # trinogen's last commit for the cluster
    (B, "one", "newer"),  # recorded later (by another cluster): a descendant on the branch
    (A, "two", "older"),  # recorded earlier: Argo CD has not caught up
    (C, "one", "unknown"),  # someone else's commit, or one no record keeps
    (A, "nobody", "unknown"),  # no record of the cluster
])
def test_revision_is_judged_by_trinogens_own_commit_order(
        revision: str | None, cluster: str, expected: str | None) -> None:
    """Argo CD's revision is current, newer or older against trinogen's last commit of the
    cluster by the order trinogen recorded its commits in; unknown when no record names it."""
    assert revision_is(revision, cluster, RECORDS) == expected


def _application(**status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "trino-a", "labels": {"trinogen.io/cluster": "a"}},
            "spec": {"sources": [{"chart": "trino"}, {"ref": "values"}]}, "status": status}


@pytest.mark.parametrize(("obj", "field", "expected"), [
    (_application(), "sync", "Unknown"),  # not reconciled yet
    (_application(sync={"status": "OutOfSync", "revisions": ["1.0", A]}), "revision", A),
    (_application(sync={"revision": B}), "revision", B),  # single-source status form
    (_application(sync={"status": 5}), "sync", "5"),
    (_application(health={"status": ["x"]}), "health", "Unknown"),  # wrong type: ignored
    (_application(health={"message": "a\x1b[2Jb\nc"}), "message", "a [2Jb c"),
    (_application(health={"message": "m" * 5000}), "message", "m" * 997 + "..."),
    (_application(operationState={"phase": "Failed", "message": ""}), "operation", "Failed"),
    (_application(operationState={"phase": "Failed", "message": ""}),
     "operation_message", None),
    ({"metadata": {"name": "x", "labels": "nope"}, "status": "nope"}, "cluster_id", None),
])
def test_an_application_object_becomes_an_app_view(obj: dict[str, Any], field: str,
                                                   expected: Any) -> None:
    """Fields come from where Argo CD writes them; a wrong type is ignored, text is made
    printable and cut at 1000 characters (a pod's message is written by a tenant)."""
    view = app_view(obj)
    assert view is not None and getattr(view, field) == expected


def test_an_application_without_a_name_is_skipped() -> None:
    """An item with no metadata.name yields no view."""
    assert app_view({"metadata": {}}) is None and app_view("junk") is None


# --- credentials -------------------------------------------------------------------------------


def kubeconfig(path: Path, user: dict[str, Any], cluster: dict[str, Any] | None = None,
               current: str = "main") -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [{"name": "c", "cluster": cluster or {
            "server": "https://k.example.invalid:6443/prefix/",
            "certificate-authority-data": base64.b64encode(b"CA").decode()}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}},
                     {"name": "other", "context": {"cluster": "c", "user": "u"}}]}))
    return path


def test_kubeconfig_token_user_and_ca_data(tmp_path: Path) -> None:
    """KUBECONFIG's current context gives the server (path kept), the CA and the token."""
    path = kubeconfig(tmp_path / "config", {"token": "s3cr3t-tok"})
    access = kube_access({"KUBECONFIG": str(path)})
    assert access is not None
    assert (access.server, access.token, access.ca_data) == (
        "https://k.example.invalid:6443/prefix", "s3cr3t-tok", "CA")
    assert "s3cr3t" not in repr(access)


def test_kubeconfig_files_relative_to_the_file(tmp_path: Path) -> None:
    """tokenFile, client-certificate, client-key and certificate-authority paths are relative
    to the kubeconfig that names them."""
    (tmp_path / "t").write_text("from-file\n")
    (tmp_path / "c.pem").write_bytes(b"CERT")
    (tmp_path / "k.pem").write_bytes(b"KEY")
    path = kubeconfig(tmp_path / "config",
                      {"tokenFile": "t", "client-certificate": "c.pem", "client-key": "k.pem"},
                      {"server": "https://k.example.invalid", "certificate-authority": "ca.crt"})
    access = kube_access({"KUBECONFIG": str(path)})
    assert access is not None
    assert (access.token, access.cert_pem, access.key_pem, access.ca_file) == (
        "from-file", b"CERT", b"KEY", str(tmp_path / "ca.crt"))


def test_exec_plugin_token(tmp_path: Path) -> None:
    """A client-go exec credential plugin runs and its ExecCredential token is used."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import json, os\ninfo = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
                      "assert info['spec']['interactive'] is False\n"
                      "print(json.dumps({'status': {'token': 'minted'}}))\n")
    path = kubeconfig(tmp_path / "config", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
        "args": [str(plugin)]}})
    access = kube_access({"KUBECONFIG": str(path)})
    assert access is not None and access.token == "minted"


def test_a_relative_exec_command_is_the_kubeconfigs(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`command: ./plugin` runs the plugin beside the kubeconfig (client-go's reading), not a
    file of that name in the working directory."""
    home, elsewhere = tmp_path / "kube", tmp_path / "cwd"
    home.mkdir()
    elsewhere.mkdir()
    for where, token in ((home, "beside-the-kubeconfig"), (elsewhere, "from-the-cwd")):
        plugin = where / "plugin"
        plugin.write_text(f"#!/bin/sh\necho '{{\"status\": {{\"token\": \"{token}\"}}}}'\n")
        plugin.chmod(0o755)
    path = kubeconfig(home / "config", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": "./plugin"}})
    monkeypatch.chdir(elsewhere)
    access = kube_access({"KUBECONFIG": str(path)})
    assert access is not None and access.token == "beside-the-kubeconfig"


@pytest.mark.parametrize(("user", "cluster", "context", "message"), [
    ({"token": "t"}, None, "missing", "context 'missing' not found"),
    ({"token": "t"}, {"server": "https://x", "insecure-skip-tls-verify": True}, "",
     "always verifies"),
    ({"username": "u", "password": "p"}, None, "", "not supported"),
    ({"client-key-data": "%%%"}, None, "", "not base64"),
    ({"tokenFile": "absent"}, None, "", "cannot read"),
    ({"token": "t"}, {"server": "http://k.example.invalid"}, "", "not https://"),
    # credentials in the URL would be printed in every message naming the server
    ({"token": "t"}, {"server": "https://admin:pa55w0rd@k.example.invalid"}, "",
     "carries user:password@"),
    ({"token": "t"}, {"server": "http://admin:pa55w0rd@k.example.invalid"}, "",
     "^(?!.*pa55w0rd).*carries user:password@"),
])
def test_unusable_kubeconfig_is_a_config_error(tmp_path: Path, user: dict[str, Any],
                                               cluster: dict[str, Any] | None, context: str,
                                               message: str) -> None:
    """A kubeconfig trinogen cannot use safely fails with what to change."""
    path = kubeconfig(tmp_path / "config", user, cluster)
    with pytest.raises(ConfigError, match=message):
        kube_access({"KUBECONFIG": str(path)}, context)


@pytest.mark.parametrize("text", [
    "users:\n- name: u\n  user:\n    token: eyJhbGciOi.S3CR3T-TOKEN: x\n",
    "users:\n- name: u\n  user: {token: S3CR3T-TOKEN, x: [}\n",
    "users: [{name: u, user: {token: \"S3CR3T-TOKEN\\q\"}}]\n",
])
def test_a_malformed_kubeconfig_never_prints_its_secrets(tmp_path: Path, text: str) -> None:
    """A kubeconfig that is not YAML fails naming its path and line, never quoting the line
    (PyYAML's message does: the token or key written there would reach the logs)."""
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        kube_access({"KUBECONFIG": str(path)})
    shown = str(raised.value)
    assert str(path) in shown and "line " in shown, shown
    assert "S3CR3T" not in shown and "S3CR3T" not in repr(raised.value.__cause__), shown


def test_in_cluster_service_account(tmp_path: Path) -> None:
    """Without KUBECONFIG, a pod's service account and KUBERNETES_SERVICE_* are used."""
    (tmp_path / "token").write_text("sa-token")
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443",
           "HOME": str(tmp_path)}
    access = kube_access(env, sa_dir=tmp_path)
    assert access is not None
    assert (access.server, access.token, access.ca_file) == (
        "https://[fd00::1]:443", "sa-token", str(tmp_path / "ca.crt"))
    assert has_access(env, sa_dir=tmp_path)


def test_no_credentials_at_all(tmp_path: Path) -> None:
    """No KUBECONFIG, no service account, no ~/.kube/config: nothing to read with."""
    env = {"HOME": str(tmp_path)}
    assert kube_access(env, sa_dir=tmp_path) is None
    assert not has_access(env, sa_dir=tmp_path)


# --- the status command -----------------------------------------------------------------------


class StaticView:
    def __init__(self, apps: list[AppView]) -> None:
        self.apps = {a.name: a for a in apps}

    def applications(self) -> dict[str, AppView]:
        return self.apps


def test_status_writes_what_it_saw_into_existing_records_only() -> None:
    """The observed fields land in each expected cluster's record, sync fields untouched; no
    record is created for an Application nothing expects."""
    source = FakeSource()
    source.status = {k: dict(v) for k, v in RECORDS.items()}
    view = StaticView([app("trino-one", "one", B), app("trino-new", "new")])
    report = pipeline.status(Settings(), source, view)
    assert source.status["one"]["argocd"]["revisionIs"] == "newer"
    assert source.status["one"]["commit"] == A
    assert source.status["two"]["argocd"]["missing"] is True
    assert "new" not in source.status and "argocd" not in source.status["gone"]
    text = format_status(report)
    assert "argocd: Synced Healthy at bbbbbbbbbb (newer)" in text
    assert "MISSING Applications (2): broken, two" in text
    assert "UNEXPLAINED Application trino-new: no status record names cluster new" in text


def test_status_without_a_view_reads_and_writes_nothing_of_argo_cd() -> None:
    """Turned off, status shows the records and says why Argo CD was not read."""
    source = FakeSource()
    source.status = {"one": dict(RECORDS["one"])}
    report = pipeline.status(Settings(), source, None, "turned off")
    assert report.to_json()["argocd"] == {"read": False, "note": "turned off"}
    assert "argocd" not in source.status["one"]
    assert "argocd" not in format_status(report).lower()


def test_a_sync_never_loads_the_kubernetes_client(tmp_path: Path) -> None:
    """A demo sync through the CLI (a kubeconfig present) imports neither trinogen.argocd nor
    anything of it: a no-op sync does not pay for reading Argo CD."""
    env = {**demo_env(tmp_path, example_docs()), "HOME": str(tmp_path),
           "KUBECONFIG": str(kubeconfig(tmp_path / "config", {"token": "t"}))}
    code = ("import sys\nfrom trinogen.cli import app\n"
            "try:\n    app(['sync', '-o', 'json'])\nexcept SystemExit as e:\n    code = e.code\n"
            "print(json.dumps({'code': code, 'argocd': 'trinogen.argocd' in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True,
                         text=True, env={**env, "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                         cwd=tmp_path, timeout=120, check=False)
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last == {"code": 0, "argocd": False}, out.stderr


@pytest.mark.parametrize(("args", "env", "code", "says"), [
    # auto: no credentials anywhere, so Argo CD is not read and status says why
    (["status", "-o", "json"], {}, 0, "no kubeconfig or in-cluster service account found"),
    # --no-argocd: not read even with a kubeconfig (here one that would fail to load)
    (["status", "--no-argocd", "-o", "json"], {"KUBECONFIG": "{tmp}/broken"}, 0, "turned off"),
    # the setting, too
    (["status", "-o", "json"], {"KUBECONFIG": "{tmp}/broken",
                                "TRINOGEN_ARGOCD_READ_STATUS": "never"}, 0, "turned off"),
    # --argocd without credentials: a usage error saying where credentials come from
    (["status", "--argocd"], {}, 2, "no Kubernetes credentials to read Argo CD with"),
    # auto with a kubeconfig that cannot be used: an error, not a silent git-only status
    (["status"], {"KUBECONFIG": "{tmp}/broken"}, 2, "no current-context; set argocd.kube_context"),
])
def test_status_decides_whether_to_read_argo_cd(tmp_path: Path, args: list[str],
                                                env: dict[str, str], code: int,
                                                says: str) -> None:
    """argocd.read_status (auto by default) and --argocd/--no-argocd decide; reading that was
    asked for and cannot be done fails with what to do."""
    from typer.testing import CliRunner

    from trinogen.cli import app as cli

    (tmp_path / "broken").write_text("apiVersion: v1\nkind: Config\n")
    environ = {"TRINOGEN_MONGODB_URI": "mongomock://", "HOME": str(tmp_path),
               **{k: v.format(tmp=tmp_path) for k, v in env.items()}}
    result = CliRunner().invoke(cli, args, env=environ)
    assert result.exit_code == code, result.output
    if code == 0:
        argo = json.loads(result.stdout)["argocd"]
        assert argo["read"] is False and says in argo["note"]
    else:
        assert says in result.stderr


class SyncMeanwhile:
    """A real Source whose status is rewritten by a "concurrent sync" just before `status`
    writes what it saw: the interleaving a whole-record rewrite would lose."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.ephemeral = False

    def read_status(self) -> dict[str, dict[str, Any]]:
        return dict(self.source.read_status())

    def write_observed(self, fields: Any) -> int:
        self.source.write_status({"one": {"state": "synced", "commit": C, "syncedAt": T2}})
        return int(self.source.write_observed(fields))


@needs(ferretdb.available(), "FerretDB is not built and Go is not installed to build it")
def test_what_status_saw_never_undoes_a_sync_written_meanwhile(ferretdb_server: Any) -> None:
    """Over MongoDB's wire, the observed fields are set beside whatever a sync wrote after
    status read the records: the sync's commit stays, and the argocd field lands."""
    from trinogen import source as source_mod
    from trinogen.settings import replace

    database = f"argojoin_{id(ferretdb_server)}"
    settings = replace(Settings(), mongodb={"uri": ferretdb_server.uri, "database": database})
    client = ferretdb_server.client()
    coll = client[database][settings.mongodb.status_collection]
    coll.insert_one({"_id": "one", **RECORDS["one"]})
    try:
        real = source_mod.connect(settings.mongodb)
        pipeline.status(settings, SyncMeanwhile(real), StaticView([app("trino-one", "one", A)]))
        stored = coll.find_one({"_id": "one"})
    finally:
        client.drop_database(database)
        client.close()
    assert stored["commit"] == C  # the sync's
    assert stored["argocd"]["revision"] == A and stored["argocd"]["health"] == "Healthy"
