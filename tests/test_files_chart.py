"""Attached files through the real Trino chart and the whole pipeline: the volumes and mounts in
both pod templates, the file a property names present in the pod, the manifests valid for their
API, and the secret files' values nowhere in git or output.

Like tests/test_chart.py: values.yaml rendered by trinogen, then the chart rendered by Helm's Go
library (helm-python-sdk) from ../shared/charts/trino; expectations come from the document.
"""

from __future__ import annotations

import copy
import json
import posixpath
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from tests import k8s_schema
from tests.conftest import CHART_DIR, SCHEMAS, demo_settings, example_docs, needs, with_hdfs
from tests.fakes import FakeReader, FakeRepo, FakeSource
from tests.test_chart import helm_python, render_through_chart
from trinogen import pipeline
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.report import format_text
from trinogen.source import doc_key

pytestmark = [
    needs(helm_python is not None, "helm-python-sdk is not installed (pip install -e '.[test]')"),
    needs((CHART_DIR / "Chart.yaml").is_file(), f"no Trino chart at {CHART_DIR}"),
]

CID = "adhoc-dev"
CORE_SITE = "<configuration>\n  <property><name>fs.defaultFS</name><value>file:///</value></property>\n</configuration>\n"
HDFS_SITE = "<configuration/>\n"
KEYTAB_PATH = f"secret/trino/{CID}/kerberos"
FILES = [
    {"name": "core-site.xml", "content": CORE_SITE},
    {"name": "hdfs-site.xml", "content": HDFS_SITE},
    {"name": "trino.keytab", "secret": f"{{{{ vault:{KEYTAB_PATH}#keytab }}}}", "encoding": "base64"},
    {"name": "gcs-key.json", "secret": "{{ GCS_KEY }}"},
]
HIVE = {"name": "hive", "storage": "hdfs", "properties": {  # legacy Hadoop: the platform's option
    "connector.name": "hive", "hive.metastore.uri": "thrift://m:9083",
    "hive.config.resources": "/etc/trino/files/core-site.xml,/etc/trino/files/hdfs-site.xml",
    "hive.metastore.authentication.type": "KERBEROS",
    "hive.metastore.client.principal": "trino@EXAMPLE.COM",
    "hive.metastore.service.principal": "hive/_HOST@EXAMPLE.COM",
    "hive.metastore.client.keytab": "/etc/trino/secret-files/trino.keytab"}}
GCS = {"name": "lake", "properties": {
    "connector.name": "iceberg", "iceberg.catalog.type": "rest",
    "iceberg.rest-catalog.uri": "http://rest:8181", "fs.native-gcs.enabled": "true",
    "gcs.json-key-file-path": "/etc/trino/secret-files/gcs-key.json"}}
# What Vault holds (as the fake reader serves it): markers that must never leave the reader.
VAULT = {KEYTAB_PATH: {"keytab": "S0VZVEFCLXNlY3JldC1tYXJrZXItOTE3Mw=="},
         f"secret/trino/{CID}": {"GCS_KEY": '{"private_key": "gcs-secret-marker-5521"}'}}
MARKERS = ("S0VZVEFCLXNlY3JldC1tYXJrZXItOTE3Mw==", "gcs-secret-marker-5521")


def document() -> dict[str, Any]:
    d = copy.deepcopy(next(x for x in example_docs() if x["clusterId"] == CID))
    d["files"] = copy.deepcopy(FILES)
    d["connectors"] = [*d["connectors"], copy.deepcopy(HIVE), copy.deepcopy(GCS)]
    return d


@pytest.fixture(scope="module")
def rendered() -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """trinogen's files for the document, and the chart's objects from its values.yaml."""
    settings = with_hdfs(demo_settings())
    d = document()
    cluster = classify(RawDocument(doc_key(d["_id"]), d), settings)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, {})
    chart = helm_python.Chart.load(CHART_DIR)
    values_text = files[f"trino-clusters/{CID}/values.yaml"].decode()
    _, objects = render_through_chart(chart, values_text, CID, f"trino-{CID}")
    return files, objects


