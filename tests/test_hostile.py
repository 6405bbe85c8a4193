"""Hostile documents: each gets a clear per-cluster error or a correct, safe rendering.

The corpus (tests/hostile_corpus.py) runs once through a real `trinogen sync` subprocess and once
in-process for the precise messages; a property-based test covers the documents nobody listed.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bson
import pytest
import yaml
from bson import Binary, Code, Decimal128, Int64, ObjectId, Regex, json_util
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests import hostile_corpus as hc
from tests.conftest import FakeMongo, commit_count, git, remote_tree
from tests.javaprops import loads as load_properties
from trinogen import pipeline
from trinogen.errors import Problem
from trinogen.gitops import WorkingCopy
from trinogen.model import (
    CHART_CONFIG_KEYS,
    CHART_NODE_KEYS,
    Cluster,
    Disabled,
    Failed,
    Outcome,
    RawDocument,
    classify_all,
    document_label,
)
from trinogen.render import Renderer, RenderError
from trinogen.secrets import Placeholder, env_name, parse_value
from trinogen.settings import Settings, load_settings, replace
from trinogen.source import doc_key

SETTINGS_YAML = """\
argocd:
  repo_url: https://git.example.com/platform/trino-gitops.git
  project: trino
secrets:
  check: false
output:
  root_app: argocd/trino-clusters.yaml
# The corpus proves escaping for any key and value; Trino would refuse its made-up property
# names (tests/test_trino_validation.py proves that), but an unchecked platform plugin's
# catalog can carry any of them, so the escaping is tested with the registry checks off.
validation:
  trino_properties: "off"
"""
ROOTS = ("trino-clusters/", "trino-applications/")
ROOT_APP = "argocd/trino-clusters.yaml"
CASES = hc.corpus()
BY_NAME = {c.name: c for c in CASES}


def corpus_settings(tmp: Path, **sections: Any) -> Settings:
    """Plain settings (no defaults or profiles to mask a missing field), as the subprocess uses."""
    path = tmp / "settings.yaml"
    path.write_text(SETTINGS_YAML)
    settings = load_settings(path, environ={})
    settings = replace(settings, git={"remote": str(tmp / "remote.git"), "workdir": str(tmp / "wd")})
    return replace(settings, **sections) if sections else settings


def raw(doc: Mapping[str, Any]) -> RawDocument:
    return RawDocument(doc_key(doc["_id"]), doc)


@dataclass
class Run:
    """What the model and the renderer made of some documents (no Vault: secrets.check off)."""

    settings: Settings
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # by document key
    failed: dict[str, Failed] = field(default_factory=dict)  # by document key
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # by clusterId


def validate_and_render(settings: Settings, docs: Iterable[Mapping[str, Any]]) -> Run:
    """classify_all, then render every valid cluster; a RenderError fails only its cluster."""
    run = Run(settings)
    renderer = Renderer(settings)
    for outcome in classify_all([raw(d) for d in docs], settings):
        run.outcomes[outcome.doc_id] = outcome
        if isinstance(outcome, Failed):
            run.failed[outcome.doc_id] = outcome
        elif isinstance(outcome, Cluster):
            try:
                run.files[outcome.cluster_id] = renderer.render_cluster(outcome, {})
            except RenderError as e:
                run.failed[outcome.doc_id] = Failed(outcome.doc_id, outcome.cluster_id, (
                    Problem(outcome.cluster_id, "", str(e)),), "render")
    return run


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The whole corpus plus the good documents validated and rendered once, in-process."""
    settings = corpus_settings(tmp_path_factory.mktemp("corpus"))
    return validate_and_render(settings, [c.doc for c in CASES] + hc.good_docs())


# --- checking a rendering against the document it came from -------------------------------------


