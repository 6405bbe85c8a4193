"""trinogen.model.resource_groups: a document's resource groups, held to Trino 476's schema.

The expected messages are Trino 476's own (the strings of its resource-group-managers jar and
trino-main's InternalResourceGroup, read with javap), or the limits this module documents.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from trinogen.model import resource_groups as rg
from trinogen.model.checker import Checker

PATH = "resourceGroups.groups"


def base() -> dict[str, Any]:
    """The Trino documentation's shape: a global group, per-user sub-groups, an admin group."""
    return {
        "cpuQuotaPeriod": "1h",
        "rootGroups": [
            {"name": "global", "softMemoryLimit": "80%", "hardConcurrencyLimit": 100,
             "maxQueued": 1000, "schedulingPolicy": "weighted", "jmxExport": True,
             "subGroups": [
                 {"name": "adhoc_${USER}", "softMemoryLimit": "10GB",
                  "hardConcurrencyLimit": 2, "maxQueued": 10, "schedulingWeight": 1},
                 {"name": "etl", "softMemoryLimit": "50%", "hardConcurrencyLimit": 5,
                  "softConcurrencyLimit": 3, "maxQueued": 100, "schedulingWeight": 4,
                  "softCpuLimit": "30m", "hardCpuLimit": "1h"},
             ]},
            {"name": "admin", "softMemoryLimit": "100%", "hardConcurrencyLimit": 50,
             "maxQueued": 100, "schedulingPolicy": "query_priority"},
        ],
        "selectors": [
            {"user": "bob|alice", "group": "admin"},
            {"source": ".*pipeline.*", "queryType": "insert", "clientTags": ["etl"],
             "group": "global.etl"},
            {"user": "(?<team>[a-z]+)_.*", "selectorResourceEstimate": {
                "executionTime": {"max": "5m"}, "peakMemory": {"min": "1MB", "max": "10GB"}},
             "group": "global.adhoc_${USER}"},
            {"group": "global.adhoc_${USER}"},
        ],
    }


def judge(spec: Any) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    c = Checker("analytics", "error")
    out = rg.check_resource_groups(spec, PATH, c)
    return out, [(p.field, p.message) for p in c.problems]


