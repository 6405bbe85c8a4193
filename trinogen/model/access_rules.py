"""Trino's file-based system access control rules (rules.json), checked for structure.

The schema is Trino 476's, read from its `FileBasedSystemAccessControlRules` and the rule classes
of trino-plugin-toolkit (their Jackson constructors name every key; their enums every `allow` and
`privileges` value). Trino refuses the whole file on one bad rule, so every rule is checked: an
unknown key, a wrong type, a bad value or an invalid regular expression is an error naming its
path (`accessControl.rules.tables[2].privileges[0]`). Rules are kept in their order: Trino uses
the first rule that matches. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trinogen.model.checker import Checker, closest, field_path, show, type_name

MAX_RULES = 2000  # per section; the rules file shares a ConfigMap (1 MiB) with nothing else

# Field kinds (the value Trino's Jackson binding expects).
REGEX = "regex"  # a java.util.regex pattern, matched against the whole name
TEXT = "text"
BOOL = "bool"
CATALOG_ALLOW = "catalog-allow"  # true/false or owner/all/read-only/none (any case)
COLUMNS = "columns"
ENVIRONMENT = "environment"  # {"user": "..."}: who a filter or mask runs as
REFUSED = "refused"

_CATALOG_MODES = ("owner", "all", "read-only", "none")
# Sets of enum names: (choices, case-insensitive). Trino's AccessMode enums read any case;
# privileges are plain Java enums and only read their names as written.
_QUERY_ACCESS = (("execute", "kill", "view"), True)
_SYSTEM_ACCESS = (("read", "write"), True)
_TABLE_PRIVILEGES = (("SELECT", "INSERT", "DELETE", "UPDATE", "OWNERSHIP", "GRANT_SELECT"), False)
_FUNCTION_PRIVILEGES = (("EXECUTE", "GRANT_EXECUTE", "OWNERSHIP"), False)
_PROCEDURE_PRIVILEGES = (("EXECUTE", "GRANT_EXECUTE"), False)

Kind = str | tuple[tuple[str, ...], bool]
_WHO = {"user": REGEX, "role": REGEX, "group": REGEX}

# section -> (fields -> kind, required fields)
SECTIONS: dict[str, tuple[dict[str, Kind], frozenset[str]]] = {
    "catalogs": ({**_WHO, "catalog": REGEX, "allow": CATALOG_ALLOW}, frozenset({"allow"})),
    "schemas": ({**_WHO, "catalog": REGEX, "schema": REGEX, "owner": BOOL}, frozenset({"owner"})),
    "tables": ({**_WHO, "catalog": REGEX, "schema": REGEX, "table": REGEX,
                "privileges": _TABLE_PRIVILEGES, "columns": COLUMNS, "filter": TEXT,
                "filter_environment": ENVIRONMENT}, frozenset({"privileges"})),
    "system_information": ({"user": REGEX, "role": REGEX, "allow": _SYSTEM_ACCESS},
                           frozenset({"allow"})),
    "queries": ({**_WHO, "queryOwner": REGEX, "allow": _QUERY_ACCESS}, frozenset({"allow"})),
    "impersonation": ({"original_user": REGEX, "original_role": REGEX, "new_user": REGEX,
                       "allow": BOOL}, frozenset({"new_user"})),
    "principals": ({"principal": REGEX, "user": REGEX, "principal_to_user": TEXT, "allow": BOOL},
                   frozenset({"principal", "allow"})),
    "authorization": ({"original_user": REGEX, "original_group": REGEX, "original_role": REGEX,
                       "new_user": REGEX, "new_role": REGEX, "allow": BOOL}, frozenset()),
    "system_session_properties": ({**_WHO, "property": REGEX, "allow": BOOL},
                                  frozenset({"allow"})),
    "catalog_session_properties": ({**_WHO, "catalog": REGEX, "property": REGEX, "allow": BOOL},
                                   frozenset({"allow"})),
    "functions": ({**_WHO, "catalog": REGEX, "schema": REGEX, "function": REGEX,
                   "privileges": _FUNCTION_PRIVILEGES, "function_kinds": REFUSED},
                  frozenset({"privileges"})),
    "procedures": ({**_WHO, "catalog": REGEX, "schema": REGEX, "procedure": REGEX,
                    "privileges": _PROCEDURE_PRIVILEGES}, frozenset({"privileges"})),
}
_COLUMN_FIELDS: dict[str, Kind] = {"name": TEXT, "allow": BOOL, "mask": TEXT,
                                   "mask_environment": ENVIRONMENT}
_GROUP_REFERENCE = re.compile(r"\$(\d+)")


def check_rules(value: Any, path: str, c: Checker) -> dict[str, Any] | None:
    """The rules as they will be written (known keys only), or None (reported)."""
    rules = c.mapping(value, path)
    if rules is None:
        return None
    before = c.count
    strict_fields(rules, path, SECTIONS, c)
    out: dict[str, Any] = {}
    for section, (fields, required) in SECTIONS.items():
        if section not in rules:
            continue
        items = rules[section]
        where = field_path(path, section)
        if not isinstance(items, list):
            c.error(where, f"must be a list of rules, not {type_name(items)}")
            continue
        if len(items) > MAX_RULES:
            c.error(where, f"has {len(items)} rules; at most {MAX_RULES} are allowed")
            continue
        out[section] = [_rule(item, field_path(where, i), section, fields, required, c)
                        for i, item in enumerate(items)]
    return out if c.count == before else None


def _rule(item: Any, path: str, section: str, fields: Mapping[str, Kind],
          required: frozenset[str], c: Checker) -> dict[str, Any]:
    rule = c.mapping(item, path)
    if rule is None:
        return {}
    strict_fields(rule, path, fields, c)
    for name in sorted(required - rule.keys()):
        c.error(field_path(path, name), "is required")
    for name, kind in fields.items():
        if name in rule:
            _value(rule[name], field_path(path, name), kind, c)
    _cross_checks(rule, path, section, c)
    return {k: v for k, v in rule.items() if k in fields}


def strict_fields(obj: Mapping[str, Any], path: str, known: Iterable[str], c: Checker) -> None:
    """Unknown keys are errors here whatever validation.unknown_fields says: a misspelt key in a
    rule would otherwise be dropped, and a rule without its `catalog` matches every catalog."""
    known = set(known)
    for key in obj:
        if key not in known:
            hint = None if c.full else closest(key, known)
            c.error(field_path(path, key), f"unknown field{f' (did you mean {hint}?)' if hint else ''}"
                    f"; known: {', '.join(sorted(known))}")


def _value(value: Any, path: str, kind: Kind, c: Checker) -> None:
    if isinstance(kind, tuple):
        _choices(value, path, *kind, c)
    else:
        _READERS[kind](value, path, c)


def _text(value: Any, path: str, c: Checker) -> None:
    c.string(value, path)


def _bool(value: Any, path: str, c: Checker) -> None:
    c.boolean(value, path)


def _catalog_allow(value: Any, path: str, c: Checker) -> None:
    if isinstance(value, bool):
        return
    text = c.string(value, path, max_len=20)
    if text is not None and text.lower() not in _CATALOG_MODES:
        c.error(path, f"{show(text)} is not a catalog access mode: use true, false, "
                f"{', '.join(repr(m) for m in _CATALOG_MODES)}")


def _environment(value: Any, path: str, c: Checker) -> None:
    env = c.mapping(value, path)
    if env is not None:
        strict_fields(env, path, {"user"}, c)
        c.string(env.get("user"), field_path(path, "user"), required=False)


def _refused(value: Any, path: str, c: Checker) -> None:
    c.error(path, "is no longer supported by Trino (function_kind is no longer supported in "
            "security rules): remove it")


def _choices(value: Any, path: str, choices: tuple[str, ...], any_case: bool, c: Checker) -> None:
    if not isinstance(value, list):
        c.error(path, f"must be a list of {', '.join(choices)}, not {type_name(value)}")
        return
    for i, item in enumerate(value):
        where = field_path(path, i)
        text = c.string(item, where, max_len=40)
        if text is None:
            continue
        if (text.lower() if any_case else text) not in choices:
            hint = closest(text.upper() if not any_case else text.lower(), choices)
            c.error(where, f"{show(text)} is not one of {', '.join(choices)}"
                    f"{f' (did you mean {hint}?)' if hint else ''}")


def _regex(value: Any, path: str, c: Checker) -> None:
    text = c.string(value, path, max_len=4096)
    if text is None:
        return
    # Loaded with the first pattern: the Java regex reader is ~30 M instructions of imports,
    # and most clusters write no rules (issue 19's 5% budget).
    from trinogen.model import javaregex

    judgement = javaregex.judge(text)
    if judgement.outcome == javaregex.UNCHECKED:
        c.warn(path, f"{show(text)} uses {judgement.description}, which only Java can judge; "
               "Trino checks it when it loads the rules (and refuses them all if it is invalid)")
    elif judgement.outcome != javaregex.OK:
        c.error(path, f"{show(text)} {javaregex.explain(judgement, text)}")


def _columns(value: Any, path: str, c: Checker) -> None:
    if not isinstance(value, list):
        c.error(path, f"must be a list of column rules, not {type_name(value)}")
        return
    for i, item in enumerate(value):
        where = field_path(path, i)
        column = c.mapping(item, where)
        if column is None:
            continue
        strict_fields(column, where, _COLUMN_FIELDS, c)
        if "name" not in column:
            c.error(field_path(where, "name"), "is required")
        for name, kind in _COLUMN_FIELDS.items():
            if name in column:
                _value(column[name], field_path(where, name), kind, c)


def _cross_checks(rule: Mapping[str, Any], path: str, section: str, c: Checker) -> None:
    """The rules Trino's rule constructors add beyond types."""
    check = _CROSS_CHECKS.get(section)
    if check is not None:
        check(rule, path, c)


