"""Tenant quotas in a real git sync: what crosses a quota fails, what git holds never moves."""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from bson import ObjectId

from tests.conftest import example_docs, seed_remote
from tests.test_sync import World
from trinogen.settings.tenants import parse_tenants

OWNERS = ("growth_analytics", "data_analytics_team", "data_platform")
ADHOC = "trino-clusters/adhoc-dev/values.yaml"
ETL = "trino-clusters/etl-batch/values.yaml"


def tenants(**quotas: dict[str, Any]) -> Any:
    """Every example owner as a tenant that may pick every option, with the quotas given."""
    return parse_tenants("test", {o: {"options": "all", **({"quotas": quotas[o]} if o in quotas
                                                           else {})} for o in OWNERS}, {})


def quota_world(tmp_path: Path, **quotas: dict[str, Any]) -> World:
    """The examples synced once without quotas, then the quotas declared."""
    w = World(tmp_path)
    w.sync()
    w.settings = replace(w.settings, tenants=tenants(**quotas))
    return w


def another(cluster_id: str, oid: str, owner: str = "growth_analytics") -> dict[str, Any]:
    """A copy of adhoc-dev under another clusterId and _id."""
    doc = copy.deepcopy(next(d for d in example_docs() if d["clusterId"] == "adhoc-dev"))
    doc.update(_id=ObjectId(oid), clusterId=cluster_id, owner=owner)
    return doc


def failures(report: Any) -> dict[str, set[str]]:
    return {f.cluster_id: {p.field for p in f.problems} for f in report.failed}


def test_a_new_cluster_over_the_clusters_quota_fails_and_the_others_sync(tmp_path: Path) -> None:
    """The newcomer fails naming the quota; an edit of another tenant's cluster still lands."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1})
    w.mongo.coll.insert_one(another("adhoc-two", "653a1a7b8e1f4a1e9c5d8e2a"))
    w.mongo.set("analytics-prod", "clusterConfig.worker.replicas", 6)
    report = w.sync()
    assert failures(report) == {"adhoc-two": {"tenants.growth_analytics.quotas.clusters"}}
    (problem,) = report.failed[0].problems
    assert "at 1 of its clusters quota 1" in problem.message and "to 2" in problem.message
    assert w.clusters() == {"adhoc-dev", "analytics-prod", "etl-batch"}
    values = yaml.safe_load(w.tree()["trino-clusters/analytics-prod/values.yaml"])
    assert values["server"]["workers"] == 6
    again = w.sync()  # not remembered as a success: judged again, fails again
    assert failures(again) == {"adhoc-two": {"tenants.growth_analytics.quotas.clusters"}}


def test_of_two_new_clusters_the_first_document_gets_the_last_slot(tmp_path: Path) -> None:
    """Only one fits: the lower document _id is admitted, the other fails."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 2})
    w.mongo.coll.insert_one(another("zz-first", "653a1a7b8e1f4a1e9c5d8e2a"))
    w.mongo.coll.insert_one(another("aa-second", "653a1a7b8e1f4a1e9c5d8e2b"))
    report = w.sync()
    assert set(failures(report)) == {"aa-second"}
    assert "zz-first" in w.clusters() and "aa-second" not in w.clusters()


def test_raising_the_worker_maximum_over_the_quota_keeps_the_old_files(tmp_path: Path) -> None:
    """etl-batch autoscales to 12 under a quota of 12 workers: 13 fails, git keeps 12."""
    w = quota_world(tmp_path, data_platform={"workers": 12})
    before = w.tree()[ETL]
    w.mongo.set("etl-batch", "clusterConfig.worker.autoscaling.maxReplicas", 13)
    report = w.sync()
    assert failures(report) == {"etl-batch": {"tenants.data_platform.quotas.workers"}}
    assert w.tree()[ETL] == before
    assert yaml.safe_load(before)["server"]["autoscaling"]["maxReplicas"] == 12


