"""Kubernetes-shaped checks of pod-spec fragments the platform writes into its settings.

A placement option is copied verbatim into the chart's values and from there into the pods
(`toYaml`, no `tpl`): Helm would pass any shape on, and the API server would refuse the
Deployment only when Argo CD syncs it, for every cluster using the option. So the shapes are
checked here, when the settings are loaded, with the rules of the Kubernetes API's validation
(core/v1 Toleration, NodeSelector, Affinity, TopologySpreadConstraint, LabelSelector). Each check
returns a plain copy (dicts and lists) or raises ConfigError naming `<where>.<field path>`.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options.metadata import is_name_part

# Object names and key prefixes: apimachinery's IsDNS1123Subdomain (253 characters in all; it
# does not limit each label, unlike the hosts of metadata.dns_subdomain).
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

TOLERATION_OPERATORS = ("Exists", "Equal")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
POLICIES = ("Honor", "Ignore")
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def fail(where: str, message: str) -> ConfigError:
    return ConfigError(f"{where}: {message}")


def mapping(value: Any, where: str, known: set[str],
            required: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """An object with string keys, only `known` ones, every `required` one present."""
    if not isinstance(value, Mapping):
        raise fail(where, "must be a mapping")
    for key in value:
        if key not in known:
            raise fail(f"{where}.{key}", f"unknown field (known: {', '.join(sorted(known))})")
    for key in sorted(required):
        if value.get(key) is None:
            raise fail(f"{where}.{key}", "is required")
    return dict(value)


def listing(value: Any, where: str, item: Callable[[Any, str], Any], *,
            non_empty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise fail(where, "must be a list")
    if non_empty and not value:
        raise fail(where, "must not be empty")
    return [item(v, f"{where}[{i}]") for i, v in enumerate(value)]


def text(value: Any, where: str) -> str:
    if type(value) is not str:
        raise fail(where, "must be a string")
    return value


def whole(value: Any, where: str, lowest: int, highest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(where, "must be a whole number")
    if not lowest <= value <= highest:
        raise fail(where, f"is {value}; it must be between {lowest} and {highest}")
    return value


def choice(value: Any, where: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise fail(where, f"must be one of {', '.join(allowed)}")
    return str(value)


def label_key(value: Any, where: str) -> str:
    """A qualified name with an optional DNS-subdomain prefix (`topology.kubernetes.io/zone`)."""
    key = text(value, where)
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        raise fail(where, f"{key!r} has an invalid prefix: use a DNS subdomain before the '/'")
    if not is_name_part(name):
        raise fail(where, f"{key!r} is not a Kubernetes label key: at most 63 letters, digits, "
                   "'-', '_' or '.', starting and ending with a letter or digit")
    return key


def label_value(value: Any, where: str) -> str:
    val = text(value, where)
    if val and not is_name_part(val):
        raise fail(where, f"{val!r} is not a Kubernetes label value: at most 63 letters, digits, "
                   "'-', '_' or '.', starting and ending with a letter or digit")
    return val


def labels(value: Any, where: str) -> dict[str, str]:
    """A label map (nodeSelector, matchLabels)."""
    if not isinstance(value, Mapping):
        raise fail(where, "must be a mapping of label keys to values")
    return {label_key(k, f"{where}.{k}"): label_value(v, f"{where}.{k}") for k, v in value.items()}


def dns_subdomain(value: Any, where: str) -> str:
    name = text(value, where)
    if len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        raise fail(where, f"{name!r} is not a Kubernetes object name (a DNS subdomain)")
    return name


# --- tolerations ------------------------------------------------------------------------------

def toleration(value: Any, where: str) -> dict[str, Any]:
    """core/v1 Toleration: Exists takes no value, an empty key needs Exists, seconds need NoExecute."""
    t = mapping(value, where, {"key", "operator", "value", "effect", "tolerationSeconds"})
    operator = choice(t.get("operator", "Equal"), f"{where}.operator", TOLERATION_OPERATORS)
    if t.get("key") not in (None, ""):
        label_key(t["key"], f"{where}.key")
    elif operator != "Exists":
        raise fail(f"{where}.operator", "must be Exists when no key is given (it tolerates "
                   "every taint)")
    if t.get("value") not in (None, ""):
        if operator == "Exists":
            raise fail(f"{where}.value", "must be empty with operator Exists")
        label_value(t["value"], f"{where}.value")
    if t.get("effect") not in (None, ""):
        choice(t["effect"], f"{where}.effect", TAINT_EFFECTS)
    if t.get("tolerationSeconds") is not None:
        if t.get("effect") != "NoExecute":
            raise fail(f"{where}.tolerationSeconds", "is only valid with effect NoExecute")
        whole(t["tolerationSeconds"], f"{where}.tolerationSeconds", -(2**63), 2**63 - 1)
    return t


# --- selectors --------------------------------------------------------------------------------

def requirement(value: Any, where: str, operators: tuple[str, ...]) -> dict[str, Any]:
    """A selector requirement: In/NotIn need values, Exists/DoesNotExist none, Gt/Lt one number.

    Every value is a label value, as the API server checks them (in node selectors too). Gt/Lt
    values are held to more: the scheduler compares them as 64-bit integers, so a value that is
    not one (`8x`, which the API server takes) would match no node at all.
    """
    r = mapping(value, where, {"key", "operator", "values"}, {"key", "operator"})
    label_key(r["key"], f"{where}.key")
    operator = choice(r["operator"], f"{where}.operator", operators)
    values = listing(r.get("values", []), f"{where}.values", label_value)
    if operator in ("In", "NotIn") and not values:
        raise fail(f"{where}.values", f"must not be empty with operator {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise fail(f"{where}.values", f"must be empty with operator {operator}")
    if operator in ("Gt", "Lt") and (len(values) != 1 or not _int64(values[0])):
        raise fail(f"{where}.values", f"must be exactly one integer with operator {operator} "
                   "(a 64-bit one: the scheduler compares node labels as such)")
    return r


def _int64(text: str) -> bool:
    return re.fullmatch(r"-?[0-9]+", text) is not None and -(2**63) <= int(text) < 2**63


def field_requirement(value: Any, where: str) -> dict[str, Any]:
    """A node field selector requirement (`matchFields`): the API server knows one field,
    `metadata.name`, with In or NotIn and exactly one node name."""
    r = mapping(value, where, {"key", "operator", "values"}, {"key", "operator"})
    if r["key"] != "metadata.name":
        raise fail(f"{where}.key", f"{r['key']!r} is not a node field Kubernetes selects by: "
                   "the only one is metadata.name (use matchExpressions for node labels)")
    choice(r["operator"], f"{where}.operator", ("In", "NotIn"))
    values = listing(r.get("values", []), f"{where}.values", text)
    if len(values) != 1:
        raise fail(f"{where}.values", "must be exactly one node name with a node field selector "
                   "(give one term per node: terms are ORed)")
    dns_subdomain(values[0], f"{where}.values[0]")
    return r


def label_selector(value: Any, where: str) -> dict[str, Any]:
    s = mapping(value, where, {"matchLabels", "matchExpressions"})
    if "matchLabels" in s:
        labels(s["matchLabels"], f"{where}.matchLabels")
    if "matchExpressions" in s:
        listing(s["matchExpressions"], f"{where}.matchExpressions",
                lambda v, w: requirement(v, w, LABEL_OPERATORS))
    return s


def _node_term(value: Any, where: str) -> dict[str, Any]:
    term = mapping(value, where, {"matchExpressions", "matchFields"})
    if "matchExpressions" in term:
        listing(term["matchExpressions"], f"{where}.matchExpressions",
                lambda v, w: requirement(v, w, NODE_OPERATORS))
    if "matchFields" in term:
        listing(term["matchFields"], f"{where}.matchFields", field_requirement)
    return term


def _weighted(value: Any, where: str, key: str, term: Callable[[Any, str], Any]) -> dict[str, Any]:
    w = mapping(value, where, {"weight", key}, {"weight", key})
    whole(w["weight"], f"{where}.weight", 1, 100)
    term(w[key], f"{where}.{key}")
    return w


def _pod_term(value: Any, where: str) -> dict[str, Any]:
    term = mapping(value, where, {"labelSelector", "namespaces", "topologyKey", "namespaceSelector",
                                  "matchLabelKeys", "mismatchLabelKeys"}, {"topologyKey"})
    label_key(term["topologyKey"], f"{where}.topologyKey")
    for key in ("labelSelector", "namespaceSelector"):
        if key in term:
            label_selector(term[key], f"{where}.{key}")
    _pod_term_keys(term, where)
    if "namespaces" in term:
        listing(term["namespaces"], f"{where}.namespaces", namespace)
    return term


def _pod_term_keys(term: Mapping[str, Any], where: str) -> None:
    """matchLabelKeys and mismatchLabelKeys of a pod (anti-)affinity term, as the API server
    checks them: label keys, only with a labelSelector, none in both lists."""
    keys = {key: listing(term.get(key) or [], f"{where}.{key}", label_key)
            for key in ("matchLabelKeys", "mismatchLabelKeys")}
    for key, named in keys.items():
        if named and term.get("labelSelector") is None:
            raise fail(f"{where}.{key}", "needs a labelSelector (the API server refuses it "
                       "without one)")
    both = sorted(set(keys["matchLabelKeys"]) & set(keys["mismatchLabelKeys"]))
    if both:
        raise fail(f"{where}.mismatchLabelKeys", f"{both[0]!r} is in matchLabelKeys too")
    _keys_outside_selector(keys["matchLabelKeys"], term.get("labelSelector") or {},
                           f"{where}.matchLabelKeys")


def namespace(value: Any, where: str) -> str:
    name = text(value, where)
    if len(name) > 63 or not _DNS_LABEL.fullmatch(name):
        raise fail(where, f"{name!r} is not a namespace name (a DNS label: at most 63 lowercase "
                   "letters, digits and '-', starting and ending with a letter or digit)")
    return name


# --- affinity ---------------------------------------------------------------------------------

def affinity(value: Any, where: str) -> dict[str, Any]:
    """core/v1 Affinity: nodeAffinity, podAffinity, podAntiAffinity."""
    a = mapping(value, where, {"nodeAffinity", "podAffinity", "podAntiAffinity"})
    if "nodeAffinity" in a:
        at = f"{where}.nodeAffinity"
        node = mapping(a["nodeAffinity"], at, {_REQUIRED, _PREFERRED})
        if _REQUIRED in node:
            sel = mapping(node[_REQUIRED], f"{at}.{_REQUIRED}", {"nodeSelectorTerms"},
                          {"nodeSelectorTerms"})
            listing(sel["nodeSelectorTerms"], f"{at}.{_REQUIRED}.nodeSelectorTerms", _node_term,
                    non_empty=True)
        if _PREFERRED in node:
            listing(node[_PREFERRED], f"{at}.{_PREFERRED}",
                    lambda v, w: _weighted(v, w, "preference", _node_term))
    for kind in ("podAffinity", "podAntiAffinity"):
        if kind in a:
            at = f"{where}.{kind}"
            pod = mapping(a[kind], at, {_REQUIRED, _PREFERRED})
            if _REQUIRED in pod:
                listing(pod[_REQUIRED], f"{at}.{_REQUIRED}", _pod_term)
            if _PREFERRED in pod:
                listing(pod[_PREFERRED], f"{at}.{_PREFERRED}",
                        lambda v, w: _weighted(v, w, "podAffinityTerm", _pod_term))
    return a


# --- topology spread --------------------------------------------------------------------------

def spread_constraint(value: Any, where: str) -> dict[str, Any]:
    """core/v1 TopologySpreadConstraint; minDomains only with DoNotSchedule."""
    t = mapping(value, where, {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector",
                               "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy",
                               "matchLabelKeys"},
                {"maxSkew", "topologyKey", "whenUnsatisfiable"})
    whole(t["maxSkew"], f"{where}.maxSkew", 1, 2**31 - 1)
    label_key(t["topologyKey"], f"{where}.topologyKey")
    when = choice(t["whenUnsatisfiable"], f"{where}.whenUnsatisfiable", UNSATISFIABLE)
    if "labelSelector" in t:
        label_selector(t["labelSelector"], f"{where}.labelSelector")
    if t.get("minDomains") is not None:
        if when != "DoNotSchedule":
            raise fail(f"{where}.minDomains", "is only valid with whenUnsatisfiable DoNotSchedule")
        whole(t["minDomains"], f"{where}.minDomains", 1, 2**31 - 1)
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        if key in t:
            choice(t[key], f"{where}.{key}", POLICIES)
    if "matchLabelKeys" in t:
        keys = listing(t["matchLabelKeys"], f"{where}.matchLabelKeys", label_key)
        _keys_outside_selector(keys, t.get("labelSelector") or {}, f"{where}.matchLabelKeys")
    return t


def _keys_outside_selector(keys: list[str], selector: Mapping[str, Any], where: str) -> None:
    """A matchLabelKeys key may not be one the labelSelector names: the API server merges each
    into the selector when it admits a pod, and refuses the pod when the pod carries that label
    and the selector names it already (it takes the same key in mismatchLabelKeys)."""
    named = set(selector.get("matchLabels") or {}) | {
        e.get("key") for e in selector.get("matchExpressions") or [] if isinstance(e, Mapping)}
    for i, key in enumerate(keys):
        if key in named:
            raise fail(f"{where}[{i}]", f"{key!r} is in the labelSelector too: Kubernetes "
                       "refuses such pods (the Deployment is accepted, its pods are not); "
                       "leave it in one of the two")


def spread_constraints(value: Any, where: str) -> list[dict[str, Any]]:
    """The topologySpreadConstraints list: each checked, and no two for the same topologyKey
    and whenUnsatisfiable (the API server refuses such a pair as a duplicate)."""
    constraints = listing(value, where, spread_constraint)
    seen: dict[tuple[str, str], int] = {}
    for i, c in enumerate(constraints):
        pair = (c["topologyKey"], c["whenUnsatisfiable"])
        if pair in seen:
            raise fail(f"{where}[{i}]", f"repeats topologyKey {pair[0]} with whenUnsatisfiable "
                       f"{pair[1]} of [{seen[pair]}]: Kubernetes allows one constraint per pair")
        seen[pair] = i
    return constraints
