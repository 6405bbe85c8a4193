"""The quota decision: usage measured from Helm values, and which changes are admitted."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
import yaml

from trinogen.quotas import NONE, Change, Measured, Usage, admit, measure
from trinogen.settings.tenants import Quotas

GI = 2**30


def values(workers: int = 2, *, hpa: int | None = None, keda: int | None = None,
           coordinator: Any = None, worker: Any = None, owner: str = "growth") -> dict[str, Any]:
    """Values shaped as the chart reads them, written here by hand."""
    server: dict[str, Any] = {"workers": workers}
    if hpa is not None:
        server["autoscaling"] = {"enabled": True, "maxReplicas": hpa}
    if keda is not None:
        server["keda"] = {"enabled": True, "maxReplicaCount": keda}
    res = {"requests": {"cpu": "1", "memory": "4Gi"}}
    return {"server": server,
            "coordinator": {"resources": res if coordinator is None else coordinator,
                            "labels": {"trinogen.io/owner": owner}},
            "worker": {"resources": res if worker is None else worker}}


@pytest.mark.parametrize(("vals", "expected"), [
    (values(2), Usage(1, 2, Decimal(3), Decimal(12 * GI))),
    (values(2, hpa=10), Usage(1, 10, Decimal(11), Decimal(44 * GI))),
    (values(2, keda=6), Usage(1, 6, Decimal(7), Decimal(28 * GI))),
    (values(0), Usage(1, 0, Decimal(1), Decimal(4 * GI))),  # stopped: the coordinator runs
    # no request: Kubernetes takes the limit
    (values(1, worker={"limits": {"cpu": "500m", "memory": "1Gi"}}),
     Usage(1, 1, Decimal("1.5"), Decimal(5 * GI))),
    # requests win over limits
    (values(1, worker={"requests": {"cpu": "2", "memory": "2Gi"},
                       "limits": {"cpu": "4", "memory": "8Gi"}}),
     Usage(1, 1, Decimal(3), Decimal(6 * GI))),
    ({"server": "nonsense"}, Usage(1, 0, Decimal(0), Decimal(0))),
    (None, Usage(1, 0, Decimal(0), Decimal(0))),
])
def test_usage_of_values(vals: Any, expected: Usage) -> None:
    """Usage is 1 cluster, workers at the largest size, coordinator plus workers' requests."""
    assert measure(vals).usage == expected


def test_measure_reads_yaml_as_the_template_writes_it() -> None:
    """Quoted quantities and flow mappings, as values.yaml holds them, are read."""
    text = ('server:\n  workers: 3\ncoordinator:\n  resources: {limits: {cpu: "4"}, requests: '
            '{cpu: "2", memory: "8Gi"}}\n  labels: {trinogen.io/owner: data}\nworker:\n'
            '  resources: {requests: {cpu: "4", memory: "16Gi"}}\n')
    m = measure(yaml.safe_load(text))
    assert m.owner == "data" and m.unrequested == ()
    assert m.usage == Usage(1, 3, Decimal(14), Decimal(56 * GI))


def test_unset_requests_are_named() -> None:
    """A role with neither request nor limit for a resource is named as unrequested."""
    m = measure(values(1, worker={}))
    assert m.unrequested == ("worker.cpu", "worker.memory")


def new(cid: str, doc: str, usage: Usage, owner: str = "growth", old: Usage = NONE,
        held: bool = False) -> Change:
    return Change(cid, doc, Measured(owner, usage), old, owner if held else None, held)


ONE = Usage(1, 2, Decimal(3), Decimal(12 * GI))


