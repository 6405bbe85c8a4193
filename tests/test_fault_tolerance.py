"""Fault-tolerant execution: exchange options in the settings, `faultTolerance` in a document.

Expectations are written out from the options and documents declared here (issue 14 item 4).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from tests.conftest import demo_settings
from trinogen.desired import Secrets, secret_problems
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData
from trinogen.settings import Settings, replace
from trinogen.settings.checks import check
from trinogen.settings.named import parse_kind

STORAGE: dict[str, Any] = {
    "s3-wi": {"type": "s3", "region": "eu-west-1", "credentials": "workload-identity"},
    "s3-keys": {"type": "s3", "region": "us-east-1", "endpoint": "http://minio:9000",
                "path_style_access": True,
                "credentials": {"vault": {"access_key": "secret/trino/{cluster}/x#ak",
                                          "secret_key": "secret/trino/{cluster}/x#sk"}}},
    "gcs-key": {"type": "gcs", "credentials": {"vault": {"json_key": "secret/trino/{cluster}/g#k"}}},
    "az-key": {"type": "azure", "account": "lakeacct",
               "credentials": {"vault": {"access_key": "secret/trino/{cluster}/a#k"}}},
    "az-wi": {"type": "azure", "credentials": "workload-identity"},
}
EXCHANGE: dict[str, Any] = {
    "eu": {"storage": "s3-wi", "location": "s3://trino-exchange/{owner}/{cluster}"},
    "minio": {"storage": "s3-keys", "location": ["s3://ex-a/{cluster}", "s3://ex-b/{cluster}"],
              "properties": {"exchange.sink-buffers-per-partition": "4"}},
    "gcs": {"storage": "gcs-key", "location": "gs://ex/{cluster}"},
    "azure": {"storage": "az-key", "location": "abfs://ex@lakeacct.dfs.core.windows.net/{cluster}"},
    "azure-wi": {"storage": "az-wi", "location": "abfss://ex@acct.dfs.core.windows.net/{cluster}"},
}


def settings_with(exchange: dict[str, Any] | None = None, **sections: Any) -> Settings:
    s = demo_settings(**sections) if sections else demo_settings()
    s = dataclasses.replace(s, named={"storage": parse_kind("storage", STORAGE, "t"),
                                      "exchange": parse_kind("exchange", exchange or EXCHANGE, "t")})
    check(s)
    return s


def doc(ft: Any = None, **properties: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "_id": "d", "clusterId": "etl", "owner": "etl_team", "enabled": True,
        "trinoVersion": "476",
        "clusterConfig": {"coordinator": {"jvm": {"maxHeapSize": "4G"}},
                          "worker": {"replicas": 2, "jvm": {"maxHeapSize": "4G"}}},
        "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}]}
    if ft is not None:
        body["faultTolerance"] = ft
    if properties:
        body["properties"] = properties
    return body


def run(document: dict[str, Any], s: Settings | None = None) -> Any:
    return classify(RawDocument('"d"', document), s or settings_with())


def values(outcome: Any, s: Settings | None = None, *, inline: bool = False,
           resolved: Any = None) -> dict[str, Any]:
    assert isinstance(outcome, Cluster), getattr(outcome, "problems", None)
    files = Renderer(s or settings_with()).render_cluster(outcome, resolved or {}, inline=inline)
    loaded: dict[str, Any] = yaml.safe_load(files["trino-clusters/etl/values.yaml"])
    return loaded


# --- the settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(("exchange", "needle"), [
    ({"storage": "s3-wi"}, r"x\.location must be a location or a list"),
    ({"storage": "s3-wi", "location": "s3://bucket/shared"}, r"must contain \{cluster\}"),
    ({"storage": "s3-wi", "location": "s3://b/{cluster}/{team}"}, r"only \{cluster\} and \{owner\}"),
    ({"storage": "s3-wi", "location": "bucket/{cluster}"}, r"is not a <scheme>://<bucket>/<path>"),
    ({"storage": "s3-wi", "location": "s3://a/{cluster},s3://b/{cluster}"}, r"without spaces or commas"),
    ({"location": "s3://b/{cluster}"}, r"x\.storage must name a storage option"),
    ({"storage": "s3-wi", "location": "s3://b/{cluster}", "bucket": "b"}, r"x\.bucket is not a field"),
    ({"storage": "s3-wi", "location": "s3://b/{cluster}",
      "properties": {"exchange.s3.region": "y"}}, r"comes from the location and the storage"),
    ({"storage": "s3-wi", "location": "s3://b/{cluster}",
      "properties": {"exchange.base-directories": "s3://c"}}, r"comes from the location"),
    ({"storage": "s3-wi", "location": "s3://b/{cluster}", "properties": {"retry-policy": "TASK"}},
     r"'retry-policy' is not an exchange\.\* property"),
])
def test_a_bad_exchange_option_names_its_field(exchange: dict[str, Any], needle: str) -> None:
    """Each malformed exchange option is a configuration error naming exchange.<name>.<field>."""
    with pytest.raises(ConfigError, match=needle):
        parse_kind("exchange", {"x": exchange}, "t")


@pytest.mark.parametrize(("exchange", "needle"), [
    ({"storage": "nowhere", "location": "s3://b/{cluster}"}, r"'nowhere' is not a storage option"),
    ({"storage": "s3-wi", "location": "gs://b/{cluster}"}, r"is not on a s3 store \(use s3://\)"),
    ({"storage": "gcs-key", "location": "s3://b/{cluster}"}, r"is not on a gcs store \(use gs://\)"),
    ({"storage": "az-key", "location": "abfs://c@other.dfs.core.windows.net/{cluster}"},
     r"not in the storage account 'lakeacct'"),
])
def test_an_exchange_must_fit_its_storage(exchange: dict[str, Any], needle: str) -> None:
    """The settings check refuses an exchange on an unknown store or a location it cannot serve."""
    with pytest.raises(ConfigError, match=needle):
        settings_with({"x": exchange})


def test_an_exchange_on_an_hdfs_store_is_refused() -> None:
    """trinogen writes the exchange for object stores only; an hdfs store (legacy Hadoop, which
    serves file:) is refused when the settings load."""
    s = dataclasses.replace(demo_settings(), named={
        "storage": parse_kind("storage", {**STORAGE, "hdfs": {"type": "hdfs"}}, "t"),
        "exchange": parse_kind("exchange", {"x": {"storage": "hdfs", "location": "s3://b/{cluster}"}},
                               "t")})
    with pytest.raises(ConfigError, match=r"exchange\.x\.storage: 'hdfs' is an hdfs store"):
        check(s)


def test_an_azure_key_exchange_needs_the_account() -> None:
    """The exchange takes an Azure key only inside a connection string, which names the account."""
    stores = {**STORAGE, "az-noacct": {"type": "azure", "credentials": {
        "vault": {"access_key": "secret/trino/{cluster}/a#k"}}}}
    s = dataclasses.replace(demo_settings(), named={
        "storage": parse_kind("storage", stores, "t"),
        "exchange": parse_kind("exchange", {"x": {
            "storage": "az-noacct", "location": "abfs://c@any.dfs.core.windows.net/{cluster}"}},
            "t")})
    with pytest.raises(ConfigError, match=r"set storage\.az-noacct\.account"):
        check(s)


# --- what a document gets ---------------------------------------------------------------------


@pytest.mark.parametrize(("ft", "props", "field", "needle"), [
    ({"retryPolicy": "TASK"}, {}, "faultTolerance.exchange", "is required with retryPolicy TASK"),
    ({"retryPolicy": "task", "exchange": "eu"}, {}, "faultTolerance.retryPolicy",
     "is not a retry policy"),
    ({"retryPolicy": "NONE", "exchange": "eu"}, {}, "faultTolerance.retryPolicy",
     "leave faultTolerance out"),
    ({"retryPolicy": "TASK", "exchange": "us"}, {}, "faultTolerance.exchange",
     "is not an exchange option"),
    ({"retryPolicy": "TASK", "exchange": "eu", "attempts": 3}, {}, "faultTolerance.attempts",
     "unknown field"),
    ({"retryPolicy": "TASK", "exchange": "eu"}, {"retry-policy": "TASK"},
     "properties.retry-policy", "set it in one place"),
    ({"exchange": "eu"}, {}, "faultTolerance.retryPolicy", "is required"),
    ("TASK", {}, "faultTolerance", "must be an object"),
])
def test_refused_fault_tolerance_names_the_field(
    ft: Any, props: dict[str, str], field: str, needle: str
) -> None:
    """Each refusal names the field and says what to write instead."""
    outcome = run(doc(ft, **props))
    assert isinstance(outcome, Failed), outcome
    assert any(p.field == field and needle in p.message for p in outcome.problems), \
        outcome.problems


def test_query_retries_without_an_exchange_render_with_a_warning() -> None:
    """QUERY with no exchange is valid: retry-policy only, and a warning about large outputs."""
    outcome = run(doc({"retryPolicy": "QUERY"}))
    assert isinstance(outcome, Cluster)
    assert [w.field for w in outcome.warnings] == ["faultTolerance.exchange"]
    v = values(outcome)
    assert v["additionalConfigProperties"] == ["retry-policy=QUERY"]
    assert "exchangeManager" not in v["server"]
    assert "additionalExchangeManagerProperties" not in v


def test_task_retries_with_a_workload_identity_exchange() -> None:
    """TASK + an S3 exchange by workload identity: base directory per owner and cluster, no env."""
    outcome = run(doc({"retryPolicy": "TASK", "exchange": "eu"}))
    v = values(outcome)
    assert v["server"]["exchangeManager"] == {"name": "filesystem",
                                              "baseDir": ["s3://trino-exchange/etl_team/etl"]}
    assert v["additionalExchangeManagerProperties"] == ["exchange.s3.region=eu-west-1"]
    assert v["additionalConfigProperties"] == ["retry-policy=TASK"]
    assert "envFrom" not in v


def test_vault_credentials_of_the_exchange_join_the_clusters_env_secret() -> None:
    """Access and secret key become ${ENV:...} lines; the ExternalSecret maps both variables."""
    s = settings_with()
    outcome = run(doc({"retryPolicy": "TASK", "exchange": "minio"}), s)
    assert isinstance(outcome, Cluster)
    envs = {str(u.ref): u.env for u in outcome.secret_uses}
    assert set(envs) == {"secret/trino/etl/x#ak", "secret/trino/etl/x#sk"}
    v = values(outcome, s)
    assert v["server"]["exchangeManager"]["baseDir"] == ["s3://ex-a/etl", "s3://ex-b/etl"]
    assert sorted(v["additionalExchangeManagerProperties"]) == sorted([
        f"exchange.s3.aws-access-key=${{ENV:{envs['secret/trino/etl/x#ak']}}}",
        f"exchange.s3.aws-secret-key=${{ENV:{envs['secret/trino/etl/x#sk']}}}",
        "exchange.s3.endpoint=http://minio:9000", "exchange.s3.path-style-access=true",
        "exchange.s3.region=us-east-1", "exchange.sink-buffers-per-partition=4"])
    assert v["envFrom"] == [{"secretRef": {"name": "etl-trino-secrets"}}]
    files = Renderer(s).render_cluster(outcome, {})
    es = yaml.safe_load(files["trino-clusters/etl/secrets/externalsecret.yaml"])
    assert {d["secretKey"]: (d["remoteRef"]["key"], d["remoteRef"]["property"])
            for d in es["spec"]["data"]} == {
        envs["secret/trino/etl/x#ak"]: ("secret/trino/etl/x", "ak"),
        envs["secret/trino/etl/x#sk"]: ("secret/trino/etl/x", "sk")}


@pytest.mark.parametrize(("exchange", "expected"), [
    ("gcs", "exchange.gcs.json-key=${{ENV:{env}}}"),
    ("azure", ("exchange.azure.connection-string=DefaultEndpointsProtocol=https;"
               "AccountName=lakeacct;AccountKey=${{ENV:{env}}};EndpointSuffix=core.windows.net")),
])
def test_gcs_and_azure_exchanges_take_their_key_from_vault(exchange: str, expected: str) -> None:
    """A GCS JSON key, or an Azure key inside its connection string, is an env placeholder."""
    outcome = run(doc({"retryPolicy": "TASK", "exchange": exchange}))
    assert isinstance(outcome, Cluster)
    (use,) = outcome.secret_uses
    assert values(outcome)["additionalExchangeManagerProperties"] == [expected.format(env=use.env)]


def test_an_azure_exchange_by_workload_identity_has_only_its_location() -> None:
    """Azure's default credential chain needs no exchange property at all."""
    v = values(run(doc({"retryPolicy": "TASK", "exchange": "azure-wi"})))
    assert v["server"]["exchangeManager"]["baseDir"] == [
        "abfss://ex@acct.dfs.core.windows.net/etl"]
    assert "additionalExchangeManagerProperties" not in v


