"""Trino's file-based resource groups (resource-groups.json), checked against Trino 476. Pure.

Read from the 476 jars (plugin/resource-group-managers, javap): the Jackson constructors of
`ManagerSpec`, `ResourceGroupSpec` and `SelectorSpec` name every key (the file manager refuses an
unknown one); their checks, `AbstractResourceConfigurationManager`'s and InternalResourceGroup's
are repeated with Trino's words: name templates, limits, CPU quotas, scheduling weights and
policies, query types, Java regexes (trinogen.model.javaregex), a selector's `group` existing
with its `${VARIABLE}`s defined. Beyond Trino: a selector names a leaf group (Trino fails every
query routed elsewhere), there is a group and a selector, and sizes are bounded so one document
cannot make the render slow. Messages name the field path; the checker's label the cluster.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trinogen.model.access_rules import strict_fields
from trinogen.model.checker import Checker, field_path, show
from trinogen.model.units import DATA_SIZE

MAX_GROUPS = 100  # in the whole tree, sub-groups included
MAX_DEPTH = 5  # root groups are depth 1
MAX_SELECTORS = 100
MAX_REGEX = 1000  # characters of one selector pattern
MAX_PATTERN_CHARS = 16 * 1024  # of all selector patterns: judging one costs ~5 us a character
MAX_NAME = 100  # characters of one group name template
MAX_TAGS = 20  # clientTags of one selector
MAX_JSON_BYTES = 256 * 1024  # the file as rendered; its ConfigMap holds at most 1 MiB
JAVA_INT = 2**31 - 1  # the limits are Java ints

MANAGER_FIELDS = ("rootGroups", "selectors", "cpuQuotaPeriod")
GROUP_FIELDS = ("name", "softMemoryLimit", "maxQueued", "softConcurrencyLimit",
                "hardConcurrencyLimit", "schedulingPolicy", "schedulingWeight", "subGroups",
                "jmxExport", "softCpuLimit", "hardCpuLimit")
SELECTOR_REGEXES = ("user", "userGroup", "originalUser", "authenticatedUser", "source")
SELECTOR_FIELDS = (*SELECTOR_REGEXES, "queryType", "clientTags", "selectorResourceEstimate",
                   "group")
ESTIMATE_FIELDS = ("executionTime", "cpuTime", "peakMemory")
POLICIES = ("fair", "weighted", "weighted_fair", "query_priority")  # SchedulingPolicy, any case
WEIGHTED = ("weighted", "weighted_fair")
QUERY_TYPES = ("SELECT", "EXPLAIN", "DESCRIBE", "INSERT", "UPDATE", "DELETE", "ANALYZE",
               "DATA_DEFINITION", "ALTER_TABLE_EXECUTE", "MERGE")  # QueryType, any case
BUILT_IN_VARIABLES = frozenset({"USER", "SOURCE"})  # StaticSelector

# ResourceGroupNameTemplate.VARIABLE_PATTERN and StaticSelector's named-group scan, as in Trino.
_VARIABLE = re.compile(r"\$\{([a-zA-Z][a-zA-Z0-9]*)\}")
_NAMED_GROUP = re.compile(r"\(\?<([a-zA-Z][a-zA-Z0-9]*)>")
# ResourceGroupSpec.PERCENT_PATTERN reads (\d{1,3}(:?\.\d+)?)%; its `:?` is a typo that only
# lets through texts Double.parseDouble then refuses, so it is left out here.
_PERCENT = re.compile(r"(\d{1,3}(?:\.\d+)?)%")
# airlift Duration: a number and a unit (trinogen writes no spaces).
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|ms|s|m|h|d)")
_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass
class _Walk:
    """What the group walk learns for the selectors: every group path, and whether it is a leaf."""

    leaves: dict[tuple[str, ...], bool] = field(default_factory=dict)
    count: int = 0
    has_quota_period: bool = False


def check_resource_groups(value: Any, path: str, c: Checker) -> dict[str, Any] | None:
    """The resource groups as they will be written (known keys only), or None (reported)."""
    spec = c.mapping(value, path)
    if spec is None:
        return None
    before = c.count
    strict_fields(spec, path, MANAGER_FIELDS, c)
    walk = _Walk()
    out: dict[str, Any] = {}
    walk.has_quota_period = _optional_duration(spec, path, "cpuQuotaPeriod", c) is not None
    if "cpuQuotaPeriod" in spec:
        out["cpuQuotaPeriod"] = spec["cpuQuotaPeriod"]
    roots = _listed(spec.get("rootGroups"), field_path(path, "rootGroups"), MAX_GROUPS, c)
    out["rootGroups"] = _groups(roots, field_path(path, "rootGroups"), (), walk, c)
    selectors = _listed(spec.get("selectors"), field_path(path, "selectors"), MAX_SELECTORS, c)
    chars = _pattern_chars(selectors)
    if chars > MAX_PATTERN_CHARS:
        c.error(field_path(path, "selectors"), f"has {chars} characters of patterns; at most "
                f"{MAX_PATTERN_CHARS} are allowed in all selectors together")
        selectors = []
    out["selectors"] = [_selector(s, field_path(path, "selectors", i), walk, c)
                        for i, s in enumerate(selectors)]
    if c.count != before:
        return None
    size = len(to_json(out).encode())
    if size > MAX_JSON_BYTES:
        c.error(path, f"is {size} bytes as JSON; at most {MAX_JSON_BYTES} are allowed")
        return None
    return out


def to_json(spec: Mapping[str, Any]) -> str:
    """resource-groups.json as trinogen writes it (ASCII: \\u escapes, no raw controls)."""
    return json.dumps(_plain(spec), indent=2, sort_keys=True) + "\n"


def _plain(value: Any) -> Any:
    """Plain JSON values: any mapping a dict, and whole floats (MongoDB's shell writes 10 as a
    double) the Java ints they were checked to be."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return int(value) if isinstance(value, float) else value


