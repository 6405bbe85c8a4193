"""Rendering: golden output for the examples, determinism, and injection-safe escaping."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings as hsettings, strategies as st

from tests import javaprops
from tests.conftest import ROOT, demo_settings, example_docs
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import (
    Renderer,
    RenderError,
    chart_worker_name,
    helm_escape,
    helm_unescape,
    parse_header,
    prop_key,
    prop_value,
    yaml_scalar,
    yaml_text,
)
from trinogen.settings import replace
from trinogen.source import doc_key

GOLDEN = ROOT / "tests" / "golden"


def cluster_of(doc: dict[str, Any], settings: Any = None) -> Cluster:
    settings = settings or demo_settings()
    c = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    assert isinstance(c, Cluster), getattr(c, "problems", c)
    return c


def render_examples(settings: Any = None) -> dict[str, bytes]:
    settings = settings or demo_settings()
    renderer = Renderer(settings)
    files: dict[str, bytes] = dict(renderer.render_root_app())
    for doc in example_docs():
        files.update(renderer.render_cluster(cluster_of(doc, settings), {}))
    return files


def test_examples_match_the_golden_tree() -> None:
    """The shipped examples render byte for byte to tests/golden, the reviewed expected output.

    The test only compares: after an intended output change, a person regenerates the tree with
    `python -m tests.update_golden` and reviews the diff against the examples before committing.
    """
    files = render_examples()
    golden = {p.relative_to(GOLDEN).as_posix(): p.read_bytes() for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(files) == sorted(golden)
    for path in files:
        assert files[path] == golden[path], path


def test_rendering_is_deterministic_whatever_the_key_order() -> None:
    """Shuffled document keys and connector property order give byte-identical files."""
    first = render_examples()
    rng = random.Random(7)

    def shuffle(value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            rng.shuffle(items)
            return {k: shuffle(v) for k, v in items}
        if isinstance(value, list):
            return [shuffle(v) for v in value]
        return value

    settings = demo_settings()
    renderer = Renderer(settings)
    again: dict[str, bytes] = dict(renderer.render_root_app())
    for doc in example_docs():
        again.update(renderer.render_cluster(cluster_of(shuffle(doc), settings), {}))
    assert again == first


def test_values_use_only_chart_keys_and_declared_catalogs() -> None:
    """values.yaml carries the document's settings under the chart's keys, and only those."""
    doc = next(d for d in example_docs() if d["clusterId"] == "analytics-prod")
    files = Renderer(demo_settings()).render_cluster(cluster_of(doc), {})
    values = yaml.safe_load(files["trino-clusters/analytics-prod/values.yaml"])
    assert values["image"]["tag"] == "476"
    assert values["server"]["workers"] == 5
    assert values["server"]["config"]["query"]["maxMemory"] == "100TB"
    assert values["server"]["node"]["environment"] == "production"
    for role in ("coordinator", "worker"):
        cfg = doc["clusterConfig"][role]
        assert values[role]["jvm"]["maxHeapSize"] == cfg["jvm"]["maxHeapSize"]
        assert values[role]["resources"] == cfg["resources"]
        assert values[role]["config"]["query"]["maxMemoryPerNode"] == "12GB"
        assert "jvm" not in values[role].get("config", {})  # the chart has no <role>.config.jvm
    assert set(values["catalogs"]) == {"hive-prod", "mysql-rds", "tpch", "tpcds"}
    assert values["catalogs"]["tpcds"] is None  # undeclared chart default switched off
    assert values["envFrom"] == [{"secretRef": {"name": "analytics-prod-trino-secrets"}}]
    assert values["worker"]["gracefulShutdown"] == {"enabled": True, "gracePeriodSeconds": 120}
    assert values["worker"]["terminationGracePeriodSeconds"] >= 240
    assert "additionalCatalogs" not in values and "config.properties" not in values


def test_every_file_has_the_header_naming_cluster_and_document() -> None:
    """Each generated file starts with the header; it parses back to the cluster and _id."""
    for path, content in render_examples().items():
        head = parse_header(content[:512])
        assert head is not None, path
        if path.startswith("argocd/"):
            assert head.cluster_id is None
        else:
            assert head.cluster_id == path.split("/")[1].removesuffix(".yaml")
            assert head.doc_id and head.doc_id.startswith('{"$oid"')


def test_files_without_the_header_are_not_trinogens() -> None:
    """A hand-written file, or one whose header was altered, is not recognised as generated."""
    assert parse_header(b"apiVersion: v1\n") is None
    assert parse_header(b"# Generated by hand\n") is None


def test_autoscaling_adds_ignore_differences_with_the_chart_worker_name() -> None:
    """With HPA the Application ignores the worker Deployment's replicas, named as the chart does."""
    doc = next(d for d in example_docs() if d["clusterId"] == "etl-batch")
    files = Renderer(demo_settings()).render_cluster(cluster_of(doc), {})
    app = yaml.safe_load(files["trino-applications/etl-batch.yaml"])
    assert app["spec"]["ignoreDifferences"][0]["name"] == "etl-batch-trino-worker"
    values = yaml.safe_load(files["trino-clusters/etl-batch/values.yaml"])
    assert values["server"]["autoscaling"]["enabled"] is True
    assert values["server"]["workers"] == 2


