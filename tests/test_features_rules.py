"""Rules between features that were built apart (issues 13 and 14), as tables over documents.

- A hand-set `retry-policy: TASK` without `faultTolerance` is refused: only faultTolerance gives
  the exchange manager TASK needs (Trino 476 starts without one, then fails every query).
- An `ingress` pick is judged with the cluster's authentication: exposing a coordinator without
  authentication, or `tls: ingress` authentication behind an Ingress without TLS, is a warning.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests import kitchen_sink
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The kitchen sink's settings plus an SSO option with TLS at the ingress and an ingress
    option without a TLS Secret."""
    raw = yaml.safe_load(kitchen_sink.SETTINGS)
    raw["authentication"]["corp-sso"] = {
        "type": "OAUTH2", "tls": "ingress", "issuer": "https://sso.example.com/realms/corp",
        "client_id": "trino-{cluster}",
        "client_secret": "secret/platform/{cluster}/oauth#client-secret",
        "shared_secret": "secret/platform/{cluster}/auth#shared-secret"}
    raw["ingress"]["internal"] = {"host": "{cluster}.trino.internal.example.com"}
    path = tmp_path_factory.mktemp("rules") / "settings.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_settings(path, environ={})


def _doc(**body: Any) -> dict[str, Any]:
    """A plain cluster on the kitchen sink's defaults, with `body` on top."""
    return {"_id": "rules", "clusterId": "rules", "owner": "qa_team", "enabled": True,
            "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}], **body}


def _classify(doc: dict[str, Any], settings: Settings) -> Cluster | Failed:
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    assert isinstance(outcome, (Cluster, Failed))
    return outcome


@pytest.mark.parametrize(("value", "refused"), [
    ("TASK", True), ("task", True), (" TASK ", True),  # airlift reads enums in any case
    ("QUERY", False), ("NONE", False),
])
def test_a_hand_set_retry_policy_task_needs_fault_tolerance(
        settings: Settings, value: str, refused: bool) -> None:
    """properties.retry-policy TASK fails the document, pointing at faultTolerance; the other
    policies stay plain server properties."""
    outcome = _classify(_doc(properties={"retry-policy": value}), settings)
    if not refused:
        assert isinstance(outcome, Cluster), outcome
        assert ("retry-policy", value) in outcome.config_properties
        return
    assert isinstance(outcome, Failed)
    (problem,) = outcome.problems
    assert problem.field == "properties.retry-policy"
    assert "faultTolerance" in problem.message and "exchange" in problem.message


def test_retry_policy_task_through_fault_tolerance_is_accepted(settings: Settings) -> None:
    """The same policy written as faultTolerance with an exchange option renders."""
    outcome = _classify(_doc(faultTolerance={"retryPolicy": "TASK", "exchange": "spool"}),
                        settings)
    assert isinstance(outcome, Cluster), outcome
    assert ("retry-policy", "TASK") in outcome.config_properties


@pytest.mark.parametrize(("picks", "warning"), [
    ({"ingress": "public"}, "without authentication"),
    ({"ingress": "internal"}, "without authentication"),
    ({"ingress": "public", "authentication": None}, "without authentication"),
    ({"ingress": "public", "authentication": "corp-ldap-jwt"}, None),  # tls: pod
    ({"ingress": "internal", "authentication": "corp-ldap-jwt"}, None),
    ({"ingress": "public", "authentication": "corp-sso"}, None),  # tls: ingress, TLS Secret
    ({"ingress": "internal", "authentication": "corp-sso"}, "no TLS Secret"),
    ({"authentication": "corp-sso"}, None),  # no Ingress: the platform's own proxy
    ({}, None),
])
def test_an_ingress_is_judged_with_the_authentication(
        settings: Settings, picks: dict[str, Any], warning: str | None) -> None:
    """Exposing a coordinator that takes any user name, or sending sign-ins over an Ingress
    without TLS to a coordinator that expects TLS there, renders with one warning at `ingress`."""
    outcome = _classify(_doc(**picks), settings)
    assert isinstance(outcome, Cluster), outcome
    messages = [(w.field, w.message) for w in outcome.warnings]
    if warning is None:
        assert messages == []
    else:
        ((path, message),) = messages
        assert path == "ingress" and warning in message


# --- the catalog library with storage options -----------------------------------------------

LAKE = {"_id": "cat-lake", "name": "lake", "owner": "data_platform", "shareWith": "*",
        "properties": {"connector.name": "hive", "hive.metastore.uri": "thrift://hms.data:9083"}}
LAKE_S3 = {**LAKE, "_id": "cat-lake-s3", "name": "lake-s3",
           "properties": {**LAKE["properties"], "fs.native-s3.enabled": "true",
                          "s3.region": "eu-west-1"}}


def _with_library(doc: dict[str, Any], settings: Settings, *catalogs: dict[str, Any]
                  ) -> Cluster | Failed:
    from trinogen.model.library import parse_library

    library = parse_library([RawDocument(doc_key(c["_id"]), c) for c in catalogs])
    assert library.failed == (), library.failed
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings, library)
    assert isinstance(outcome, (Cluster, Failed))
    return outcome