@pytest.mark.parametrize(("quotas", "base", "changes", "refused"), [
    # a new cluster over the clusters quota
    (Quotas(clusters=2), ONE + ONE, [new("c", "3", ONE)], {"c"}),
    (Quotas(clusters=3), ONE + ONE, [new("c", "3", ONE)], set()),
    # two new clusters, one fits: the first document _id wins
    (Quotas(clusters=3), ONE + ONE, [new("z", "2", ONE), new("a", "1", ONE)], {"z"}),
    # a held cluster's change goes before new ones, whatever the ids
    (Quotas(workers=6), ONE + ONE,
     [new("a", "0", ONE), new("z", "9", Usage(1, 4, Decimal(5), Decimal(20 * GI)), old=ONE,
                              held=True)], {"a"}),
    # raising workers over the limit
    (Quotas(workers=5), ONE + ONE,
     [new("b", "2", Usage(1, 4, Decimal(5), Decimal(20 * GI)), old=ONE, held=True)], {"b"}),
    # shrinking is admitted even when already over every quota
    (Quotas(clusters=1, workers=1, cpu=Decimal(1), memory=Decimal(GI)), ONE + ONE,
     [new("b", "2", Usage(1, 0, Decimal(1), Decimal(4 * GI)), old=ONE, held=True)], set()),
    # an unchanged usage (a catalog edit) is admitted when over
    (Quotas(clusters=1), ONE + ONE, [new("b", "2", ONE, old=ONE, held=True)], set()),
    # only the quotas a change raises can refuse it: memory up, clusters already over
    (Quotas(clusters=1, memory=Decimal(100 * GI)), ONE + ONE,
     [new("b", "2", Usage(1, 2, Decimal(3), Decimal(20 * GI)), old=ONE, held=True)], set()),
    (Quotas(cpu=Decimal("6.5")), ONE + ONE, [new("c", "3", Usage(1, 0, Decimal("0.5"), NONE.memory))],
     set()),
    (Quotas(cpu=Decimal("6.4")), ONE + ONE, [new("c", "3", Usage(1, 0, Decimal("0.5"), NONE.memory))],
     {"c"}),
    (Quotas(memory=Decimal(24 * GI)), ONE + ONE, [new("c", "3", ONE)], {"c"}),
])
def test_admission(quotas: Quotas, base: Usage, changes: list[Change], refused: set[str]) -> None:
    """Each change is admitted while the tenant stays within the quotas it raises."""
    assert set(admit({"growth": quotas}, {"growth": base}, changes)) == refused


def test_refusal_names_the_quota_the_usage_and_the_limit() -> None:
    """The problem names the setting, the tenant's usage and the limit as written."""
    q = Quotas(memory=Decimal(20 * GI), memory_text="20Gi")
    (problem,) = admit({"growth": q}, {"growth": ONE}, [new("c", "3", ONE)])["c"]
    assert problem.cluster == "c" and problem.field == "tenants.growth.quotas.memory"
    assert "at 12Gi of its memory quota 20Gi" in problem.message and "to 24Gi" in problem.message


def test_other_tenants_and_unquoted_owners_are_untouched() -> None:
    """Another tenant's usage never counts against this one; an owner without quotas passes."""
    limits = {"growth": Quotas(clusters=1)}
    base = {"growth": NONE, "finance": ONE + ONE + ONE}
    assert admit(limits, base, [new("g", "1", ONE), new("f", "2", ONE, owner="finance")]) == {}


def test_moving_a_cluster_to_another_owner_counts_it_there() -> None:
    """A cluster whose owner changes joins its new tenant's usage as a new one would."""
    limits = {"growth": Quotas(clusters=1)}
    moved = Change("m", "1", Measured("growth", ONE), ONE, "finance", True)
    assert set(admit(limits, {"growth": ONE, "finance": ONE}, [moved])) == {"m"}
    assert admit(limits, {"growth": NONE, "finance": ONE}, [moved]) == {}


def test_a_quota_needs_the_requests_it_counts() -> None:
    """Under a cpu quota a cluster whose workers request no cpu fails, naming the field."""
    change = Change("c", "1", Measured("growth", ONE, ("worker.cpu",)))
    (problem,) = admit({"growth": Quotas(cpu=Decimal(100))}, {}, [change])["c"]
    assert "clusterConfig.worker.resources.requests.cpu" in problem.message
    assert admit({"growth": Quotas(memory=Decimal(GI * 100))}, {}, [change]) == {}
