"""The catalog library (issue 14 item 1): shared catalogs referenced by name, per-cluster
overrides, owner scope, the render cache knowing who uses what, and the failure rules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeMongo, commit_count, example_docs, git, settings_for
from tests.fakes import FakeSource
from trinogen import pipeline
from trinogen.gitops import WorkingCopy
from trinogen.model import Checker, Cluster, Failed, RawDocument, classify
from trinogen.model.library import (
    Library,
    SharedCatalog,
    merge_overrides,
    parse_library,
    references,
)
from trinogen.pipeline import SyncOptions
from trinogen.secrets import SecretUse
from trinogen.settings import MongoSettings, Settings
from trinogen.source import connect, doc_key

LAKE = {"_id": "cat-lake", "name": "lake-hive", "owner": "data_platform",
        "shareWith": ["growth_analytics", "etl_team"],
        "properties": {"connector.name": "hive",
                       "hive.metastore.uri": "thrift://metastore.data.svc:9083",
                       "hive.max-partitions-per-scan": "1000",
                       "fs.native-s3.enabled": "true", "s3.region": "eu-west-1"}}
WAREHOUSE = {"_id": "cat-dw", "name": "dw", "owner": "data_platform", "shareWith": ["*"],
             "properties": {"connector.name": "postgresql",
                            "connection-url": "jdbc:postgresql://dw.data.svc:5432/dw",
                            "connection-user": "trino",
                            "connection-password": "{{ DW_PASSWORD }}"}}


def cluster_doc(cid: str, owner: str, connectors: list[dict[str, Any]]) -> dict[str, Any]:
    return {"_id": f"doc-{cid}", "clusterId": cid, "owner": owner, "enabled": True,
            "profile": "small", "connectors": connectors}


def library(*docs: dict[str, Any]) -> Library:
    return parse_library([RawDocument(doc_key(d["_id"]), d) for d in docs])


def classified(doc: dict[str, Any], lib: Library, settings: Settings | None = None) -> Any:
    from tests.conftest import demo_settings

    return classify(RawDocument(doc_key(doc["_id"]), doc), settings or demo_settings(), lib)


def props_of(cluster: Cluster, name: str) -> dict[str, str]:
    (conn,) = [c for c in cluster.connectors if c.name == name]
    return {k: "".join(s if isinstance(s, str) else s.placeholder.text for s in segs)
            for k, segs in conn.properties}


def messages(outcome: Any) -> list[str]:
    assert isinstance(outcome, Failed), outcome
    return [f"{p.field}: {p.message}" for p in outcome.problems]


# --- pure decisions -------------------------------------------------------------------------


@pytest.mark.parametrize(("overrides", "expected"), [
    ({}, {"connector.name": "hive", "a": "1", "b": "2"}),
    ({"a": "9"}, {"connector.name": "hive", "a": "9", "b": "2"}),
    ({"c": "3"}, {"connector.name": "hive", "a": "1", "b": "2", "c": "3"}),
    ({"b": None}, {"connector.name": "hive", "a": "1"}),
    ({"a": None, "b": None, "c": "x"}, {"connector.name": "hive", "c": "x"}),
])
def test_overrides_replace_add_and_remove_single_properties(
    overrides: dict[str, Any], expected: dict[str, str]
) -> None:
    """An override replaces or adds one property, null removes one; the rest stay shared."""
    c = Checker("x", "error")
    assert merge_overrides({"connector.name": "hive", "a": "1", "b": "2"}, overrides,
                           'connectors["h"]', c) == expected
    assert c.problems == []


@pytest.mark.parametrize(("overrides", "field", "words"), [
    ({"connector.name": "mysql"}, 'connectors["h"].properties["connector.name"]',
     "cannot be overridden"),
    ({"connector.name": None}, 'connectors["h"].properties["connector.name"]',
     "cannot be overridden"),
    ({"zzz": None}, 'connectors["h"].properties.zzz', "has no \"zzz\""),
])
def test_refused_overrides_name_the_property(overrides: dict[str, Any], field: str,
                                             words: str) -> None:
    """Overriding the connector, or removing a property the catalog lacks, is an error there."""
    c = Checker("x", "error")
    assert merge_overrides({"connector.name": "hive"}, overrides, 'connectors["h"]', c) is None
    assert [(p.field, words in p.message) for p in c.problems] == [(field, True)]


@pytest.mark.parametrize(("owner", "share_with", "allowed"), [
    ("data_platform", set(), True),  # the catalog's own owner
    ("etl_team", set(), False),
    ("etl_team", {"etl_team"}, True),
    ("etl_team", {"growth"}, False),
    ("etl_team", {"*"}, True),
    ("ETL_TEAM", {"etl_team"}, False),  # owners are compared exactly, as labels are
])
def test_owner_scope(owner: str, share_with: set[str], allowed: bool) -> None:
    """The owner, an owner listed in shareWith, or everyone with "*" may use a catalog."""
    cat = SharedCatalog("id", "lake", "data_platform", {}, frozenset(share_with))
    assert cat.may_use(owner) is allowed


@pytest.mark.parametrize(("body", "profiles", "defaults", "expected"), [
    ({"connectors": [{"shared": "a"}, {"name": "x"}, {"shared": "b"}]}, {}, {}, {"a", "b"}),
    ({"connectors": [{"name": "x", "properties": {}}]}, {}, {}, set()),
    ({"profile": "p"}, {"p": {"connectors": [{"shared": "c"}]}}, {}, {"c"}),
    ({}, {}, {"connectors": [{"shared": "d"}]}, {"d"}),
    ({"connectors": "junk"}, {}, {}, set()),
    ({"connectors": [{"shared": 5}]}, {}, {}, set()),
])
def test_references_are_found_in_every_layer(body: dict[str, Any], profiles: dict[str, Any],
                                             defaults: dict[str, Any], expected: set[str]) -> None:
    """A document may reach a shared catalog through its own connectors, its profile or the defaults."""
    assert references(body, defaults, profiles) == expected


@pytest.mark.parametrize(("doc", "field", "words"), [
    ({"_id": "c1", "owner": "o", "properties": {"connector.name": "x"}}, "name", "is required"),
    ({"_id": "c1", "name": "a b", "owner": "o", "properties": {"connector.name": "x"}}, "name",
     "is not valid"),
    ({"_id": "c1", "name": "n", "properties": {"connector.name": "x"}}, "owner", "is required"),
    ({"_id": "c1", "name": "n", "owner": "o", "properties": {}}, "properties", "connector.name"),
    ({"_id": "c1", "name": "n", "owner": "o", "properties": {"connector.name": 5}},
     'properties["connector.name"]', "must be a string"),
    ({"_id": "c1", "name": "n", "owner": "o", "properties": "x"}, "properties", "must be an object"),
    ({"_id": "c1", "name": "n", "owner": "o", "properties": {"connector.name": "x"},
      "shareWith": "all"}, "shareWith", "must be a list"),
    ({"_id": "c1", "name": "n", "owner": "o", "properties": {"connector.name": "x"},
      "shareWith": ["a b"]}, "shareWith[0]", "is not valid"),
    ({"_id": "c1", "name": "n", "owner": "o", "properties": {"connector.name": "x"}, "shared": 1},
     "shared", "unknown field"),
])
def test_invalid_catalog_documents_are_reported_by_name(doc: dict[str, Any], field: str,
                                                        words: str) -> None:
    """Each invalid catalog document is one failure naming the catalog (or its _id) and the field."""
    lib = library(doc)
    (failed,) = lib.failed
    assert failed.cluster_id is None and failed.stage == "catalog"
    assert failed.doc_id == 'catalog:"c1"'
    label = f"catalog {doc['name']}" if doc.get("name") == "n" else 'catalog _id="c1"'
    assert [(p.cluster, p.field) for p in failed.problems] == [(label, field)]
    assert words in failed.problems[0].message
    assert lib.catalogs == {}


# What a line of a Trino properties file can hold as a name: a non-empty run of printable
# characters, no whitespace (Java ends a key at one), no lone surrogate (not UTF-8), 256 at most.
PROPERTY_NAMES = [
    ("hive.metastore.uri", True), ("ünïcode.name", True), ("x" * 256, True),
    ("", False), ("a b", False), ("a\tb", False), ("a\nb", False), ("a\rb", False),
    ("a\x00b", False), ("a\x7fb", False), ("a\x85b", False), ("a\u2028b", False),
    ("a\u00a0b", False), ("lone\ud800", False), ("x" * 257, False),
]


@pytest.mark.parametrize(("key", "ok"), PROPERTY_NAMES)
def test_the_library_refuses_exactly_the_property_names_a_cluster_refuses(key: str,
                                                                           ok: bool) -> None:
    """One rule for property names: a shared catalog, a cluster's own catalog and the server
    properties each refuse the same names, so no name enters the library to fail its users."""
    from trinogen.model.properties import properties

    rule = "property names may not be empty or contain spaces or control characters"
    lib = library({"_id": "c1", "name": "n", "owner": "o",
                   "properties": {"connector.name": "memory", key: "1"}})
    assert (rule in " ".join(p.message for f in lib.failed for p in f.problems)) is not ok
    own = classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "m", "properties": {"connector.name": "memory", key: "1"}}]), lib)
    own_problems = own.problems if isinstance(own, Failed) else ()
    assert any(rule in p.message for p in own_problems) is not ok
    c = Checker("adhoc", "error")
    properties({key: "1"}, "properties", c, required=False)
    assert any(rule in p.message for p in c.problems) is not ok


def test_a_name_claimed_twice_is_unusable_for_both() -> None:
    """Two catalog documents with one name are both reported, and neither is used."""
    lib = library(LAKE, {**LAKE, "_id": "cat-lake-2"})
    assert "lake-hive" not in lib.catalogs
    assert sorted(f.doc_id for f in lib.failed) == ['catalog:"cat-lake"', 'catalog:"cat-lake-2"']
    assert "more than one" in lib.broken["lake-hive"]


# --- resolution in a cluster document ---------------------------------------------------------


def test_a_reference_merges_the_shared_properties_with_the_overrides() -> None:
    """The catalog of a reference is the shared one with the entry's overrides applied."""
    doc = cluster_doc("adhoc", "growth_analytics", [
        {"name": "hive", "shared": "lake-hive",
         "properties": {"hive.max-partitions-per-scan": "5000", "s3.region": None}}])
    outcome = classified(doc, library(LAKE))
    assert isinstance(outcome, Cluster), outcome
    expected = {**LAKE["properties"], "hive.max-partitions-per-scan": "5000"}
    del expected["s3.region"]
    assert props_of(outcome, "hive") == expected


