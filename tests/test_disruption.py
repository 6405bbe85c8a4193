"""Disruption safety (issue 14, item 3): PodDisruptionBudgets and the coordinator's rollout from a
named `disruption` option, a worker shutdown budget that covers Trino's whole shutdown sequence,
and HPA/KEDA scale-in one drained worker at a time.

Trino's sequence (GracefulShutdownHandler): wait the grace period, wait for the running tasks,
wait the grace period again, stop the life cycle (at most 30 s), exit. So the budget these
tests expect is 2 x grace + drain + 30 + the documented margin of 15 s, written out by hand.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests import k8s_schema
from tests.conftest import SCHEMAS
from tests.operation_support import (
    CHART_MARKS,
    DISRUPTIONS,
    cluster_of,
    doc,
    option_settings,
    problems_of,
    selects,
    through_chart,
)
from trinogen.errors import ConfigError
from trinogen.kinds.disruption.options import Disruption, parse
from trinogen.model.shutdown import scale_down, termination_grace
from trinogen.settings import Settings

HPA = {"type": "hpa", "minReplicas": 2, "maxReplicas": 8, "targetCPUUtilizationPercentage": 70}
KEDA = {"type": "keda", "minReplicas": 1, "maxReplicas": 6,
        "triggers": [{"type": "cron", "metadata": {"timezone": "UTC", "start": "0 6 * * *",
                                                   "end": "0 20 * * *",
                                                   "desiredReplicas": "4"}}]}

# --- the option -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, Disruption(1, 1, "Recreate")),
        ({"worker_max_unavailable": "25%"}, Disruption("25%", 1, "Recreate")),
        ({"worker_max_unavailable": 3, "coordinator_max_unavailable": 0,
          "coordinator_rollout": "RollingUpdate"}, Disruption(3, 0, "RollingUpdate")),
    ],
)
def test_disruption_options_parse(raw: dict[str, Any], expected: Disruption) -> None:
    """Every field has a default; counts, percentages and both rollouts are accepted."""
    assert parse("d", raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"worker_max_unavailable": 0}, "d.worker_max_unavailable: is 0"),
        ({"worker_max_unavailable": "0%"}, "'0%' is not a percentage"),
        ({"worker_max_unavailable": "150%"}, "'150%' is not a percentage"),
        ({"worker_max_unavailable": True}, "must be a whole number"),
        ({"coordinator_max_unavailable": 2}, "d.coordinator_max_unavailable: is 2"),
        ({"coordinator_rollout": "BlueGreen"}, "must be one of Recreate, RollingUpdate"),
        ({"max_unavailable": 1}, "d.max_unavailable: unknown field"),
    ],
)
def test_bad_disruption_options_name_the_field(raw: dict[str, Any], message: str) -> None:
    """A value a PodDisruptionBudget or Deployment would refuse (or that blocks drains) is refused."""
    with pytest.raises(ConfigError) as e:
        parse("d", raw)
    assert message in str(e.value)


# --- the shutdown budget ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grace", "drain", "budget"),
    [
        (60, 60, 225),      # 60 + 60 + 60 + 30 + 15
        (120, 120, 405),    # 120 + 120 + 120 + 30 + 15
        (30, 0, 105),       # tasks are short: 30 + 0 + 30 + 30 + 15
        (10, 3600, 3665),   # long tasks: 10 + 3600 + 10 + 30 + 15
    ],
)
def test_the_budget_covers_trinos_whole_sequence(grace: int, drain: int, budget: int) -> None:
    """Two grace periods, the drain, the 30 s life-cycle stop and the 15 s margin."""
    assert termination_grace(grace, drain) == budget
    assert budget >= 2 * grace  # what the chart itself requires


@pytest.mark.parametrize(
    ("budget", "window", "period"),
    [
        (105, 300, 105),    # never below Kubernetes' default window of 300 s
        (900, 900, 900),
        (2000, 2000, 1800),  # the HPA API caps a policy period at 1800 s
        (5000, 3600, 1800),  # and a stabilisation window at 3600 s
    ],
)
def test_scale_in_waits_for_one_drained_worker(budget: int, window: int, period: int) -> None:
    """Scale-down removes one pod per budget, after a window at least as long as the budget."""
    assert scale_down(budget) == {"scaleDown": {
        "stabilizationWindowSeconds": window,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": period}]}}


@pytest.mark.parametrize(
    ("shutdown", "drain"),
    [({"gracePeriodSeconds": 60}, 60), ({"gracePeriodSeconds": 60, "drainSeconds": 600}, 600),
     ({"gracePeriodSeconds": 60, "drainSeconds": 0}, 0)],
)
def test_drain_defaults_to_the_grace_period(shutdown: dict[str, Any], drain: int) -> None:
    """drainSeconds is the document's; without it the drain budget is one grace period."""
    c = cluster_of(doc("s1", worker={"gracefulShutdown": shutdown}), option_settings())
    assert (c.grace_period_seconds, c.drain_seconds) == (60, drain)