def _pattern_chars(selectors: list[Any]) -> int:
    """The characters of every selector pattern (counted before any is judged)."""
    return sum(len(value) for s in selectors if isinstance(s, Mapping)
               for value in map(s.get, SELECTOR_REGEXES) if type(value) is str)


def _listed(value: Any, path: str, limit: int, c: Checker) -> list[Any]:
    """A required, non-empty list of at most `limit` entries ([] when reported)."""
    if value is None:
        c.error(path, "is required (at least one entry)")
        return []
    items = c.entries(value, path, limit)
    if items == []:
        c.error(path, "is empty; give at least one entry (without a selector Trino refuses "
                "every query, without a group no selector can match)")
    return items or []


def _groups(items: list[Any], path: str, parent: tuple[str, ...], walk: _Walk,
            c: Checker) -> list[dict[str, Any]]:
    if len(parent) >= MAX_DEPTH:
        c.error(path, f"nests groups {len(parent) + 1} deep; at most {MAX_DEPTH} levels are "
                "allowed")
        return []
    out = []
    for i, item in enumerate(items):
        walk.count += 1
        if walk.count > MAX_GROUPS:
            if walk.count == MAX_GROUPS + 1:  # said once; later subtrees stop silently
                c.error(field_path(path, i), f"is one group more than the {MAX_GROUPS} allowed "
                        "in the whole tree")
            break
        group = _group(item, field_path(path, i), parent, walk, c)
        if group is not None:
            out.append(group)
    return out