def test_the_catalog_name_defaults_to_the_shared_name() -> None:
    """A reference without `name` names the catalog after the shared one."""
    outcome = classified(cluster_doc("adhoc", "growth_analytics", [{"shared": "lake-hive"}]),
                         library(LAKE))
    assert isinstance(outcome, Cluster) and [c.name for c in outcome.connectors] == ["lake-hive"]


def test_placeholders_bind_with_the_using_clusters_scope() -> None:
    """A shared placeholder reads the using cluster's own secret, never the catalog owner's."""
    outcome = classified(cluster_doc("etl-x", "etl_team", [{"name": "dw", "shared": "dw"}]),
                         library(WAREHOUSE))
    assert isinstance(outcome, Cluster), outcome
    (use,) = [s for _, segs in outcome.connectors[0].properties for s in segs
              if isinstance(s, SecretUse)]
    assert use.ref.secret_path == "secret/trino/etl-x"  # the demo's default_ref: the cluster's


@pytest.mark.parametrize(("lib_docs", "entry", "field", "words"), [
    ((LAKE,), {"name": "hive", "shared": "nope"}, "connectors[0].shared",
     'shared catalog "nope" does not exist in trino_catalogs'),
    ((), {"name": "hive", "shared": "lake-hive"}, "connectors[0].shared",
     'shared catalog "lake-hive" does not exist'),
    ((dict(LAKE, shareWith=[]),), {"name": "hive", "shared": "lake-hive"},
     "connectors[0].shared", 'is not shared with owner "growth_analytics"'),
    ((dict(LAKE, properties="broken"),), {"name": "hive", "shared": "lake-hive"},
     "connectors[0].shared", 'shared catalog "lake-hive" is invalid (its document _id="cat-lake"'),
    ((LAKE,), {"name": "hive", "shared": "lake-hive", "propertys": {}}, "connectors[0].propertys",
     "unknown field"),
    ((LAKE,), {"name": "hive", "shared": "lake-hive", "properties": ["x"]},
     "connectors[0].properties", "must be an object"),
    ((LAKE,), {"name": "hive", "shared": "lake-hive", "properties": {"hive.no-such": "1"}},
     'connectors["hive"].properties["hive.no-such"]', ""),
    ((LAKE,), {"name": "hive", "shared": 5}, "connectors[0].shared", "must be a string"),
    ((LAKE,), {"name": "hive", "shared": "lake hive"}, "connectors[0].shared", "is not valid"),
    ((LAKE,), {"name": "system", "shared": "lake-hive"}, 'connectors[0].name', "reserved"),
    ((LAKE,), {"name": "hive", "shared": "lake-hive", "properties": {"s3.region": "a\nb"}},
     'connectors["hive"].properties["s3.region"]', "newline"),
])
def test_unusable_references_fail_the_cluster_naming_field_and_catalog(
    lib_docs: tuple[dict[str, Any], ...], entry: dict[str, Any], field: str, words: str
) -> None:
    """A missing, unshared or invalid catalog, or a bad override, fails the cluster there."""
    outcome = classified(cluster_doc("adhoc", "growth_analytics", [entry]), library(*lib_docs))
    found = messages(outcome)
    assert outcome.cluster_id == "adhoc"
    assert any(m.startswith(f"{field}: ") and words in m for m in found), found


