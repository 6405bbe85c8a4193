"""accessControl: Trino's file-based rules checked for structure, or an OPA endpoint by name.

Expectations come from the documents themselves (the rules a document gives are the rules Trino
reads, parsed back from the chart's ConfigMap), from Trino 476's rule classes (the keys and values
listed in trinogen/model/access_rules.py were read from them; the real-Trino test boots them), and
for regular expressions from the real java.util.regex (tests/test_javaregex.py).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.strategies as st
import pytest
import yaml

from tests.conftest import CHART_DIR, demo_settings, needs
from trinogen.errors import ConfigError
from trinogen.kinds.opa.options import OpaOption
from trinogen.kinds.opa.options import parse as parse_opa
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.model.access_rules import SECTIONS
from trinogen.render import Renderer
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None

OPA_OPTIONS = {
    "central": parse_opa("test: opa.central", {
        "policy_uri": "https://opa.platform.svc:8181/v1/data/trino/allow",
        "batched_uri": "https://opa.platform.svc:8181/v1/data/trino/batch",
        "log_requests": True}),
}

EVERY_SECTION: dict[str, Any] = {
    "catalogs": [{"user": "admin", "catalog": "(tpch|system)", "allow": "all"},
                 {"group": "finance|hr", "catalog": "pg", "allow": True},
                 {"role": "reader", "catalog": "lake", "allow": "READ-ONLY"},
                 {"catalog": "secret", "allow": "none"}],
    "schemas": [{"user": "alice", "catalog": "lake", "schema": "alice_.*", "owner": True}],
    "tables": [{"user": "bob", "catalog": "lake", "schema": "s", "table": "t.*",
                "privileges": ["SELECT", "INSERT"],
                "columns": [{"name": "ssn", "allow": False},
                            {"name": "email", "mask": "'***'", "mask_environment": {"user": "m"}}],
                "filter": "region = 'eu'", "filter_environment": {"user": "f"}},
               {"privileges": []}],
    "system_information": [{"user": "admin", "allow": ["read", "write"]},
                           {"role": "ops", "allow": ["READ"]}],
    "queries": [{"user": "admin", "allow": ["execute", "kill", "view"]},
                {"group": "g", "queryOwner": "alice", "allow": ["view", "kill"]}],
    "impersonation": [{"original_user": "(.*)_admin", "new_user": "$1", "allow": True},
                      {"original_role": "r", "new_user": "svc_.*"}],
    "principals": [{"principal": "(.*)@EXAMPLE.COM", "principal_to_user": "$1", "allow": True}],
    "authorization": [{"original_user": "a", "new_role": "r", "allow": False}],
    "system_session_properties": [{"user": "u", "property": "query_max_.*", "allow": True}],
    "catalog_session_properties": [{"catalog": "lake", "property": ".*", "allow": False}],
    "functions": [{"catalog": "system", "schema": "builtin", "function": ".*",
                   "privileges": ["EXECUTE", "GRANT_EXECUTE"]}],
    "procedures": [{"user": "admin", "catalog": "lake", "schema": "system", "procedure": ".*",
                    "privileges": ["EXECUTE"]}],
}


def _doc(cluster_id: str, **body: Any) -> dict[str, Any]:
    doc = {"_id": f"test-{cluster_id}", "clusterId": cluster_id, "owner": "qa_team",
           "enabled": True,
           "connectors": [{"name": "memory", "properties": {"connector.name": "memory"}}]}
    doc.update(body)
    return doc


ACCESS_DOCS = {d["clusterId"]: d for d in [
    _doc("acl-every-section", accessControl={"rules": EVERY_SECTION}),
    _doc("acl-graceful", accessControl={"rules": {
        # denies admin everything on the coordinator; the workers' own rules keep shutdown working
        "catalogs": [{"user": "admin", "allow": "none"}],
        "system_information": [{"user": "nobody", "allow": ["read"]}]}},
        clusterConfig={"worker": {"gracefulShutdown": {"enabled": True, "gracePeriodSeconds": 20}}}),
    _doc("acl-tpl", accessControl={"rules": {"tables": [{
        "privileges": ["SELECT"], "filter": "tag = '{{ .Release.Name }}' AND x = '{{- fail \"no\" -}}'"}]}}),
    _doc("acl-opa", accessControl={"opa": "central"}),
]}


def _settings(**sections: Any) -> Settings:
    s = demo_settings(**sections)
    return dataclasses.replace(s, named={**s.named, "opa": OPA_OPTIONS})


def _classify(doc: Mapping[str, Any], settings: Settings | None = None) -> Cluster | Failed:
    doc = copy.deepcopy(dict(doc))
    out = classify(RawDocument(doc_key(doc["_id"]), doc), settings or _settings())
    assert isinstance(out, (Cluster, Failed))
    return out


def _problems(rules: Any, settings: Settings | None = None) -> dict[str, str]:
    out = _classify(_doc("acl", accessControl={"rules": rules}), settings)
    assert isinstance(out, Failed), "the rules were accepted"
    return {p.field: p.message for p in out.problems}


# --- the model -----------------------------------------------------------------------------------

def test_rules_of_every_section_are_accepted_and_kept_exactly() -> None:
    """Valid rules of all twelve sections validate, and the file Trino reads holds them as given."""
    cluster = _classify(ACCESS_DOCS["acl-every-section"])
    assert isinstance(cluster, Cluster), cluster
    assert cluster.access is not None and cluster.access.rules_json is not None
    assert json.loads(cluster.access.rules_json) == EVERY_SECTION
    assert cluster.access.refresh_period == "60s"


@pytest.mark.parametrize(("rules", "path", "says"), [
    ({"catalog": []}, "accessControl.rules.catalog", "did you mean catalogs"),
    ({"catalogs": {}}, "accessControl.rules.catalogs", "must be a list"),
    ({"catalogs": ["x"]}, "accessControl.rules.catalogs[0]", "must be an object"),
    ({"catalogs": [{"catalog": "x"}]}, "accessControl.rules.catalogs[0].allow", "is required"),
    ({"catalogs": [{"catalg": "x", "allow": "all"}]}, "accessControl.rules.catalogs[0].catalg",
     "did you mean catalog"),
    ({"catalogs": [{"allow": "read_only"}]}, "accessControl.rules.catalogs[0].allow",
     "not a catalog access mode"),
    ({"catalogs": [{"allow": 1}]}, "accessControl.rules.catalogs[0].allow", "must be a string"),
    ({"catalogs": [{"user": 7, "allow": "all"}]}, "accessControl.rules.catalogs[0].user",
     "must be a string"),
    ({"catalogs": [{"catalog": "(unclosed", "allow": "all"}]},
     "accessControl.rules.catalogs[0].catalog",
     "not a valid Java regular expression: Unclosed group near index 9"),
    ({"catalogs": [{"catalog": "${USER}", "allow": "all"}]},
     "accessControl.rules.catalogs[0].catalog", "Illegal repetition"),
    ({"catalogs": [{"user": "(?P<n>a)", "allow": "all"}]},
     "accessControl.rules.catalogs[0].user", "Unknown inline modifier near index 2; (?P<name>"),
    ({"catalogs": [{"group": "x{2147483648}", "allow": "all"}]},
     "accessControl.rules.catalogs[0].group", "Illegal repetition range near index 11"),
    ({"catalogs": [{"catalog": "[[a]", "allow": "all"}]},
     "accessControl.rules.catalogs[0].catalog", "Unclosed character class near index 3"),
    ({"schemas": [{"schema": "s"}]}, "accessControl.rules.schemas[0].owner", "is required"),
    ({"schemas": [{"owner": "yes"}]}, "accessControl.rules.schemas[0].owner", "true or false"),
    ({"tables": [{"privileges": ["select"]}]}, "accessControl.rules.tables[0].privileges[0]",
     "did you mean SELECT"),
    ({"tables": [{"privileges": "SELECT"}]}, "accessControl.rules.tables[0].privileges",
     "must be a list"),
    ({"tables": [{"privileges": [], "columns": [{"allow": False}]}]},
     "accessControl.rules.tables[0].columns[0].name", "is required"),
    ({"tables": [{"privileges": [], "columns": [{"name": "c", "masks": "x"}]}]},
     "accessControl.rules.tables[0].columns[0].masks", "did you mean mask"),
    ({"tables": [{"privileges": [], "filter_environment": {"usr": "u"}}]},
     "accessControl.rules.tables[0].filter_environment.usr", "unknown field"),
    ({"system_information": [{"group": "g", "allow": ["read"]}]},
     "accessControl.rules.system_information[0].group", "unknown field"),
    ({"system_information": [{"allow": ["delete"]}]},
     "accessControl.rules.system_information[0].allow[0]", "not one of read, write"),
    ({"queries": [{"queryOwner": "a", "allow": ["execute"]}]},
     "accessControl.rules.queries[0].allow", "may not allow execute"),
    ({"impersonation": [{"original_user": "a"}]},
     "accessControl.rules.impersonation[0].new_user", "is required"),
    ({"impersonation": [{"original_user": "(a)", "new_user": "$2"}]},
     "accessControl.rules.impersonation[0].new_user", "refers to group $2"),
    ({"authorization": [{"original_user": "a"}]}, "accessControl.rules.authorization[0]",
     "needs new_user or new_role"),
    ({"principals": [{"principal": "p", "allow": True}]}, "accessControl.rules.principals[0]",
     "needs user or principal_to_user"),
    ({"functions": [{"privileges": ["EXECUTE"], "function_kinds": ["SCALAR"]}]},
     "accessControl.rules.functions[0].function_kinds", "no longer supported"),
    ({"procedures": [{"privileges": ["OWNERSHIP"]}]},
     "accessControl.rules.procedures[0].privileges[0]", "not one of EXECUTE, GRANT_EXECUTE"),
    ({"system_session_properties": [{"property": "p"}]},
     "accessControl.rules.system_session_properties[0].allow", "is required"),
    ([], "accessControl.rules", "must be an object"),
])
def test_bad_rules_are_refused_naming_the_field(rules: Any, path: str, says: str) -> None:
    """Each structural mistake fails the document at its own field path, saying what is wrong."""
    problems = _problems(rules)
    assert path in problems, problems
    assert says in problems[path]


def test_unknown_rule_keys_are_errors_even_when_unknown_fields_warn() -> None:
    """validation.unknown_fields=warn does not soften rules: a dropped key would widen a rule."""
    s = _settings(validation={"unknown_fields": "warn"})
    problems = _problems({"catalogs": [{"catalg": "secret", "allow": "none"}]}, s)
    assert "accessControl.rules.catalogs[0].catalg" in problems


def test_what_only_java_can_judge_is_a_warning_not_an_error() -> None:
    """A pattern only Java can judge (a script name trinogen does not list) renders with a
    warning naming the field and what it could not judge."""
    doc = _doc("acl", accessControl={"rules": {"catalogs": [
        {"user": "\\p{IsBalinese}+", "allow": "all"}]}})
    cluster = _classify(doc)
    assert isinstance(cluster, Cluster), cluster
    assert [(w.field, "script name 'Balinese'" in w.message) for w in cluster.warnings] == [
        ("accessControl.rules.catalogs[0].user", True)]


@pytest.mark.parametrize("pattern", ["\\p{Lower}+", "(?<=a+)b", "\\8", "(a)\\2", "[\\w-z]",
                                     "\\b{g}", "^*", "jdbc#(?<toolname>.*)"])
def test_java_syntax_trinogen_reads_passes_without_a_warning(pattern: str) -> None:
    """Patterns Java 25 accepts, Java-only syntax included, pass with no warning."""
    cluster = _classify(_doc("acl", accessControl={"rules": {"catalogs": [
        {"user": pattern, "allow": "all"}]}}))
    assert isinstance(cluster, Cluster), cluster
    assert cluster.warnings == ()


@pytest.mark.parametrize(("spec", "path", "says"), [
    ({"rules": {}, "opa": "central"}, "accessControl", "not both"),
    ({}, "accessControl", "not neither"),
    ({"opa": "centrl"}, "accessControl.opa", "did you mean central"),
    ({"opa": 3}, "accessControl.opa", "must be a string"),
    ({"rule": {}}, "accessControl.rule", "did you mean rules"),
    ("file", "accessControl", "must be an object"),
])
def test_access_control_takes_rules_or_an_opa_name(spec: Any, path: str, says: str) -> None:
    """A document gives rules or picks an OPA option the settings name, exactly one of them."""
    out = _classify(_doc("acl", accessControl=spec))
    assert isinstance(out, Failed)
    problems = {p.field: p.message for p in out.problems}
    assert path in problems and says in problems[path], problems


def test_opa_pick_becomes_the_plugins_properties() -> None:
    """Picking an OPA option gives access-control.name=opa and that option's URIs and flags."""
    cluster = _classify(ACCESS_DOCS["acl-opa"])
    assert isinstance(cluster, Cluster) and cluster.kind("opa") is not None
    assert dict(cluster.kind("opa").properties) == {
        "access-control.name": "opa",
        "opa.policy.uri": "https://opa.platform.svc:8181/v1/data/trino/allow",
        "opa.policy.batched-uri": "https://opa.platform.svc:8181/v1/data/trino/batch",
        "opa.log-requests": "true",
    }
    assert cluster.access is None  # no rules of its own


