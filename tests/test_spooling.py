"""The client spooling protocol: a storage option's `spooling` block, a document's `spooling`.

Expectations are written out from the options and documents declared here and from Trino 476's
jars (FileSystemSpoolingModule binds s3, gs and abfs; FileSystemSpoolingConfig wants a location
ending in "/"; SpoolingConfig bounds the inline limits): issue 21 item 4.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import pytest
import yaml

from tests.conftest import demo_settings
from trinogen.desired import Secrets, secret_problems
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.model.checker import Checker, field_path
from trinogen.model.secret_values import spooling_key_problem as key_problem
from trinogen.model.spooling import SpoolingProtocol, spooling
from trinogen.model.types import Identity
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData, SecretUse, settings_use
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind
from trinogen.settings.options.spooling import Spooling, parse

KEY_REF = "secret/trino/{cluster}/spooling#key"
S3 = {"location": "s3://spool/{cluster}", "shared_secret_key": KEY_REF}
STORAGE: dict[str, Any] = {
    "s3-keys": {"type": "s3", "region": "us-east-1", "endpoint": "http://minio:9000",
                "path_style_access": True,
                "credentials": {"vault": {"access_key": "secret/trino/{cluster}/s3#ak",
                                          "secret_key": "secret/trino/{cluster}/s3#sk"}}},
    "gcs-wi": {"type": "gcs", "project_id": "lake-1", "credentials": "workload-identity"},
    "az-wi": {"type": "azure", "credentials": "workload-identity"},
    "plain": {"type": "s3", "region": "eu-west-1", "credentials": "workload-identity"},
}
SPOOLING = {  # the spooling blocks of STORAGE's options
    "s3-keys": {**S3, "segment_ttl": "30m", "retrieval_mode": "COORDINATOR_PROXY",
                "properties": {"fs.segment.pruning.interval": "5m"}},
    "gcs-wi": {"location": "gs://spool/{owner}/{cluster}/", "shared_secret_key": KEY_REF},
    "az-wi": {"location": "abfs://spool@acct.dfs.core.windows.net/{cluster}",
              "shared_secret_key": KEY_REF},
}
STORES = parse_kind("storage", {n: {**o, "spooling": SPOOLING[n]} if n in SPOOLING else o
                                for n, o in STORAGE.items()}, "t")
WHO = Identity("etl", "etl_team")


def key_env() -> str:
    return settings_use(KEY_REF, "etl", "etl_team").env


def shown(entries: Any) -> dict[str, str]:
    """Lines as Trino reads them after `${ENV:...}` (what trinogen writes for a SecretUse)."""
    return {k: "".join(f"${{ENV:{s.env}}}" if isinstance(s, SecretUse) else s for s in v)
            for k, v in entries}


def read(value: Any) -> tuple[SpoolingProtocol | None, list[tuple[str, str]]]:
    c = Checker("doc", "error")
    out = spooling(value, STORES, WHO, "476", c)
    return out, [(p.field, p.message) for p in c.listed()]


# --- the settings' spooling block -------------------------------------------------------------


@pytest.mark.parametrize(("raw", "kind", "account", "location"), [
    (S3, "s3", None, "s3://spool/{cluster}/"),  # Trino wants the trailing slash: added
    ({**S3, "location": "s3://spool/{owner}/{cluster}/"}, "s3", None,
     "s3://spool/{owner}/{cluster}/"),
    ({**S3, "location": "gs://b/{cluster}"}, "gcs", None, "gs://b/{cluster}/"),
    ({**S3, "location": "abfs://c@acct.dfs.core.windows.net/t/{cluster}"}, "azure", "acct",
     "abfs://c@acct.dfs.core.windows.net/t/{cluster}/"),
])
def test_a_spooling_block_is_read_with_its_location_ending_in_a_slash(
        raw: dict[str, Any], kind: str, account: str | None, location: str) -> None:
    """A valid block keeps its key reference and gets the location Trino accepts."""
    assert parse("w", raw, kind, account) == Spooling(location, KEY_REF)


@pytest.mark.parametrize(("raw", "kind", "account", "said"), [
    (S3, "hdfs", None, "serves s3, gcs and azure stores only"),
    ("s3://x/{cluster}", "s3", None, "must be a mapping"),
    ({**S3, "ttl": "1h"}, "s3", None, "w.ttl is not a field"),
    ({**S3, "location": "file:///spool/{cluster}"}, "s3", None, "is not a s3://"),
    ({**S3, "location": "s3a://spool/{cluster}"}, "s3", None, "Trino spools to s3://"),
    ({**S3, "location": "abfss://c@acct.dfs.core.windows.net/{cluster}"}, "azure", None,
     "Trino spools to abfs://"),
    ({**S3, "location": "gs://b/{cluster}"}, "s3", None, "Trino spools to s3://"),
    ({**S3, "location": "abfs://c@other.dfs.core.windows.net/{cluster}"}, "azure", "acct",
     "not in the storage account 'acct'"),
    ({**S3, "location": "s3://spool/shared"}, "s3", None, "must contain {cluster}"),
    ({**S3, "location": "s3://spool/{cluster}/{{x}}"}, "s3", None, "is not a s3://"),
    ({**S3, "location": "s3://spool/{cluster} x"}, "s3", None, "is not a s3://"),
    ({**S3, "location": "s3://spool/{tenant}"}, "s3", None, "only {cluster} and {owner}"),
    ({**S3, "location": 7}, "s3", None, "must be text"),
    ({"location": "s3://spool/{cluster}"}, "s3", None, "shared_secret_key must be a Vault"),
    ({**S3, "shared_secret_key": "secret/trino/spooling#key"}, "s3", None,
     "must contain {cluster}: every cluster needs its own key"),
    ({**S3, "shared_secret_key": "secret/trino/{cluster}/spooling"}, "s3", None, "has no key"),
    ({**S3, "retrieval_mode": "storage"}, "s3", None, "retrieval_mode must be one of"),
    ({**S3, "segment_ttl": "12 hours"}, "s3", None, "segment_ttl must be a duration"),
    ({**S3, "properties": {"fs.segment.ttl": "1h"}}, "s3", None, "comes from segment_ttl"),
    ({**S3, "properties": {"fs.location": "s3://x/"}}, "s3", None, "is not an fs.segment.*"),
    ({**S3, "properties": {"s3.endpoint": "http://x"}}, "s3", None, "is not an fs.segment.*"),
    ({**S3, "properties": {"fs.segment.encryption": "${ENV:X}"}}, "s3", None,
     "one line of plain text"),
])
def test_a_wrong_spooling_block_is_refused_naming_the_field(
        raw: Any, kind: str, account: str | None, said: str) -> None:
    """Each mistake in the block is a ConfigError that says what is wrong where."""
    with pytest.raises(ConfigError, match="^w") as e:
        parse("w", raw, kind, account)
    assert said in str(e.value)


# --- what a document's spooling renders -------------------------------------------------------


def test_an_s3_store_spools_with_its_credentials_and_the_vault_key() -> None:
    """Both files: the protocol with the key as ${ENV:...}, the manager with the store's S3
    settings (its Vault credentials as ${ENV:...}), the TTL and the platform's tuning."""
    out, problems = read({"storage": "s3-keys"})
    assert problems == [] and out is not None
    ak, sk = (settings_use(f"secret/trino/etl/s3#{k}", "etl", "etl_team").env
              for k in ("ak", "sk"))
    assert shown(out.config) == {
        "protocol.spooling.enabled": "true",
        "protocol.spooling.shared-secret-key": f"${{ENV:{key_env()}}}",
        "protocol.spooling.retrieval-mode": "COORDINATOR_PROXY"}
    assert shown(out.manager) == {
        "spooling-manager.name": "filesystem", "fs.location": "s3://spool/etl/",
        "fs.s3.enabled": "true", "s3.region": "us-east-1", "s3.endpoint": "http://minio:9000",
        "s3.path-style-access": "true", "s3.aws-access-key": f"${{ENV:{ak}}}",
        "s3.aws-secret-key": f"${{ENV:{sk}}}", "fs.segment.ttl": "30m",
        "fs.segment.pruning.interval": "5m"}
    assert {u.env for u in out.secret_uses} == {key_env(), ak, sk}