# --- sync end to end on mongomock and real git -------------------------------------------------


class World:
    """Examples plus clusters using the library; mongomock for both collections; real git."""

    USERS = ("lake-a", "lake-b")

    def __init__(self, tmp_path: Path) -> None:
        self.remote = tmp_path / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.settings = settings_for(self.remote, tmp_path)
        docs = [*example_docs(),
                cluster_doc("lake-a", "growth_analytics", [
                    {"name": "hive", "shared": "lake-hive",
                     "properties": {"hive.max-partitions-per-scan": "5000"}}]),
                cluster_doc("lake-b", "etl_team", [{"name": "hive", "shared": "lake-hive"},
                                                   {"name": "tpch",
                                                    "properties": {"connector.name": "tpch"}}]),
                cluster_doc("plain", "etl_team", [{"name": "tpch",
                                                   "properties": {"connector.name": "tpch"}}])]
        self.mongo = FakeMongo(self.settings, docs)
        self.catalogs.insert_one(copy.deepcopy(LAKE))
        self.repo = WorkingCopy(self.settings.git, str(self.remote), tmp_path / "workdir")

    @property
    def catalogs(self) -> Any:
        return self.mongo.source.catalogs

    def sync(self, **options: Any) -> pipeline.Report:
        return pipeline.sync(self.settings, self.mongo.source, self.repo,
                             options=SyncOptions(**options))

    def changed_since(self, ref: str) -> set[str]:
        out = git("--git-dir", str(self.remote), "diff", "--name-only", ref, "main")
        return set(filter(None, out.split("\n")))

    def head(self) -> str:
        return git("--git-dir", str(self.remote), "rev-parse", "main").strip()

    def file(self, path: str) -> str:
        return git("--git-dir", str(self.remote), "show", f"main:{path}")


