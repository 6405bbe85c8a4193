"""Session property defaults: entries of Trino's file-based session property manager, checked
against the session properties of the document's Trino version, and the JSON the chart mounts.

Expectations come from Trino 476 itself: the names and types SHOW SESSION lists (the real test,
tests/test_trino_real_session_properties.py, holds the data to them), the manager's keys
(SessionMatchSpec's Jackson constructor), its order (AbstractSessionPropertyManager applies
every match in order, `putAll`), and how values are read (SessionPropertyManager: Boolean.valueOf,
Integer.valueOf...; airlift Duration/DataSize; enums upper-cased).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import ROOT
from trinogen.model.checker import Checker
from trinogen.model.session_defaults import (
    MAX_BYTES,
    MAX_ENTRIES,
    MAX_PROPERTIES,
    Entry,
    Scope,
    chart_values,
    check_entries,
    combined,
    config_json,
    scope_for,
    value_problem,
)
from trinogen.trino import session as facts

CATALOGS = {"lake": "hive", "ice": "iceberg", "pg": "postgresql", "tpch": "tpch",
            "lake.eu": "hive"}
PATH = "sessionProperties"


def _check(value: Any, *, mode: str = "error", version: str | None = "476",
           switches: tuple[str, ...] = (),
           unchecked: tuple[str, ...] = ()) -> tuple[tuple[Entry, ...] | None, Checker]:
    c = Checker("doc", "error")
    scope = scope_for(version, mode, CATALOGS, c, unchecked, switches)
    return check_entries(value, PATH, scope, c), c


def _messages(c: Checker) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in c.problems]


# --- values: what Trino reads, by type -------------------------------------------------------

@pytest.mark.parametrize(("spec", "text", "ok"), [
    (facts.BOOLEAN, "true", True),
    (facts.BOOLEAN, "FALSE", True),
    (facts.BOOLEAN, "yes", False),  # Boolean.valueOf reads it as false, without a word
    (facts.BOOLEAN, "1", False),
    (facts.INTEGER, "42", True),
    (facts.INTEGER, "-2147483648", True),
    (facts.INTEGER, "2147483648", False),  # past Integer.MAX_VALUE
    (facts.INTEGER, "4.0", False),
    (facts.INTEGER, "٤", False),  # an Arabic-Indic digit: refused rather than guessed
    (facts.BIGINT, "2147483648", True),
    (facts.BIGINT, "9223372036854775808", False),
    (facts.DOUBLE, "0.9", True),
    (facts.DOUBLE, "1e-3", True),
    (facts.DOUBLE, "ninety", False),
    (facts.DURATION, "30s", True),
    (facts.DURATION, "1.5h", True),
    (facts.DURATION, " 10 m ", True),  # airlift's pattern allows spaces around
    (facts.DURATION, "10", False),
    (facts.DURATION, "10 minutes", False),
    (facts.DURATION, "1w", False),
    (facts.DATA_SIZE, "512MB", True),
    (facts.DATA_SIZE, "1.5GB", True),
    (facts.DATA_SIZE, "1gb", False),
    (facts.DATA_SIZE, "100", False),
    (("AUTOMATIC", "BROADCAST", "PARTITIONED"), "broadcast", True),  # upper-cased by Trino
    (("AUTOMATIC", "BROADCAST", "PARTITIONED"), "BROADCASTED", False),
    (facts.VARCHAR, "anything at all", True),
    (facts.ANY, "anything at all", True),
])
def test_values_are_checked_as_trino_reads_them(spec: facts.Spec, text: str, ok: bool) -> None:
    """A value is refused exactly when Trino could not read it as its property's type (or, for
    a boolean, would read a word silently as false)."""
    assert (value_problem(spec, text) is None) is ok


# --- entries ----------------------------------------------------------------------------------

def test_an_entry_becomes_trinos_keys_with_catalog_properties_dotted() -> None:
    """Match keys keep Trino's names; catalog session properties become `catalog.property` keys
    in sessionProperties (the manager splits them at the first dot); booleans and integers are
    written as Trino reads them."""
    entries, c = _check([{
        "user": "alice|bob", "source": "airflow-.*", "group": "global\\.etl.*",
        "clientTags": ["etl", "nightly"], "queryType": "insert",
        "sessionProperties": {"query_max_execution_time": "2h", "spill_enabled": True,
                              "max_hash_partition_count": 64},
        "catalogSessionProperties": {"lake": {"insert_existing_partitions_behavior": "OVERWRITE"}},
    }])
    assert c.problems == [] and entries is not None
    assert json.loads(config_json(entries)) == [{
        "user": "alice|bob", "source": "airflow-.*", "group": "global\\.etl.*",
        "clientTags": ["etl", "nightly"], "queryType": "INSERT",
        "sessionProperties": {"max_hash_partition_count": "64",
                              "query_max_execution_time": "2h", "spill_enabled": "true",
                              "lake.insert_existing_partitions_behavior": "OVERWRITE"}}]


@pytest.mark.parametrize(("entry", "field", "said"), [
    ({"sessionProperties": {"query_max_excution_time": "1h"}},
     "sessionProperties[0].sessionProperties.query_max_excution_time",
     "did you mean query_max_execution_time?"),
    ({"sessionProperties": {"hive_storage_format": "ORC"}},
     "sessionProperties[0].sessionProperties.hive_storage_format", "not a system session"),
    ({"catalogSessionProperties": {"ice": {"hive_storage_format": "ORC"}}},
     "sessionProperties[0].catalogSessionProperties.ice.hive_storage_format",
     "not a session property of iceberg"),
    ({"catalogSessionProperties": {"warehouse": {"x": "1"}}},
     "sessionProperties[0].catalogSessionProperties.warehouse", "not a catalog of this cluster"),
    ({"catalogSessionProperties": {"tpch": {"anything": "1"}}},
     "sessionProperties[0].catalogSessionProperties.tpch.anything", "not a session property of tpch"),
    ({"catalogSessionProperties": {"lake.eu": {"parquet_use_column_index": "true"}}},
     "sessionProperties[0].catalogSessionProperties[\"lake.eu\"]", "splits catalog.property"),
    ({"sessionProperties": {"spooling_inlining_enabled": "true"}},
     "sessionProperties[0].sessionProperties.spooling_inlining_enabled",
     "only when protocol.spooling.enabled=true"),
    ({"sessionProperties": {"spill_enabled": "yes"}},
     "sessionProperties[0].sessionProperties.spill_enabled", "reads any other word as false"),
    ({"sessionProperties": {"join_distribution_type": "BROADCASTED"}},
     "sessionProperties[0].sessionProperties.join_distribution_type",
     "not one of AUTOMATIC, BROADCAST, PARTITIONED"),
    ({"sessionProperties": {"query_max_execution_time": 60}},
     "sessionProperties[0].sessionProperties.query_max_execution_time", "not a duration"),
    ({"sessionProperties": {"Spill_Enabled": "true"}},
     "sessionProperties[0].sessionProperties.Spill_Enabled", "not a session property name"),
    ({"sessionProperties": {"spill_enabled": 1.5}},
     "sessionProperties[0].sessionProperties.spill_enabled", "not a number"),
    ({"user": "alice(", "sessionProperties": {"spill_enabled": "true"}},
     "sessionProperties[0].user", "Unclosed group"),
    ({"queryType": "SELEKT", "sessionProperties": {"spill_enabled": "true"}},
     "sessionProperties[0].queryType", "did you mean SELECT?"),
    ({"userGroup": "admins", "sessionProperties": {"spill_enabled": "true"}},
     "sessionProperties[0].userGroup", "unknown field"),  # Trino 476 stops at unknown keys
    ({"user": "alice"}, "sessionProperties[0]", "sets no session property"),
    ({"clientTags": "etl", "sessionProperties": {"spill_enabled": "true"}},
     "sessionProperties[0].clientTags", "must be a list"),
])
def test_what_trino_would_refuse_is_refused_at_its_field(entry: dict[str, Any], field: str,
                                                         said: str) -> None:
    """Each mistake is one error at its field, saying what is wrong."""
    entries, c = _check([entry])
    assert entries is None
    assert [f for f, _ in _messages(c)] == [field], _messages(c)
    assert said in c.problems[0].message


def test_spooling_properties_are_accepted_when_the_cluster_spools() -> None:
    """With the switch the spooling properties need, they are checked like the others."""
    entries, c = _check([{"sessionProperties": {"spooling_inlining_enabled": "true"}}],
                        switches=("protocol.spooling.enabled=true",))
    assert c.problems == [] and entries is not None


def test_warn_mode_reports_unknown_names_as_warnings_and_keeps_them() -> None:
    """validation.trino_properties=warn: names and values are warned about, and rendered."""
    entries, c = _check([{"sessionProperties": {"no_such_property": "1"}}], mode="warn")
    assert c.problems == [] and [w.field for w in c.warnings] == [
        "sessionProperties[0].sessionProperties.no_such_property"]
    assert entries is not None and entries[0].properties == (("no_such_property", "1"),)


def test_warn_mode_keeps_an_unknown_query_type() -> None:
    """An unknown query type only warned about stays in the entry (Trino then matches no
    query with it) rather than being dropped, which would widen the entry to every query."""
    entries, c = _check([{"queryType": "SELEKT", "sessionProperties": {"spill_enabled": "true"}}],
                        mode="warn")
    assert c.problems == [] and entries is not None
    assert entries[0].match == (("queryType", "SELEKT"),)


@pytest.mark.parametrize(("mode", "version"), [("off", "476"), ("error", "999")])
def test_names_are_not_checked_without_data(mode: str, version: str) -> None:
    """With validation off, or a version the data does not cover (one warning then), any
    well-formed name passes; the shape is still checked."""
    entries, c = _check([{"sessionProperties": {"no_such_property": "1"}}], mode=mode,
                        version=version)
    assert c.problems == [] and entries is not None
    assert [w.field for w in c.warnings] == ([] if mode == "off" else ["trinoVersion"])


def test_a_connector_without_data_for_the_version_is_warned_about_once() -> None:
    """Trino 478's data has no hive (its plugin was not served): the hive catalog's properties
    pass unchecked, with one warning for both entries that set them; tpch's are checked."""
    known = facts.session_properties_for("478")
    assert known is not None and known.connector("hive") is None
    entries, c = _check([{"catalogSessionProperties": {"lake": {"no_such_thing": "1"}}},
                         {"catalogSessionProperties": {"lake": {"other": "x"},
                                                       "tpch": {"no_such_thing": "1"}}}],
                        version="478")
    assert [w.field for w in c.warnings] == [f"{PATH}[0].catalogSessionProperties.lake"]
    assert "no session property list for connector hive" in c.warnings[0].message
    assert [p.field for p in c.problems] == [
        f"{PATH}[1].catalogSessionProperties.tpch.no_such_thing"]
    assert entries is None


