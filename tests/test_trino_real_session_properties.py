"""A real Trino 476 applies the session property defaults trinogen writes, and lists the session
properties trinogen's data holds.

One coordinator boots from the chart's ConfigMaps (tests/test_trino_real.py's way, its REWRITES
unchanged) for a document with lake, JDBC and built-in catalogs, its own session defaults
(`sessionProperties`), a platform option's (`sessionDefaults`) and access rules that deny one
user one session property, through trinogen's render and the real chart. Two of the document's entries are what trinogen refuses (an unknown name, a
word for a boolean): the boot renders them with `validation.trino_properties: warn` to show what
Trino does with them. Then SHOW SESSION, as users the entries match and one they do not, says
what Trino applied, and its names and types are compared with trinogen/trino/data/session.json.gz.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tests.marks import REAL_TRINO, helm_python
from tests.test_trino_real import (
    BOOT_TIMEOUT,
    DEAD_METASTORE,
    S3_FS,
    for_laptop,
    heap_factor,
    render_pods,
)
from trinogen.model import Failed, RawDocument, classify
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind
from trinogen.trino.session import session_properties_for

pytestmark = REAL_TRINO

CATALOGS = {"lake": "hive", "ice": "iceberg", "delta": "delta_lake", "pg": "postgresql",
            "tpch": "tpch", "scratch": "memory"}
_CATALOG_PROPS: dict[str, dict[str, str]] = {
    "hive": {"hive.metastore.uri": DEAD_METASTORE, **S3_FS},
    "iceberg": {"iceberg.catalog.type": "hive_metastore", "hive.metastore.uri": DEAD_METASTORE,
                **S3_FS},
    "delta_lake": {"hive.metastore.uri": DEAD_METASTORE, **S3_FS},
    "postgresql": {"connection-url": "jdbc:postgresql://127.0.0.1:9/dw",
                   "connection-user": "trino"},
}
# The document's entries: for alice, a system and a catalog session property, and a limit the
# platform's entry below sets too; for the ETL tool's queries, another catalog property.
DOCUMENT_ENTRIES = [
    {"user": "alice",
     "sessionProperties": {"join_distribution_type": "broadcast",
                           "query_max_execution_time": "7m"},
     "catalogSessionProperties": {"lake": {"parquet_use_column_index": False}}},
    {"source": "etl-.*", "clientTags": ["nightly"],
     "catalogSessionProperties": {"ice": {"compression_codec": "zstd"}}},
]
# For erin, a default the cluster's own access rules deny her (below).
DENIED = [{"user": "erin", "sessionProperties": {"spill_enabled": "true"}}]
RULES = {"catalogs": [{"allow": "all"}],
         "system_session_properties": [{"user": "erin", "property": "spill_enabled",
                                        "allow": False}, {"allow": True}],
         "catalog_session_properties": [{"allow": True}]}
# What trinogen refuses (rendered here with validation.trino_properties: warn): for carol, a
# name Trino does not have; for dave, a boolean property given a word.
REFUSED = [
    {"user": "carol", "sessionProperties": {"no_such_property": "1"}},
    {"user": "dave", "sessionProperties": {"spill_enabled": "yes"}},
]
# The platform's option, for every user whose name starts with "a": written after the document's.
PLATFORM = {"entries": [{"user": "a.*", "sessionProperties": {"query_max_execution_time": "3m"}}]}
DOC = {
    "_id": "trino-real-session", "clusterId": "session", "owner": "qa_team", "enabled": True,
    "connectors": [{"name": name, "properties": {"connector.name": connector,
                                                 **_CATALOG_PROPS.get(connector, {})}}
                   for name, connector in CATALOGS.items()],
    "sessionProperties": [*DOCUMENT_ENTRIES, *DENIED, *REFUSED],
    "sessionDefaults": "platform",
    "accessControl": {"rules": RULES},
}
# SHOW SESSION's type for each kind of value trinogen knows (the rest are varchar)
SQL_TYPES = {"boolean": "boolean", "integer": "integer", "bigint": "bigint", "double": "double"}


def _settings(mode: str) -> Settings:
    """The demo settings with the platform's option, validation.trino_properties = mode."""
    base = demo_settings()
    named = {**base.named, "session_defaults": parse_kind("session_defaults",
                                                          {"platform": PLATFORM}, "test")}
    validation = dataclasses.replace(base.validation, trino_properties=mode)
    return dataclasses.replace(base, named=named, validation=validation)


