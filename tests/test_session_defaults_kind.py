"""The `session_defaults` kind: a platform's named entries (`session_defaults:` in the
settings), a document's own (`sessionProperties`) and its pick (`sessionDefaults`), through
classify, the renderer and the real chart (helm-python-sdk).

Expectations come from the entries written below (the JSON Trino's file manager reads is those
entries, the document's first), the chart's templates (what it mounts from `sessionProperties`)
and Trino 476's session properties; the real boot is tests/test_trino_real_session_properties.py.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tests.test_workload import doc, outcome, with_options
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind

PLATFORM = {"entries": [
    {"user": ".*", "sessionProperties": {"query_max_execution_time": "4h"}},
]}
OWN = [
    {"user": "etl_.*", "clientTags": ["nightly"],
     "sessionProperties": {"query_max_execution_time": "8h", "spill_enabled": True}},
]


def _settings(**options: dict[str, Any]) -> Settings:
    base = with_options()
    parsed = parse_kind("session_defaults", options or {"standard": PLATFORM}, "test")
    return dataclasses.replace(base, named={**base.named, "session_defaults": parsed})


def _entries(cluster: Cluster) -> list[dict[str, Any]]:
    part = cluster.kind("session_defaults")
    assert part is not None
    return [e.to_json() for e in part.entries]


# --- the platform's option -------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "said"), [
    ({"entries": []}, "1 to 50 entries"),
    ({"entries": [{"sessionProperties": {"x": "1"}}] * 51}, "1 to 50 entries"),
    ({"entrys": []}, "unknown field"),
    ({"entries": [{"catalogSessionProperties": {"hive": {"x": "1"}}}]},
     "system session properties only"),
    ({"entries": [{"usr": "a", "sessionProperties": {"x": "1"}}]}, "entries[0].usr: unknown field"),
    ({"entries": [{"user": "a"}]}, "must map session property names"),
    ({"entries": [{"sessionProperties": {"x": 1.5}}]}, "string, boolean or integer"),
    ({"entries": [{"user": 7, "sessionProperties": {"x": "1"}}]}, "entries[0].user: must be a string"),
    ({"entries": [{"clientTags": "etl", "sessionProperties": {"x": "1"}}]}, "list of strings"),
])
def test_a_malformed_option_is_refused_at_load(raw: dict[str, Any], said: str) -> None:
    """The settings fail to load on an option whose shape Trino's manager would not read,
    naming the option's field."""
    with pytest.raises(ConfigError, match="session_defaults.bad") as raised:
        parse_kind("session_defaults", {"bad": raw}, "test")
    assert said in str(raised.value)


# --- a document ------------------------------------------------------------------------------

def test_own_entries_first_the_picked_options_last() -> None:
    """The cluster's entries are the document's, then the option's: Trino applies both in
    order, so the platform's 4h wins wherever its entry matches."""
    cluster = outcome(doc(sessionProperties=OWN, sessionDefaults="standard"), _settings())
    assert isinstance(cluster, Cluster), cluster
    assert _entries(cluster) == [
        {"user": "etl_.*", "clientTags": ["nightly"],
         "sessionProperties": {"query_max_execution_time": "8h", "spill_enabled": "true"}},
        {"user": ".*", "sessionProperties": {"query_max_execution_time": "4h"}}]


def test_own_entries_without_an_option() -> None:
    """A document may write its own entries without picking any option."""
    cluster = outcome(doc(sessionProperties=[{"sessionProperties": {"spill_enabled": "false"}}]),
                      _settings())
    assert isinstance(cluster, Cluster), cluster
    assert _entries(cluster) == [{"sessionProperties": {"spill_enabled": "false"}}]


def test_spooling_session_properties_need_the_documents_spooling() -> None:
    """`spooling_*` session properties exist only with the spooling protocol on: refused without
    the document's `spooling`, accepted with it (its protocol.spooling.enabled=true)."""
    from tests.test_spooling import spool_doc, spool_settings

    settings = dataclasses.replace(spool_settings(), named={
        **spool_settings().named, "session_defaults": _settings().named["session_defaults"]})
    entries = [{"sessionProperties": {"spooling_inlining_max_rows": "100"}}]
    without = outcome(spool_doc(sessionProperties=entries), settings)
    assert isinstance(without, Failed), without
    assert any("protocol.spooling.enabled" in p.message for p in without.problems), without
    spooling = outcome(spool_doc(sessionProperties=entries, spooling={"storage": "s3-keys"}),
                       settings)
    assert isinstance(spooling, Cluster), spooling
    assert _entries(spooling) == [{"sessionProperties": {"spooling_inlining_max_rows": "100"}}]