def test_a_partly_read_connectors_unknown_names_are_warnings() -> None:
    """Trino 479's iceberg data was read without some of the plugin's jars: an unknown name is
    a warning and kept, a known name's wrong value is still refused."""
    known = facts.session_properties_for("479")
    assert known is not None and "iceberg" in known.partial
    entries, c = _check([{"catalogSessionProperties": {"ice": {"no_such_thing": "1"}}}],
                        version="479")
    assert c.problems == [] and entries is not None
    assert entries[0].properties == (("ice.no_such_thing", "1"),)
    assert "without some of its plugin's jars" in c.warnings[0].message
    _, c = _check([{"catalogSessionProperties": {"ice": {"projection_pushdown_enabled": "si"}}}],
                  version="479")
    assert [p.field for p in c.problems] == [
        f"{PATH}[0].catalogSessionProperties.ice.projection_pushdown_enabled"]


@pytest.mark.parametrize("version", ["471", "473", "480"])
def test_system_names_are_checked_where_the_server_was_read_in_part(version: str) -> None:
    """Versions whose server was read without some jars still have every system session
    property (only trino-main declares them), so an unknown system name is refused."""
    entries, c = _check([{"sessionProperties": {"spill_enabled": "true",
                                                "no_such_property": "1"}}], version=version)
    assert entries is None
    assert [p.field for p in c.problems] == [f"{PATH}[0].sessionProperties.no_such_property"]


