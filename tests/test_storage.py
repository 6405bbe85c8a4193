"""Lake storage: storage options in the settings, a catalog naming one (issue 13 item 5).

Expectations are written out from the options these tests declare, never read from trinogen.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.conftest import demo_settings
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind

KEYS = {"vault": {"access_key": "secret/trino/{cluster}/s3#access_key",
                  "secret_key": "secret/trino/teams/{owner}/s3#secret_key"}}
STORAGE: dict[str, Any] = {
    "lake-eu": {"type": "s3", "region": "eu-west-1", "credentials": "workload-identity"},
    "lake-minio": {"type": "s3", "region": "us-east-1", "endpoint": "http://minio.data:9000",
                   "path_style_access": True, "credentials": KEYS,
                   "sse": {"type": "KMS", "kms_key_id": "alias/lake"},
                   "iam_role": "arn:aws:iam::1:role/lake",
                   "properties": {"s3.max-connections": "200"}},
    "lake-gcs": {"type": "gcs", "project_id": "analytics", "credentials": "workload-identity"},
    "lake-gcs-key": {"type": "gcs", "credentials": {"vault": {"json_key": "secret/trino/{cluster}/gcs#key"}}},
    "lake-az": {"type": "azure", "account": "lakeacct", "credentials": "workload-identity"},
    "lake-az-key": {"type": "azure", "credentials": {"vault": {"access_key": "secret/trino/{cluster}/az#key"}}},
    "hdfs": {"type": "hdfs", "properties": {"hive.dfs.replication": "2"}},
}


def settings_with(storage: dict[str, Any] | None = None, **sections: Any) -> Settings:
    s = demo_settings(**sections) if sections else demo_settings()
    return dataclasses.replace(s, named={"storage": parse_kind("storage", storage or STORAGE, "t")})


def doc(*connectors: dict[str, Any], version: str = "476") -> dict[str, Any]:
    return {"_id": "d", "clusterId": "lake", "owner": "data_team", "enabled": True,
            "trinoVersion": version,
            "clusterConfig": {"coordinator": {"jvm": {"maxHeapSize": "4G"}},
                              "worker": {"replicas": 1, "jvm": {"maxHeapSize": "4G"}}},
            "connectors": list(connectors)}


def hive(storage: Any, connector: str = "hive", **props: str) -> dict[str, Any]:
    base = {"connector.name": connector}
    if connector in ("hive", "delta_lake", "hudi"):
        base["hive.metastore.uri"] = "thrift://hms:9083"
    return {"name": "lake", "storage": storage, "properties": {**base, **props}}


def catalog(outcome: Any) -> dict[str, str]:
    """The catalog's properties as text, placeholders as ${ENV:...}."""
    assert isinstance(outcome, Cluster), getattr(outcome, "problems", None)
    (conn,) = outcome.connectors
    return {k: "".join(s if isinstance(s, str) else f"${{ENV:{s.env}}}" for s in v)
            for k, v in conn.properties}


def problems(outcome: Any) -> list[tuple[str, str]]:
    assert isinstance(outcome, Failed), outcome
    return [(p.field, p.message) for p in outcome.problems]


# --- the settings -----------------------------------------------------------------------------


def test_options_are_read_with_every_field() -> None:
    """A storage option keeps what the settings file says, the Vault references as templates."""
    minio = parse_kind("storage", STORAGE, "t")["lake-minio"]
    assert (minio.type, minio.region, minio.endpoint, minio.path_style_access) == (
        "s3", "us-east-1", "http://minio.data:9000", True)
    assert (minio.sse_type, minio.sse_kms_key_id, minio.iam_role) == (
        "KMS", "alias/lake", "arn:aws:iam::1:role/lake")
    assert dict(minio.vault) == KEYS["vault"]
    assert dict(minio.properties) == {"s3.max-connections": "200"}
    assert parse_kind("storage", STORAGE, "t")["lake-eu"].workload_identity