@pytest.mark.parametrize(("raw", "says"), [
    ({}, "opa.x.policy_uri: is required"),
    ({"policy_uri": "opa:8181"}, "opa.x.policy_uri: must be an http"),
    ({"policy_uri": "https://u:pw@opa/v1"}, "opa.x.policy_uri: must not carry credentials"),
    ({"policy_uri": "https://opa/v1", "batch_uri": "https://opa/b"}, "opa.x.batch_uri: unknown"),
    ({"policy_uri": "https://opa/v1", "log_requests": "yes"}, "opa.x.log_requests: must be true"),
])
def test_bad_opa_options_are_configuration_errors(raw: dict[str, Any], says: str) -> None:
    """An OPA option is checked when the settings load, naming opa.<name>.<field>."""
    with pytest.raises(ConfigError, match=says.replace(".", r"\.").replace("(", r"\(")):
        parse_opa("f: opa.x", raw)


def test_opa_options_load_from_the_settings_file(tmp_path: Path) -> None:
    """`opa:` in the settings file is a kind of named option: parsed once, read by name."""
    f = tmp_path / "t.yaml"
    f.write_text("opa:\n  central:\n    policy_uri: http://opa:8181/v1/data/trino/allow\n")
    s = load_settings(f, environ={})
    option = s.options("opa")["central"]
    assert isinstance(option, OpaOption)
    assert option.properties == (("opa.policy.uri", "http://opa:8181/v1/data/trino/allow"),)