def _rows(port: int, user: str, sql: str, *, source: str | None = None,
          tags: list[str] | None = None) -> list[list[Any]]:
    import trino

    conn = trino.dbapi.connect(host="127.0.0.1", port=port, user=user, source=source,
                               client_tags=tags, http_scheme="http", request_timeout=120)
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()


def _session(port: int, user: str, **kwargs: Any) -> dict[str, tuple[str, str, str]]:
    """SHOW SESSION as `user`: name -> (value, default, type)."""
    return {str(r[0]): (str(r[1]), str(r[2]), str(r[3]))
            for r in _rows(port, user, "SHOW SESSION", **kwargs)}


@pytest.fixture(scope="module")
def coordinator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, str]]]:
    pods = render_pods(DOC, _settings("warn"), helm_python.Chart.load(CHART_DIR))
    dist = ts.distribution()
    root = tmp_path_factory.mktemp("trino-session")
    port = ts.free_port()
    node = ts.TrinoNode("coordinator", root, for_laptop(
        pods.role["coordinator"], root, dist / "plugin", port, port, heap_factor(pods.role),
        coordinator_alone=True))
    node.start(dist)
    try:
        node.wait_started(BOOT_TIMEOUT)
        yield port, pods.role["coordinator"].files
    finally:
        node.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_trinogen_refuses_the_two_entries_trino_would_mishandle() -> None:
    """With validation.trino_properties: error (the default) the document is refused at
    carol's unknown name and dave's word for a boolean, and nowhere else."""
    outcome = classify(RawDocument('"trino-real-session"', DOC), _settings("error"))
    assert isinstance(outcome, Failed)
    assert [p.field for p in outcome.problems] == [
        "sessionProperties[3].sessionProperties.no_such_property",
        "sessionProperties[4].sessionProperties.spill_enabled"]


def test_the_chart_mounts_the_manager_and_the_entries(
        coordinator: tuple[int, dict[str, str]]) -> None:
    """The coordinator's ConfigMap holds the file manager's properties and the JSON entries."""
    _, files = coordinator
    props = files["/etc/trino/session-property-config.properties"]
    assert "session-property-config.configuration-manager=file" in props
    assert "/etc/trino/session-property-config.json" in files


def test_a_matching_user_gets_the_defaults(coordinator: tuple[int, dict[str, str]]) -> None:
    """alice's SHOW SESSION shows the system and catalog defaults of her entry, and the
    platform's entry, written last, wins for the property both set."""
    port, _ = coordinator
    shown = _session(port, "alice")
    assert shown["join_distribution_type"][0] == "broadcast"  # as written; Trino upper-cases it
    assert shown["lake.parquet_use_column_index"][0] == "false"
    assert shown["lake.parquet_use_column_index"][1] == "true"
    assert shown["query_max_execution_time"][0] == "3m"


def test_another_user_gets_trinos_defaults(coordinator: tuple[int, dict[str, str]]) -> None:
    """bob matches no entry: each of those properties shows its default as its value."""
    port, _ = coordinator
    shown = _session(port, "bob")
    for name in ("join_distribution_type", "lake.parquet_use_column_index",
                 "query_max_execution_time", "ice.compression_codec"):
        value, default, _ = shown[name]
        assert value == default, (name, value, default)


