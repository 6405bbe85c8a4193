"""Storage options and fault tolerance through the real Trino chart (issues 13.5 and 14.4).

A document picking a store for its catalog and an exchange for its retries is rendered by
trinogen and then by the chart (`../shared/charts/trino`, helm-python-sdk); the catalog ConfigMap
and both roles' exchange-manager.properties and config.properties are read back with the
independent java.util.Properties reader (tests/javaprops.py) and must hold exactly what the
settings below imply, written out by hand.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from tests import javaprops
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import CHART, helm_python
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.settings.checks import check
from trinogen.settings.named import parse_kind

pytestmark = CHART

STORAGE = {
    "lake-minio": {"type": "s3", "region": "us-east-1", "endpoint": "http://minio.data:9000",
                   "path_style_access": True, "sse": {"type": "S3"},
                   "credentials": {"vault": {"access_key": "secret/trino/{cluster}/s3#ak",
                                             "secret_key": "secret/trino/{cluster}/s3#sk"}},
                   "properties": {"s3.max-connections": "64"}},
    "lake-gcs": {"type": "gcs", "project_id": "analytics", "credentials": "workload-identity"},
}
EXCHANGE = {"spool": {"storage": "lake-minio", "location": "s3://trino-spool/{owner}/{cluster}",
                      "properties": {"exchange.sink-buffers-per-partition": "2"}}}
DOC = {
    "_id": "chart-storage", "clusterId": "etl-lake", "owner": "etl", "enabled": True,
    "trinoVersion": "476",
    "clusterConfig": {"coordinator": {"jvm": {"maxHeapSize": "6G"}},
                      "worker": {"replicas": 3, "jvm": {"maxHeapSize": "6G"}}},
    "faultTolerance": {"retryPolicy": "TASK", "exchange": "spool"},
    "connectors": [
        {"name": "hive", "storage": "lake-minio",
         "properties": {"connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083"}},
        {"name": "iceberg", "storage": "lake-gcs",
         "properties": {"connector.name": "iceberg", "iceberg.catalog.type": "rest",
                        "iceberg.rest-catalog.uri": "http://rest:8181"}},
    ],
}
# The variables trinogen names for the two references (secrets.env_name's documented rule:
# TRINO_VAULT_<slug>_<8 hex of sha256(reference)>), recomputed here from the reference text.


def _env(ref: str) -> str:
    import hashlib
    import re

    slug = re.sub(r"[^A-Za-z0-9]+", "_", ref).strip("_").upper()
    return f"TRINO_VAULT_{slug}_{hashlib.sha256(ref.encode()).hexdigest()[:8].upper()}"


AK, SK = _env("secret/trino/etl-lake/s3#ak"), _env("secret/trino/etl-lake/s3#sk")


def _settings() -> Settings:
    s = dataclasses.replace(demo_settings(), named={
        "storage": parse_kind("storage", STORAGE, "t"),
        "exchange": parse_kind("exchange", EXCHANGE, "t")})
    check(s)
    return s


@pytest.fixture(scope="module")
def objects() -> dict[str, dict[str, Any]]:
    """The chart's ConfigMaps (name -> data) and the Deployments' containers' envFrom."""
    s = _settings()
    cluster = classify(RawDocument('"chart-storage"', DOC), s)
    assert isinstance(cluster, Cluster), getattr(cluster, "problems", None)
    files = Renderer(s).render_cluster(cluster, {})
    values = helm_python.values_from_yaml(files["trino-clusters/etl-lake/values.yaml"].decode())
    manifests = helm_python.Chart.load(CHART_DIR).render(
        values, name="etl-lake", namespace="trino-etl-lake", is_install=True)
    out: dict[str, dict[str, Any]] = {}
    for path, text in manifests.items():
        if path.endswith((".yaml", ".yml")):
            for o in yaml.safe_load_all(text):
                if o and o.get("kind") in ("ConfigMap", "Deployment"):
                    out[f"{o['kind']}/{o['metadata']['name']}"] = o
    return out


def test_the_catalogs_hold_exactly_what_their_stores_imply(
    objects: dict[str, dict[str, Any]]
) -> None:
    """hive gets the S3 store's switch, fields, tuning and env credentials; iceberg the GCS one."""
    data = objects["ConfigMap/etl-lake-trino-catalog"]["data"]
    assert javaprops.loads(data["hive.properties"]) == {
        "connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083",
        "fs.native-s3.enabled": "true", "s3.region": "us-east-1",
        "s3.endpoint": "http://minio.data:9000", "s3.path-style-access": "true",
        "s3.sse.type": "S3", "s3.max-connections": "64",
        "s3.aws-access-key": f"${{ENV:{AK}}}", "s3.aws-secret-key": f"${{ENV:{SK}}}"}
    assert javaprops.loads(data["iceberg.properties"]) == {
        "connector.name": "iceberg", "iceberg.catalog.type": "rest",
        "iceberg.rest-catalog.uri": "http://rest:8181",
        "fs.native-gcs.enabled": "true", "gcs.project-id": "analytics"}


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_both_roles_get_the_exchange_manager_and_the_retry_policy(
    objects: dict[str, dict[str, Any]], role: str
) -> None:
    """exchange-manager.properties per role: filesystem, the cluster's prefix, the S3 store."""
    data = objects[f"ConfigMap/etl-lake-trino-{role}"]["data"]
    assert javaprops.loads(data["exchange-manager.properties"]) == {
        "exchange-manager.name": "filesystem",
        "exchange.base-directories": "s3://trino-spool/etl/etl-lake",
        "exchange.s3.region": "us-east-1", "exchange.s3.endpoint": "http://minio.data:9000",
        "exchange.s3.path-style-access": "true", "exchange.s3.sse.type": "S3",
        "exchange.s3.aws-access-key": f"${{ENV:{AK}}}",
        "exchange.s3.aws-secret-key": f"${{ENV:{SK}}}",
        "exchange.sink-buffers-per-partition": "2"}
    config = javaprops.pairs(data["config.properties"])
    assert [v for k, v in config if k == "retry-policy"] == ["TASK"]


@pytest.mark.parametrize("role", ["coordinator", "worker"])
def test_the_pods_read_the_credentials_from_the_clusters_secret(
    objects: dict[str, dict[str, Any]], role: str
) -> None:
    """Every Trino container takes envFrom the one Secret the ExternalSecret fills."""
    spec = objects[f"Deployment/etl-lake-trino-{role}"]["spec"]["template"]["spec"]
    (container,) = [c for c in spec["containers"] if c["name"] == f"trino-{role}"]
    assert {"secretRef": {"name": "etl-lake-trino-secrets"}} in container["envFrom"]