def test_inline_mode_writes_the_exchange_credentials_themselves() -> None:
    """With inline secrets the exchange lines hold the values read from Vault."""
    s = settings_with(secrets={"mode": "inline", "allow_inline": True})
    outcome = run(doc({"retryPolicy": "TASK", "exchange": "minio"}), s)
    resolved = {"secret/trino/etl/x": SecretData(3, {"ak": Secret("AKIA1"), "sk": Secret("s=1")})}
    lines = values(outcome, s, inline=True, resolved=resolved)["additionalExchangeManagerProperties"]
    assert "exchange.s3.aws-access-key=AKIA1" in lines
    assert "exchange.s3.aws-secret-key=s=1" in lines  # '=' needs no escape in a value


def test_a_missing_exchange_secret_fails_the_cluster_naming_fault_tolerance() -> None:
    """A Vault path without the exchange's key is reported at faultTolerance.exchange."""
    outcome = run(doc({"retryPolicy": "TASK", "exchange": "minio"}))
    assert isinstance(outcome, Cluster)
    secrets = Secrets(data={"secret/trino/etl/x": SecretData(1, {"ak": Secret("a")})}, errors={})
    (problem,) = secret_problems(outcome, secrets)
    assert problem.field == "faultTolerance.exchange" and "has no key 'sk'" in problem.message