def _manifest(files: Mapping[str, bytes], folder: str, kind: str) -> dict[str, Any]:
    (found,) = [yaml.safe_load(v) for p, v in files.items()
                if p.startswith(f"trino-clusters/{CID}/{folder}/") and yaml.safe_load(v)["kind"] == kind]
    return dict(found)


def _pod(objects: list[dict[str, Any]], role: str) -> dict[str, Any]:
    (dep,) = [o for o in objects if o["kind"] == "Deployment"
              and o["metadata"]["name"] == f"{CID}-trino-{role}"]
    return dict(dep["spec"]["template"])


def _container(pod: Mapping[str, Any], role: str) -> dict[str, Any]:
    (c,) = [c for c in pod["spec"]["containers"] if c["name"] == f"trino-{role}"]
    return dict(c)


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_both_pods_mount_the_config_map_and_the_secret_at_their_directories(
        rendered: tuple[dict[str, bytes], list[dict[str, Any]]], role: str) -> None:
    """Each pod has a volume of the files' ConfigMap and one of the secret files' Secret (the
    names trinogen's manifests create), mounted whole at /etc/trino/files and /etc/trino/secret-files."""
    files, objects = rendered
    cm = _manifest(files, "manifests", "ConfigMap")
    es = _manifest(files, "secrets", "ExternalSecret")
    pod = _pod(objects, role)
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes["trinogen-files"] == {"name": "trinogen-files",
                                         "configMap": {"name": cm["metadata"]["name"]}}
    assert volumes["trinogen-secret-files"] == {"name": "trinogen-secret-files",
                                                "secret": {"secretName": es["spec"]["target"]["name"]}}
    mounts = {m["name"]: m for m in _container(pod, role)["volumeMounts"]}
    assert mounts["trinogen-files"] == {"name": "trinogen-files", "mountPath": "/etc/trino/files"}
    assert mounts["trinogen-secret-files"] == {"name": "trinogen-secret-files",
                                               "mountPath": "/etc/trino/secret-files"}
    # The chart's own configuration stays where it was, untouched by the new mounts.
    assert mounts["config-volume"]["mountPath"] == "/etc/trino"
    assert mounts["catalog-volume"]["mountPath"] == "/etc/trino/catalog"


def _file_in_pod(pod: Mapping[str, Any], role: str, path: str, files: Mapping[str, bytes]) -> str | None:
    """Where `path` comes from in the pod: `configmap:<name>/<key>` or `secret:<name>/<key>`,
    following the chart's volumeMounts and volumes (the deepest mount wins, as in Linux)."""
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    best = None
    for m in _container(pod, role)["volumeMounts"]:
        base = m["mountPath"].rstrip("/")
        covers = (path == base and m.get("subPath")) or path.startswith(base + "/")
        if covers and (best is None or len(base) > len(best["mountPath"].rstrip("/"))):
            best = m
    if best is None:
        return None
    key = best.get("subPath") or posixpath.relpath(path, best["mountPath"])
    volume = volumes[best["name"]]
    if "configMap" in volume:
        name = volume["configMap"]["name"]
        cms = [yaml.safe_load(v) for p, v in files.items() if "/manifests/" in p]
        data = next((c["data"] for c in cms if c["metadata"]["name"] == name), {})
        return f"configmap:{name}/{key}" if key in data else None
    if "secret" in volume:
        name = volume["secret"]["secretName"]
        es = [yaml.safe_load(v) for p, v in files.items() if "/secrets/" in p]
        keys = {d["secretKey"] for e in es if e["spec"]["target"]["name"] == name
                for d in e["spec"]["data"]}
        return f"secret:{name}/{key}" if key in keys else None
    return None


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_every_file_a_catalog_names_exists_in_the_pod(
        rendered: tuple[dict[str, bytes], list[dict[str, Any]]], role: str) -> None:
    """Each file the chart's catalogs name (read back from the chart's catalog ConfigMap) is a
    key of a ConfigMap or Secret that trinogen renders, mounted at that path in the pod."""
    files, objects = rendered
    (catalogs,) = [o for o in objects if o["kind"] == "ConfigMap"
                   and o["metadata"]["name"] == f"{CID}-trino-catalog"]
    named = {}
    for text in catalogs["data"].values():
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key in ("hive.config.resources", "hive.metastore.client.keytab", "gcs.json-key-file-path"):
                named.update({p: key for p in value.split(",")})
    assert len(named) == 4
    pod = _pod(objects, role)
    found = {p: _file_in_pod(pod, role, p, files) for p in named}
    assert found == {
        "/etc/trino/files/core-site.xml": f"configmap:{CID}-trino-files/core-site.xml",
        "/etc/trino/files/hdfs-site.xml": f"configmap:{CID}-trino-files/hdfs-site.xml",
        "/etc/trino/secret-files/trino.keytab": f"secret:{CID}-trino-secret-files/trino.keytab",
        "/etc/trino/secret-files/gcs-key.json": f"secret:{CID}-trino-secret-files/gcs-key.json",
    }


