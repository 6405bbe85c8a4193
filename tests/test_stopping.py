"""Stopping a cluster without deleting it (issue 14, item 7): `stopped: true` takes the workers to
zero (the chart then renders no worker Deployment) and autoscaling off, while the files, the
namespace and the Application stay; `enabled: false` still removes; status shows stopped clusters.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from tests.conftest import demo_settings, example_docs
from tests.fakes import FakeCache, FakeRepo, FakeSource
from tests.operation_support import (
    CHART_MARKS,
    cluster_of,
    doc,
    option_settings,
    problems_of,
    through_chart,
)
from trinogen import pipeline
from trinogen.model import Disabled, RawDocument, classify, declares_stopped
from trinogen.plan import ClusterChange
from trinogen.report import format_status
from trinogen.source import doc_key
from trinogen.status import status_rows
from trinogen.status.argo import StatusReport

HPA = {"type": "hpa", "minReplicas": 2, "maxReplicas": 8, "targetCPUUtilizationPercentage": 70}
NOW = datetime(2026, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize("worker", [{"replicas": 4}, {"autoscaling": HPA}])
def test_a_stopped_cluster_has_no_workers_and_no_autoscaler(worker: dict[str, Any]) -> None:
    """stopped: true means zero workers and no autoscaling, whatever the document sizes."""
    c = cluster_of(doc("x1", worker=worker, stopped=True), option_settings())
    assert (c.stopped, c.workers, c.autoscaling) == (True, 0, None)
    running = cluster_of(doc("x1", worker=worker, stopped=False), option_settings())
    assert not running.stopped and running.workers > 0


@pytest.mark.parametrize("value", ["true", 1, "yes"])
def test_stopped_must_be_a_boolean(value: Any) -> None:
    """A string or number is an error, never a silent start or stop."""
    problems = problems_of(doc("x2", stopped=value), option_settings())
    assert "must be true or false" in problems["stopped"]


def test_a_stopped_document_is_still_validated() -> None:
    """Stopping does not skip validation: the cluster must be able to start again as written."""
    problems = problems_of(doc("x3", stopped=True, worker={"replicas": 0}), option_settings())
    assert "clusterConfig.worker.replicas" in problems


def test_disabled_still_means_remove() -> None:
    """enabled: false prunes the cluster even when it also says stopped."""
    d = doc("x4", stopped=True, enabled=False)
    assert isinstance(classify(RawDocument(doc_key(d["_id"]), d), option_settings()), Disabled)


@pytest.mark.parametrize(
    ("defaults", "profile", "body", "expected"),
    [
        ({}, None, {"stopped": True}, True),
        ({}, None, {}, False),
        ({"stopped": True}, None, {}, True),              # the platform parks every cluster
        ({"stopped": True}, None, {"stopped": False}, False),
        ({}, {"stopped": True}, {}, True),                # through the document's profile
        ({"stopped": True}, None, {"stopped": None}, False),  # null removes the inherited value
    ],
)
def test_stopped_is_read_through_the_layers(defaults: dict[str, Any], profile: Any,
                                            body: dict[str, Any], expected: bool) -> None:
    """For cache-served documents, stopped is judged with the same layering as validation."""
    base = demo_settings()
    settings = dataclasses.replace(base, defaults={**base.defaults, **defaults},
                                   profiles={**base.profiles, "parked": profile or {}})
    document = {**body, **({"profile": "parked"} if profile else {})}
    assert declares_stopped(document, settings) is expected


@CHART_MARKS[0]
@CHART_MARKS[1]
@pytest.mark.parametrize("worker", [{"replicas": 3}, {"autoscaling": HPA}])
def test_stopping_keeps_the_files_and_the_coordinator(worker: dict[str, Any]) -> None:
    """Stopped: the same files, no worker Deployment or autoscaler, one coordinator, the App."""
    running = through_chart(doc("x5", worker=worker), option_settings())
    stopped = through_chart(doc("x5", worker=worker, stopped=True), option_settings())
    assert sorted(stopped.files) == sorted(running.files)
    assert running.find("Deployment", "worker") and not stopped.find("Deployment", "worker")
    assert not stopped.find("HorizontalPodAutoscaler") and not stopped.find("ScaledObject")
    assert stopped.deployment("coordinator")["spec"]["replicas"] == 1
    assert stopped.values["server"]["workers"] == 0
    # The chart renders no worker objects at all at zero workers; their settings stay in git.
    assert stopped.values["worker"] == running.values["worker"]
    app = stopped.file("trino-applications/x5.yaml")
    assert app is not None
    assert app["metadata"]["labels"]["trinogen.io/stopped"] == "true"
    assert app["spec"]["destination"]["namespace"] == "trino-x5"
    assert "ignoreDifferences" not in app["spec"]  # nothing autoscales while stopped


# --- status -------------------------------------------------------------------------------------


def test_status_rows_mark_stopped_clusters() -> None:
    """A synced stopped cluster's row says stopped; a change of only that flag is written."""
    change = ClusterChange("a", "unchanged", "d")
    prev = {"a": {"state": "synced", "renderHash": "h1"}}
    assert status_rows([change], (), {"a": "h1"}, prev, "c1", NOW, {"a"})["a"]["stopped"] is True
    assert status_rows([change], (), {"a": "h1"}, prev, "c1", NOW) == {}
    rows = status_rows([ClusterChange("a", "add", "d")], (), {"a": "h1"}, {}, "c1", NOW)
    assert "stopped" not in rows["a"]


def _stop(src: FakeSource, cid: str) -> None:
    key = next(k for k, d in src.docs.items() if d["clusterId"] == cid)
    src.docs[key] = {**src.docs[key], "stopped": True}


def test_sync_records_stopped_clusters_also_from_the_render_cache() -> None:
    """After a sync the status says which clusters are stopped, also when served from the cache."""
    settings = demo_settings(git={"remote": "https://git.example.com/gitops.git"})
    src = FakeSource({doc_key(d["_id"]): d for d in example_docs()})
    _stop(src, "adhoc-dev")
    repo = FakeRepo(cache=FakeCache())
    pipeline.sync(settings, src, repo)
    assert {k for k, r in src.status.items() if r.get("stopped")} == {"adhoc-dev"}
    src.status.clear()  # the records are lost: the next run writes them again from the cache
    again = pipeline.sync(settings, src, repo)
    assert again.stats["cacheHits"] == 3
    assert {k for k, r in src.status.items() if r.get("stopped")} == {"adhoc-dev"}
    assert yaml.safe_load(repo.files["trino-clusters/adhoc-dev/values.yaml"])["server"][
        "workers"] == 0


def test_status_text_shows_stopped() -> None:
    """`trinogen status` prints stopped clusters as such, next to their sync state."""
    text = format_status(StatusReport({"a": {"state": "synced", "commit": "c1", "stopped": True},
                                       "b": {"state": "synced", "commit": "c1"}},
                                      ephemeral=False))
    lines = dict(line.split(maxsplit=1) for line in text.splitlines())
    assert "stopped" in lines["a"] and "stopped" not in lines["b"]