def test_a_shared_catalog_takes_the_using_clusters_storage_option(settings: Settings) -> None:
    """A reference may pick a storage option: the shared metastore gets that store's file
    system, with the Vault keys bound for the using cluster (the settings text names them)."""
    ref = {"name": "hive", "shared": "lake", "storage": "lake-minio"}
    outcome = _with_library(_doc(connectors=[ref]), settings, LAKE)
    assert isinstance(outcome, Cluster), outcome
    (hive,) = outcome.connectors
    props = {k: "".join(seg if isinstance(seg, str) else f"<{seg.ref}>" for seg in v)
             for k, v in hive.properties}
    assert props["hive.metastore.uri"] == "thrift://hms.data:9083"
    assert props["fs.native-s3.enabled"] == "true"
    assert props["s3.endpoint"] == "http://minio.data:9000"
    assert props["s3.region"] == "us-east-1"
    assert props["s3.aws-access-key"] == "<secret/platform/rules/s3#access_key>"


@pytest.mark.parametrize(("overrides", "refused"), [
    ({}, ["fs.native-s3.enabled", "s3.region"]),  # the catalog sets S3 itself: two places
    ({"s3.region": None}, ["fs.native-s3.enabled"]),
    ({"fs.native-s3.enabled": None, "s3.region": None}, []),  # the cluster hands S3 over
])
def test_a_storage_pick_on_a_shared_catalog_keeps_one_place(
        settings: Settings, overrides: dict[str, Any], refused: list[str]) -> None:
    """A shared catalog that configures S3 itself cannot also get a store, unless the
    reference removes the catalog's own S3 lines."""
    ref = {"name": "hive", "shared": "lake-s3", "storage": "lake-minio", "properties": overrides}
    outcome = _with_library(_doc(connectors=[ref]), settings, LAKE_S3)
    if not refused:
        assert isinstance(outcome, Cluster), outcome
        return
    assert isinstance(outcome, Failed)
    assert [p.field for p in outcome.problems] == [
        f'connectors["hive"].properties["{key}"]' for key in refused]
    assert all("storage option \"lake-minio\"" in p.message for p in outcome.problems)


@pytest.mark.parametrize(("share_with", "owner", "usable"), [
    ("*", "anyone", True), (["*"], "anyone", True), (["qa_team"], "anyone", False),
    (["qa_team"], "qa_team", True),
])
def test_share_with_accepts_a_star_alone(settings: Settings, share_with: Any, owner: str,
                                         usable: bool) -> None:
    """shareWith is a list of owners or "*" alone (README's table offers both)."""
    catalog = {**LAKE, "shareWith": share_with}
    doc = {**_doc(connectors=[{"name": "hive", "shared": "lake"}]), "owner": owner}
    outcome = _with_library(doc, settings, catalog)
    assert isinstance(outcome, Cluster) is usable, outcome


@pytest.mark.parametrize("role", ["coordinator", "worker"])
@pytest.mark.parametrize("with_ft", [False, True])
def test_retry_policy_task_cannot_be_set_per_role(settings: Settings, role: str,
                                                  with_ft: bool) -> None:
    """clusterConfig.<role>.properties.retry-policy TASK is refused with or without
    faultTolerance (without: no exchange manager; with: the policy would be written twice)."""
    body: dict[str, Any] = {"clusterConfig": {role: {"properties": {"retry-policy": "TASK"}}}}
    if with_ft:
        body["faultTolerance"] = {"retryPolicy": "TASK", "exchange": "spool"}
    outcome = _classify(_doc(**body), settings)
    assert isinstance(outcome, Failed)
    (problem,) = outcome.problems
    assert problem.field == f"clusterConfig.{role}.properties.retry-policy"
    assert "faultTolerance" in problem.message


@pytest.mark.parametrize(("field", "kind"), [
    ("ingress", "an ingress"), ("authentication", "an authentication"), ("disruption", "a disruption"),
    ("serviceAccount", "a service_accounts"),
])
def test_an_unknown_option_name_is_refused_in_plain_english(settings: Settings, field: str,
                                                            kind: str) -> None:
    """The message names the kind with the right article and lists the options there are."""
    outcome = _classify(_doc(**{field: "nowhere"}), settings)
    assert isinstance(outcome, Failed)
    (problem,) = outcome.problems
    assert problem.field == field
    assert f'"nowhere" is not {kind} option of these settings' in problem.message