def test_unchecked_connectors_catalog_properties_pass() -> None:
    """A catalog whose connector is in validation.unchecked_connectors is not checked by name."""
    entries, c = _check([{"catalogSessionProperties": {"pg": {"custom_thing": "1"}}}],
                        unchecked=("postgresql",))
    assert c.problems == [] and entries is not None


@pytest.mark.parametrize(("value", "said"), [
    ([{"sessionProperties": {"spill_enabled": "true"}}] * (MAX_ENTRIES + 1), "at most 50"),
    ([{"sessionProperties": {f"p{i}": "1" for i in range(MAX_PROPERTIES + 1)}}],
     "at most 100 are allowed per entry"),
    ([{"user": "u" * 1001, "sessionProperties": {"spill_enabled": "true"}}], "at most 1000"),
    ([{"sessionProperties": {"spill_enabled": "x" * 1001}}], "at most 1000"),
    ([{"clientTags": [f"t{i}" for i in range(21)],
       "sessionProperties": {"spill_enabled": "true"}}], "at most 20"),
])
def test_sizes_are_bounded(value: Any, said: str) -> None:
    """A document cannot make the file, an entry or a value as large as it likes."""
    entries, c = _check(value, mode="off")
    assert entries is None and any(said in p.message for p in c.problems), _messages(c)