@pytest.mark.parametrize(("store", "manager"), [
    ("gcs-wi", {"spooling-manager.name": "filesystem", "fs.location": "gs://spool/etl_team/etl/",
                "fs.gcs.enabled": "true", "gcs.project-id": "lake-1"}),
    ("az-wi", {"spooling-manager.name": "filesystem",
               "fs.location": "abfs://spool@acct.dfs.core.windows.net/etl/",
               "fs.azure.enabled": "true", "azure.auth-type": "DEFAULT"}),
])
def test_gcs_and_azure_stores_switch_on_their_own_file_system(
        store: str, manager: dict[str, str]) -> None:
    """The plugin's switch (fs.gcs.enabled, fs.azure.enabled) and the store's lines, with the
    pods' workload identity: no credential lines."""
    out, problems = read({"storage": store})
    assert problems == [] and out is not None
    assert shown(out.manager) == manager


@pytest.mark.parametrize(("inlining", "lines"), [
    (None, {}),
    (False, {"protocol.spooling.inlining.enabled": "false"}),
    ({"maxRows": 1000}, {"protocol.spooling.inlining.max-rows": "1000"}),
    ({"maxSize": "128kB"}, {"protocol.spooling.inlining.max-size": "128kB"}),
    ({"maxRows": 1, "maxSize": "3MB"}, {"protocol.spooling.inlining.max-rows": "1",
                                        "protocol.spooling.inlining.max-size": "3MB"}),
])
def test_the_document_sets_the_inline_limits(inlining: Any, lines: dict[str, str]) -> None:
    """`inlining` becomes the protocol's inline lines; absent, Trino's defaults stay."""
    body = {"storage": "gcs-wi"} if inlining is None else {"storage": "gcs-wi",
                                                           "inlining": inlining}
    out, problems = read(body)
    assert problems == [] and out is not None
    assert shown(out.config) == {"protocol.spooling.enabled": "true",
                                 "protocol.spooling.shared-secret-key": f"${{ENV:{key_env()}}}",
                                 **lines}