def _group(item: Any, path: str, parent: tuple[str, ...], walk: _Walk,
           c: Checker) -> dict[str, Any] | None:
    group = c.mapping(item, path)
    if group is None:
        return None
    strict_fields(group, path, GROUP_FIELDS, c)
    key = _key(group.get("name"), path, parent, walk, c)
    _numbers(group, path, c)
    _memory(group.get("softMemoryLimit"), field_path(path, "softMemoryLimit"), c)
    _cpu(group, path, walk.has_quota_period, c)
    policy = _policy(group.get("schedulingPolicy"), field_path(path, "schedulingPolicy"), c)
    subs = c.entries(group.get("subGroups"), field_path(path, "subGroups"), MAX_GROUPS) or []
    walk.leaves[key] = not subs
    out = {k: v for k, v in group.items() if k in GROUP_FIELDS and k != "subGroups"}
    if subs:
        _scheduling(policy, subs, path, c)
        out["subGroups"] = _groups(subs, field_path(path, "subGroups"), key, walk, c)
    return out


def _key(value: Any, path: str, parent: tuple[str, ...], walk: _Walk,
         c: Checker) -> tuple[str, ...]:
    """The group's path of names (a placeholder for a bad name), its name checked unique."""
    name = _name(value, field_path(path, "name"), c)
    key = (*parent, name or f"#{path}")
    if name is not None and key in walk.leaves:
        c.error(field_path(path, "name"), f"Duplicated {'sub' if parent else 'root'} group: "
                f"{name} (Trino refuses the file)")
    return key


def _name(value: Any, path: str, c: Checker) -> str | None:
    """A ResourceGroupNameTemplate: text and ${VARIABLE}s, never '.' nor a stray $, { or }."""
    name = c.string(value, path, max_len=MAX_NAME)
    if name is None:
        return None
    if name == "":
        c.error(path, "Resource group name is empty")
    elif "." in name:
        c.error(path, f"Invalid resource group name. {show(name)} contains a '.' (a dot "
                "separates the groups of a path)")
    elif any(ch in _VARIABLE.sub("", name) for ch in "${}"):
        c.error(path, f"Invalid resource group name. {show(name)} contains extraneous '$', '{{', "
                "or '}' (a variable is written ${NAME}: a letter, then letters and digits)")
    else:
        return name
    return None


def _numbers(group: Mapping[str, Any], path: str, c: Checker) -> None:
    if "maxRunning" in group:
        c.error(field_path(path, "maxRunning"), "is Trino's old name: use hardConcurrencyLimit")
    if "jmxExport" in group:
        c.boolean(group["jmxExport"], field_path(path, "jmxExport"))
    hard = c.integer(group.get("hardConcurrencyLimit"), field_path(path, "hardConcurrencyLimit"),
                     minimum=0, maximum=JAVA_INT)
    c.integer(group.get("maxQueued"), field_path(path, "maxQueued"), minimum=0, maximum=JAVA_INT)
    soft = c.integer(group.get("softConcurrencyLimit"), field_path(path, "softConcurrencyLimit"),
                     required=False, minimum=0, maximum=JAVA_INT)
    if soft is not None and hard is not None and soft > hard:
        c.error(field_path(path, "softConcurrencyLimit"), f"is {soft}, above "
                f"hardConcurrencyLimit {hard} (hardConcurrencyLimit must be greater than or "
                "equal to softConcurrencyLimit)")
    c.integer(group.get("schedulingWeight"), field_path(path, "schedulingWeight"),
              required=False, minimum=1, maximum=JAVA_INT)


def _memory(value: Any, path: str, c: Checker) -> None:
    """An absolute data size (`10GB`) or a share of the cluster's memory (`40%`, at most 100%)."""
    text = c.string(value, path, required=False, max_len=40)
    if text is None:
        return
    percent = _PERCENT.fullmatch(text)
    if percent is not None:
        if float(percent.group(1)) > 100:
            c.error(path, f"{show(text)}: softMemoryLimit percentage is over 100%")
    elif DATA_SIZE.fullmatch(text) is None:
        c.error(path, f"{show(text)} is neither a percentage (40%) nor a data size (10GB; units "
                "B, kB, MB, GB, TB, PB)")