def test_retry_policy_by_hand_without_fault_tolerance_stays_a_plain_property() -> None:
    """Documents that set retry-policy in properties before this feature render as before."""
    outcome = run(doc(None, **{"retry-policy": "QUERY"}))
    assert isinstance(outcome, Cluster) and outcome.exchange is None
    assert values(outcome)["additionalConfigProperties"] == ["retry-policy=QUERY"]


def test_exchange_options_shape_the_render_cache_fingerprint() -> None:
    """Changing an exchange's location re-renders: the fingerprint covers the named options."""
    a = settings_with()
    b = settings_with({**EXCHANGE, "eu": {"storage": "s3-wi", "location": "s3://other/{cluster}"}})
    assert Renderer(a).fingerprint != Renderer(b).fingerprint
    assert replace(a).named == a.named


def test_an_inline_dry_run_diff_hides_old_exchange_credentials() -> None:
    """A rotated-away exchange key in the old values.yaml (masked before diffing) is hidden."""
    from trinogen.desired import Desired, _collect_masks
    from trinogen.pipeline import masker

    outcome = run(doc({"retryPolicy": "TASK", "exchange": "minio"}))
    assert isinstance(outcome, Cluster)
    desired = Desired()
    _collect_masks(desired, [outcome], Secrets())
    mask = masker(desired)
    old = ('additionalExchangeManagerProperties:\n  - "exchange.s3.aws-secret-key=OLD-SECRET"\n'
           '  - "exchange.s3.region=us-east-1"\n')
    assert "OLD-SECRET" not in mask(old)
    assert "exchange.s3.region=us-east-1" in mask(old)


