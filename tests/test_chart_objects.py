"""Every object name in a cluster's namespace, held against the real chart: trinogen's inventory
(render.objects) is exactly what the chart renders from the values plus trinogen's manifests and
what they make others create; no name repeats for the kitchen sink; a collision fails.

The independent side: the chart's rendered objects (helm-python-sdk, `CHART_DIR`, helm test
hooks included), trinogen's manifests read back with PyYAML, the Secret each ExternalSecret
targets (ESO), the Secret each Ingress TLS entry names (cert-manager or the platform) and KEDA's
HorizontalPodAutoscaler `keda-hpa-<ScaledObject>` (KEDA's naming).
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import kitchen_sink
from tests.conftest import CHART_DIR, demo_settings
from tests.test_chart import pytestmark as chart_marks
from tests.test_chart import render_through_chart
from trinogen.model import Cluster, RawDocument, classify
from trinogen.model.library import NO_LIBRARY, Library, parse_library
from trinogen.render import LimitError, Renderer
from trinogen.render.objects import cluster_objects
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None

pytestmark = chart_marks


def sink_settings(tmp: Path, text: str = kitchen_sink.SETTINGS) -> Settings:
    path = tmp / "settings.yaml"
    path.write_text(text)
    return load_settings(path, environ={})


def sink_library() -> Library:
    return parse_library([RawDocument(doc_key(d["_id"]), d) for d in kitchen_sink.catalogs()])


def _cluster(doc: dict[str, Any], settings: Settings, library: Library) -> Cluster:
    cluster = classify(RawDocument(doc_key(doc["_id"]), copy.deepcopy(doc)), settings, library)
    assert isinstance(cluster, Cluster), cluster
    return cluster


def real_names(cluster: Cluster, settings: Settings) -> Counter[tuple[str, str]]:
    """(kind, name) of every object the namespace gets, read from the rendered output."""
    files = Renderer(settings).render_cluster(cluster, {})
    cid = cluster.cluster_id
    values = files[f"{settings.output.clusters_dir}/{cid}/values.yaml"].decode()
    _, objects = render_through_chart(helm_python.Chart.load(CHART_DIR), values, cid,
                                      f"trino-{cid}")
    own = [yaml.safe_load(raw) for path, raw in files.items()
           if "/manifests/" in path or "/secrets/" in path]
    names = Counter((o["kind"], o["metadata"]["name"]) for o in [*objects, *own] if "kind" in o)
    for o in own:
        if o["kind"] == "ExternalSecret":  # ESO creates its target
            names["Secret", o["spec"]["target"]["name"]] += 1
    for o in objects:
        if o["kind"] == "Ingress":  # cert-manager (or the platform) provides each TLS Secret
            for tls in o["spec"].get("tls") or []:
                names["Secret", tls["secretName"]] += 1
                if any(k.startswith("cert-manager.io/") for k in o["metadata"].get("annotations")
                       or {}):
                    names["Certificate", tls["secretName"]] += 1
        if o["kind"] == "ScaledObject":  # KEDA's HPA for it
            names["HorizontalPodAutoscaler", f"keda-hpa-{o['metadata']['name']}"] += 1
    return names


def inventory(cluster: Cluster, settings: Settings) -> Counter[tuple[str, str]]:
    r = Renderer(settings)
    return Counter((o.kind, o.name) for o in cluster_objects(cluster, settings.chart.name,
                                                             r.written(cluster, {}, False)))


def _doc(cid: str, **body: Any) -> dict[str, Any]:
    doc = {"_id": f"objects-{cid}", "clusterId": cid, "owner": "qa_team", "enabled": True}
    doc.update(body)
    return doc


def _scaled(kind: str) -> dict[str, Any]:
    scaling: dict[str, Any] = {"type": kind, "minReplicas": 1, "maxReplicas": 3}
    if kind == "keda":
        scaling["triggers"] = [{"type": "cpu", "metricType": "Utilization",
                                "metadata": {"value": "60"}}]
    return {"clusterConfig": {"worker": {"autoscaling": scaling}}}


DEMO_DOCS = {
    "bare": _doc("bare"),
    "hpa": _doc("hpa", **_scaled("hpa")),
    "keda": _doc("keda", **_scaled("keda")),
    "stopped": _doc("stopped", stopped=True),
    "long-id": _doc("long-" + "y" * 45, connectors=[
        {"name": "memory", "properties": {"connector.name": "memory"}}]),
}


@pytest.mark.parametrize("name", sorted(DEMO_DOCS))
def test_the_inventory_is_what_the_namespace_gets(name: str) -> None:
    """For documents of the demo settings, trinogen lists exactly the objects the chart renders,
    its own manifests and the objects those make others create."""
    settings = demo_settings()
    cluster = _cluster(DEMO_DOCS[name], settings, NO_LIBRARY)
    assert inventory(cluster, settings) == real_names(cluster, settings)


@pytest.mark.parametrize("stopped", [False, True], ids=["running", "stopped"])
def test_the_kitchen_sink_has_every_name_once(tmp_path: Path, stopped: bool) -> None:
    """The kitchen sink (every option at once, and stopped): the inventory is the namespace's
    objects, and no (kind, name) occurs twice; Secrets count as one kind whoever makes them."""
    settings = sink_settings(tmp_path)
    doc = {**kitchen_sink.document(), "stopped": stopped}
    cluster = _cluster(doc, settings, sink_library())
    real = real_names(cluster, settings)
    assert inventory(cluster, settings) == real
    assert [k for k, n in real.items() if n > 1] == []


README_INGRESS = kitchen_sink.SETTINGS.replace('tls_secret: "{cluster}-ingress-tls"',
                                               'tls_secret: "{cluster}-trino-tls"')


def test_an_ingress_tls_secret_named_like_the_keystore_fails(tmp_path: Path) -> None:
    """The README's old ingress example (`{cluster}-trino-tls`) with `tls: pod` authentication:
    the chart's Ingress and trinogen's keystore ExternalSecret name one Secret; the document
    fails, at render and in validate, naming both makers."""
    assert README_INGRESS != kitchen_sink.SETTINGS
    settings = sink_settings(tmp_path, README_INGRESS)
    cluster = _cluster(kitchen_sink.document(), settings, sink_library())
    with pytest.raises(LimitError) as caught:
        Renderer(settings).render_cluster(cluster, {})
    (problem,) = caught.value.problems
    assert problem.field == "ingress"
    assert "'sink-trino-tls'" in problem.message
    assert "ESO" in problem.message and "Ingress" in problem.message
    assert Renderer(settings).object_problems(cluster) == [problem]
