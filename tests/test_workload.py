"""Workload identity, monitoring and ingress: the options the settings offer, and a document's picks.

The options are read through `load_settings` (as the CLI reads them); the expectations are
written from the options' text and the documents here, never from trinogen's output.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import demo_settings
from trinogen.errors import ConfigError
from trinogen.kinds.ingress.document import Ingress
from trinogen.kinds.service_accounts.document import ServiceAccount
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings, load_settings, replace
from trinogen.settings.named import parse_kind
from trinogen.settings.options import metadata

ROLE_ARN = "arn:aws:iam::123456789012:role/trino-{cluster}"
REDIRECT = '{"Type": "redirect", "RedirectConfig": {"Protocol": "HTTPS", "StatusCode": "HTTP_301"}}'
OPTIONS = {
    "service_accounts": {
        "aws": {"annotations": {"eks.amazonaws.com/role-arn": ROLE_ARN}},
        "gke": {"name": "trino",
                "annotations": {"iam.gke.io/gcp-service-account": "trino@proj.iam.gserviceaccount.com"}},
        "azure": {"name": "{cluster}-wi",
                  "annotations": {"azure.workload.identity/client-id": "11111111-2222-3333"},
                  "pod_labels": {"azure.workload.identity/use": "true"}},
        "by-owner": {"name": "{owner}-sa"},
    },
    "ingress": {
        "public": {"host": "{cluster}.trino.example.com", "class_name": "nginx",
                   "tls_secret": "{cluster}-trino-tls",
                   "annotations": {"cert-manager.io/cluster-issuer": "letsencrypt",
                                   "alb.ingress.kubernetes.io/actions.redirect": REDIRECT}},
        "internal": {"host": "{cluster}.internal.example.com", "path": "/ui", "path_type": "Exact"},
        "per-owner": {"host": "{cluster}.{owner}.example.com"},
    },
}


def with_options(settings: Settings | None = None, **monitoring: Any) -> Settings:
    """The demo settings with this module's options (parsed by their kinds) and monitoring."""
    base = settings or demo_settings()
    named = {kind: parse_kind(kind, raw, "test") for kind, raw in OPTIONS.items()}
    out = dataclasses.replace(base, named={**base.named, **named})
    return replace(out, monitoring=monitoring) if monitoring else out


def doc(cluster_id: str = "lake", owner: str = "qa-team", **body: Any) -> dict[str, Any]:
    return {"_id": f"t-{cluster_id}", "clusterId": cluster_id, "owner": owner, "enabled": True,
            "connectors": [{"name": "memory", "properties": {"connector.name": "memory"}}],
            **body}


def outcome(d: dict[str, Any], settings: Settings | None = None) -> Cluster | Failed:
    o = classify(RawDocument(f'"{d["_id"]}"', d), settings or with_options())
    assert isinstance(o, (Cluster, Failed))
    return o


# --- Kubernetes rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "ok"), [
    ("a.b-c.example.com", True), ("x", True), ("0a", True), ("", False), ("A.example.com", False),
    ("a_b.com", False), ("-a.com", False), ("a..b", False), ("a." * 127 + "b", False), ("a." * 126 + "b", True),
    ("x" * 63 + ".com", True), ("x" * 64 + ".com", False),
])
def test_dns_names(text: str, ok: bool) -> None:
    """DNS-1123 subdomains: lowercase labels of at most 63, at most 253 in all."""
    assert (metadata.dns_subdomain(text) is None) is ok


@pytest.mark.parametrize(("key", "ok"), [
    ("eks.amazonaws.com/role-arn", True), ("azure.workload.identity/use", True), ("team", True),
    ("a/b/c", False), ("/x", False), ("Example.com/x", False), ("x" * 64, False), ("a b", False),
    ("x/" + "y" * 63, True), ("{{ x }}", False), ("", False),
])
def test_label_and_annotation_keys(key: str, ok: bool) -> None:
    """Qualified names: an optional DNS prefix, a slash, a name of at most 63."""
    assert (metadata.qualified_name(key) is None) is ok


@pytest.mark.parametrize(("value", "ok"), [
    ("", True), ("true", True), ("a_b.c-D", True), ("-a", False), ("a" * 63, True),
    ("a" * 64, False), ("{{x}}", False), ("a b", False),
])
def test_label_values(value: str, ok: bool) -> None:
    """Label values: empty, or up to 63 letters, digits and -_. between alphanumerics."""
    assert (metadata.label_value(value) is None) is ok