def test_an_existing_cluster_never_pays_for_someone_elses_change(tmp_path: Path) -> None:
    """With the quota full, the held cluster's own edit lands and the newcomer fails; a held
    cluster whose document turned invalid still counts (its files stay)."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1, "memory": "12Gi"})
    w.mongo.coll.insert_one(another("adhoc-two", "653a1a7b8e1f4a1e9c5d8e2a"))
    w.mongo.set("adhoc-dev", "trinoVersion", "479")
    report = w.sync()
    assert set(failures(report)) == {"adhoc-two"}
    assert yaml.safe_load(w.tree()[ADHOC])["image"]["tag"] == "479"
    w.mongo.set("adhoc-dev", "clusterConfig", "not a mapping")
    report = w.sync()
    assert set(failures(report)) == {"adhoc-dev", "adhoc-two"}
    assert "adhoc-dev" in w.clusters() and "adhoc-two" not in w.clusters()


def test_stopping_and_shrinking_are_admitted_over_a_lowered_quota(tmp_path: Path) -> None:
    """A quota lowered below today's usage never blocks getting smaller."""
    w = quota_world(tmp_path, data_analytics_team={"workers": 1, "cpu": "1", "memory": "1Gi"})
    w.mongo.set("analytics-prod", "clusterConfig.worker.replicas", 3)
    assert w.sync().failed == []
    assert yaml.safe_load(w.tree()["trino-clusters/analytics-prod/values.yaml"])[
        "server"]["workers"] == 3
    w.mongo.set("analytics-prod", "stopped", True)
    assert w.sync().failed == []
    assert yaml.safe_load(w.tree()["trino-clusters/analytics-prod/values.yaml"])[
        "server"]["workers"] == 0


def test_freeing_a_slot_admits_the_newcomer_in_the_same_run(tmp_path: Path) -> None:
    """A disabled cluster is pruned in this run, so its slot is free for a new one."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1})
    w.mongo.coll.insert_one(another("adhoc-two", "653a1a7b8e1f4a1e9c5d8e2a"))
    w.mongo.set("adhoc-dev", "enabled", False)
    assert w.sync().failed == []
    assert "adhoc-two" in w.clusters() and "adhoc-dev" not in w.clusters()


def test_a_targeted_sync_judges_with_the_whole_tenant_in_view(tmp_path: Path) -> None:
    """`sync --cluster` of the newcomer alone reads the tenant's other clusters from git."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1})
    w.mongo.coll.insert_one(another("adhoc-two", "653a1a7b8e1f4a1e9c5d8e2a"))
    targeted = w.sync(clusters=("adhoc-two",))
    assert failures(targeted) == {"adhoc-two": {"tenants.growth_analytics.quotas.clusters"}}
    assert failures(w.sync()) == failures(targeted)
    assert "adhoc-two" not in w.clusters()


def test_a_renamed_cluster_replaces_its_old_self_under_a_full_quota(tmp_path: Path) -> None:
    """A document moving to a new clusterId frees the old one in the same run."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1})
    w.mongo.set("adhoc-dev", "clusterId", "adhoc-sandbox")
    assert w.sync().failed == []
    assert "adhoc-sandbox" in w.clusters() and "adhoc-dev" not in w.clusters()


def test_a_cluster_moved_to_a_full_tenant_fails_and_stays_with_its_owner(tmp_path: Path) -> None:
    """Changing `owner` to a tenant with no room left fails; git keeps the old owner's files."""
    w = quota_world(tmp_path, data_platform={"clusters": 1})
    before = w.tree()[ADHOC]
    w.mongo.set("adhoc-dev", "owner", "data_platform")
    report = w.sync()
    assert failures(report) == {"adhoc-dev": {"tenants.data_platform.quotas.clusters"}}
    assert w.tree()[ADHOC] == before


def test_raising_a_quota_admits_the_refused_cluster_and_re_renders_nothing_else(
        tmp_path: Path) -> None:
    """Quotas shape no file: a new quota keeps every render-cache hit, and the cluster it
    refused before (never a hit, its files are not in git) is judged again and admitted."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1})
    w.mongo.coll.insert_one(another("adhoc-two", "653a1a7b8e1f4a1e9c5d8e2a"))
    assert set(failures(w.sync())) == {"adhoc-two"}
    w.settings = replace(w.settings, tenants=tenants(growth_analytics={"clusters": 2}))
    report = w.sync()
    assert report.failed == [] and "adhoc-two" in w.clusters()
    assert report.stats["cacheHits"] == 3


def test_a_disabled_cluster_whose_files_record_no_document_frees_its_slot(tmp_path: Path) -> None:
    """The plan prunes a disabled document's cluster even when its files record no document _id
    (the clusterId names it), so the quotas do not count it: a newcomer takes its slot."""
    w = quota_world(tmp_path, growth_analytics={"clusters": 1})
    anonymous = {p: re.sub(rb"Document _id: .*", b"Document _id:", c).decode()
                 for p, c in w.tree().items()
                 if p.startswith(("trino-clusters/adhoc-dev/", "trino-applications/adhoc-dev."))}
    seed_remote(w.remote, anonymous, tmp_path, "adhoc-dev's files record no document")
    w.mongo.set("adhoc-dev", "enabled", False)
    w.mongo.coll.insert_one(another("adhoc-two", "653a1a7b8e1f4a1e9c5d8e2a"))
    report = w.sync()
    assert failures(report) == {}
    assert "adhoc-two" in w.clusters() and "adhoc-dev" not in w.clusters()