@pytest.mark.parametrize(("raw", "needle"), [
    ({"type": "ftp"}, r"lake\.type must be one of s3, gcs, azure, hdfs"),
    ({"type": "hdfs", "credentials": "workload-identity"},
     r"lake\.credentials is not a field of a hdfs store"),
    ({"type": "hdfs", "properties": {"hive.config.resources": "/etc/hadoop/core-site.xml"}},
     r"'hive\.config\.resources' is not a hive\.dfs\.\* property"),
    ({"type": "hdfs", "properties": {"fs.native-local.enabled": "true"}},
     r"'fs\.native-local\.enabled' is not a hive\.dfs\.\* property"),
    ({"type": "s3", "credentials": "workload-identity"}, r"lake\.region is required"),
    ({"type": "s3", "region": "eu west", "credentials": "workload-identity"}, r"lake\.region"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity", "projectId": "p"},
     r"lake\.projectId is not a field of a s3 store"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity", "endpoint": "minio:9000"},
     r"lake\.endpoint must be an http"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity", "path_style_access": "yes"},
     r"path_style_access must be true or false"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity", "sse": {"type": "AES"}},
     r"sse\.type must be one of S3, KMS"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity",
      "sse": {"type": "S3", "kms_key_id": "k"}}, r"kms_key_id applies only to sse\.type KMS"),
    ({"type": "s3", "region": "x"}, r"lake\.credentials must be 'workload-identity' or"),
    ({"type": "s3", "region": "x", "credentials": {"vault": {"access_key": "secret/a#b"}}},
     r"access_key: <ref>, secret_key: <ref>"),
    ({"type": "gcs", "credentials": {"vault": {"json_key": "secret-only#k"}}},
     r"credentials\.vault\.json_key: .*needs a mount and a path"),
    ({"type": "gcs", "credentials": {"vault": {"json_key": "secret/{team}/x#k"}}},
     r"only \{cluster\} and \{owner\} are substituted"),
    ({"type": "azure", "account": "Not_An_Account", "credentials": "workload-identity"},
     r"lake\.account must be an Azure storage account name"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity",
      "properties": {"gcs.endpoint": "x"}}, r"'gcs\.endpoint' is not a s3\.\* property"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity",
      "properties": {"s3.region": "y"}}, r"s3\.region comes from the store's own fields"),
    ({"type": "s3", "region": "x", "credentials": "workload-identity",
      "properties": {"s3.max-connections": "${ENV:X}"}}, r"one line of plain text"),
])
def test_a_bad_storage_option_names_its_field(raw: dict[str, Any], needle: str) -> None:
    """Each malformed storage option is a configuration error naming storage.<name>.<field>."""
    with pytest.raises(ConfigError, match=needle):
        parse_kind("storage", {"lake": raw}, "t")


# --- what a catalog gets ----------------------------------------------------------------------

S3_ENV_ACCESS = "TRINO_VAULT_SECRET_TRINO_LAKE_S3_ACCESS_KEY_"  # + 8 hex of the reference


@pytest.mark.parametrize(("storage", "expected"), [
    ("lake-eu", {"fs.native-s3.enabled": "true", "s3.region": "eu-west-1"}),
    ("lake-gcs", {"fs.native-gcs.enabled": "true", "gcs.project-id": "analytics"}),
    ("lake-az", {"fs.native-azure.enabled": "true", "azure.auth-type": "DEFAULT"}),
    ("hdfs", {"fs.hadoop.enabled": "true", "hive.dfs.replication": "2"}),
])
def test_workload_identity_stores_write_their_switch_and_settings_only(
    storage: str, expected: dict[str, str]
) -> None:
    """A store with workload identity writes the file system switch and its fields, no secret."""
    props = catalog(classify(RawDocument('"d"', doc(hive(storage))), settings_with()))
    assert props == {"connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083",
                     **expected}


def test_vault_credentials_become_env_placeholders_of_the_clusters_secret() -> None:
    """Access and secret key reach the catalog as ${ENV:...} bound to the formatted references."""
    outcome = classify(RawDocument('"d"', doc(hive("lake-minio"))), settings_with())
    props = catalog(outcome)
    assert {k: v for k, v in props.items() if "${ENV:" not in v} == {
        "connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083",
        "fs.native-s3.enabled": "true", "s3.region": "us-east-1",
        "s3.endpoint": "http://minio.data:9000", "s3.path-style-access": "true",
        "s3.sse.type": "KMS", "s3.sse.kms-key-id": "alias/lake",
        "s3.iam-role": "arn:aws:iam::1:role/lake", "s3.max-connections": "200"}
    assert props["s3.aws-access-key"].startswith("${ENV:" + S3_ENV_ACCESS)
    assert isinstance(outcome, Cluster)
    refs = {str(u.ref) for u in outcome.secret_uses}
    assert refs == {"secret/trino/lake/s3#access_key", "secret/trino/teams/data_team/s3#secret_key"}