def cluster_of(path: str) -> str:
    return path.split("/")[1].removesuffix(".yaml")


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_a_shared_catalog_renders_with_each_clusters_overrides(world: World) -> None:
    """Each user gets the shared catalog as its own file, with its own override applied."""
    report = world.sync()
    assert report.pushed and not report.failed
    a = world.file("trino-clusters/lake-a/catalog/hive.properties")
    b = world.file("trino-clusters/lake-b/catalog/hive.properties")
    assert "hive.max-partitions-per-scan=5000" in a and "hive.max-partitions-per-scan=1000" in b
    for text in (a, b):
        assert "connector.name=hive\n" in text
        assert "hive.metastore.uri=thrift://metastore.data.svc:9083\n" in text


def test_changing_a_shared_catalog_commits_once_touching_exactly_its_users(world: World) -> None:
    """One commit re-renders the users of the changed catalog; every other cluster is a cache hit."""
    world.sync()
    before, commits = world.head(), commit_count(world.remote)
    props = {**LAKE["properties"], "hive.metastore.uri": "thrift://new:9083"}
    world.catalogs.update_one({"name": "lake-hive"}, {"$set": {"properties": props}})
    queries = world.mongo.source.queries
    report = world.sync()
    assert report.pushed and commit_count(world.remote) == commits + 1
    touched = world.changed_since(before)
    assert touched and {cluster_of(p) for p in touched} == set(World.USERS)
    assert report.stats["clustersRendered"] == 2
    assert report.stats["cacheHits"] == report.stats["documents"] - 2
    # the cluster documents, the library: one query each (the stats count since the Source began)
    assert report.stats["mongoQueries"] - queries == 2
    assert "hive.metastore.uri=thrift://new:9083\n" in world.file(
        "trino-clusters/lake-b/catalog/hive.properties")


