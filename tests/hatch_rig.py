"""Hatch options applied to a cluster's values the way the wiring will (issue 21, item 6).

Phase 1 stand-in for trinogen's render: a document goes through trinogen (`Renderer`) as it does
today, then the values each picked hatch contributes, computed by trinogen.hatches from the
options' text, are merged into its values.yaml: `image`/`imagePullSecrets`, `env`,
`<role>.additionalJVMConfig` (the pinned-region pair first when the image is not the chart's
stock one), `networkPolicy` and `service`; plus the coordinator's client NetworkPolicy. The chart
tests, the API-server tests and the real-Trino test all judge what this produces.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.test_workload import outcome
from trinogen.hatches import image, network, runtime, service
from trinogen.model import Cluster
from trinogen.render import Renderer
from trinogen.settings import Settings

ROLES = ("coordinator", "worker")


@dataclass(frozen=True)
class Picks:
    """The hatch options one cluster picks (raw settings text, parsed by the hatches)."""

    image: dict[str, Any] | None = None
    runtime: dict[str, Any] | None = None
    network: dict[str, Any] | None = None
    service: dict[str, Any] | None = None
    ingress: bool = False  # the cluster has an Ingress (an `ingress` pick)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Rendered:
    cluster: Cluster
    values: dict[str, Any]
    own: list[dict[str, Any]]  # objects trinogen itself writes for the hatches


def values_of(d: dict[str, Any], settings: Settings) -> tuple[Cluster, dict[str, Any]]:
    """The document's values.yaml as trinogen renders it today."""
    c = outcome(copy.deepcopy(d), settings)
    assert isinstance(c, Cluster), c
    files = Renderer(settings).render_cluster(c, {})
    text = files[f"{settings.output.clusters_dir}/{d['clusterId']}/values.yaml"].decode()
    return c, yaml.safe_load(text)


def with_hatches(d: dict[str, Any], settings: Settings, picks: Picks) -> Rendered:
    """The document's values with the picked hatches merged in, and trinogen's own objects."""
    c, values = values_of(d, settings)
    where = "test: hatch"
    version = str(values["image"]["tag"])
    if picks.image is not None:
        values.update(image.image_values(image.parse(where, picks.image), version,
                                         settings.chart.image_repository))
    pinned = image.pinned_region_flags(values["image"], version)
    opt = runtime.parse(where, picks.runtime or {})
    for role in ROLES:
        flags = runtime.jvm_values(opt, role, pinned)
        if flags:
            values.setdefault(role, {})["additionalJVMConfig"] = flags
    if opt.env:
        values["env"] = runtime.env_values(opt, c.cluster_id, c.owner)
    own: list[dict[str, Any]] = []
    if picks.network is not None:
        net = network.parse(where, picks.network)
        values.update(network.chart_values(net, monitoring=bool(c.jmx_exporter)))
        policy = network.coordinator_policy(
            net, release=c.cluster_id, namespace=f"trino-{c.cluster_id}",
            https=bool(values.get("server", {}).get("config", {}).get("https")),
            ingress=picks.ingress, labels={"trinogen.io/cluster": c.cluster_id})
        own += [policy] if policy is not None else []
    if picks.service is not None:
        values.update(service.chart_values(service.parse(where, picks.service), c.cluster_id,
                                           c.owner))
    values.update(picks.extra)
    return Rendered(c, values, own)
