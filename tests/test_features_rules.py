"""Rules between features that were built apart (issues 13 and 14), as tables over documents.

- A hand-set `retry-policy: TASK` without `faultTolerance` is refused: only faultTolerance gives
  the exchange manager TASK needs (Trino 476 starts without one, then fails every query).
- An `ingress` pick is judged with the cluster's authentication: exposing a coordinator without
  authentication, or `tls: ingress` authentication behind an Ingress without TLS, is a warning.
"""

from __future__ import annotations

from pathlib import Path
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
    ({"ingress": "public", "authentication": "corp-password"}, None),  # tls: pod
    ({"ingress": "internal", "authentication": "corp-password"}, None),
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