def test_a_no_op_sync_reads_the_library_once_and_renders_nothing(world: World) -> None:
    """With nothing changed, one query per collection and every cluster served by the cache."""
    world.sync()
    queries = world.mongo.source.queries
    report = world.sync()
    assert not report.pushed and report.stats["clustersRendered"] == 0
    assert report.stats["mongoQueries"] - queries == 2


def test_a_platform_without_references_never_reads_the_library(tmp_path: Path) -> None:
    """Documents that use no shared catalog sync with the one query they always needed."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    settings = settings_for(remote, tmp_path)
    mongo = FakeMongo(settings, example_docs())
    repo = WorkingCopy(settings.git, str(remote), tmp_path / "workdir")
    report = pipeline.sync(settings, mongo.source, repo)
    assert report.pushed and report.stats["mongoQueries"] == 1


@pytest.mark.parametrize("breakage", ["delete", "invalid", "unshare", "rename"])
def test_a_broken_catalog_fails_its_users_and_keeps_their_files(world: World,
                                                                breakage: str) -> None:
    """Deleting, breaking, unsharing or renaming a used catalog fails exactly its users, visibly,
    and no file changes in git: a running cluster never silently loses a catalog."""
    world.sync()
    before, commits = world.head(), commit_count(world.remote)
    if breakage == "delete":
        world.catalogs.delete_one({"name": "lake-hive"})
    elif breakage == "invalid":
        world.catalogs.update_one({"name": "lake-hive"}, {"$set": {"properties": "oops"}})
    elif breakage == "unshare":
        world.catalogs.update_one({"name": "lake-hive"}, {"$set": {"shareWith": []}})
    else:
        world.catalogs.update_one({"name": "lake-hive"}, {"$set": {"name": "lake-hive-2"}})
    report = world.sync()
    assert commit_count(world.remote) == commits and world.changed_since(before) == set()
    users = {f.cluster_id: f for f in report.failed if f.cluster_id}
    expected_users = {"lake-a", "lake-b"}  # unshared: neither owner is the catalog's
    assert set(users) == expected_users
    for f in users.values():
        (p,) = f.problems
        assert p.field == "connectors[0].shared" and '"lake-hive"' in p.message
    catalog_failures = [f for f in report.failed if f.cluster_id is None]
    if breakage == "invalid":  # the catalog itself, once, by _id and name
        (cat,) = catalog_failures
        assert cat.doc_id == 'catalog:"cat-lake"'
        assert [(p.cluster, p.field) for p in cat.problems] == [("catalog lake-hive", "properties")]
    else:
        assert catalog_failures == []
    plan = report.plan
    assert plan is not None
    assert {c.cluster_id for c in plan.by_action("failed")} == expected_users


def test_a_fixed_catalog_brings_its_users_back(world: World) -> None:
    """After a deleted catalog is restored, its users sync again with no change."""
    world.sync()
    before = world.head()
    world.catalogs.delete_one({"name": "lake-hive"})
    assert len(world.sync().failed) == 2
    world.catalogs.insert_one(copy.deepcopy(LAKE))
    report = world.sync()
    assert not report.failed and not report.pushed and world.changed_since(before) == set()


@pytest.mark.parametrize("end", ["fixed", "deleted", "unused"])
def test_a_failed_catalogs_status_record_goes_once_it_no_longer_fails(world: World,
                                                                      end: str) -> None:
    """The status record of an invalid catalog stays while it fails (a targeted run that does
    not read the library keeps it) and goes once it is fixed, deleted, or used by no document."""
    key = '_id=catalog:"cat-lake"'

    def status() -> dict[str, Any]:
        return {d["_id"]: d for d in world.mongo.source.status.find({})}

    world.catalogs.update_one({"name": "lake-hive"}, {"$set": {"properties": "oops"}})
    world.sync()
    assert status()[key]["state"] == "failed" and status()[key]["stage"] == "catalog"
    world.sync(clusters=("plain",))  # reads no document that uses the library
    assert key in status()
    if end == "fixed":
        world.catalogs.replace_one({"_id": "cat-lake"}, copy.deepcopy(LAKE))
    elif end == "deleted":
        world.catalogs.delete_one({"_id": "cat-lake"})
    else:
        world.mongo.coll.delete_many({"clusterId": {"$in": list(World.USERS)}})
    world.sync()
    assert key not in status()
    assert status()["plain"]["state"] == "synced"


def test_validate_reports_an_invalid_catalog_nobody_uses(tmp_path: Path) -> None:
    """validate reads the library even when no document references it."""
    src = FakeSource({})
    src.catalogs = {'"bad"': {"_id": "bad", "name": "bad", "owner": "x"}}
    from tests.conftest import demo_settings

    report = pipeline.validate(demo_settings(), src)
    (f,) = report.failed
    assert f.doc_id == 'catalog:"bad"' and f.problems[0].field == "properties"


def test_the_seed_dir_seeds_the_library_from_its_catalogs_folder(tmp_path: Path) -> None:
    """The embedded database fills the catalog collection from <seed_dir>/catalogs/*.json."""
    (tmp_path / "catalogs").mkdir()
    (tmp_path / "catalogs" / "lake.json").write_text(
        '{"_id": "cat-lake", "name": "lake-hive", "owner": "o", '
        '"properties": {"connector.name": "hive"}}')
    (tmp_path / "catalogs" / "broken.json").write_text("{not json")
    source = connect(MongoSettings(uri="mongomock://", seed_dir=str(tmp_path)))
    raws = source.read_catalogs()
    assert source.queries == 1
    bodies = [r.body for r in raws if not r.unreadable]
    assert [b["name"] for b in bodies] == ["lake-hive"]
    (bad,) = [r for r in raws if r.unreadable]
    assert "broken.json" in bad.unreadable
    assert source.read_all() == []  # the catalogs are not cluster documents


def test_the_demo_catalog_is_valid() -> None:
    """The demo's shared catalog (config/examples/catalogs/) passes validation on its own."""
    from tests.conftest import ROOT, demo_settings

    settings = demo_settings()
    source = connect(MongoSettings(uri="mongomock://",
                                   seed_dir=str(ROOT / "config" / "examples")))
    report = pipeline.validate(settings, source)
    assert report.failed == [] and source.read_catalogs()


def test_the_text_report_names_an_invalid_catalog_by_name_and_id() -> None:
    """People read a library failure as the catalog's name and _id, not as a cluster."""
    from tests.conftest import demo_settings
    from trinogen.report import format_text

    src = FakeSource({})
    src.catalogs = {'"c1"': {"_id": "c1", "name": "lake", "owner": "x", "properties": {}}}
    text = format_text(pipeline.validate(demo_settings(), src))
    assert '  FAILED   catalog lake (_id "c1") (catalog)\n' in text
    assert '    properties: needs "connector.name"' in text