# --- through the real chart ----------------------------------------------------------------------

def _chart_needed(test: Any) -> Any:
    test = needs(helm_python is not None, "helm-python-sdk is not installed")(test)
    return needs((CHART_DIR / "Chart.yaml").is_file(), f"no Trino chart at {CHART_DIR}")(test)


def _rendered(case: str) -> dict[str, dict[str, Any]]:
    """The chart's objects for one of ACCESS_DOCS, keyed by kind/name."""
    from tests.test_chart import render_through_chart

    s = _settings()
    cluster = _classify(ACCESS_DOCS[case], s)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(s).render_cluster(cluster, {})
    values = files[f"{s.output.clusters_dir}/{case}/values.yaml"].decode()
    chart = helm_python.Chart.load(CHART_DIR)
    objects = render_through_chart(chart, values, case, f"trino-{case}")[1]
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in objects}


def _props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line.strip())


@_chart_needed
@pytest.mark.parametrize("case", ["acl-every-section", "acl-graceful", "acl-tpl"])
def test_rules_reach_the_coordinator_and_refresh_without_restart(case: str) -> None:
    """The coordinator reads the document's rules from its ConfigMap, re-reads them every 60s, and
    its pods carry no checksum of them (a change is applied without a restart)."""
    objs = _rendered(case)
    fullname = f"{case}-trino"
    props = _props(objs[f"ConfigMap/{fullname}-coordinator"]["data"]["access-control.properties"])
    assert props == {"access-control.name": "file", "security.refresh-period": "60s",
                     "security.config-file": "/etc/trino/access-control/rules.json"}
    rules = objs[f"ConfigMap/{fullname}-access-control-volume-coordinator"]["data"]["rules.json"]
    assert json.loads(rules) == ACCESS_DOCS[case]["accessControl"]["rules"]
    pod = objs[f"Deployment/{fullname}-coordinator"]["spec"]["template"]
    assert "checksum/access-control-config" not in (pod["metadata"].get("annotations") or {})
    mounts = {m["name"]: m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
    assert mounts["access-control-volume"] == "/etc/trino/access-control"


@_chart_needed
def test_graceful_shutdown_keeps_the_workers_own_rules() -> None:
    """With rules that deny admin on the coordinator, the workers still let admin (the preStop
    hook's user) shut them down: the chart gives them a rules file of their own."""
    objs = _rendered("acl-graceful")
    fullname = "acl-graceful-trino"
    worker_props = _props(objs[f"ConfigMap/{fullname}-worker"]["data"]["access-control.properties"])
    assert worker_props["security.config-file"] == (
        "/etc/trino/access-control/graceful-shutdown-rules.json")
    worker_rules = json.loads(objs[f"ConfigMap/{fullname}-access-control-volume-worker"]["data"][
        "graceful-shutdown-rules.json"])
    assert {"user": "admin", "allow": ["write"]} in worker_rules["system_information"]
    worker = objs[f"Deployment/{fullname}-worker"]["spec"]["template"]["spec"]["containers"][0]
    assert "X-Trino-User: admin" in worker["lifecycle"]["preStop"]["exec"]["command"][-1]


@_chart_needed
def test_opa_reaches_the_coordinators_access_control_properties() -> None:
    """An OPA pick becomes the coordinator's access-control.properties, with no rules ConfigMap."""
    objs = _rendered("acl-opa")
    props = _props(objs["ConfigMap/acl-opa-trino-coordinator"]["data"]["access-control.properties"])
    assert props == {"access-control.name": "opa",
                     "opa.policy.uri": "https://opa.platform.svc:8181/v1/data/trino/allow",
                     "opa.policy.batched-uri": "https://opa.platform.svc:8181/v1/data/trino/batch",
                     "opa.log-requests": "true"}
    assert not any(k.startswith("ConfigMap/") and "access-control-volume" in k for k in objs)


def test_documents_without_access_control_render_no_access_control() -> None:
    """A document without accessControl leaves the chart's accessControl untouched."""
    doc = _doc("acl-none")
    s = _settings()
    cluster = _classify(doc, s)
    assert isinstance(cluster, Cluster) and cluster.access is None
    values = yaml.safe_load(Renderer(s).render_cluster(cluster, {})[
        f"{s.output.clusters_dir}/acl-none/values.yaml"])
    assert "accessControl" not in values



# --- hostile input ---------------------------------------------------------------------------------

_NAMES = sorted({*SECTIONS, *(name for fields, _ in SECTIONS.values() for name in fields),
                 "name", "mask", "mask_environment"})
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                    st.sampled_from(["all", "none", "SELECT", "read", "(", "${USER}", "a{2}", "$9"]))
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(st.sampled_from(_NAMES), st.text(max_size=6)), inner, max_size=4)),
    max_leaves=12)


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(rules=st.dictionaries(st.sampled_from(sorted(SECTIONS)), _VALUES, max_size=4))
def test_any_rules_give_a_verdict_never_a_crash(rules: dict[str, Any]) -> None:
    """Whatever a document puts under accessControl.rules, it validates or fails with problems."""
    out = _classify(_doc("acl", accessControl={"rules": rules}))
    if isinstance(out, Cluster):
        assert out.access is not None and json.loads(out.access.rules_json or "") == rules
    else:
        assert out.problems