def helm_tpl(text: str) -> str:
    """What Helm's `tpl` makes of catalog text, for the one action trinogen writes ({{"{{"}}).

    Any other `{{` would be evaluated by Helm: that is a failure of the escaping.
    """
    out, i = [], 0
    while (j := text.find("{{", i)) >= 0:
        assert text.startswith('{{"{{"}}', j), f"Helm would evaluate {text[j:j + 40]!r}"
        out.append(text[i:j] + "{{")
        i = j + len('{{"{{"}}')
    return "".join(out) + text[i:]


def expected_value(text: str) -> str:
    """A property value as it must appear in a catalog: placeholders become ${ENV:...}."""
    parts = []
    for seg in parse_value(text):
        if isinstance(seg, Placeholder):
            parts.append(f"${{ENV:{env_name(seg, seg.ref)}}}")  # type: ignore[arg-type]
        else:
            parts.append(seg)
    return "".join(parts)


def assert_parses_back(doc: Mapping[str, Any], files: Mapping[str, bytes], s: Settings) -> None:
    """Every file lies in the cluster's place and parses back to exactly the document's values."""
    cid = doc["clusterId"]
    base = f"{s.output.clusters_dir}/{cid}"
    app_path = f"{s.output.applications_dir}/{cid}.yaml"
    for path in files:
        assert path.startswith(base + "/") or path == app_path, path
        assert ".." not in path.split("/"), path
    values = yaml.safe_load(files[f"{base}/values.yaml"])
    assert values["image"]["tag"] == str(doc["trinoVersion"])
    worker = doc["clusterConfig"]["worker"]
    scaling = worker.get("autoscaling")
    assert values["server"]["workers"] == (scaling["minReplicas"] if scaling else worker["replicas"])
    catalogs = values["catalogs"]
    connectors = doc.get("connectors") or []  # null is an empty list
    declared = {c["name"] for c in connectors}
    for default in ("tpch", "tpcds"):
        if default not in declared:
            assert catalogs[default] is None
    for conn in connectors:
        want = {k: expected_value(v) for k, v in conn["properties"].items()}
        text = files[f"{base}/catalog/{conn['name']}.properties"]
        assert load_properties(text.decode("utf-8")) == want  # the header is a comment
        assert load_properties(helm_tpl(catalogs[conn["name"]])) == want
    flat: dict[str, Any] = {}
    for sec, kv in (doc.get("properties") or {}).items():  # a string is one whole property
        flat.update({sec: kv} if isinstance(kv, str) else {f"{sec}.{k}": v for k, v in kv.items()})
    lines = values.get("additionalConfigProperties", []) + values.get("additionalNodeProperties", [])
    rendered: dict[str, str] = {}
    for line in lines:
        rendered.update(load_properties(line))
    for key, value in flat.items():
        if key in CHART_CONFIG_KEYS or key in CHART_NODE_KEYS:
            continue
        assert rendered.pop(key) == expected_value(value), key  # placeholders: ${ENV:...}
    assert not rendered  # nothing invented
    if "query.max-memory-per-node" in flat:
        for role in ("coordinator", "worker"):
            got = values[role]["config"]["query"]["maxMemoryPerNode"]
            assert got == flat["query.max-memory-per-node"]
    app = yaml.safe_load(files[app_path])
    assert app["metadata"]["name"] == s.argocd.app_name_prefix + cid
    assert app["metadata"]["labels"]["trinogen.io/owner"] == str(doc["owner"])
    spec = app["spec"]
    assert spec["project"] == s.argocd.project
    assert spec["destination"] == {"server": s.argocd.destination_server, "namespace": f"trino-{cid}"}
    assert spec["sources"][0]["repoURL"] == s.chart.repo_url
    assert spec["sources"][0]["helm"]["valueFiles"] == [f"$values/{base}/values.yaml"]
    assert all(src["repoURL"] == s.repo_url for src in spec["sources"][1:])


PRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