@pytest.mark.parametrize(("release", "expected"), [
    ("analytics-prod", "analytics-prod-trino-worker"),
    ("tri", "trino-worker"),  # a prefix of the chart name: the chart drops it
    ("a" * 53, ("a" * 53 + "-trino-worker")[:63]),
    ("a" * 50 + "-xy", ("a" * 50 + "-xy-trino-worker")[:63].rstrip("-")),
])
def test_chart_worker_name_follows_the_chart_helpers(release: str, expected: str) -> None:
    """The worker Deployment name is computed like the chart's trino.fullname/trino.worker."""
    assert chart_worker_name(release) == expected


PRINTABLE_TRICKY = [
    "pre-{{ .Release.Name }}-post", "{{{{", "{{- x -}}", "}}", "a: b", "#comment", "!bang",
    " leading", "trailing ", "tab\there", "back\\slash", "quote\"s'", "- dash", "yes", "null",
    "0x1F", "1e3", "Zürich", "emoji 🎉", "\u2028sep", "\x85nel", "\u00a0nbsp", "=", ":", "",
    "${NOT_ENV}", "%{x}", "{% raw %}", "[a, b]", "{a: b}", "*anchor", "&ref", "|", ">",
]


@pytest.mark.parametrize("text", PRINTABLE_TRICKY)
def test_tricky_values_reach_trino_unchanged(text: str) -> None:
    """values.yaml -> Helm tpl -> Java properties gives back exactly the document's value."""
    doc = next(d for d in example_docs() if d["clusterId"] == "adhoc-dev")
    doc["connectors"][0]["properties"]["odd.value"] = text
    doc["connectors"][0]["properties"]["odd=key:" + "x"] = text
    # made-up keys, as an unchecked platform plugin's catalog may carry: registry checks off
    settings = replace(demo_settings(), validation={"trino_properties": "off"})
    files = Renderer(settings).render_cluster(cluster_of(doc, settings), {})
    values = yaml.safe_load(files["trino-clusters/adhoc-dev/values.yaml"])
    catalog = javaprops.loads(helm_unescape(values["catalogs"]["iceberg"]))
    assert catalog["odd.value"] == text
    assert catalog["odd=key:x"] == text
    copy_props = javaprops.loads(files["trino-clusters/adhoc-dev/catalog/iceberg.properties"].decode())
    assert copy_props == catalog


@hsettings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_yaml_scalar_round_trips_any_text(text: str) -> None:
    """Any string emitted by the YAML filter parses back to itself."""
    assert yaml.safe_load(f"k: {yaml_scalar(text)}\n") == {"k": text}


@hsettings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"),
               max_size=60),
       st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=20))
def test_properties_and_helm_escaping_round_trip(value: str, key: str) -> None:
    """prop_key/prop_value + helm_escape + block YAML read back to the same key and value."""
    text = f"{prop_key(key)}={prop_value(value)}\n"
    doc = f"catalogs:\n  x: {yaml_text(helm_escape(text), 4)}\n"
    parsed = yaml.safe_load(doc)["catalogs"]["x"]
    assert javaprops.loads(helm_unescape(parsed)) == {key: value}


def test_a_template_cannot_emit_a_value_without_escaping(tmp_path: Path) -> None:
    """A custom template printing a document value raw fails with template name and line."""
    (tmp_path / "application.yaml.j2").write_text("{{ header }}\nowner: {{ cluster.owner }}\n")
    settings = replace(demo_settings(), output={"templates_dir": str(tmp_path)})
    doc = example_docs()[0]
    with pytest.raises(RenderError, match=r"application.yaml.j2:2"):
        Renderer(settings).render_cluster(cluster_of(doc, settings), {})


def test_template_override_directory_wins(tmp_path: Path) -> None:
    """A template in output.templates_dir replaces the built-in one of the same name."""
    builtin = (ROOT / "templates" / "application.yaml.j2").read_text()
    (tmp_path / "application.yaml.j2").write_text(
        builtin.replace("app.kubernetes.io/managed-by: trinogen",
                        "app.kubernetes.io/managed-by: trinogen\n    team: {{ cluster.owner | yaml }}"))
    settings = replace(demo_settings(), output={"templates_dir": str(tmp_path)})
    doc = next(d for d in example_docs() if d["clusterId"] == "adhoc-dev")
    files = Renderer(settings).render_cluster(cluster_of(doc, settings), {})
    app = yaml.safe_load(files["trino-applications/adhoc-dev.yaml"])
    assert app["metadata"]["labels"]["team"] == "growth_analytics"


def test_broken_template_yaml_is_caught_by_the_self_check(tmp_path: Path) -> None:
    """A template producing invalid YAML fails that cluster's render with a clear message."""
    (tmp_path / "application.yaml.j2").write_text("{{ header }}\nkey: [unclosed\n")
    settings = replace(demo_settings(), output={"templates_dir": str(tmp_path)})
    with pytest.raises(RenderError, match="not valid YAML"):
        Renderer(settings).render_cluster(cluster_of(example_docs()[0], settings), {})


def test_a_token_in_git_remote_is_never_committed() -> None:
    """With git.remote = https://oauth2:TOKEN@host/..., no rendered file carries the token and
    every Application names the repository without userinfo (issue 11, item 4)."""
    remote = "https://oauth2:glpat-SECRETTOKEN@git.example.com/platform/trino-gitops.git"
    settings = replace(demo_settings(), argocd={"repo_url": None}, git={"remote": remote})
    files = render_examples(settings)
    assert not [p for p, body in files.items() if b"SECRETTOKEN" in body]
    apps = [yaml.safe_load(body) for p, body in files.items()
            if p.startswith(settings.output.applications_dir)]
    urls = {s["repoURL"] for a in apps for s in a["spec"].get("sources", [a["spec"].get("source")])}
    assert "https://git.example.com/platform/trino-gitops.git" in urls