def test_no_entries_no_kind() -> None:
    """A document that writes and picks nothing has no session defaults."""
    cluster = outcome(doc(), _settings())
    assert isinstance(cluster, Cluster) and cluster.kind("session_defaults") is None


@pytest.mark.parametrize(("body", "field", "said"), [
    ({"sessionProperties": [{"sessionProperties": {"spill_enabld": "true"}}]},
     "sessionProperties[0].sessionProperties.spill_enabld", "did you mean spill_enabled?"),
    ({"sessionProperties": [{"catalogSessionProperties": {"lake": {"x": "1"}}}]},
     "sessionProperties[0].catalogSessionProperties.lake", "not a catalog of this cluster"),
    ({"sessionDefaults": "nope"}, "sessionDefaults", "not a session_defaults option"),
    ({"sessionDefaults": "typo"}, "sessionDefaults",
     "the option \"typo\", entries[0].sessionProperties.query_max_excution_time"),
    ({"sessionPropertys": []}, "sessionPropertys", "unknown field"),
])
def test_refusals_name_the_documents_field(body: dict[str, Any], field: str, said: str) -> None:
    """A wrong name in the document's entries, an unknown catalog, an unknown option, and an
    option whose entries this document's Trino version refuses: each refused at its field."""
    settings = _settings(standard=PLATFORM, typo={"entries": [
        {"sessionProperties": {"query_max_excution_time": "1h"}}]})
    failed = outcome(doc(**body), settings)
    assert isinstance(failed, Failed)
    assert [(p.field, said in p.message) for p in failed.problems] == [(field, True)], \
        failed.problems


def test_catalog_properties_are_checked_against_the_catalogs_connector() -> None:
    """A catalog session property is checked against the connector of that catalog."""
    body = doc(connectors=[{"name": "Lake", "properties": {
        "connector.name": "hive", "hive.metastore.uri": "thrift://metastore:9083"}}],
        sessionProperties=[{"catalogSessionProperties": {
            "lake": {"parquet_use_column_index": False, "iceberg_only": "1"}}}])
    failed = outcome(body, _settings())
    assert isinstance(failed, Failed)
    assert [p.field for p in failed.problems] == [
        "sessionProperties[0].catalogSessionProperties.lake.iceberg_only"]


def test_new_session_data_renders_every_cluster_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other session property data gives the renderer another fingerprint, so no cached
    document skips the new checks."""
    from trinogen.render import Renderer

    before = Renderer(_settings()).fingerprint
    monkeypatch.setattr("trinogen.render.renderer.session_data_digest", lambda: b"other data")
    assert Renderer(_settings()).fingerprint != before


def test_the_coordinator_configmap_counts_the_entries() -> None:
    """The size check counts the JSON the chart puts in the coordinator's ConfigMap, line by
    line, at the field it comes from; the worker's ConfigMap has none of it."""
    from trinogen.render import Renderer
    from trinogen.render.objects import cluster_objects, size_bound

    settings = _settings()
    plain = outcome(doc(), settings)
    cluster = outcome(doc(sessionProperties=[{"source": "s" * 900, "sessionProperties": {
        "spill_enabled": "true"}}]), settings)
    assert isinstance(cluster, Cluster) and isinstance(plain, Cluster)
    r = Renderer(settings)
    written = r.written(cluster, {}, False)
    sizes = {o.name: sum(p.size for p in o.data if p.field == "sessionProperties")
             for o in cluster_objects(cluster, "trino", written) if o.kind == "ConfigMap"}
    expected = sum(len(line) + 1 for line in json.dumps(
        [{"source": "s" * 900, "sessionProperties": {"spill_enabled": "true"}}],
        indent=2).splitlines())
    assert {n: v for n, v in sizes.items() if v} == {"lake-trino-coordinator": expected}
    assert size_bound(cluster, written) > size_bound(plain, r.written(plain, {}, False)) + 900