def _query_owner(rule: Mapping[str, Any], path: str, c: Checker) -> None:
    if "queryOwner" in rule and _has(rule.get("allow"), "execute"):
        c.error(field_path(path, "allow"), "a rule with queryOwner may not allow execute (Trino "
                "refuses it: only view and kill apply to other users' queries)")


def _new_user_or_role(rule: Mapping[str, Any], path: str, c: Checker) -> None:
    if "new_user" not in rule and "new_role" not in rule:
        c.error(path, "needs new_user or new_role (Trino refuses a rule with neither)")


def _user_or_mapping(rule: Mapping[str, Any], path: str, c: Checker) -> None:
    if "user" not in rule and "principal_to_user" not in rule:
        c.error(path, "needs user or principal_to_user (Trino refuses a rule with neither)")


def _group_references(rule: Mapping[str, Any], path: str, c: Checker) -> None:
    """new_user may use $1... for original_user's groups; Trino refuses a group that is not there."""
    new_user, original = rule.get("new_user"), rule.get("original_user", ".*")
    if type(new_user) is not str or type(original) is not str:
        return
    try:
        groups = re.compile(original).groups
    except (re.error, OverflowError, RecursionError):
        return  # reported (or unchecked) with original_user itself
    for ref in _GROUP_REFERENCE.findall(new_user):
        if int(ref) > groups:
            c.error(field_path(path, "new_user"), f"refers to group ${ref}, but original_user "
                    f"has {groups} capturing group{'s' if groups != 1 else ''}")


def _has(value: Any, mode: str) -> bool:
    return isinstance(value, list) and any(isinstance(v, str) and v.lower() == mode for v in value)


# How each kind of field is read (a tuple kind is a list of choices: _choices).
_READERS: dict[str, Callable[[Any, str, Checker], None]] = {
    REGEX: _regex, TEXT: _text, BOOL: _bool, CATALOG_ALLOW: _catalog_allow,
    ENVIRONMENT: _environment, COLUMNS: _columns, REFUSED: _refused,
}
# The sections whose rules Trino checks beyond their fields' types.
_CROSS_CHECKS: dict[str, Callable[[Mapping[str, Any], str, Checker], None]] = {
    "queries": _query_owner, "authorization": _new_user_or_role,
    "principals": _user_or_mapping, "impersonation": _group_references,
}