@pytest.mark.parametrize(("value", "ok"), [
    ('{"Type": "redirect", "RedirectConfig": {"Protocol": "HTTPS"}}', True),
    ("arn:aws:iam::1:role/{cluster}", True), ("{clusterid}", False), ("{{ .Release.Name }}", False),
    ("a }} b", True),  # nested JSON ends so; only {{ starts a Helm action
])
def test_annotation_values_may_hold_json_but_no_template(value: str, ok: bool) -> None:
    """Annotation values keep other braces as text (JSON annotations), never `{{` or a typo."""
    if ok:
        assert metadata.check_pattern("here", value, literal_braces=True) == value
    else:
        with pytest.raises(ConfigError, match="here"):
            metadata.check_pattern("here", value, literal_braces=True)


@pytest.mark.parametrize(("pattern", "ok"), [
    ("{cluster}-x", True), ("{owner}.{cluster}", True), ("plain", True), ("{clusterId}", False),
    ("{{ .Release.Name }}", False), ("a}", False), ("{", False), ("{}", False),
])
def test_patterns_name_only_cluster_and_owner(pattern: str, ok: bool) -> None:
    """A pattern may use {cluster} and {owner}; any other brace is a configuration error."""
    if ok:
        assert metadata.check_pattern("here", pattern) == pattern
    else:
        with pytest.raises(ConfigError, match="here"):
            metadata.check_pattern("here", pattern)


# --- the options in the settings file -------------------------------------------------------------


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "settings.yaml"
    path.write_text(text)
    return load_settings(path, environ={})


def test_options_load_from_the_settings_file(tmp_path: Path) -> None:
    """The file's service_accounts and ingress entries become options of those kinds, by name."""
    s = _load(tmp_path, yaml.safe_dump(OPTIONS))
    aws = s.options("service_accounts")["aws"]
    assert aws.name == "{cluster}-trino"  # the documented default
    assert aws.annotations == (("eks.amazonaws.com/role-arn", ROLE_ARN),)
    assert s.options("service_accounts")["azure"].pod_labels == (
        ("azure.workload.identity/use", "true"),)
    public = s.options("ingress")["public"]
    assert (public.host, public.class_name, public.tls_secret, public.path, public.path_type) == (
        "{cluster}.trino.example.com", "nginx", "{cluster}-trino-tls", "/", "Prefix")


@pytest.mark.parametrize(("kind", "entry", "needle"), [
    ("service_accounts", {"role": "x"}, "service_accounts.x.role: unknown field"),
    ("service_accounts", {"name": "{cluster}_sa"}, "service_accounts.x.name"),
    ("service_accounts", {"name": "{project}"}, "only the placeholders"),
    ("service_accounts", {"annotations": {"Bad Key": "v"}}, "service_accounts.x.annotations.Bad Key"),
    ("service_accounts", {"annotations": {"a/b": "line\nbreak"}}, "one line"),
    ("service_accounts", {"annotations": {"a/b": 3}}, "must be a string"),
    ("service_accounts", {"annotations": ["a"]}, "mapping"),
    ("service_accounts", {"pod_labels": {"use": "yes please"}}, "not a label value"),
    ("service_accounts", {"pod_labels": {"trinogen.io/owner": "x"}}, "set the labels"),
    ("service_accounts", {"pod_labels": {"app.kubernetes.io/name": "x"}}, "set the labels"),
    ("ingress", {}, "ingress.x.host must be a string"),
    ("ingress", {"host": "trino.example.com"}, 'must start with "{cluster}."'),
    ("ingress", {"host": "a-{cluster}.example.com"}, 'must start with "{cluster}."'),
    ("ingress", {"host": "{cluster}.{cluster}.example.com"}, "name it once"),
    ("service_accounts", {"name": "default"}, "namespace's own"),
    ("ingress", {"host": "{cluster}.Example.com"}, "ingress.x.host"),
    ("ingress", {"host": "{cluster}.e.com", "class_name": "Nginx Plus"}, "ingress.x.class_name"),
    ("ingress", {"host": "{cluster}.e.com", "tls_secret": "{{ .Release.Name }}"}, "tls_secret"),
    ("ingress", {"host": "{cluster}.e.com", "path": "ui"}, "ingress.x.path"),
    ("ingress", {"host": "{cluster}.e.com", "path": "/a#b"}, "ingress.x.path"),
    ("ingress", {"host": "{cluster}.e.com", "path_type": "prefix"}, "ingress.x.path_type"),
    ("ingress", {"host": "{cluster}.e.com", "tls": "x"}, "ingress.x.tls: unknown field"),
])
def test_a_bad_option_is_a_configuration_error_naming_its_field(
    tmp_path: Path, kind: str, entry: dict[str, Any], needle: str
) -> None:
    """A malformed option fails loading (exit 2) with kind, name and field in the message."""
    with pytest.raises(ConfigError, match=None) as e:
        _load(tmp_path, yaml.safe_dump({kind: {"x": entry}}))
    assert needle in str(e.value)