@pytest.mark.parametrize(("storage", "key", "ref"), [
    ("lake-gcs-key", "gcs.json-key", "secret/trino/lake/gcs#key"),
    ("lake-az-key", "azure.access-key", "secret/trino/lake/az#key"),
])
def test_gcs_and_azure_keys_come_from_vault(storage: str, key: str, ref: str) -> None:
    """A GCS JSON key or an Azure access key is a placeholder on its Trino property."""
    outcome = classify(RawDocument('"d"', doc(hive(storage))), settings_with())
    props = catalog(outcome)
    assert isinstance(outcome, Cluster)
    (use,) = outcome.secret_uses
    assert (str(use.ref), props[key]) == (ref, f"${{ENV:{use.env}}}")
    if storage == "lake-az-key":
        assert props["azure.auth-type"] == "ACCESS_KEY"


def test_the_rendered_files_hold_no_secret_and_the_external_secret_maps_the_keys() -> None:
    """The ExternalSecret carries the store's references; catalog and values only env names."""
    s = settings_with()
    outcome = classify(RawDocument('"d"', doc(hive("lake-minio"))), s)
    assert isinstance(outcome, Cluster)
    files = Renderer(s).render_cluster(outcome, {})
    es = files["trino-clusters/lake/secrets/externalsecret.yaml"].decode()
    assert "key: secret/trino/lake/s3" in es and "property: access_key" in es
    assert "key: secret/trino/teams/data_team/s3" in es and "property: secret_key" in es


@pytest.mark.parametrize(("connector", "props", "field", "needle"), [
    ("postgresql", {"connection-url": "jdbc:postgresql://pg/dw"}, 'connectors["lake"].storage',
     "reads no file system"),
    ("kafka", {"kafka.nodes": "k:9092"}, 'connectors["lake"].storage', "reads no file system"),
    ("hive", {"s3.region": "us-west-2"}, 'connectors["lake"].properties["s3.region"]',
     "is written by the storage option"),
    ("hive", {"fs.native-s3.enabled": "true"},
     'connectors["lake"].properties["fs.native-s3.enabled"]', "storage is set in one place"),
    ("iceberg", {"iceberg.catalog.type": "rest", "iceberg.rest-catalog.uri": "http://r",
                 "s3.endpoint": "http://x"},
     'connectors["lake"].properties["s3.endpoint"]', "is written by the storage option"),
    ("hive", {"storage": "hdfs", "hive.dfs.replication": "3"},
     'connectors["lake"].properties["hive.dfs.replication"]', "is written by the storage option"),
    ("postgresql", {"storage": "hdfs", "connection-url": "jdbc:postgresql://pg/dw"},
     'connectors["lake"].storage', "reads no file system"),
    # legacy Hadoop serves file: (issue 19): only the platform's hdfs store switches it on
    ("hive", {"storage": "hdfs", "fs.hadoop.enabled": "true"},
     'connectors["lake"].properties["fs.hadoop.enabled"]', "storage option of type hdfs"),
    ("hive", {"fs.hadoop.enabled": "true"},
     'connectors["lake"].properties["fs.hadoop.enabled"]', "serves file: locations"),
])
def test_a_catalog_that_cannot_take_the_store_is_refused(
    connector: str, props: dict[str, str], field: str, needle: str
) -> None:
    """A non-lake connector, a catalog also setting the store's properties, or one switching
    legacy Hadoop on itself, fails there."""
    store = props.pop("storage", "lake-eu")
    outcome = classify(RawDocument('"d"', doc(hive(store, connector, **props))),
                       settings_with())
    assert any(f == field and needle in m for f, m in problems(outcome)), problems(outcome)


def test_hadoop_resources_need_the_hdfs_store_and_a_mounted_file() -> None:
    """With the platform's hdfs store, a catalog names its attached core-site.xml (the attached
    files feature); the same catalog without the store is refused by the registry check."""
    files = [{"name": "core-site.xml", "content": "<configuration/>\n"}]
    props = {"hive.config.resources": "/etc/trino/files/core-site.xml"}
    ok = classify(RawDocument('"d"', {**doc(hive("hdfs", **props)), "files": files}),
                  settings_with())
    assert catalog(ok)["fs.hadoop.enabled"] == "true"
    without = classify(RawDocument('"d"', {**doc(hive("lake-eu", **props)), "files": files}),
                       settings_with())
    assert [f for f, m in problems(without) if "type hdfs" in m] == [
        'connectors["lake"].properties["hive.config.resources"]']