def test_every_exchange_name_written_is_bound_by_trino_476s_exchange_plugin() -> None:
    """The exchange.* names trinogen writes are @Config names of Trino 476's exchange-filesystem
    plugin, read from its jars with the registry's own class-file scanner."""
    from tests import trino_server as ts
    from tools.trino_registry.build import property_set
    from tools.trino_registry.scan import scan_jar, unit_facts

    # the distribution the real-Trino tests use (downloaded once into the test cache): a skip
    # when it was not there yet made this test skip on every fresh machine, CI's first run included
    plugin = ts.distribution("476") / "plugin" / "exchange-filesystem"
    bound = property_set(unit_facts(scan_jar(p.read_bytes()) for p in plugin.glob("io.trino_*.jar"))).known
    written: set[str] = {"exchange.base-directories"}
    for name in EXCHANGE:
        outcome = run(doc({"retryPolicy": "TASK", "exchange": name}))
        v = values(outcome)
        written |= {line.split("=", 1)[0] for line in v.get("additionalExchangeManagerProperties", [])}
    sse = {"type": "s3", "region": "r", "endpoint": "http://e", "sse": {"type": "KMS", "kms_key_id": "k"},
           "iam_role": "arn:aws:iam::1:role/x", "credentials": "workload-identity"}
    s = dataclasses.replace(demo_settings(), named={
        "storage": parse_kind("storage", {"sse": sse}, "t"),
        "exchange": parse_kind("exchange", {"x": {"storage": "sse", "location": "s3://b/{cluster}"}},
                               "t")})
    check(s)
    v = values(run(doc({"retryPolicy": "TASK", "exchange": "x"}), s), s)
    written |= {line.split("=", 1)[0] for line in v["additionalExchangeManagerProperties"]}
    assert {"exchange.s3.sse.kms-key-id", "exchange.s3.iam-role", "exchange.gcs.json-key",
            "exchange.azure.connection-string"} <= written
    assert written <= set(bound), written - set(bound)