@pytest.mark.parametrize(("value", "field", "said"), [
    ("s3-keys", "spooling", "must be an object"),
    ({}, "spooling.storage", "is required"),
    ({"storage": "nope"}, "spooling.storage", "is not a storage option"),
    ({"storage": "plain"}, "spooling.storage", ("has no spooling location in the "
                                               "settings; pick one that has (az-wi, gcs-wi, "
                                               "s3-keys)")),
    ({"storage": "s3-keys", "location": "s3://mine/"}, "spooling.location", "unknown field"),
    ({"storage": "s3-keys", "inlining": True}, "spooling.inlining", "must be an object"),
    ({"storage": "s3-keys", "inlining": {"maxRows": 0}}, "spooling.inlining.maxRows",
     "at least 1"),
    ({"storage": "s3-keys", "inlining": {"maxRows": 1_000_001}}, "spooling.inlining.maxRows",
     "at most 1000000"),
    ({"storage": "s3-keys", "inlining": {"maxSize": "512B"}}, "spooling.inlining.maxSize",
     "outside Trino's bounds"),
    ({"storage": "s3-keys", "inlining": {"maxSize": "4MB"}}, "spooling.inlining.maxSize",
     "outside Trino's bounds"),
    ({"storage": "s3-keys", "inlining": {"maxSize": "1 MB"}}, "spooling.inlining.maxSize",
     "data size"),
    ({"storage": "s3-keys", "inlining": {"enabled": False}}, "spooling.inlining.enabled",
     "unknown field"),
])
def test_a_wrong_spooling_field_is_refused_at_its_path(value: Any, field: str, said: str) -> None:
    """A document's mistake is reported at its field (which refuses the document)."""
    _, problems = read(value)
    assert any(f == field and said in m for f, m in problems), problems


@pytest.mark.parametrize(("version", "refused"), [("465", True), ("400", True), ("466", False),
                                                   ("476", False), (None, False)])