def test_an_unknown_store_name_lists_the_known_ones() -> None:
    """Naming a store the settings do not offer fails with the names they do."""
    outcome = classify(RawDocument('"d"', doc(hive("lake-us"))), settings_with())
    ((field, message),) = problems(outcome)
    assert field == 'connectors["lake"].storage' and "lake-eu" in message


def test_a_gcs_file_system_is_still_open_beside_an_s3_store() -> None:
    """Only the picked store's namespace is owned: gcs.* may come with an s3 store."""
    outcome = classify(RawDocument('"d"', doc(hive("lake-eu", **{
        "fs.native-gcs.enabled": "true", "gcs.project-id": "p"}))), settings_with())
    assert catalog(outcome)["gcs.project-id"] == "p"


def test_generated_names_are_checked_against_the_documents_trino_version() -> None:
    """s3.storage-class (Trino 476) from a store is refused for Trino 470, which lacks it."""
    store = {"lake": {"type": "s3", "region": "x", "credentials": "workload-identity",
                      "properties": {"s3.storage-class": "STANDARD"}}}
    ok = classify(RawDocument('"d"', doc(hive("lake"))), settings_with(store))
    assert catalog(ok)["s3.storage-class"] == "STANDARD"
    old = classify(RawDocument('"d"', doc(hive("lake"), version="470")), settings_with(store))
    ((field, message),) = problems(old)
    assert field == 'connectors["lake"].storage' and "s3.storage-class" in message


def test_trino_483_gets_the_renamed_switch() -> None:
    """Trino 483 renamed fs.native-s3.enabled to fs.s3.enabled: the store writes the new name."""
    outcome = classify(RawDocument('"d"', doc(hive("lake-eu"), version="483")), settings_with())
    assert catalog(outcome)["fs.s3.enabled"] == "true"
    assert isinstance(outcome, Cluster) and outcome.warnings == ()


@pytest.mark.parametrize(("connector", "accepted"), [
    ("hive", True), ("delta_lake", True), ("postgresql", False), ("tpch", False)])
def test_without_the_registry_only_lake_connectors_take_a_store(
    connector: str, accepted: bool
) -> None:
    """With validation.trino_properties off the lake connectors decide, not the registry."""
    s = settings_with(validation={"trino_properties": "off"})
    outcome = classify(RawDocument('"d"', doc(hive("lake-eu", connector))), s)
    assert isinstance(outcome, Cluster) is accepted


def test_a_document_without_storage_is_untouched_by_the_options() -> None:
    """Offering stores changes nothing for a catalog that names none (byte-identical output)."""
    plain = doc({"name": "tpch", "properties": {"connector.name": "tpch"}})
    base = demo_settings()
    with_options = settings_with()
    a = classify(RawDocument('"d"', plain), base)
    b = classify(RawDocument('"d"', plain), with_options)
    assert isinstance(a, Cluster) and isinstance(b, Cluster)
    assert Renderer(base).render_cluster(a, {}) == Renderer(with_options).render_cluster(b, {})



@pytest.mark.parametrize("version", ["474", "476", "480", "483"])
def test_a_hive_catalog_takes_the_store_on_every_covered_version(version: str) -> None:
    """A hive catalog on an s3 store validates whether its version's registry was read whole
    (476, 483) or without hive's file-system jars (474, 480: incomplete, not knowing the
    switch), and the store's switch is written."""
    outcome = classify(RawDocument('"d"', doc(hive("lake-eu"), version=version)), settings_with())
    props = catalog(outcome)
    assert "s3.region" in props and ({"fs.native-s3.enabled", "fs.s3.enabled"} & set(props))


def test_a_non_lake_connector_is_refused_the_store_on_an_incomplete_version() -> None:
    """An incomplete registry does not lift the refusal for a connector that is no lake
    connector (postgresql on 480)."""
    body = doc(hive("lake-eu", "postgresql", **{"connection-url": "jdbc:postgresql://pg/dw"}),
               version="480")
    outcome = classify(RawDocument('"d"', body), settings_with())
    assert any("reads no file system" in m for _, m in problems(outcome))