def test_the_whole_file_is_bounded() -> None:
    """Entries within each limit but together larger than the file's bound are refused."""
    entry = {"source": "s" * 900, "sessionProperties": {
        f"p{i}": "v" * 900 for i in range(MAX_PROPERTIES)}}
    entries, c = _check([entry] * 2, mode="off")
    assert entries is None and [p.field for p in c.problems] == [PATH]
    assert f"at most {MAX_BYTES:,}" in c.problems[0].message


# --- the platform's entries and the document's ------------------------------------------------

def test_platform_entries_come_last_so_they_win_where_they_match() -> None:
    """Trino applies every matching entry in order, a later one overriding: the platform's are
    written after the document's."""
    doc = Entry((("user", "a.*"),), (("query_max_execution_time", "7m"),))
    platform = Entry((), (("query_max_execution_time", "3m"),))
    written = json.loads(config_json(combined([platform], [doc])))
    assert [e["sessionProperties"]["query_max_execution_time"] for e in written] == ["7m", "3m"]


def test_chart_values_use_the_charts_configmap_type() -> None:
    """The chart's sessionProperties value: type configmap with the JSON; nothing without
    entries (the chart then writes no manager file)."""
    entry = Entry((), (("spill_enabled", "true"),))
    assert chart_values([]) == {}
    assert chart_values([entry]) == {"type": "configmap",
                                     "sessionPropertiesConfig": config_json([entry])}


# --- the data ---------------------------------------------------------------------------------

def test_476_data_has_what_trinos_documentation_names() -> None:
    """Properties the Trino 476 documentation describes are there with their types."""
    known = facts.session_properties_for("476")
    assert known is not None and known.system is not None
    assert known.system["query_max_execution_time"] == facts.DURATION
    assert known.system["join_distribution_type"] == ("AUTOMATIC", "BROADCAST", "PARTITIONED")
    assert known.system["spill_enabled"] == facts.BOOLEAN
    assert known.connector("hive")["insert_existing_partitions_behavior"] == facts.ANY  # type: ignore[index]
    assert "SELECT" in known.query_types and "DATA_DEFINITION" in known.query_types
    assert facts.session_properties_for("477") is None  # nothing of 477 is served


def test_checking_a_document_without_session_defaults_never_loads_the_data() -> None:
    """Importing trinogen and loading the registry leave the session data unread."""
    code = ("import trinogen.model, trinogen.trino.session as s; "
            "from trinogen.trino.registry import registry_for; registry_for('476'); "
            "print(s._data.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "0"


def test_scope_without_data_checks_nothing() -> None:
    """A scope with no data reports nothing about names."""
    c = Checker("doc", "error")
    entries = check_entries([{"sessionProperties": {"x": "1"}}], PATH, Scope(None, {}), c)
    assert entries is not None and c.problems == []


def test_a_huge_entry_is_refused_before_its_names_are_read() -> None:
    """An entry with a million names gives one error, about its size, and no error per name."""
    entries, c = _check([{"sessionProperties": {f"n{i}": "x" for i in range(1_000_000)}}])
    assert entries is None and [p.field for p in c.problems] == [f"{PATH}[0]"]
    assert "at most 100" in c.problems[0].message
