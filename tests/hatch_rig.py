"""A document with platform hatch picks through trinogen's real render (issue 21, item 6).

The settings get one option of each kind a test gives (named `picked`, parsed as the loader
parses them), the document picks them by name (`image`, `runtime`, `networkPolicy`, `service`;
and an `ingress` option when the test wants an Ingress), and `Renderer.render_cluster` writes the
cluster's files: its values.yaml (parsed) and trinogen's own manifests of the hatches (the
coordinator's client NetworkPolicy). The chart tests, the API-server tests and the real-Trino
test all judge what this produces.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.test_workload import outcome
from trinogen.model import Cluster
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind

PICK = "picked"
INGRESS = {"host": "{cluster}.trino.example.com", "class_name": "nginx"}


@dataclass(frozen=True)
class Picks:
    """The hatch options one cluster picks (raw settings text, parsed by the kinds)."""

    image: dict[str, Any] | None = None
    runtime: dict[str, Any] | None = None
    network: dict[str, Any] | None = None
    service: dict[str, Any] | None = None
    ingress: bool = False  # the cluster also picks an ingress option
    extra: dict[str, Any] = field(default_factory=dict)  # values set over trinogen's (controls)


@dataclass
class Rendered:
    cluster: Cluster
    values: dict[str, Any]
    own: list[dict[str, Any]]  # the hatches' manifests trinogen writes


# kind -> (the Picks attribute, the document field)
KINDS = {"images": ("image", "image"), "runtime": ("runtime", "runtime"),
         "network_policies": ("network", "networkPolicy"), "services": ("service", "service")}


def picking(d: dict[str, Any], settings: Settings, picks: Picks) -> tuple[dict[str, Any], Settings]:
    """The document picking each given option, and the settings naming it."""
    d = copy.deepcopy(d)
    named = dict(settings.named)
    raw = {kind: getattr(picks, attr) for kind, (attr, _) in KINDS.items()}
    if picks.ingress:
        raw["ingress"] = INGRESS
    for kind, option in raw.items():
        if option is not None:
            named[kind] = {**named.get(kind, {}), **parse_kind(kind, {PICK: option}, "test")}
            d[KINDS[kind][1] if kind in KINDS else kind] = PICK
    return d, dataclasses.replace(settings, named=named)


def with_hatches(d: dict[str, Any], settings: Settings, picks: Picks) -> Rendered:
    """The document's values.yaml and hatch manifests as trinogen renders them."""
    d, settings = picking(d, settings, picks)
    c = outcome(d, settings)
    assert isinstance(c, Cluster), c
    files = Renderer(settings).render_cluster(c, {})
    base = f"{settings.output.clusters_dir}/{c.cluster_id}"
    values = yaml.safe_load(files[f"{base}/values.yaml"])
    values.update(picks.extra)
    own = [yaml.safe_load(text) for path, text in files.items()
           if path.startswith(f"{base}/manifests/networkpolicy")]
    return Rendered(c, values, own)