@pytest.mark.parametrize(
    ("shutdown", "message"),
    [({"gracePeriodSeconds": 60, "drainSeconds": -1}, "it must be at least 0"),
     ({"gracePeriodSeconds": 60, "drainSeconds": "1h"}, "must be a whole number"),
     ({"gracePeriodSeconds": 60, "drainSecond": 5}, "did you mean drainSeconds?")],
)
def test_a_bad_drain_time_fails_the_document(shutdown: dict[str, Any], message: str) -> None:
    """drainSeconds is a whole number of seconds, 0 or more."""
    problems = problems_of(doc("s2", worker={"gracefulShutdown": shutdown}), option_settings())
    assert any(message in m for m in problems.values()), problems


def capped(seconds: int) -> Settings:
    s = option_settings()
    return replace(s, validation=replace(s.validation, max_shutdown_seconds=seconds))


@pytest.mark.parametrize(
    ("shutdown", "cap", "field", "value"),
    [  # 2 x 900 + 0 + 45 = 1845 and 2 x 60 + 1700 + 45 = 1865, both above the default 1800
        ({"gracePeriodSeconds": 900, "drainSeconds": 0}, None, "gracePeriodSeconds", "1845 s"),
        ({"gracePeriodSeconds": 60, "drainSeconds": 1700}, None, "drainSeconds", "1865 s"),
        ({"gracePeriodSeconds": 600}, None, "gracePeriodSeconds", "1845 s"),  # drain = grace
        ({"gracePeriodSeconds": 120, "drainSeconds": 500}, 600, "drainSeconds", "785 s"),
        ({"gracePeriodSeconds": 1, "drainSeconds": 86400}, 86400, "drainSeconds", "86447 s"),
    ],
)
def test_a_budget_over_the_settings_cap_fails_the_document(
    shutdown: dict[str, Any], cap: int | None, field: str, value: str
) -> None:
    """A shutdown budget above validation.max_shutdown_seconds fails naming the field, the
    budget and the setting (a node drain would otherwise wait that long for one worker)."""
    settings = option_settings() if cap is None else capped(cap)
    problems = problems_of(doc("s5", worker={"gracefulShutdown": shutdown}), settings)
    path = f"clusterConfig.worker.gracefulShutdown.{field}"
    assert path in problems, problems
    limit = 1800 if cap is None else cap
    for words in (value, f"validation.max_shutdown_seconds ({limit} s)"):
        assert words in problems[path]


@pytest.mark.parametrize(("shutdown", "cap"), [
    ({"gracePeriodSeconds": 120, "drainSeconds": 1515}, None),  # exactly 1800
    ({"gracePeriodSeconds": 60, "drainSeconds": 3600}, 3765),
    ({"enabled": False, "gracePeriodSeconds": 86400}, None),  # off: no budget
])
def test_a_budget_within_the_cap_renders(shutdown: dict[str, Any], cap: int | None) -> None:
    """A budget at the cap, or a disabled shutdown, is no problem."""
    cluster_of(doc("s6", worker={"gracefulShutdown": shutdown}),
               option_settings() if cap is None else capped(cap))


def test_a_budget_beyond_the_hpa_period_warns() -> None:
    """An autoscaled cluster whose budget exceeds 1800 s (allowed by a raised cap) is told
    scale-in may drain two at once."""
    c = cluster_of(doc("s3", worker={"autoscaling": HPA, "gracefulShutdown": {
        "gracePeriodSeconds": 60, "drainSeconds": 3600}}), capped(7200))
    assert any("1800 s" in w.message for w in c.warnings)
    quiet = cluster_of(doc("s4", worker={"autoscaling": HPA, "gracefulShutdown": {
        "gracePeriodSeconds": 60}}), option_settings())
    assert not quiet.warnings