def test_source_and_client_tags_both_must_match(coordinator: tuple[int, dict[str, str]]) -> None:
    """The ETL entry applies to a query with its source and tag, not to one with the source
    alone."""
    port, _ = coordinator
    tagged = _session(port, "bob", source="etl-orders", tags=["nightly", "eu"])
    untagged = _session(port, "bob", source="etl-orders")
    assert tagged["ice.compression_codec"][0] == "zstd"
    assert untagged["ice.compression_codec"][0] == untagged["ice.compression_codec"][1]


def test_an_unknown_name_fails_every_query_it_matches(
        coordinator: tuple[int, dict[str, str]]) -> None:
    """carol's entry names a session property Trino does not have: every query of hers fails
    (which is why trinogen refuses it), while others' run."""
    import trino

    port, _ = coordinator
    with pytest.raises(trino.exceptions.TrinoUserError) as raised:
        _rows(port, "carol", "SELECT 1")
    assert "no_such_property" in str(raised.value.message)
    assert _rows(port, "bob", "SELECT 1") == [[1]]


def test_access_rules_judge_a_default_as_a_set_session(
        coordinator: tuple[int, dict[str, str]]) -> None:
    """erin's default sets a property the cluster's access rules deny her: her queries fail
    with access denied, as her own SET SESSION would (defaults do not slip past the rules)."""
    import trino

    port, _ = coordinator
    with pytest.raises(trino.exceptions.TrinoUserError) as raised:
        _rows(port, "erin", "SELECT 1")
    assert "spill_enabled" in str(raised.value.message)
    assert "Access Denied" in str(raised.value.message)


def test_a_word_for_a_boolean_passes_without_a_word(
        coordinator: tuple[int, dict[str, str]]) -> None:
    """dave's entry gives the boolean spill_enabled "yes": Trino says nothing, shows it as set
    and runs his queries (SessionPropertyManager reads it with Boolean.valueOf, as false), so
    only trinogen's check can tell the author."""
    port, _ = coordinator
    assert _session(port, "dave")["spill_enabled"] == ("yes", "false", "boolean")
    assert _rows(port, "dave", "SELECT 1") == [[1]]


def test_the_data_lists_what_trino_lists(coordinator: tuple[int, dict[str, str]]) -> None:
    """Every session property SHOW SESSION lists (system, and those of the booted catalogs) is
    in trinogen's data for 476 with the same type; each one the data has beyond them is hidden
    (SHOW SESSION leaves hidden properties out) and SET SESSION knows it; those the data says
    are bound only with the spooling protocol on, SET SESSION does not know here."""
    port, _ = coordinator
    shown = _session(port, "bob")
    known = session_properties_for("476")
    assert known is not None and known.system is not None
    data: dict[str, str] = {n: _sql_type(s) for n, s in known.system.items()}
    for catalog, connector in CATALOGS.items():
        props = known.connector(connector)
        assert props is not None, connector
        data.update({f"{catalog}.{n}": _sql_type(s) for n, s in props.items()})
    listed = {n: t for n, (_, _, t) in shown.items()}
    assert sorted(set(listed) - set(data)) == []
    wrong = {n: (t, data[n]) for n, t in listed.items() if data[n] not in ("", t)}
    assert wrong == {}
    unknown = {}
    for name in sorted(set(data) - set(listed)):
        said = _set_session(port, name)
        if "does not exist" in said:
            unknown[name] = said
    assert unknown == {}, unknown
    spooling = known.bound_when["protocol.spooling.enabled=true"]
    assert spooling and all("does not exist" in _set_session(port, n) for n in spooling)


def _set_session(port: int, name: str) -> str:
    """What Trino says to SET SESSION of a property (with a value of any type): its error, or
    "" when it took it."""
    import trino

    try:
        _rows(port, "bob", f"SET SESSION {name} = 'x'")
    except trino.exceptions.TrinoUserError as e:
        return str(e.message)
    return ""


def _sql_type(spec: object) -> str:
    """The type SHOW SESSION shows for a spec ("" where trinogen does not know it)."""
    if spec == "any":
        return ""
    return SQL_TYPES.get(spec, "varchar") if isinstance(spec, str) else "varchar"