def test_the_config_map_holds_exactly_the_text_files(
        rendered: tuple[dict[str, bytes], list[dict[str, Any]]]) -> None:
    """The ConfigMap's data is the document's text files, no more, no less."""
    cm = _manifest(rendered[0], "manifests", "ConfigMap")
    assert cm["data"] == {f["name"]: f["content"] for f in FILES if "content" in f}


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_the_pod_templates_carry_the_files_checksum(
        rendered: tuple[dict[str, bytes], list[dict[str, Any]]], role: str) -> None:
    """The chart copies the files checksum into both pod templates (a content change rolls them)."""
    annotations = _pod(rendered[1], role)["metadata"]["annotations"]
    assert len(annotations["trinogen.io/files-checksum"]) == 16


def test_the_config_map_is_a_valid_kubernetes_object(
        rendered: tuple[dict[str, bytes], list[dict[str, Any]]]) -> None:
    """The ConfigMap passes strict Kubernetes validation and the API server's ObjectMeta rules."""
    kv = pytest.importorskip("kubernetes_validate")
    cm = _manifest(rendered[0], "manifests", "ConfigMap")
    kv.validate(cm, "1.33", strict=True)
    assert k8s_schema.object_meta_errors(cm["metadata"]) == []


def test_the_external_secret_is_valid_and_names_the_vault_refs(
        rendered: tuple[dict[str, bytes], list[dict[str, Any]]]) -> None:
    """The secret files' ExternalSecret is valid for the ESO CRD and maps each file to its ref."""
    schema_file = SCHEMAS / "externalsecret.schema.json"
    if not schema_file.is_file():
        pytest.skip(f"no ESO schema in {SCHEMAS}")
    es = _manifest(rendered[0], "secrets", "ExternalSecret")
    assert k8s_schema.schema_errors(es, k8s_schema.load(schema_file)) == []
    assert k8s_schema.object_meta_errors(es["metadata"]) == []
    refs = {d["secretKey"]: d["remoteRef"] for d in es["spec"]["data"]}
    assert refs == {
        "trino.keytab": {"key": KEYTAB_PATH, "property": "keytab", "decodingStrategy": "Base64"},
        "gcs-key.json": {"key": f"secret/trino/{CID}", "property": "GCS_KEY"},
    }