# --- through the chart --------------------------------------------------------------------------


@CHART_MARKS[0]
@CHART_MARKS[1]
@pytest.mark.parametrize("drain", [None, 600])
def test_workers_get_the_whole_budget(drain: int | None) -> None:
    """The worker pods' terminationGracePeriodSeconds is the budget; shutdown.grace-period stays."""
    shutdown = {"gracePeriodSeconds": 90, **({"drainSeconds": drain} if drain is not None else {})}
    t = through_chart(doc("g1", worker={"gracefulShutdown": shutdown}), option_settings())
    expected = 90 + (90 if drain is None else drain) + 90 + 30 + 15
    assert t.pod("worker")["terminationGracePeriodSeconds"] == expected
    config = t.find("ConfigMap", "worker")
    assert any("shutdown.grace-period=90s" in str(c.get("data", {})) for c in config)
    assert not t.find("HorizontalPodAutoscaler")


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_the_hpa_scales_in_one_drained_worker_at_a_time() -> None:
    """An autoscaled, draining cluster's HPA has the scale-down behaviour of its budget."""
    t = through_chart(doc("g2", worker={"autoscaling": HPA,
                                        "gracefulShutdown": {"gracePeriodSeconds": 120}}),
                      option_settings())
    budget = 120 * 3 + 30 + 15
    (hpa,) = t.find("HorizontalPodAutoscaler")
    assert hpa["spec"]["behavior"] == {"scaleDown": {
        "stabilizationWindowSeconds": budget,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": budget}]}}
    assert hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] >= \
        t.pod("worker")["terminationGracePeriodSeconds"]
    kv = pytest.importorskip("kubernetes_validate")
    kv.validate(hpa, "1.30", strict=True)


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_keda_passes_the_same_behaviour_to_its_hpa() -> None:
    """KEDA's ScaledObject carries the behaviour in advanced.horizontalPodAutoscalerConfig."""
    t = through_chart(doc("g3", worker={"autoscaling": KEDA,
                                        "gracefulShutdown": {"gracePeriodSeconds": 60}}),
                      option_settings())
    (scaled,) = t.find("ScaledObject")
    assert scaled["spec"]["advanced"] == {"horizontalPodAutoscalerConfig": {"behavior": {
        "scaleDown": {"stabilizationWindowSeconds": 300,
                      "policies": [{"type": "Pods", "value": 1, "periodSeconds": 225}]}}}}


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_no_behaviour_without_graceful_shutdown() -> None:
    """An autoscaled cluster whose workers do not drain keeps Kubernetes' default behaviour."""
    t = through_chart(doc("g4", worker={"autoscaling": HPA}), option_settings())
    (hpa,) = t.find("HorizontalPodAutoscaler")
    assert "behavior" not in hpa["spec"]


def _pdbs(t: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for path, content in t.files.items():
        if "/manifests/pdb-" in path:
            obj = yaml.safe_load(content)
            out[obj["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"]] = obj
    return out


@CHART_MARKS[0]
@CHART_MARKS[1]
@pytest.mark.parametrize("option", sorted(DISRUPTIONS))
def test_budgets_select_exactly_their_roles_pods(option: str) -> None:
    """Each PDB is valid Kubernetes, selects its role's pods and not the other role's."""
    kv = pytest.importorskip("kubernetes_validate")
    t = through_chart(doc("d1", disruption=option), option_settings())
    pdbs = _pdbs(t)
    assert sorted(pdbs) == ["coordinator", "worker"]
    raw = DISRUPTIONS[option]
    expected = {"worker": raw.get("worker_max_unavailable", 1),
                "coordinator": raw.get("coordinator_max_unavailable", 1)}
    for role, other in (("worker", "coordinator"), ("coordinator", "worker")):
        pdb = pdbs[role]
        kv.validate(pdb, "1.30", strict=True)
        assert pdb["metadata"]["namespace"] == "trino-d1"
        assert pdb["spec"]["maxUnavailable"] == expected[role]
        selector = pdb["spec"]["selector"]["matchLabels"]
        assert selects(selector, t.deployment(role)["spec"]["template"]["metadata"]["labels"])
        assert not selects(selector, t.deployment(other)["spec"]["template"]["metadata"]["labels"])


@CHART_MARKS[0]
@CHART_MARKS[1]
@pytest.mark.parametrize("option", sorted(DISRUPTIONS))
def test_the_coordinator_rolls_out_as_the_option_says(option: str) -> None:
    """Recreate (the default) never runs two coordinators, and Argo CD replaces that Deployment.

    Server-side apply cannot switch a running Deployment to Recreate (tests/test_kube_strategy.py),
    so a Recreate coordinator carries Argo CD's per-resource `Replace=true`; nothing else does.
    """
    t = through_chart(doc("d2", disruption=option), option_settings())
    rollout = DISRUPTIONS[option].get("coordinator_rollout", "Recreate")
    coordinator, worker = t.deployment("coordinator"), t.deployment("worker")
    assert coordinator["spec"]["strategy"] == {"type": rollout}
    sync_options = (coordinator["metadata"].get("annotations") or {}).get(
        "argocd.argoproj.io/sync-options")
    assert sync_options == ("Replace=true" if rollout == "Recreate" else None)
    assert "strategy" not in worker["spec"]
    assert "argocd.argoproj.io/sync-options" not in (worker["metadata"].get("annotations") or {})


@CHART_MARKS[0]
@CHART_MARKS[1]
def test_without_the_option_there_are_no_budgets_and_a_rolling_update() -> None:
    """A document that picks no disruption option gets no manifests and RollingUpdate, written out.

    Written rather than left to the chart's `strategy: {}`, so that dropping a Recreate option
    brings RollingUpdate back under Argo CD's server-side apply (tests/test_kube_strategy.py).
    """
    t = through_chart(doc("d3"), option_settings())
    assert not [p for p in t.files if "/manifests/" in p]
    coordinator = t.deployment("coordinator")
    assert coordinator["spec"]["strategy"] == {"type": "RollingUpdate"}
    assert "argocd.argoproj.io/sync-options" not in (
        coordinator["metadata"].get("annotations") or {})
    app = t.file("trino-applications/d3.yaml")
    assert app is not None and not [s for s in app["spec"]["sources"] if "path" in s]


@pytest.mark.skipif(not (SCHEMAS / "argocd-application.schema.json").is_file(),
                    reason=f"no Application schema in {SCHEMAS}")
@CHART_MARKS[0]
@CHART_MARKS[1]
def test_the_application_deploys_the_budgets() -> None:
    """The Application has a source for manifests/ and stays valid for the Application CRD."""
    t = through_chart(doc("d4", disruption="standard"), option_settings())
    app = t.file("trino-applications/d4.yaml")
    assert app is not None
    paths = [s["path"] for s in app["spec"]["sources"] if "path" in s]
    assert paths == ["trino-clusters/d4/manifests"]
    schema = k8s_schema.load(SCHEMAS / "argocd-application.schema.json")
    assert k8s_schema.schema_errors(app, schema) == []
    assert k8s_schema.object_meta_errors(app["metadata"]) == []


def test_an_unknown_disruption_option_fails_the_document() -> None:
    """A name the settings do not offer is refused, listing the ones they do."""
    problems = problems_of(doc("d5", disruption="gold"), option_settings())
    assert "known: rolling, standard, strict" in problems["disruption"]


@given(st.dictionaries(st.sampled_from(["worker_max_unavailable", "coordinator_max_unavailable",
                                        "coordinator_rollout", "other"]),
                       st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64),
                                 st.floats(), st.text(max_size=6), st.lists(st.integers()),
                                 st.dictionaries(st.text(max_size=3), st.integers())),
                       max_size=4))
@hsettings(max_examples=300, deadline=None)
def test_any_disruption_option_is_parsed_or_refused_cleanly(raw: dict[str, Any]) -> None:
    """Whatever the settings file holds under a disruption option, only ConfigError comes out."""
    try:
        parsed = parse("d", raw)
    except ConfigError as e:
        assert str(e).startswith("d")
    else:
        assert parsed.coordinator_max_unavailable in (0, 1)