def with_change(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """base() with the value at `path` replaced (or removed when `value` is DROP)."""
    spec = base()
    *parents, last = path
    node: Any = spec
    for step in parents:
        node = node[step]
    if value is DROP:
        del node[last]
    else:
        node[last] = value
    return spec


DROP = object()
G = f"{PATH}.rootGroups[0]"  # the global group
ETL = f"{G}.subGroups[1]"
SEL = f"{PATH}.selectors"


def test_a_valid_file_is_kept_as_written() -> None:
    """A valid spec passes unchanged (every key is Trino's), and its JSON reads back as it."""
    out, problems = judge(base())
    assert problems == []
    assert out == base()
    assert json.loads(rg.to_json(out)) == base()


CASES = [
    # (where, new value, field reported, words of the message)
    (("rootGroups", 0, "name"), "", f"{G}.name", "Resource group name is empty"),
    (("rootGroups", 0, "name"), "a.b", f"{G}.name", "contains a '.'"),
    (("rootGroups", 0, "name"), "x_${user", f"{G}.name", "extraneous '$', '{', or '}'"),
    (("rootGroups", 0, "name"), "x_$USER", f"{G}.name", "extraneous"),
    (("rootGroups", 0, "name"), "${1x}", f"{G}.name", "extraneous"),
    (("rootGroups", 1, "name"), "global", f"{PATH}.rootGroups[1].name",
     "Duplicated root group: global"),
    (("rootGroups", 0, "subGroups", 1, "name"), "adhoc_${USER}", f"{ETL}.name",
     "Duplicated sub group"),
    (("rootGroups", 0, "hardConcurrencyLimit"), DROP, f"{G}.hardConcurrencyLimit", "required"),
    (("rootGroups", 0, "hardConcurrencyLimit"), -1, f"{G}.hardConcurrencyLimit", "at least 0"),
    (("rootGroups", 0, "hardConcurrencyLimit"), 2**31, f"{G}.hardConcurrencyLimit",
     "at most 2147483647"),
    (("rootGroups", 0, "maxQueued"), DROP, f"{G}.maxQueued", "required"),
    (("rootGroups", 0, "maxQueued"), "10", f"{G}.maxQueued", "whole number"),
    (("rootGroups", 0, "subGroups", 1, "softConcurrencyLimit"), 6,
     f"{ETL}.softConcurrencyLimit",
     "hardConcurrencyLimit must be greater than or equal to softConcurrencyLimit"),
    (("rootGroups", 0, "softMemoryLimit"), "101%", f"{G}.softMemoryLimit",
     "softMemoryLimit percentage is over 100%"),
    (("rootGroups", 0, "softMemoryLimit"), "10G", f"{G}.softMemoryLimit", "data size"),
    (("rootGroups", 0, "softMemoryLimit"), 80, f"{G}.softMemoryLimit", "must be a string"),
    (("rootGroups", 0, "schedulingPolicy"), "round_robin", f"{G}.schedulingPolicy",
     "not a scheduling policy"),
    (("rootGroups", 0, "subGroups", 0, "schedulingWeight"), DROP, f"{G}.subGroups",
     "Must specify scheduling weight for all sub-groups or none of them"),
    (("rootGroups", 0, "schedulingPolicy"), "fair", f"{G}.subGroups",
     "Must use 'weighted' or 'weighted_fair' scheduling policy"),
    (("rootGroups", 0, "subGroups", 0, "schedulingWeight"), 0,
     f"{G}.subGroups[0].schedulingWeight", "at least 1"),
    (("rootGroups", 0, "jmxExport"), "yes", f"{G}.jmxExport", "true or false"),
    (("rootGroups", 0, "maxRunning"), 5, f"{G}.maxRunning", "use hardConcurrencyLimit"),
    (("rootGroups", 0, "softMemoryLimt"), "5%", f"{G}.softMemoryLimt", "unknown field"),
    (("cpuQuotaPeriod",), DROP, ETL, "cpuQuotaPeriod must be specified to use CPU limits"),
    (("cpuQuotaPeriod",), "1 hour", f"{PATH}.cpuQuotaPeriod", "not a duration"),
    (("rootGroups", 0, "subGroups", 1, "hardCpuLimit"), DROP, f"{ETL}.hardCpuLimit",
     "Must specify hard CPU limit in addition to soft limit"),
    (("rootGroups", 0, "subGroups", 1, "hardCpuLimit"), "20m", f"{ETL}.softCpuLimit",
     "Soft CPU limit cannot be greater than hard CPU limit"),
    (("rootGroups", 1, "subGroups"), [{"name": "x", "hardConcurrencyLimit": 1, "maxQueued": 1}],
     f"{PATH}.rootGroups[1].subGroups[0].schedulingPolicy", "must be query_priority"),
    (("selectors", 0, "user"), "${USER}", f"{SEL}[0].user",
     "Illegal repetition"),
    (("selectors", 0, "userGroup"), "(admins", f"{SEL}[0].userGroup", "Unclosed group"),
    (("selectors", 0, "user"), "a" * 1001, f"{SEL}[0].user", "at most 1000"),
    (("selectors", 0, "group"), "nobody", f"{SEL}[0].group",
     "Selector refers to nonexistent group"),
    (("selectors", 0, "group"), "global.ETL", f"{SEL}[0].group", "nonexistent group"),
    (("selectors", 0, "group"), "global", f"{SEL}[0].group", "leaf group"),
    (("selectors", 0, "group"), DROP, f"{SEL}[0].group", "required"),
    (("selectors", 1, "queryType"), "copy", f"{SEL}[1].queryType",
     "Selector specifies an invalid query type"),
    (("selectors", 1, "clientTags"), "etl", f"{SEL}[1].clientTags", "must be a list"),
    (("selectors", 1, "clientTags"), ["t"] * 21, f"{SEL}[1].clientTags", "at most 20"),
    (("selectors", 1, "usr"), "x", f"{SEL}[1].usr", "unknown field"),
    (("selectors", 2, "selectorResourceEstimate", "peakMemory", "max"), "10G",
     f"{SEL}[2].selectorResourceEstimate.peakMemory.max", "data size"),
    (("selectors", 2, "selectorResourceEstimate", "executionTime", "max"), "5 minutes",
     f"{SEL}[2].selectorResourceEstimate.executionTime.max", "not a duration"),
    (("selectors",), [], SEL, "at least one"),
    (("rootGroups",), DROP, f"{PATH}.rootGroups", "required"),
    (("extra",), 1, f"{PATH}.extra", "unknown field"),
]


@pytest.mark.parametrize(("where", "value", "field", "words"), CASES,
                         ids=[f"{c[2].removeprefix(PATH)}:{c[3][:30]}" for c in CASES])
def test_each_mistake_is_refused_at_its_field(
    where: tuple[Any, ...], value: Any, field: str, words: str,
) -> None:
    """One mistake in a valid spec is reported at its own field path, in Trino's words."""
    out, problems = judge(with_change(where, value))
    assert out is None
    assert any(f == field and words in m for f, m in problems), problems


def test_a_named_group_that_repeats_a_variable_is_refused() -> None:
    """A named group USER (built in) or one defined twice is Trino's 'Multiple definitions'."""
    spec = with_change(("selectors", 2, "source"), "(?<team>x)")
    _, problems = judge(spec)
    assert [(f, m[:38]) for f, m in problems] == [
        (f"{SEL}[2].source", "Multiple definitions found for variabl")]
    _, problems = judge(with_change(("selectors", 2, "user"), "(?<USER>x)"))
    assert problems and problems[0][1].startswith("Multiple definitions found for variable ${USER}")


def test_a_named_group_defines_a_variable_of_the_selector_group() -> None:
    """${team} in a group is resolved by a (?<team>...) of the same selector's user regex."""
    spec = base()
    spec["rootGroups"][0]["subGroups"][0]["name"] = "team_${team}"
    spec["selectors"][2]["group"] = "global.team_${team}"
    spec["selectors"][3]["group"] = "admin"
    assert judge(spec)[1] == []
    spec["selectors"][2]["userGroup"] = spec["selectors"][2].pop("user")  # userGroup gives none
    assert [f for f, _ in judge(spec)[1]] == [f"{SEL}[2].group"]


def test_schedulingpolicy_and_querytype_read_any_case() -> None:
    """Trino upper-cases both before reading its enums, so WEIGHTED and Select pass."""
    spec = with_change(("rootGroups", 0, "schedulingPolicy"), "WEIGHTED_FAIR")
    spec["selectors"][1]["queryType"] = "Data_Definition"
    assert judge(spec)[1] == []


@pytest.mark.parametrize(("memory", "ok"), [
    ("100%", True), ("0%", True), ("12.5%", True), ("1000%", False), ("100.1%", False),
    ("512MB", True), ("1.5TB", True), ("1kB", True), ("1KB", False), ("%", False),
])
def test_soft_memory_limit_is_a_share_or_a_data_size(memory: str, ok: bool) -> None:
    """softMemoryLimit is a percentage up to 100% or an airlift data size (B, kB, MB...)."""
    assert (judge(with_change(("rootGroups", 0, "softMemoryLimit"), memory))[1] == []) is ok


def group(name: str, subs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    g: dict[str, Any] = {"name": name, "hardConcurrencyLimit": 1, "maxQueued": 1}
    if subs is not None:
        g["subGroups"] = subs
    return g


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    """Five levels pass; a sixth is refused at the list that would hold it."""
    def chain(depth: int) -> dict[str, Any]:
        return group(f"l{depth}") if depth == 1 else group(f"l{depth}", [chain(depth - 1)])

    names = [f"l{d}" for d in range(rg.MAX_DEPTH, 0, -1)]
    ok = {"rootGroups": [chain(rg.MAX_DEPTH)], "selectors": [{"group": ".".join(names)}]}
    assert judge(ok)[1] == []
    deep = {"rootGroups": [chain(rg.MAX_DEPTH + 1)], "selectors": [{"group": "l6"}]}
    problems = judge(deep)[1]
    assert any("6 deep" in m and f.endswith(".subGroups") for f, m in problems), problems


def test_more_groups_than_the_limit_are_refused_once() -> None:
    """The whole tree holds at most MAX_GROUPS groups; the first one beyond is named once."""
    roots = [group(f"g{i}", [group("a"), group("b")]) for i in range(rg.MAX_GROUPS // 3 + 1)]
    problems = judge({"rootGroups": roots, "selectors": [{"group": "g0.a"}]})[1]
    assert [m for _, m in problems if "whole tree" in m] == [
        f"is one group more than the {rg.MAX_GROUPS} allowed in the whole tree"]


def test_more_selectors_than_the_limit_are_refused() -> None:
    """At most MAX_SELECTORS selectors; more is one error at selectors."""
    spec = {"rootGroups": [group("g")], "selectors": [{"group": "g"}] * (rg.MAX_SELECTORS + 1)}
    assert [f for f, _ in judge(spec)[1]] == [SEL]


def test_a_regex_only_java_can_judge_is_a_warning() -> None:
    """Canonical equivalence, (?c), is left to Java: the spec passes with a warning there."""
    c = Checker("analytics", "error")
    out = rg.check_resource_groups(with_change(("selectors", 0, "user"), "(?c)bob"), PATH, c)
    assert out is not None and c.problems == []
    assert [w.field for w in c.warnings] == [f"{SEL}[0].user"]


def test_every_error_names_the_cluster() -> None:
    """The checker's label (the clusterId) is on every problem."""
    c = Checker("analytics", "error")
    rg.check_resource_groups(with_change(("selectors", 0, "group"), "nobody"), PATH, c)
    assert c.problems and {p.cluster for p in c.problems} == {"analytics"}


def test_patterns_beyond_the_total_budget_are_refused_before_judging() -> None:
    """All selector patterns together hold at most MAX_PATTERN_CHARS characters; beyond it the
    selectors are refused at once (no pattern is judged: a hostile document stays cheap)."""
    pattern = "a" * rg.MAX_REGEX
    count = rg.MAX_PATTERN_CHARS // rg.MAX_REGEX
    fits = {"rootGroups": [group("g")], "selectors": [{"user": pattern, "group": "g"}] * count}
    assert judge(fits)[1] == []
    over = {"rootGroups": [group("g")],
            "selectors": [{"user": pattern, "source": "(", "group": "g"}] * (count + 1)}
    assert judge(over)[1] == [(SEL, f"has {(count + 1) * (rg.MAX_REGEX + 1)} characters of "
                               f"patterns; at most {rg.MAX_PATTERN_CHARS} are allowed in all "
                               "selectors together")]


def test_whole_floats_are_written_as_ints() -> None:
    """A limit stored as a double (10.0, as MongoDB's shell writes 10) is written as 10."""
    spec = with_change(("rootGroups", 0, "hardConcurrencyLimit"), 100.0)
    out, problems = judge(spec)
    assert problems == [] and out is not None
    assert '"hardConcurrencyLimit": 100,' in rg.to_json(out)
    assert json.loads(rg.to_json(out)) == base()
