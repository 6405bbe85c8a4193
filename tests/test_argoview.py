"""Argo CD's view read back from a real kube-apiserver, through deploy/'s read-only RBAC.

The API server, its RBAC, its TokenRequest API and its pagination are real. The one stand-in is
Argo CD's application controller: no controller runs, so each test writes an Application's
`status` the way that controller does. The upstream Application CRD (../shared/crds) declares no
`status` subresource (`subresources: {}`; checked below), so the controller persists status with a
merge patch of the Application itself, and so does `argo_status()` here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests import ferretdb
from tests.conftest import needs
from tests.kubeapi import Cluster
from tests.marks import KUBE_API
from trinogen.argocd import argo_view
from trinogen.cli import app
from trinogen.errors import ArgoUnavailable, ExitCode
from trinogen.settings import Settings, replace

pytestmark = KUBE_API

ROOT = Path(__file__).resolve().parent.parent
ROLE = ROOT / "deploy" / "kubernetes" / "argocd-read" / "role.yaml"
ARGO_NS, TRINOGEN_NS = "argoview-argocd", "argoview-trinogen"
APPS = "argoproj.io/v1alpha1"
OLD, NEW = "1" * 40, "2" * 40  # two commits of the GitOps repository, OLD before NEW
CHART = "1.42.2"
T1 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
T2 = T1 + timedelta(hours=1)
HOSTILE = "pod trino-0: \x1b[2J\x1b]0;pwned\x07 CrashLoopBackOff"  # a tenant's pod writes this


def application(name: str, cluster: str | None, *, managed: bool = True) -> dict[str, Any]:
    """An Application shaped like templates/application.yaml.j2 (chart, ref: values, a path)."""
    labels = {"app.kubernetes.io/managed-by": "trinogen"} if managed else {}
    if cluster is not None:
        labels |= {"trinogen.io/cluster": cluster, "trinogen.io/owner": "team-a"}
    repo = "https://git.example.invalid/gitops.git"
    return {"apiVersion": APPS, "kind": "Application",
            "metadata": {"name": name, "labels": labels},
            "spec": {"project": "default",
                     "sources": [{"repoURL": "https://trinodb.github.io/charts", "chart": "trino",
                                  "targetRevision": CHART},
                                 {"repoURL": repo, "targetRevision": "main", "ref": "values"},
                                 {"repoURL": repo, "targetRevision": "main",
                                  "path": f"trino-clusters/{cluster}/manifests"}],
                     "destination": {"server": "https://kubernetes.default.svc",
                                     "namespace": f"trino-{cluster}"}}}


def argo_status(sync: str, health: str, revision: str | None, phase: str | None, *,
                message: str | None = None, op_message: str | None = None) -> dict[str, Any]:
    """An Application status as Argo CD's controller writes it (multi-source: one revision per
    source, in the order of spec.sources)."""
    status: dict[str, Any] = {"sync": {"status": sync}, "health": {"status": health},
                              "reconciledAt": "2026-12-04T21:00:00Z"}
    if revision is not None:
        status["sync"]["revisions"] = [CHART, revision, revision]
    if message is not None:
        status["health"]["message"] = message
    if phase is not None:
        status["operationState"] = {
            "phase": phase, "message": op_message or "", "startedAt": "2026-12-04T20:59:00Z",
            "operation": {"sync": {"revisions": [CHART, revision or NEW, revision or NEW]}}}
    return status


# What the test writes (the input), and what each Application's row must show.
APPLICATIONS = {
    # name: (cluster label, status written as the controller would, or None for none)
    "trino-alpha": ("alpha", argo_status("Synced", "Healthy", NEW, "Succeeded",
                                         op_message="successfully synced (all tasks run)")),
    "trino-beta": ("beta", argo_status("OutOfSync", "Degraded", OLD, "Failed", message=HOSTILE,
                                       op_message="one or more objects failed to apply")),
    "trino-delta": ("delta", argo_status("Synced", "Healthy", OLD, "Succeeded")),
    "trino-ghost": ("ghost", argo_status("Synced", "Progressing", NEW, "Running")),
    "trino-fresh": ("fresh", None),  # created by the app-of-apps, not yet reconciled
}
# Status records trinogen would have written (the test's own writes into FerretDB).
RECORDS = {
    "alpha": {"state": "synced", "commit": OLD, "syncedAt": T1},  # Argo CD is at a later commit
    "beta": {"state": "synced", "commit": NEW, "syncedAt": T2},  # Argo CD is behind
    "gamma": {"state": "synced", "commit": NEW, "syncedAt": T2},  # its Application is missing
    "delta": {"state": "pruned", "commit": NEW, "syncedAt": T2, "reason": "document deleted"},
    "fresh": {"state": "synced", "commit": NEW, "syncedAt": T2},
}


@dataclass
class Argo:
    cluster: Cluster
    kubeconfig: Path  # the read-only ServiceAccount's
    token: str

    def settings(self) -> Settings:
        return replace(Settings(), argocd={"namespace": ARGO_NS})


def _kubeconfig(path: Path, cluster: Cluster, token: str) -> Path:
    """A kubeconfig as `kubectl config` writes one: a cluster with its CA, a token user."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "reader",
        "clusters": [{"name": "test", "cluster": {
            "server": cluster.server.url, "certificate-authority": str(cluster.server.ca_file)}}],
        "users": [{"name": "trinogen", "user": {"token": token}}],
        "contexts": [{"name": "reader", "context": {"cluster": "test", "user": "trinogen"}}]}))
    return path