def assert_clear_problems(failed: Failed, doc: Mapping[str, Any]) -> None:
    """Each problem names the document, stays on one printable line and has a bounded length."""
    label = document_label(raw(doc))
    assert failed.problems
    for p in failed.problems:
        assert p.cluster == label or p.cluster == label[:100] + "...", (p.cluster, label)
        text = str(p)
        assert text.startswith(f"cluster {p.cluster}: ")
        assert not PRINTABLE.search(text), text
        assert len(text) < 1200, text[:200]
        assert p.message.strip()


# --- the corpus ---------------------------------------------------------------------------------


def test_corpus_covers_every_category_with_at_least_50_documents() -> None:
    """The corpus is big enough and spans every class of hostile input the issue lists."""
    categories = {c.category for c in CASES}
    assert len(CASES) >= 50
    assert categories >= {"types", "unknown-fields", "cluster-id", "connector-name", "properties",
                          "huge", "nan-infinity", "bson-types", "duplicates", "enabled", "scope"}
    assert len({c.name for c in CASES}) == len(CASES)
    assert len({doc_key(c.doc_id) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_document_gets_a_clear_error_or_a_safe_rendering(
    case: hc.Case, corpus_run: Run
) -> None:
    """Each corpus document ends as its expected outcome; errors name it and the field."""
    key = doc_key(case.doc_id)
    failed = corpus_run.failed.get(key)
    outcome = corpus_run.outcomes[key]
    if case.expect == "fail":
        assert failed is not None, f"{case.name} was not refused"
        assert failed.stage == "validate"
        assert_clear_problems(failed, case.doc)
        assert case.field in [p.field for p in failed.problems], failed.problems
    elif case.expect == "disabled":
        assert isinstance(outcome, Disabled) and failed is None
    else:
        assert failed is None, failed
        assert isinstance(outcome, Cluster)
        assert_parses_back(case.doc, corpus_run.files[case.doc["clusterId"]], corpus_run.settings)


def test_good_documents_render_next_to_the_corpus(corpus_run: Run) -> None:
    """The healthy documents render in the same run as every hostile one."""
    for doc in hc.good_docs():
        assert_parses_back(doc, corpus_run.files[doc["clusterId"]], corpus_run.settings)


def test_unknown_fields_warn_mode_renders_and_names_the_field(tmp_path: Path) -> None:
    """validation.unknown_fields: warn turns unknown fields into warnings; reserved fields still fail."""
    settings = corpus_settings(tmp_path, validation={"unknown_fields": "warn"})
    names = ["unknown-top", "unknown-worker", "unknown-connector", "unknown-jvm"]
    outcomes = classify_all([raw(BY_NAME[n].doc) for n in names], settings)
    for name, outcome in zip(names, outcomes, strict=True):
        assert isinstance(outcome, Cluster), outcome
        assert [w.field for w in outcome.warnings] == [BY_NAME[name].field]
        assert "ignored" in outcome.warnings[0].message
    reserved = classify_all([raw(BY_NAME["unknown-nested-namespace"].doc)], settings)[0]
    assert isinstance(reserved, Failed)


def test_argo_cd_placement_comes_from_the_settings(tmp_path: Path) -> None:
    """Project, repositories and namespace follow the settings; a destination only from the allow-list."""
    settings = corpus_settings(tmp_path, argocd={
        "project": "data-platform", "repo_url": "https://git.example.com/gitops.git",
        "allowed_destinations": ("edge-cluster",), "destination_server": "https://kubernetes.default.svc"})
    doc = hc.base("edge", destination={"name": "edge-cluster"})
    run = validate_and_render(settings, [doc, BY_NAME["destination-server"].doc])
    app = yaml.safe_load(run.files["edge"]["trino-applications/edge.yaml"])
    assert app["spec"]["project"] == "data-platform"
    assert app["spec"]["destination"] == {"name": "edge-cluster", "namespace": "trino-edge"}
    assert {s["repoURL"] for s in app["spec"]["sources"]} == {
        settings.chart.repo_url, "https://git.example.com/gitops.git"}
    assert [f.cluster_id for f in run.failed.values()] == ["destination-server"]


@pytest.mark.parametrize("ref, ok", [
    ("secret/shared/db#password", False),
    ("secret/teams/team-a/db#password", True),
    ("secret/teams/team-b/db#password", False),
    ("secret/teams/team-a#password", True),
])
def test_settings_refs_and_owner_scope_are_enforced(tmp_path: Path, ref: str, ok: bool) -> None:
    """A {{ NAME }} mapped by the settings is still checked against the cluster's scope."""
    settings = corpus_settings(tmp_path, secrets={
        "check": False, "refs": {"DB": ref}, "scope": ("secret/teams/{owner}",)})
    doc = hc.base("scoped", connectors=[hc.connector("db", **{"connection-password": "{{ DB }}"})])
    outcome = classify_all([raw(doc)], settings)[0]
    assert isinstance(outcome, Cluster) is ok
    if not ok:
        assert isinstance(outcome, Failed)
        assert outcome.problems[0].field == 'connectors["db"].properties.connection-password'
        assert "secret/teams/team-a" in outcome.problems[0].message


def test_a_broken_document_keeps_its_clusters_files_byte_for_byte(tmp_path: Path) -> None:
    """When a synced document turns hostile its files stay exactly; the other clusters still update."""
    settings = corpus_settings(tmp_path)
    git("init", "--quiet", "--bare", "--initial-branch=main", str(tmp_path / "remote.git"))
    docs = hc.good_docs()
    mongo = FakeMongo(settings, docs)
    repo = WorkingCopy(settings.git, settings.git.remote or "", tmp_path / "wd")
    pipeline.sync(settings, mongo.source, repo)
    before = remote_tree(tmp_path / "remote.git")
    for workers, hostile in enumerate(({"enabled": "false"}, {"connectors": "x" * 10_000_000},
                                       {"project": "admin", "namespace": "kube-system"},
                                       {"clusterId": "../good-two"}), start=3):
        mongo.coll.replace_one({"_id": docs[1]["_id"]}, {**docs[1], **hostile})
        mongo.coll.update_one({"_id": docs[0]["_id"]},
                              {"$set": {"clusterConfig.worker.replicas": workers}})
        report = pipeline.sync(settings, mongo.source, repo)
        assert [f.doc_id for f in report.failed] == ['"good-two"']
        tree = remote_tree(tmp_path / "remote.git")
        assert {p: b for p, b in tree.items() if "good-two" in p} == {
            p: b for p, b in before.items() if "good-two" in p}
        assert f"workers: {workers}" in tree["trino-clusters/good-one/values.yaml"].decode()


def test_an_id_at_the_length_limit_survives_in_the_headers(tmp_path: Path) -> None:
    """An _id as long as allowed is read back from the file headers, so its failing document keeps its files."""
    settings = corpus_settings(tmp_path)
    git("init", "--quiet", "--bare", "--initial-branch=main", str(tmp_path / "remote.git"))
    doc = hc.base("long-id", _id="i" * 254)  # 256 characters as Extended JSON: the limit
    assert len(doc_key(doc["_id"])) == 256
    mongo = FakeMongo(settings, [doc, *hc.good_docs()])
    repo = WorkingCopy(settings.git, settings.git.remote or "", tmp_path / "wd")
    pipeline.sync(settings, mongo.source, repo)
    kept = {p: b for p, b in remote_tree(tmp_path / "remote.git").items() if "long-id" in p}
    assert kept
    mongo.coll.update_one({"_id": doc["_id"]}, {"$set": {"clusterId": "Long-ID"}})  # now invalid
    report = pipeline.sync(settings, mongo.source, repo)
    assert [f.cluster_id for f in report.failed] == [None]
    assert {p: b for p, b in remote_tree(tmp_path / "remote.git").items() if "long-id" in p} == kept


@pytest.mark.slow
def test_corpus_through_one_real_sync(tmp_path: Path) -> None:
    """One `trinogen sync` over corpus + good documents: exit 1, every bad one named, good ones land, nothing strays."""
    remote, seed, work = tmp_path / "remote.git", tmp_path / "seed", tmp_path / "wd"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    (tmp_path / "settings.yaml").write_text(SETTINGS_YAML)
    seed.mkdir()
    docs = [c.doc for c in CASES] + hc.good_docs()
    for i, doc in enumerate(docs):
        (seed / f"{i:03}.json").write_text(
            json_util.dumps(doc, json_options=json_util.CANONICAL_JSON_OPTIONS))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRINOGEN_")}
    env.update({"TRINOGEN_MONGODB_URI": "mongomock://", "TRINOGEN_MONGODB_SEED_DIR": str(seed),
                "TRINOGEN_GIT_REMOTE": str(remote), "TRINOGEN_GIT_WORKDIR": str(work)})
    before = {p for p in tmp_path.parent.iterdir()}
    run = subprocess.run([sys.executable, "-m", "trinogen.cli", "--config",
                          str(tmp_path / "settings.yaml"), "sync"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output[-3000:]
    assert "Traceback" not in output
    failed_section = run.stdout.split("  FAILED", 1)[1]
    for case in CASES:
        if case.expect != "fail":
            continue
        label = hc.label(case, doc_key)
        name = label if not label.startswith("_id=") else f"_id={doc_key(case.doc_id)}"
        assert f"  FAILED   {name} (" in run.stdout, f"{case.name} not named"
        # Over mongodb.max_document_bytes a document is refused by its size, before any field
        # is read (issue 19); in-process (test_corpus_cases) the field is named.
        assert case.field in failed_section or (
            len(bson.encode(case.doc)) > 4 * 1024 * 1024 and f"{len(bson.encode(case.doc)):,} "
            "bytes as BSON" in failed_section), case.name
    tree = remote_tree(remote)
    assert all(p.startswith(ROOTS) or p == ROOT_APP for p in tree), sorted(tree)
    landed = {p.split("/")[1].removesuffix(".yaml") for p in tree if p.startswith(ROOTS[1])}
    renderable = {c.doc["clusterId"] for c in CASES if c.expect == "render"}
    assert landed == renderable | {d["clusterId"] for d in hc.good_docs()}
    settings = corpus_settings(tmp_path)
    for doc in [c.doc for c in CASES if c.expect == "render"] + hc.good_docs():
        files = {p: b for p, b in tree.items()
                 if p.startswith(f"trino-clusters/{doc['clusterId']}/")
                 or p == f"trino-applications/{doc['clusterId']}.yaml"}
        assert_parses_back(doc, files, settings)
    # nothing written outside the output roots: not in the working copy (if it checks files out
    # at all), not next to it
    checked_out = not (work / "HEAD").is_file()
    stray = [p.relative_to(work).as_posix() for p in work.rglob("*")
             if checked_out and p.is_file() and ".git" not in p.relative_to(work).parts]
    assert all(p.startswith(ROOTS) or p == ROOT_APP for p in stray), stray
    assert {p.name for p in tmp_path.iterdir()} <= {"remote.git", "seed", "wd", "settings.yaml",
                                                   "wd.lock"}
    assert {p for p in tmp_path.parent.iterdir()} == before
    assert commit_count(remote) == 1
    # a second run over the same documents converges: no new commit, same failures
    mongo = FakeMongo(settings, docs)
    again = pipeline.sync(settings, mongo.source, WorkingCopy(settings.git, str(remote), work))
    assert again.plan is not None and again.plan.empty
    assert len(again.failed) == len(run.stdout.split("\n  FAILED")) - 1
    assert commit_count(remote) == 1


@pytest.mark.slow
def test_a_seed_document_mongodb_would_refuse_is_reported_not_a_crash(tmp_path: Path) -> None:
    """Seed files with documents MongoDB cannot store: each named, no traceback, the good cluster lands."""
    remote, seed = tmp_path / "remote.git", tmp_path / "seed"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    (tmp_path / "settings.yaml").write_text(SETTINGS_YAML)
    seed.mkdir()
    good = hc.good_docs()[0]
    (seed / "good.json").write_text(json_util.dumps(good))
    bad = {
        "dollar": '{"_id": "s-dollar", "clusterId": "s-dollar", "$where": "sleep(1000)"}',
        "nul-key": '{"_id": "s-nul", "clusterId": "s-nul", "a\\u0000b": 1}',
        "big-int": '{"_id": "s-big", "clusterId": "s-big", "x": 123456789012345678901234567890}',
        "decimal-id": '{"_id": {"$numberDecimal": "1.5"}, "clusterId": "s-dec"}',
        "deep": '{"_id": "s-deep", "x": ' + "[" * 5000 + "]" * 5000 + "}",
    }
    for name, text in bad.items():
        (seed / f"{name}.json").write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRINOGEN_")}
    env.update({"TRINOGEN_MONGODB_URI": "mongomock://", "TRINOGEN_MONGODB_SEED_DIR": str(seed),
                "TRINOGEN_GIT_REMOTE": str(remote), "TRINOGEN_GIT_WORKDIR": str(tmp_path / "wd")})
    run = subprocess.run([sys.executable, "-m", "trinogen.cli", "--config",
                          str(tmp_path / "settings.yaml"), "sync"], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    output = run.stdout + run.stderr
    assert "Traceback" not in output and run.returncode in (0, 1), output[-2000:]
    for name in bad:
        assert f"{name}.json" in output
    assert "trino-applications/good-one.yaml" in remote_tree(remote)


def test_render_of_the_corpus_writes_only_under_the_output_roots(tmp_path: Path) -> None:
    """`render --out` with the corpus writes the good clusters' files under the roots and nothing else."""
    settings = corpus_settings(tmp_path)
    docs = [c.doc for c in CASES if not c.big] + hc.good_docs()
    out = tmp_path / "out"
    report = pipeline.render(settings, FakeMongo(settings, docs).source, out)
    written = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    assert written and all(p.startswith(ROOTS) or p == ROOT_APP for p in written), written
    assert {p.name for p in tmp_path.iterdir()} == {"out", "settings.yaml"}
    assert len(report.failed) == sum(c.expect == "fail" for c in CASES if not c.big)


# --- any document: renders exactly, or fails with trinogen's own error -----------------------

_TRICKY = sorted({*hc.YAML_SPECIALS.values(), *hc.TEMPLATE_TEXT.values(), *hc.ODD_TEXT.values(),
                  "{{ DB_PASSWORD }}", "{{ vault:secret/trino/prop#password }}", "x{{ A }}y{{ B }}",
                  "{{ vault:bad }}", "${ENV:PATH}", "a\nb", "\r", "\x00", "=", ":", "#", "!", "\\",
                  " ", "", "\u2028", "\ud7ff", "\U0010ffff"})
# Mostly well-formed parts with hostile text in them (so that many documents get as far as the
# renderer), plus arbitrary BSON values anywhere.


def mostly(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`common` three times in four (one_of would treat repeated strategies as one)."""
    return st.sampled_from((common, common, common, rare)).flatmap(lambda chosen: chosen)


_line = st.text(st.characters(blacklist_characters="\n\r\x00"), max_size=20)
_text = mostly(_line, st.one_of(st.sampled_from(_TRICKY), st.text(max_size=10)))
_keys = st.text(st.characters(blacklist_characters="\x00"), max_size=12)  # BSON keys have no NUL
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(), _text,
    st.sampled_from([ObjectId("653a1a7b8e1f4a1e9c5d8e1a"), Decimal128("1"), Binary(b"x"),
                     Int64(3), Regex("a"), Code("x"), datetime.datetime(2024, 1, 1)]),
)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_keys, inner, max_size=3), max_leaves=6)
_prop_keys = mostly(st.from_regex(r"[a-z][a-z0-9.-]{0,15}", fullmatch=True), st.one_of(
    st.text(st.characters(blacklist_categories=("Zs", "Cc")), min_size=1, max_size=8),
    st.sampled_from(["a=b", "c:d", "#x", "!x", "x\\y", "\u043a\u043b\u044e\u0447", "k\u2028"]),
    _keys,
))
_prop_values = mostly(_text, mostly(_text, _values))
_names = mostly(st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True), _text)
_connectors = st.lists(st.fixed_dictionaries({
    "name": _names,
    "properties": st.dictionaries(_prop_keys, _prop_values, max_size=5).map(
        lambda p: {"connector.name": "memory", **p}),
}), min_size=1, max_size=3, unique_by=lambda c: str(c["name"]).lower())
_sections = st.dictionaries(
    mostly(st.sampled_from(["query", "exchange", "optimizer", "a=b", "node"]), _keys),
    st.dictionaries(_prop_keys, _prop_values, min_size=1, max_size=3), min_size=1, max_size=3)
_PATHS = ["owner", "enabled", "trinoVersion", "clusterConfig", "clusterConfig.coordinator",
          "clusterConfig.worker.replicas", "clusterConfig.worker.jvm",
          "clusterConfig.worker.jvm.maxHeapSize", "clusterConfig.coordinator.resources",
          "clusterConfig.worker.resources.limits", "clusterConfig.worker.resources.limits.memory",
          "clusterConfig.worker.autoscaling", "clusterConfig.worker.gracefulShutdown",
          "connectors", "properties", "destination", "profile", "extra"]


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    valid_id = st.from_regex(r"[a-z]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
    cid = draw(mostly(valid_id, _text))
    doc = hc.base("x", _id=draw(st.one_of(st.text(max_size=10), st.integers(0, 10**6))),
                  clusterId=cid)
    doc["connectors"] = draw(_connectors)
    doc["properties"] = draw(_sections)
    changes = st.lists(st.tuples(st.sampled_from(_PATHS), _values), max_size=2)
    for path, value in draw(mostly(st.just([]), changes)):
        try:
            hc.put(doc, path, value)
        except (KeyError, TypeError, IndexError, ValueError):
            pass  # an earlier change removed the parent: nothing to set
    return doc


_PROPERTY_SETTINGS = replace(
    load_settings(None, environ={}),
    git={"remote": "https://git.example.com/gitops.git"}, secrets={"check": False},
    validation={"trino_properties": "off"},  # random property names: escaping, not Trino
)


@hsettings(max_examples=150, deadline=None,
           suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(doc=documents())
def test_any_document_renders_exactly_or_fails_with_trinogens_error(doc: dict[str, Any]) -> None:
    """Whatever the document, validation + rendering either give files that parse back to its
    values, or a per-cluster failure naming it; never an exception."""
    settings = _PROPERTY_SETTINGS
    run = validate_and_render(settings, [copy.deepcopy(doc)])
    (outcome,) = run.outcomes.values()
    if run.failed:
        (failed,) = run.failed.values()
        assert failed.stage == "validate", failed  # the model never passes what cannot render
        assert_clear_problems(failed, doc)
    elif isinstance(outcome, Cluster):
        assert_parses_back(doc, run.files[outcome.cluster_id], settings)
    else:
        assert isinstance(outcome, Disabled) and doc.get("enabled") is False


def test_property_test_sees_both_outcomes() -> None:
    """The document strategy is not degenerate: it yields valid documents with connectors and
    properties as well as invalid ones."""
    seen: Counter[str] = Counter()

    @hsettings(max_examples=80, deadline=None, derandomize=True, database=None)
    @given(doc=documents())
    def sample(doc: dict[str, Any]) -> None:
        outcome = classify_all([raw(doc)], _PROPERTY_SETTINGS)[0]
        seen[type(outcome).__name__] += 1
        if isinstance(outcome, Cluster) and outcome.connectors and outcome.config_properties:
            seen["rich"] += 1

    sample()
    assert seen["Cluster"] >= 20 and seen["Failed"] >= 20 and seen["rich"] >= 5, seen


def test_output_json_names_documents_like_the_text(corpus_run: Run) -> None:
    """The JSON report carries every failure with its documentId and field paths."""
    data = pipeline.Report("validate", failed=list(corpus_run.failed.values())).to_json()
    text = json.dumps(data)
    assert "Traceback" not in text
    ids = {f["documentId"] for f in data["clusters"]["failed"]}
    assert ids == {doc_key(c.doc_id) for c in CASES if c.expect == "fail"}


# Argo CD and Helm read these annotations on any object a chart or trinogen renders: a hook
# (`argocd.argoproj.io/hook: PreSync`, `helm.sh/hook`) runs outside the sync's order and is
# deleted and recreated by Argo CD, and a sync option (Prune=false, Force=true, Replace=true,
# ServerSideApply=false) changes how the object is applied. Only trinogen's own choices may
# carry them (the sync waves of its manifests, a Recreate coordinator's Replace=true).
ARGO_ANNOTATIONS = {
    "argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
    "argocd.argoproj.io/sync-options": "Prune=false,Force=true,Replace=true",
    "argocd.argoproj.io/sync-wave": "-100", "argocd.argoproj.io/compare-options": "IgnoreExtraneous",
    "helm.sh/hook": "pre-install", "helm.sh/resource-policy": "keep",
}
ANNOTATION_FIELDS = [
    "annotations", "metadata", "podAnnotations", "clusterConfig.coordinator.annotations",
    "clusterConfig.coordinator.deployment", "clusterConfig.coordinator.podAnnotations",
    "clusterConfig.worker.annotations", "clusterConfig.worker.deployment", "serviceAccount",
    "ingress", "service", "coordinator", "server", "connectors.0.annotations",
]
_ARGO_KEY = re.compile(r"(?:argocd\.argoproj\.io|helm\.sh)/[A-Za-z0-9_.-]+")


@pytest.mark.parametrize("path", ANNOTATION_FIELDS)
@pytest.mark.parametrize("mode", ["error", "warn"])
def test_no_document_field_sets_an_argo_cd_or_helm_annotation(tmp_path: Path, path: str,
                                                              mode: str) -> None:
    """Hook and sync-option annotations written into any annotations-shaped field fail the
    document naming the field, or (unknown fields in warn mode) are dropped: no rendered
    object carries an Argo CD or Helm annotation but the sync waves trinogen writes."""
    doc = base_with(path, {"annotations": dict(ARGO_ANNOTATIONS), **ARGO_ANNOTATIONS})
    settings = corpus_settings(tmp_path, validation={"unknown_fields": mode})
    run = validate_and_render(settings, [doc])
    if mode == "error" or run.failed:
        failed = next(iter(run.failed.values()), None)
        assert failed is not None, run.outcomes
        assert any(p.field.startswith(path.split(".")[0]) for p in failed.problems), failed
        return
    keys = {k for text in run.files[doc["clusterId"]].values()
            for k in _ARGO_KEY.findall(text.decode())}
    assert keys <= {"argocd.argoproj.io/sync-wave"}, keys
    assert b"-100" not in b"".join(run.files[doc["clusterId"]].values())


def base_with(path: str, value: Any) -> dict[str, Any]:
    doc = hc.base("annotated")
    return hc.put(doc, path, value) if "." not in path or path.split(".")[0] in doc \
        else {**doc, path.split(".")[0]: value}