def test_secret_file_values_appear_nowhere_in_git_or_output() -> None:
    """A checked sync reads the secret files from Vault, pins their versions, and no value (nor
    its base64 or JSON form) reaches any file in git, the report or its JSON."""
    settings = with_hdfs(demo_settings(git={"remote": "https://git.example.com/g.git"}, secrets={"check": True}))
    d = document()
    src, repo = FakeSource({doc_key(d["_id"]): d}), FakeRepo()
    reader = FakeReader(VAULT, {KEYTAB_PATH: 3, f"secret/trino/{CID}": 5})
    report = pipeline.sync(settings, src, repo, reader_factory=lambda: reader)
    assert not report.failed, report.failed
    es = yaml.safe_load(repo.files[f"trino-clusters/{CID}/secrets/{CID}-trino-secret-files.yaml"])
    assert {d["secretKey"]: d["remoteRef"]["version"] for d in es["spec"]["data"]} == {
        "trino.keytab": "3", "gcs-key.json": "5"}
    outputs = [b.decode() for b in repo.files.values()]
    outputs += [json.dumps(report.to_json()), format_text(report), repr(report), str(src.status)]
    for marker in MARKERS:
        assert not any(marker in text for text in outputs), marker


def test_a_rotated_secret_file_rolls_the_pods() -> None:
    """A new Vault version of a secret file changes the pods' secrets checksum."""
    settings = with_hdfs(demo_settings(git={"remote": "https://git.example.com/g.git"}, secrets={"check": True}))
    d = document()
    src, repo = FakeSource({doc_key(d["_id"]): d}), FakeRepo()
    reader = FakeReader(VAULT, {KEYTAB_PATH: 1, f"secret/trino/{CID}": 1})
    values = f"trino-clusters/{CID}/values.yaml"

    def checksum() -> str:
        pipeline.sync(settings, src, repo, reader_factory=lambda: reader)
        return str(yaml.safe_load(repo.files[values])["worker"]["annotations"]["trinogen.io/secrets-checksum"])

    before = checksum()
    reader.versions[KEYTAB_PATH] = 2
    assert checksum() != before


def test_removing_the_files_removes_their_manifests_and_sources() -> None:
    """When a document drops `files`, the next sync deletes the ConfigMap and the ExternalSecret
    and the Application loses the folders they were in; the catalog needing them must go too."""
    settings = with_hdfs(demo_settings(git={"remote": "https://git.example.com/g.git"}))
    d = document()
    key = doc_key(d["_id"])
    src, repo = FakeSource({key: d}), FakeRepo()
    pipeline.sync(settings, src, repo)
    root = f"trino-clusters/{CID}"
    assert f"{root}/manifests/{CID}-trino-files.yaml" in repo.files
    plain = {**d, "connectors": [c for c in d["connectors"] if c["name"] not in ("hive", "lake")]}
    plain.pop("files")
    src.docs[key] = plain
    report = pipeline.sync(settings, src, repo)
    assert not report.failed, report.failed
    assert not [p for p in repo.files if p.startswith((f"{root}/manifests/", f"{root}/secrets/"))]
    app = yaml.safe_load(repo.files[f"trino-applications/{CID}.yaml"])
    assert len(app["spec"]["sources"]) == 2
    values = yaml.safe_load(repo.files[f"{root}/values.yaml"])
    assert "configMounts" not in values and "secretMounts" not in values
    assert "annotations" not in values["worker"]


def test_a_secret_file_missing_in_vault_fails_its_cluster_naming_it() -> None:
    """A checked sync whose Vault lacks a secret file's key fails that cluster (stage secrets),
    naming the Secret, the file and the placeholder; nothing of it is written."""
    settings = with_hdfs(demo_settings(git={"remote": "https://git.example.com/g.git"}, secrets={"check": True}))
    d = document()
    src, repo = FakeSource({doc_key(d["_id"]): d}), FakeRepo()
    reader = FakeReader({KEYTAB_PATH: {"other": "x"}, **{k: v for k, v in VAULT.items() if k != KEYTAB_PATH}})
    report = pipeline.sync(settings, src, repo, reader_factory=lambda: reader)
    (failed,) = report.failed
    assert failed.stage == "secrets"
    (problem,) = failed.problems
    assert problem.field == f"Secret {CID}-trino-secret-files, key trino.keytab"
    assert f"vault:{KEYTAB_PATH}#keytab" in problem.message and "no key 'keytab'" in problem.message
    assert not any(p.startswith(f"trino-clusters/{CID}/") for p in repo.files)