def _deploy_rbac(cluster: Cluster) -> None:
    """deploy/'s Role and RoleBinding, in the test's namespaces (as its kustomization and its
    comment say to do for namespaces other than argocd and trinogen)."""
    for doc in yaml.safe_load_all(ROLE.read_text()):
        doc["metadata"]["namespace"] = ARGO_NS
        for subject in doc.get("subjects", []):
            subject["namespace"] = TRINOGEN_NS
        cluster.apply(doc, manager="test")


def _token(cluster: Cluster, namespace: str, account: str) -> str:
    """A token of the ServiceAccount from the TokenRequest API (what kubectl create token does)."""
    status, body = cluster.server.request(
        "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
         "spec": {"expirationSeconds": 3600}})
    assert status == 201, body
    return str(body["status"]["token"])


def _write_status(cluster: Cluster, name: str, status: dict[str, Any]) -> None:
    """Stand-in for Argo CD's controller: a merge patch of the Application's status."""
    path = cluster.path(APPS, "Application", name, ARGO_NS)
    code, body = cluster.server.request("PATCH", path, {"status": status},
                                        content_type="application/merge-patch+json")
    assert code == 200, body


@pytest.fixture(scope="module")
def argo(kube_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Argo]:
    cluster = kube_cluster
    cluster.namespace(ARGO_NS)
    cluster.namespace(TRINOGEN_NS)
    cluster.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": {"name": "trinogen", "namespace": TRINOGEN_NS}}, manager="test")
    _deploy_rbac(cluster)
    for name, (cid, status) in APPLICATIONS.items():
        cluster.apply(application(name, cid), namespace=ARGO_NS, manager="argocd-controller")
        if status is not None:
            _write_status(cluster, name, status)
    # Not trinogen's: no managed-by label; and one of trinogen's in another namespace.
    cluster.apply(application("someone-elses", None, managed=False), namespace=ARGO_NS)
    cluster.apply(application("trino-elsewhere", "elsewhere"), namespace=TRINOGEN_NS)
    token = _token(cluster, TRINOGEN_NS, "trinogen")
    kubeconfig = _kubeconfig(tmp_path_factory.mktemp("argoview") / "config", cluster, token)
    yield Argo(cluster, kubeconfig, token)