@pytest.mark.parametrize(("text", "needle"), [
    ("monitoring: {exporter_pull_policy: Sometimes}\n", "monitoring.exporter_pull_policy"),
    ("monitoring: {scrape_interval: thirty}\n", "monitoring.scrape_interval"),
    ("monitoring: {exporter_image: 'my image'}\n", "monitoring.exporter_image"),
    ("monitoring: {exporter_tag: ''}\n", "monitoring.exporter_tag"),
    ("monitoring: {service_monitor_labels: {'bad key': x}}\n", "service_monitor_labels.bad key"),
    ("monitoring: {service_monitor_labels: {release: 'a b'}}\n", "service_monitor_labels.release"),
    ("monitoring: {exporter_config: 'rules: [{pattern: x}]'}\n", "with hostPort"),
    ("monitoring: {exporter_config: '[a, b'}\n", "not YAML"),
])
def test_bad_monitoring_settings_are_refused(tmp_path: Path, text: str, needle: str) -> None:
    """The monitoring section is checked when the settings load, naming the setting."""
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, text)
    assert needle in str(e.value)


def test_monitoring_settings_come_from_the_file_and_the_environment(tmp_path: Path) -> None:
    """Like every section: the file, then TRINOGEN_MONITORING_* variables over it."""
    path = tmp_path / "s.yaml"
    path.write_text("monitoring: {exporter_image: mirror.example.com/jmx, "
                    "service_monitor_labels: {release: prom}}\n")
    s = load_settings(path, environ={"TRINOGEN_MONITORING_EXPORTER_TAG": "1.5.0"})
    assert (s.monitoring.exporter_image, s.monitoring.exporter_tag) == (
        "mirror.example.com/jmx", "1.5.0")
    assert s.monitoring.service_monitor_labels == {"release": "prom"}


# --- a document's picks ---------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "expected"), [
    ({"serviceAccount": "aws"}, ServiceAccount(
        "lake-trino", (("eks.amazonaws.com/role-arn", ROLE_ARN.replace("{cluster}", "lake")),))),
    ({"serviceAccount": "gke"}, ServiceAccount(
        "trino", (("iam.gke.io/gcp-service-account", "trino@proj.iam.gserviceaccount.com"),))),
    ({"serviceAccount": "azure"}, ServiceAccount(
        "lake-wi", (("azure.workload.identity/client-id", "11111111-2222-3333"),),
        (("azure.workload.identity/use", "true"),))),
    ({"serviceAccount": "by-owner"}, ServiceAccount("qa-team-sa")),
    ({}, None),
])
def test_a_document_picks_a_service_account(body: dict[str, Any], expected: Any) -> None:
    """The picked profile is filled with the clusterId and owner; none picked means none."""
    c = outcome(doc(**body))
    assert isinstance(c, Cluster), c
    assert c.service_account == expected


@pytest.mark.parametrize(("body", "expected"), [
    ({"ingress": "public"}, Ingress(
        "lake.trino.example.com", "nginx", "lake-trino-tls",
        (("alb.ingress.kubernetes.io/actions.redirect", REDIRECT),
         ("cert-manager.io/cluster-issuer", "letsencrypt")))),
    ({"ingress": "internal"}, Ingress("lake.internal.example.com", None, None, (), "/ui", "Exact")),
    ({"ingress": "per-owner"}, Ingress("lake.qa-team.example.com")),
    ({}, None),
])
def test_a_document_picks_an_ingress(body: dict[str, Any], expected: Any) -> None:
    """The host and TLS Secret patterns are filled with the document's clusterId and owner."""
    c = outcome(doc(**body))
    assert isinstance(c, Cluster), c
    assert c.ingress == expected


@pytest.mark.parametrize(("monitoring", "jmx", "monitor"), [
    (None, False, False),
    ({}, False, False),
    ({"jmx": True}, True, False),
    ({"jmx": True, "serviceMonitor": True}, True, True),
    ({"jmx": False, "serviceMonitor": False}, False, False),
])
def test_the_monitoring_switch(monitoring: Any, jmx: bool, monitor: bool) -> None:
    """monitoring.jmx runs the exporter; monitoring.serviceMonitor adds the ServiceMonitors."""
    body = {} if monitoring is None else {"monitoring": monitoring}
    c = outcome(doc(**body))
    assert isinstance(c, Cluster), c
    assert (c.jmx_exporter, c.service_monitor) == (jmx, monitor)