def test_the_protocol_needs_trino_466(version: str | None, refused: bool) -> None:
    """A document whose Trino predates the protocol may not turn it on (an invalid version,
    None, is reported elsewhere)."""
    c = Checker("doc", "error")
    out = spooling({"storage": "gcs-wi"}, STORES, WHO, version, c)
    assert (out is None, [p.field for p in c.listed()]) == (
        (True, ["spooling"]) if refused else (False, []))


def test_no_spooling_field_renders_nothing() -> None:
    """Without `spooling` a document gets no protocol and no manager."""
    assert read(None) == (None, [])


# --- the storage option's field and a whole document ------------------------------------------


def spool_settings() -> Settings:
    """The demo settings with STORAGE (spooling blocks included) as the storage options."""
    s = demo_settings()
    return dataclasses.replace(s, named={**s.named, "storage": STORES})


def spool_doc(**body: Any) -> dict[str, Any]:
    return {"_id": "d", "clusterId": "etl", "owner": "etl_team", "enabled": True,
            "trinoVersion": "476",
            "clusterConfig": {"coordinator": {"jvm": {"maxHeapSize": "4G"}},
                              "worker": {"replicas": 2, "jvm": {"maxHeapSize": "4G"}}},
            "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}], **body}


def test_a_store_reads_its_spooling_block_and_hdfs_has_none() -> None:
    """`spooling` is a field of s3, gcs and azure stores (absent or null: none), not of hdfs."""
    assert STORES["s3-keys"].spooling == Spooling(
        "s3://spool/{cluster}/", KEY_REF, "COORDINATOR_PROXY", "30m",
        (("fs.segment.pruning.interval", "5m"),))
    assert STORES["plain"].spooling is None
    assert parse_kind("storage", {"x": {**STORAGE["plain"], "spooling": None}}, "t")[
        "x"].spooling is None
    with pytest.raises(ConfigError, match=r"storage\.h\.spooling is not a field of a hdfs store"):
        parse_kind("storage", {"h": {"type": "hdfs", "spooling": S3}}, "t")
    with pytest.raises(ConfigError, match=r"storage\.x\.spooling\.location .* must contain"):
        parse_kind("storage", {"x": {**STORAGE["plain"], "spooling": {
            **S3, "location": "s3://spool/all"}}}, "t")


def rendered(body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cluster's values.yaml and its ExternalSecrets' data, rendered by trinogen."""
    outcome = classify(RawDocument('"d"', body), spool_settings())
    assert isinstance(outcome, Cluster), getattr(outcome, "problems", None)
    files = Renderer(spool_settings()).render_cluster(outcome, {})
    secrets = [d for p, t in files.items() if p.endswith("externalsecret.yaml")
               for d in yaml.safe_load(t)["spec"]["data"]]
    return yaml.safe_load(files["trino-clusters/etl/values.yaml"]), secrets


def test_a_document_that_spools_gets_both_files_and_the_vault_key() -> None:
    """The protocol's lines join additionalConfigProperties, both roles get the same manager
    file, and the env Secret carries the key and the store's credentials from Vault."""
    values, secrets = rendered(spool_doc(spooling={"storage": "s3-keys",
                                                   "inlining": {"maxRows": 100}}))
    config = values["additionalConfigProperties"]
    assert "protocol.spooling.enabled=true" in config
    assert f"protocol.spooling.shared-secret-key=${{ENV:{key_env()}}}" in config
    assert "protocol.spooling.inlining.max-rows=100" in config
    manager = values["coordinator"]["additionalConfigFiles"]["spooling-manager.properties"]
    assert manager == values["worker"]["additionalConfigFiles"]["spooling-manager.properties"]
    assert manager.splitlines()[:3] == ["spooling-manager.name=filesystem",
                                        "fs.location=s3://spool/etl/", "fs.s3.enabled=true"]
    refs = {(d["secretKey"], d["remoteRef"]["key"], d["remoteRef"]["property"]) for d in secrets}
    assert {(key_env(), "secret/trino/etl/spooling", "key")} <= refs, refs
    assert {r[1:] for r in refs} >= {("secret/trino/etl/s3", "ak"), ("secret/trino/etl/s3", "sk")}


def test_a_document_without_spooling_gets_no_manager() -> None:
    """No `spooling`: no protocol line and no additionalConfigFiles on either role."""
    values, _ = rendered(spool_doc())
    assert not any(line.startswith("protocol.spooling.")
                   for line in values.get("additionalConfigProperties", []))
    assert "additionalConfigFiles" not in values["worker"]
    assert "additionalConfigFiles" not in values.get("coordinator", {})


def test_a_document_may_not_spool_by_hand_beside_the_field() -> None:
    """Even with `spooling`, the protocol's properties are refused in `properties`: the field
    is the one place (the companions table points at it)."""
    body = spool_doc(spooling={"storage": "s3-keys"},
                     properties={"protocol.spooling.retrieval-mode": "WORKER_PROXY"})
    outcome = classify(RawDocument('"d"', body), spool_settings())
    assert isinstance(outcome, Failed)
    assert any(p.field == field_path("properties", "protocol.spooling.retrieval-mode")
               and "renders it from spooling" in p.message for p in outcome.problems)


# --- the Vault values, once read ----------------------------------------------------------------

GOOD_KEY = base64.b64encode(bytes(range(32))).decode()


@pytest.mark.parametrize(("value", "fits"), [
    (GOOD_KEY, True),
    (GOOD_KEY.rstrip("="), True),  # java.util.Base64 does not require the padding
    (base64.b64encode(bytes(16)).decode(), False),  # 128 bits
    (base64.b64encode(bytes(33)).decode(), False),
    ("not base64 at all!", False),
    (GOOD_KEY[:10] + " " + GOOD_KEY[10:], False),
    ("", False),
])
def test_the_vault_key_must_be_256_bits_of_base64(value: str, fits: bool) -> None:
    """Only a value Trino's SpoolingConfig accepts passes; the message never shows the value."""
    problem = key_problem(value)
    assert (problem is None) == fits
    assert problem is None or value not in problem or value == ""


def test_a_bad_key_in_vault_fails_the_cluster_at_sync() -> None:
    """With Vault read, a key of the wrong size is reported at spooling.storage, the S3
    credentials beside it pass, and a good key passes too."""
    outcome = classify(RawDocument('"d"', spool_doc(spooling={"storage": "s3-keys"})),
                       spool_settings())
    assert isinstance(outcome, Cluster)
    s3 = SecretData(1, {"ak": Secret("a"), "sk": Secret("b")})

    def problems(key: str) -> list[tuple[str, str]]:
        data = {"secret/trino/etl/s3": s3,
                "secret/trino/etl/spooling": SecretData(1, {"key": Secret(key)})}
        return [(p.field, p.message) for p in secret_problems(outcome, Secrets(data, {}))]

    assert problems(GOOD_KEY) == []
    ((field, message),) = problems("c2hvcnQ=")
    assert field == "spooling.storage" and "256-bit key" in message


def test_inline_mode_keeps_every_spooling_secret_in_the_env_secret() -> None:
    """In inline mode (catalog values written out), the protocol's lines still say
    ${ENV:...} and the env Secret still carries the key and the credentials: no Vault value
    is written into values.yaml."""
    outcome = classify(RawDocument('"d"', spool_doc(spooling={"storage": "s3-keys"})),
                       spool_settings())
    assert isinstance(outcome, Cluster)
    resolved = {"secret/trino/etl/s3": SecretData(1, {"ak": Secret("AK-VALUE"),
                                                       "sk": Secret("SK-VALUE")}),
                "secret/trino/etl/spooling": SecretData(1, {"key": Secret(GOOD_KEY)})}
    files = Renderer(spool_settings()).render_cluster(outcome, resolved, inline=True)
    text = files["trino-clusters/etl/values.yaml"].decode()
    assert not any(v in text for v in ("AK-VALUE", "SK-VALUE", GOOD_KEY))
    secrets = [d["secretKey"] for p, t in files.items() if p.endswith("externalsecret.yaml")
               for d in yaml.safe_load(t)["spec"]["data"]]
    assert {u.env for u in (settings_use(f"secret/trino/etl/s3#{k}", "etl", "etl_team")
                            for k in ("ak", "sk"))} | {key_env()} <= set(secrets)