def test_the_application_crd_has_no_status_subresource(argo: Argo) -> None:
    """The upstream CRD declares no status subresource, so the controller writes status on the
    Application itself (what this module's stand-in does)."""
    crd = argo.cluster.get("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                           "applications.argoproj.io")
    assert all(not v.get("subresources") for v in crd["spec"]["versions"])
    path = argo.cluster.path(APPS, "Application", "trino-alpha", ARGO_NS) + "/status"
    assert argo.cluster.server.request("GET", path)[0] == 404


def test_the_view_reads_every_field_argo_cd_wrote(argo: Argo) -> None:
    """Through the read-only token, each labelled Application of the namespace comes back with
    the sync and health status, the health message, the ref: values revision and the last
    operation's phase and message, exactly as written; no other Application is listed."""
    view = argo_view(argo.settings(), {"KUBECONFIG": str(argo.kubeconfig)})
    apps = view.applications()
    assert set(apps) == set(APPLICATIONS)
    for name, (cid, status) in APPLICATIONS.items():
        got = apps[name]
        assert (got.cluster_id, got.owner) == (cid, "team-a")
        if status is None:
            assert (got.sync, got.health, got.revision, got.operation) == (
                "Unknown", "Unknown", None, None)
            continue
        op = status.get("operationState", {})
        assert got.sync == status["sync"]["status"]
        assert got.health == status["health"]["status"]
        assert got.revision == status["sync"]["revisions"][1]  # the `ref: values` source
        assert got.operation == op.get("phase")
        assert got.operation_message == (op.get("message") or None)
        assert got.observed_at == status["reconciledAt"]
    # The pod's message arrives printable: no escape or bell reaches a terminal.
    message = apps["trino-beta"].message
    assert message is not None and message.isprintable()
    assert message.replace(" ", "") == "".join(c for c in HOSTILE if c.isprintable()).replace(
        " ", "")


def test_the_view_pages_through_the_list(argo: Argo) -> None:
    """With a page of one Application, the list takes one request per Application and returns
    the same Applications as one page does."""
    environ = {"KUBECONFIG": str(argo.kubeconfig)}
    whole = argo_view(argo.settings(), environ).applications()
    paged = argo_view(argo.settings(), environ)
    paged.page = 1
    assert paged.applications() == whole
    assert paged.requests == len(APPLICATIONS)


def test_the_deploy_rbac_is_read_only(argo: Argo) -> None:
    """deploy/'s Role lets the ServiceAccount list Applications but not change one, nor list
    them in another namespace (the API server's own authorization decides)."""
    server = argo.cluster.server
    app_path = argo.cluster.path(APPS, "Application", "trino-alpha", ARGO_NS)
    code, _ = server.request("PATCH", app_path, {"metadata": {"labels": {"x": "y"}}},
                             content_type="application/merge-patch+json", token=argo.token)
    assert code == 403
    code, _ = server.request("DELETE", app_path, token=argo.token)
    assert code == 403
    other = argo.cluster.path(APPS, "Application", namespace=TRINOGEN_NS)
    assert server.request("GET", other, token=argo.token)[0] == 403


@pytest.mark.parametrize(("case", "hint"), [
    ("bad-token", "did not accept the credentials"),
    ("other-namespace", "may not list applications.argoproj.io"),
    ("wrong-ca", "cannot be reached"),
])
def test_a_refused_read_says_what_to_do(argo: Argo, tmp_path: Path, case: str,
                                        hint: str) -> None:
    """A token the API server rejects, a namespace the Role does not cover and a certificate
    the CA does not sign each raise ArgoUnavailable saying what to fix, with no token in it."""
    import certifi

    token = "not-a-token" if case == "bad-token" else argo.token
    config = _kubeconfig(tmp_path / "config", argo.cluster, token)
    if case == "wrong-ca":
        doc = yaml.safe_load(config.read_text())
        doc["clusters"][0]["cluster"]["certificate-authority"] = certifi.where()
        config.write_text(yaml.safe_dump(doc))
    namespace = TRINOGEN_NS if case == "other-namespace" else ARGO_NS
    settings = replace(Settings(), argocd={"namespace": namespace})
    with pytest.raises(ArgoUnavailable, match=hint) as err:
        argo_view(settings, {"KUBECONFIG": str(config)}).applications()
    assert argo.token not in str(err.value)


@needs(ferretdb.available(), "FerretDB is not built and Go is not installed to build it")
def test_status_json_shows_argo_cds_view_and_flags_end_to_end(
        argo: Argo, ferretdb_server: Any) -> None:
    """`trinogen status -o json` over MongoDB's wire and the real API server shows each
    cluster's Application as written, whether its revision is trinogen's last commit, flags
    gamma (expected, missing) and delta and ghost (labelled, unexplained), and keeps what it
    saw in the status records."""
    database = f"argoview_{id(argo)}"
    client = ferretdb_server.client()
    status_coll = client[database]["trino_cluster_status"]
    status_coll.insert_many([{"_id": k, **v} for k, v in RECORDS.items()])
    env = {"TRINOGEN_MONGODB_URI": ferretdb_server.uri, "TRINOGEN_MONGODB_DATABASE": database,
           "TRINOGEN_ARGOCD_NAMESPACE": ARGO_NS, "KUBECONFIG": str(argo.kubeconfig)}
    try:
        result = CliRunner().invoke(app, ["status", "-o", "json"], env=env)
        assert result.exit_code == ExitCode.OK, result.output
        out = json.loads(result.stdout)
        stored = {d["_id"]: d for d in status_coll.find({})}
    finally:
        client.drop_database(database)
        client.close()
    rows = {r["clusterId"]: r for r in out["clusters"]}
    assert out["schemaVersion"] == 1 and out["argocd"]["read"] is True
    assert out["argocd"]["namespace"] == ARGO_NS
    assert out["argocd"]["missing"] == ["gamma"]
    assert {u["application"]: u["clusterId"] for u in out["argocd"]["unexplained"]} == {
        "trino-delta": "delta", "trino-ghost": "ghost"}
    alpha, beta = rows["alpha"]["argocd"], rows["beta"]["argocd"]
    assert (alpha["sync"], alpha["health"], alpha["operation"]) == ("Synced", "Healthy",
                                                                    "Succeeded")
    assert (alpha["revision"], alpha["revisionIs"]) == (NEW, "newer")  # NEW came after OLD
    assert (beta["sync"], beta["health"], beta["operation"]) == ("OutOfSync", "Degraded",
                                                                 "Failed")
    assert (beta["revision"], beta["revisionIs"]) == (OLD, "older")
    assert beta["operationMessage"] == "one or more objects failed to apply"
    assert rows["gamma"]["argocd"]["missing"] is True
    assert rows["fresh"]["argocd"]["sync"] == "Unknown"
    assert "argocd" not in rows["delta"]  # pruned: no Application expected
    # Written back into the records, beside the sync fields it left alone.
    assert stored["alpha"]["argocd"]["health"] == "Healthy"
    assert stored["alpha"]["commit"] == OLD and stored["alpha"]["state"] == "synced"
    assert stored["gamma"]["argocd"]["missing"] is True
    assert "argocd" not in stored["delta"]


def test_status_text_without_records_lists_applications_and_flags_nothing(argo: Argo) -> None:
    """With the embedded database (no status records to judge by), `trinogen status` still
    lists what Argo CD shows per cluster label and flags nothing."""
    env = {"TRINOGEN_MONGODB_URI": "mongomock://", "TRINOGEN_ARGOCD_NAMESPACE": ARGO_NS,
           "KUBECONFIG": str(argo.kubeconfig)}
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.stdout.splitlines()
    assert any(line.startswith("alpha ") for line in lines)
    assert "argocd: Synced Healthy at 2222222222" in result.stdout
    assert "MISSING" not in result.stdout and "UNEXPLAINED" not in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert f"{len(APPLICATIONS)} Applications read in namespace {ARGO_NS}" in result.stdout