def _duration(value: Any, path: str, c: Checker) -> float | None:
    """Seconds of an airlift Duration (`1h`, `30.5m`), or None (reported)."""
    text = c.string(value, path, max_len=40)
    if text is None:
        return None
    m = _DURATION.fullmatch(text)
    if m is None:
        c.error(path, f"{show(text)} is not a duration: a number and one of the units ns, us, "
                "ms, s, m, h, d (1h, 30.5m)")
        return None
    return float(m.group(1)) * _SECONDS[m.group(2)]


def _optional_duration(group: Mapping[str, Any], path: str, key: str,
                       c: Checker) -> float | None:
    return _duration(group[key], field_path(path, key), c) if key in group else None


def _cpu(group: Mapping[str, Any], path: str, has_period: bool, c: Checker) -> None:
    soft, hard = (_optional_duration(group, path, k, c) for k in ("softCpuLimit", "hardCpuLimit"))
    if ("softCpuLimit" in group or "hardCpuLimit" in group) and not has_period:
        c.error(path, "cpuQuotaPeriod must be specified to use CPU limits on group (set "
                "cpuQuotaPeriod beside rootGroups)")
    if soft is not None and "hardCpuLimit" not in group:
        c.error(field_path(path, "hardCpuLimit"), "is required with softCpuLimit (Must specify "
                "hard CPU limit in addition to soft limit)")
    elif soft is not None and hard is not None and soft > hard:
        c.error(field_path(path, "softCpuLimit"), "Soft CPU limit cannot be greater than hard "
                "CPU limit")


def _policy(value: Any, path: str, c: Checker) -> str | None:
    text = c.string(value, path, required=False, max_len=40)
    if text is None:
        return None
    if text.lower() not in POLICIES:
        c.error(path, f"{show(text)} is not a scheduling policy: use {', '.join(POLICIES)}")
        return None
    return text.lower()


def _scheduling(policy: str | None, subs: list[Any], path: str, c: Checker) -> None:
    """Trino's rules between a group's scheduling policy and its sub-groups."""
    weighted = [isinstance(s, Mapping) and "schedulingWeight" in s for s in subs]
    where = field_path(path, "subGroups")
    if policy in WEIGHTED and any(weighted) and not all(weighted):
        c.error(where, "Must specify scheduling weight for all sub-groups or none of them")
    elif policy is not None and policy not in WEIGHTED and any(weighted):
        c.error(where, f"a sub-group has schedulingWeight under schedulingPolicy {policy}: Must "
                "use 'weighted' or 'weighted_fair' scheduling policy if specifying scheduling "
                "weight")
    if policy == "query_priority":
        _all_by_priority(subs, where, c)


def _all_by_priority(subs: list[Any], path: str, c: Checker) -> None:
    """InternalResourceGroup: "Parent of %s uses query priority scheduling, so %s must also"."""
    for i, sub in enumerate(subs):
        own = sub.get("schedulingPolicy") if isinstance(sub, Mapping) else None
        if not isinstance(own, str) or own.lower() != "query_priority":
            c.error(field_path(path, i, "schedulingPolicy"), "must be query_priority: the "
                    "parent uses query priority scheduling, so every sub-group must also")


def _selector(item: Any, path: str, walk: _Walk, c: Checker) -> dict[str, Any]:
    selector = c.mapping(item, path)
    if selector is None:
        return {}
    strict_fields(selector, path, SELECTOR_FIELDS, c)
    variables = set(BUILT_IN_VARIABLES)
    for name in SELECTOR_REGEXES:
        if name in selector:
            _regex(selector[name], field_path(path, name), c)
            if name != "userGroup":  # StaticSelector takes no variables from userGroup
                _variables(selector[name], field_path(path, name), variables, c)
    if "queryType" in selector:
        _query_type(selector["queryType"], field_path(path, "queryType"), c)
    if "clientTags" in selector:
        _tags(selector["clientTags"], field_path(path, "clientTags"), c)
    if "selectorResourceEstimate" in selector:
        _estimate(selector["selectorResourceEstimate"],
                  field_path(path, "selectorResourceEstimate"), c)
    _target(selector.get("group"), field_path(path, "group"), variables, walk, c)
    return {k: v for k, v in selector.items() if k in SELECTOR_FIELDS}


