"""Server properties that need a companion file: one table, refused without it (issue 21 item 4).

The values that switch each feature on are written out here from Trino's documentation and
jars, not read from the table; the table (`trinogen.trino.companions`) must list exactly these
properties, so a row cannot be added without its test. Real Trino's refusal of the spooling row
is tests/test_trino_real_companions.py; the retry-policy row's is tests/test_trino_real_fte.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.conftest import demo_settings
from tests.test_auth import secure_settings
from tests.test_fault_tolerance import doc, run, settings_with, values
from tests.test_spooling import spool_settings
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.model.checker import field_path
from trinogen.model.rules import TOP_FIELDS
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind
from trinogen.trino.companions import COMPANIONS, Companion, refusal

# Each property with a value that makes Trino need its companion.
NEEDS_COMPANION = {
    "protocol.spooling.enabled": "true",
    "retry-policy": "TASK",
    "catalog.management": "dynamic",
    "event-listener.config-files": "/etc/trino/files/listener.properties",
    "access-control.config-files": "/etc/trino/files/rules.properties",
    "password-authenticator.config-files": "/etc/trino/files/password.properties",
    "header-authenticator.config-files": "/etc/trino/files/header.properties",
    "http-server.authentication.type": "PASSWORD",
    "resource-groups.configuration-manager": "file",
    "resource-groups.config-file": "/etc/trino/files/groups.json",
    "session-property-manager.config-files": "/etc/trino/files/session.properties",
    "exchange-manager.name": "filesystem",
    # SpoolingConfig's settings, bound only with protocol.spooling.enabled=true
    "protocol.spooling.shared-secret-key": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
    "protocol.spooling.retrieval-mode": "STORAGE",
    "protocol.spooling.initial-segment-size": "8MB",
    "protocol.spooling.max-segment-size": "16MB",
    "protocol.spooling.maximum-segment-size": "16MB",
    "protocol.spooling.inlining.enabled": "false",
    "protocol.spooling.inlining.max-rows": "1000",
    "protocol.spooling.inlining.max-size": "128kB",
}
# The properties whose value decides (the others fail whatever their value).
SWITCHES = {"protocol.spooling.enabled", "catalog.management", "retry-policy"}
# Values of the same properties that need nothing beside them (Trino's defaults or the
# alternative that works alone); they render as plain config.properties lines.
ALONE = [
    ("protocol.spooling.enabled", "false"),
    ("protocol.spooling.encoding.json+zstd.enabled", "false"),  # bound with spooling off too
    ("retry-policy", "QUERY"),
    ("retry-policy", "NONE"),
    ("catalog.management", "static"),
]
# The document fields that render each offered companion, and where it shows in values.yaml.
OFFERS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "faultTolerance.exchange": ({"faultTolerance": {"retryPolicy": "TASK", "exchange": "eu"}},
                                ("server", "exchangeManager")),
    "accessControl": ({"accessControl": {"rules": {"catalogs": [{"allow": "all"}]}}},
                      ("accessControl", "rules")),
    "authentication": ({"authentication": "corp-password"}, ("auth", "passwordAuthSecret")),
    "eventListeners": ({"eventListeners": ["audit"]},
                       ("coordinator", "additionalConfigFiles", "event-listener-audit.properties")),
    "resourceGroups": ({"resourceGroups": {
        "rootGroups": [{"name": "all", "hardConcurrencyLimit": 5, "maxQueued": 50}],
        "selectors": [{"group": "all"}]}}, ("resourceGroups", "resourceGroupsConfig")),
    "spooling": ({"spooling": {"storage": "s3-keys"}},
                 ("worker", "additionalConfigFiles", "spooling-manager.properties")),
    "sessionProperties": ({"sessionProperties": [{"sessionProperties": {"spill_enabled": "true"}}]},
                          ("sessionProperties", "sessionPropertiesConfig")),
}


def listener_settings() -> Settings:
    """settings_with() and one HTTP event listener, `audit`."""
    s = settings_with()
    audit = {"audit": {"type": "http", "uri": "https://audit.example.com/{cluster}"}}
    return dataclasses.replace(s, named={
        **s.named, "event_listeners": parse_kind("event_listeners", audit, "t")})


def test_the_table_lists_exactly_the_properties_tested_here() -> None:
    """Every row of the table has a value here that needs its companion, and no more rows; only
    the switches listed here depend on their value."""
    assert sorted(COMPANIONS) == sorted(NEEDS_COMPANION)
    assert {key for key, row in COMPANIONS.items() if row.when is not None} == SWITCHES


@pytest.mark.parametrize("key", sorted(NEEDS_COMPANION))
def test_a_property_without_its_companion_is_refused(key: str) -> None:
    """A document setting the property is refused at that property, naming the cluster."""
    outcome = run(doc(**{key: NEEDS_COMPANION[key]}))
    assert isinstance(outcome, Failed), outcome
    at = [p for p in outcome.problems if p.field == field_path("properties", key)]
    assert at and all(p.cluster == "etl" for p in at), outcome.problems


@pytest.mark.parametrize("key", sorted(k for k, row in COMPANIONS.items() if row.judged_by is None))
def test_the_tables_own_refusals_say_what_is_missing(key: str) -> None:
    """A refusal the table makes itself names the property, its value and what must accompany it."""
    outcome = run(doc(**{key: NEEDS_COMPANION[key]}))
    assert isinstance(outcome, Failed), outcome
    (problem,) = [p for p in outcome.problems if p.field == field_path("properties", key)]
    value = NEEDS_COMPANION[key]
    if key in SWITCHES:
        assert problem.message.startswith(f"{key}={value} needs ")
    else:  # any value fails; the value is not repeated (it may be a secret)
        assert problem.message.startswith(f"{key} needs ")
        assert value not in problem.message
    assert COMPANIONS[key].needs in problem.message


@pytest.mark.parametrize("key", ["protocol.spooling.enabled", "catalog.management"])
def test_a_role_may_not_set_it_either(key: str) -> None:
    """Under clusterConfig.<role>.properties the property is refused the same way."""
    body = doc()
    body["clusterConfig"]["worker"]["properties"] = {key: NEEDS_COMPANION[key].upper()}
    outcome = run(body)
    assert isinstance(outcome, Failed), outcome
    assert any(p.field == field_path("clusterConfig.worker.properties", key)
               and key in p.message for p in outcome.problems), outcome.problems


@pytest.mark.parametrize(("key", "value"), ALONE)
def test_a_value_that_needs_nothing_renders(key: str, value: str) -> None:
    """The same property set to a value that needs no companion is one config.properties line."""
    outcome = run(doc(**{key: value}))
    assert isinstance(outcome, Cluster), outcome
    assert values(outcome)["additionalConfigProperties"].count(f"{key}={value}") == 1


@pytest.mark.parametrize("offer", sorted(OFFERS))
def test_each_offered_companion_renders_from_its_field(offer: str) -> None:
    """Where the table says trinogen offers a companion, that field renders it."""
    assert offer.split(".")[0] in TOP_FIELDS
    assert offer in {row.offered_by for row in COMPANIONS.values()}
    patch, where = OFFERS[offer]
    settings = (secure_settings() if "authentication" in patch
                else listener_settings() if "eventListeners" in patch
                else spool_settings() if "spooling" in patch else None)
    body = {**doc(), **patch}
    outcome = classify(RawDocument('"d"', body), settings) if settings else run(body)
    assert isinstance(outcome, Cluster), outcome
    found: Any = values(outcome, settings)
    for step in where:
        found = found[step]
    assert found


def test_every_offer_is_tested() -> None:
    """Each document field the table names as an offer has its rendering test above."""
    assert {row.offered_by for row in COMPANIONS.values()} - {None} == set(OFFERS)


@pytest.mark.parametrize(("row", "expected"), [
    (Companion(frozenset({"on"}), "a file", None, "it fails", "x"),
     ("k=on needs a file: trinogen renders no such configuration yet, so leave it out "
      "(without it: it fails)")),
    (Companion(None, "a file", "someField", "it fails", "x"),
     ("k needs a file: trinogen renders it from someField; use that instead (without it: "
      "it fails)")),
])
def test_the_message_names_the_offer_when_there_is_one(row: Companion, expected: str) -> None:
    """A refusal says which document field provides the companion, or that none does yet."""
    assert refusal("k", " on ", row) == expected


@pytest.mark.parametrize("mode", ["warn", "off"])
@pytest.mark.parametrize("key", sorted(k for k, row in COMPANIONS.items() if row.judged_by is None))
def test_the_refusal_holds_whatever_the_registry_mode(mode: str, key: str) -> None:
    """The table judges what trinogen renders, not the registry: warn or off still refuses."""
    settings = demo_settings(validation={"trino_properties": mode})
    outcome = classify(RawDocument('"d"', doc(**{key: NEEDS_COMPANION[key]})), settings)
    assert isinstance(outcome, Failed), outcome
    assert any(p.field == field_path("properties", key) for p in outcome.problems)