@pytest.mark.parametrize(("body", "field", "needle"), [
    ({"serviceAccount": "azur"}, "serviceAccount", "did you mean azure"),
    ({"serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:..."}}},
     "serviceAccount", "must be a string"),
    ({"ingress": "publik"}, "ingress", "did you mean public"),
    ({"ingress": 3}, "ingress", "must be a string"),
    ({"monitoring": {"serviceMonitor": True}}, "monitoring.serviceMonitor", "needs monitoring.jmx"),
    ({"monitoring": {"jmx": False, "serviceMonitor": True}}, "monitoring.serviceMonitor",
     "needs monitoring.jmx"),
    ({"monitoring": {"jmx": "yes"}}, "monitoring.jmx", "true or false"),
    ({"monitoring": {"jmx": True, "exporter": {"image": "evil/x"}}}, "monitoring.exporter",
     "unknown field"),
    ({"monitoring": True}, "monitoring", "must be an object"),
])
def test_bad_picks_fail_the_document_naming_the_field(
    body: dict[str, Any], field: str, needle: str
) -> None:
    """An unknown option, a wrong type or an incomplete switch fails the document at its field."""
    o = outcome(doc(**body))
    assert isinstance(o, Failed)
    assert any(p.field == field and needle in p.message for p in o.problems), o.problems


@pytest.mark.parametrize(("body", "owner"), [
    ({"serviceAccount": "by-owner"}, "QA_Team"),  # "{owner}-sa" is no ServiceAccount name then
    ({"ingress": "per-owner"}, "qa_team"),  # nor "{cluster}.{owner}.example.com" a host
])
def test_a_pattern_that_is_not_valid_once_filled_fails_the_document(
    body: dict[str, Any], owner: str
) -> None:
    """The filled name is checked per document: an owner with '_' makes no DNS name."""
    o = outcome(doc(owner=owner, **body))
    assert isinstance(o, Failed)
    (field,) = body
    assert [p.field for p in o.problems] == [field]
    assert "is not valid" in o.problems[0].message or "DNS" in o.problems[0].message


def test_the_picks_merge_from_defaults_and_profiles() -> None:
    """A profile may pick for its documents; the document's own pick wins."""
    base = with_options()
    s = dataclasses.replace(base, profiles={**base.profiles, "lake": {
        "serviceAccount": "aws", "monitoring": {"jmx": True}}})
    c = outcome(doc(profile="lake"), s)
    assert isinstance(c, Cluster)
    assert c.service_account is not None and c.service_account.name == "lake-trino"
    assert c.jmx_exporter
    c = outcome(doc(profile="lake", serviceAccount="gke"), s)
    assert isinstance(c, Cluster) and c.service_account is not None
    assert c.service_account.name == "trino"


# --- values.yaml ----------------------------------------------------------------------------------


def _values(d: dict[str, Any], settings: Settings | None = None) -> dict[str, Any]:
    s = settings or with_options()
    c = outcome(d, s)
    assert isinstance(c, Cluster), c
    files = Renderer(s).render_cluster(c, {})
    return dict(yaml.safe_load(files[f"trino-clusters/{d['clusterId']}/values.yaml"]))


@pytest.mark.parametrize(("cluster_id", "owner"), [("lake", "qa-team"), ("a1", "Data_Team.x")])
def test_every_cluster_labels_its_pods_with_cluster_and_owner(cluster_id: str, owner: str) -> None:
    """Both roles carry trinogen.io/cluster and trinogen.io/owner, from the document."""
    values = _values(doc(cluster_id, owner))
    for role in ("coordinator", "worker"):
        assert values[role]["labels"] == {"trinogen.io/cluster": cluster_id,
                                          "trinogen.io/owner": owner}


def test_a_document_without_the_features_writes_none_of_their_keys() -> None:
    """No serviceAccount, jmx, serviceMonitor or ingress key unless the document picks one."""
    values = _values(doc())
    assert not {"serviceAccount", "jmx", "serviceMonitor", "ingress"} & set(values)


def test_the_monitoring_settings_shape_the_output_and_the_cache_fingerprint() -> None:
    """A changed exporter tag re-renders every cluster: the render cache fingerprint covers it."""
    a = with_options()
    b = with_options(exporter_tag="9.9.9")
    assert Renderer(a).fingerprint != Renderer(b).fingerprint
    values = _values(doc(monitoring={"jmx": True}), b)
    assert values["jmx"]["exporter"]["image"] == "bitnamilegacy/jmx-exporter:9.9.9"