def _regex(value: Any, path: str, c: Checker) -> None:
    text = c.string(value, path, max_len=MAX_REGEX)
    if text is None:
        return
    # Loaded with the first pattern: the Java regex reader is ~30 M instructions of imports.
    from trinogen.model import javaregex

    judgement = javaregex.judge(text)
    if judgement.outcome == javaregex.UNCHECKED:
        c.warn(path, f"{show(text)} uses {judgement.description}, which only Java can judge; "
               "Trino checks it when it loads the resource groups (and refuses them all if "
               "it is invalid)")
    elif judgement.outcome != javaregex.OK:
        c.error(path, f"{show(text)} {javaregex.explain(judgement, text)}")


def _variables(value: Any, path: str, variables: set[str], c: Checker) -> None:
    """The named groups of a selector regex become ${NAME} variables of its group."""
    if type(value) is not str:
        return
    for name in _NAMED_GROUP.findall(value):
        if name in variables:
            c.error(path, f"Multiple definitions found for variable ${{{name}}} (USER and "
                    "SOURCE are built in; each named group may appear once per selector)")
        variables.add(name)


def _query_type(value: Any, path: str, c: Checker) -> None:
    text = c.string(value, path, max_len=40)
    if text is not None and text.upper() not in QUERY_TYPES:
        c.error(path, f"Selector specifies an invalid query type: {show(text)} (use "
                f"{', '.join(QUERY_TYPES)})")


def _tags(value: Any, path: str, c: Checker) -> None:
    for i, tag in enumerate(c.entries(value, path, MAX_TAGS) or []):
        c.string(tag, field_path(path, i), max_len=MAX_NAME)


def _estimate(value: Any, path: str, c: Checker) -> None:
    """selectorResourceEstimate: executionTime and cpuTime ranges of durations, peakMemory of
    data sizes, each {min, max}."""
    estimate = c.mapping(value, path)
    if estimate is None:
        return
    strict_fields(estimate, path, ESTIMATE_FIELDS, c)
    for name in ESTIMATE_FIELDS:
        bounds = c.mapping(estimate.get(name), field_path(path, name), required=False)
        if bounds is None:
            continue
        strict_fields(bounds, field_path(path, name), ("min", "max"), c)
        for end in ("min", "max"):
            if end not in bounds:
                continue
            where = field_path(path, name, end)
            if name == "peakMemory":
                text = c.string(bounds[end], where, max_len=40)
                if text is not None and DATA_SIZE.fullmatch(text) is None:
                    c.error(where, f"{show(text)} is not a data size (10GB)")
            else:
                _duration(bounds[end], where, c)


def _target(value: Any, path: str, variables: set[str], walk: _Walk, c: Checker) -> None:
    """A selector's group: the path of an existing leaf group, its variables defined."""
    text = c.string(value, path, max_len=MAX_NAME * MAX_DEPTH)
    if text is None:
        return
    key = tuple(text.split("."))
    if key not in walk.leaves:
        c.error(path, f"Selector refers to nonexistent group: {show(text)} (a path of group "
                "names joined by '.', exactly as the names are written)")
    elif not walk.leaves[key]:
        c.error(path, f"{show(text)} has sub-groups; a selector must name a leaf group (Trino "
                "fails every query it routes to a group with sub-groups)")
    unknown = sorted(set(_VARIABLE.findall(text)) - variables)
    if unknown:
        c.error(path, f"unresolved variables {', '.join(unknown)} in resource group ID "
                f"{show(text)}, available: {', '.join(sorted(variables))} (a variable comes "
                "from a named group (?<name>...) of user, originalUser, authenticatedUser or "
                "source)")
