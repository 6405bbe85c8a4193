"""Kubernetes' limits through the real Trino chart: what trinogen refuses is what the API server
would refuse.

The independent reader is the chart itself (helm-python-sdk, `CHART_DIR`) and the API server's
rule, written here from kubernetes/kubernetes (pkg/apis/core/validation/validation.go:
`ValidateConfigMap` adds `len(value)` of every `data` and `binaryData` value and refuses more than
`core.MaxSecretSize`, 1 MiB; keys are not counted). Each case is rendered once with trinogen's
check switched off, to see what the chart would really write, and once with it.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import kitchen_sink
from tests.conftest import demo_settings
from tests.test_chart import pytestmark as chart_marks
from tests.test_chart import render_through_chart
from trinogen.model import Cluster, RawDocument, classify
from trinogen.model.library import NO_LIBRARY, Library, parse_library
from trinogen.render import LimitError, Renderer, renderer
from trinogen.render.objects import KubeObject, cluster_objects
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None

pytestmark = chart_marks
MIB = 1024 * 1024  # core.MaxSecretSize


def api_data_bytes(obj: Mapping[str, Any]) -> int:
    """The API server's count for a ConfigMap: the UTF-8 bytes of every data value and the
    decoded bytes of every binaryData value (keys are not counted)."""
    data = sum(len(str(v).encode("utf-8")) for v in (obj.get("data") or {}).values())
    binary = sum(len(base64.b64decode(v)) for v in (obj.get("binaryData") or {}).values())
    return data + binary


@pytest.fixture(scope="module")
def chart() -> Any:
    from tests.conftest import CHART_DIR

    return helm_python.Chart.load(CHART_DIR)


@pytest.fixture(scope="module")
def settings() -> Settings:
    return demo_settings()


def _cluster(doc: dict[str, Any], settings: Settings, library: Library) -> Cluster:
    cluster = classify(RawDocument(doc_key(doc["_id"]), copy.deepcopy(doc)), settings, library)
    assert isinstance(cluster, Cluster), cluster
    return cluster


@contextmanager
def _unchecked() -> Iterator[None]:
    """The renderer without its limits check: what would reach git, and the chart, without it."""
    saved = renderer.check_objects
    renderer.check_objects = lambda *_: None  # type: ignore[assignment]
    try:
        yield
    finally:
        renderer.check_objects = saved


class Case:
    """One document through trinogen (unchecked) and the real chart: every ConfigMap's size."""

    def __init__(self, chart: Any, settings: Settings, doc: dict[str, Any],
                 library: Library = NO_LIBRARY) -> None:
        self.cluster = _cluster(doc, settings, library)
        cid = self.cluster.cluster_id
        r = Renderer(settings)
        with _unchecked():
            files = r.render_cluster(self.cluster, {})
        values = files[f"{settings.output.clusters_dir}/{cid}/values.yaml"].decode()
        _, chart_objects = render_through_chart(chart, values, cid, f"trino-{cid}")
        own = [yaml.safe_load(raw) for path, raw in files.items() if "/manifests/" in path]
        self.real = {(o["kind"], o["metadata"]["name"]): api_data_bytes(o)
                     for o in [*chart_objects, *own] if o["kind"] == "ConfigMap"}
        self.measured = {(o.kind, o.name): o
                         for o in cluster_objects(self.cluster, settings.chart.name,
                                                           r.written(self.cluster, {}, False))}
        try:
            r.render_cluster(self.cluster, {})
            self.problems: tuple[Any, ...] = ()
        except LimitError as e:
            self.problems = e.problems

    def role(self, role: str) -> tuple[str, str]:
        (key,) = [k for k in self.real if k[1].endswith(f"-trino-{role}")]
        return key


def _measure(obj: KubeObject) -> int:
    return obj.fixed + sum(p.size for p in obj.data)


def _doc(cid: str, **body: Any) -> dict[str, Any]:
    doc = {"_id": f"limits-{cid}", "clusterId": cid, "owner": "qa_team", "enabled": True,
           "connectors": [{"name": "memory", "properties": {"connector.name": "memory"}}]}
    doc.update(body)
    return doc


# --- the measurement against the real chart ------------------------------------------------------

def sink_case(chart: Any, tmp: Path) -> Case:
    """The kitchen sink: its settings, its library, its document."""
    path = tmp / "settings.yaml"
    path.write_text(kitchen_sink.SETTINGS)
    library = parse_library([RawDocument(doc_key(d["_id"]), d) for d in kitchen_sink.catalogs()])
    return Case(chart, load_settings(path, environ={}), kitchen_sink.document(), library)


SAMPLES = {
    "kitchen-sink": kitchen_sink.document,
    "non-ascii": lambda: _doc("non-ascii", connectors=[
        {"name": "pg", "properties": {"connector.name": "postgresql",
                                      "connection-url": "jdbc:postgresql://db/日本語 ü 😀 {{ .Release.Name }}"}}],
        logLevels={"io.trino.plugin.hive": "DEBUG", "io.trino.ü": "INFO"},
        properties={"sql.path": "naïve"},
        files=[{"name": "a.txt", "content": "é" * 10 + "\n"}]),
    # the chart writes resource-groups.json as a `|-` block: without the JSON's final newline
    "resource-groups": lambda: _doc("resource-groups", resourceGroups={
        "rootGroups": [{"name": "adhoc-ü", "hardConcurrencyLimit": 3, "maxQueued": 30}],
        "selectors": [{"user": "ü.*", "group": "adhoc-ü"}]}),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_measured_as_the_api_server_counts(chart: Any, name: str, tmp_path: Path) -> None:
    """Every ConfigMap the chart and trinogen write is the one trinogen measured: the catalogs'
    and the files' byte for byte, a role's within the chart's own text (CHART_ROLE_TEXT)."""
    if name == "kitchen-sink":
        case = sink_case(chart, tmp_path)
    else:
        case = Case(chart, demo_settings(), SAMPLES[name]())
    assert not case.problems
    for key, real in case.real.items():
        obj = case.measured.get(key)
        assert obj is not None, f"{key} is not in trinogen's inventory"
        parts = sum(p.size for p in obj.data)
        if obj.fixed:
            assert 0 <= real - parts <= obj.fixed, (key, real, parts)
        else:
            assert real == parts, (key, real, parts)


def _unmeasured(chart: Any, tmp: Path, listeners: int) -> dict[str, int]:
    """Per role, the bytes of its ConfigMap trinogen did not measure, for a document on the
    kitchen sink's settings that picks `listeners` HTTP event listeners logging splits (so each
    is a file on both roles, ~700 bytes of URI)."""
    raw = yaml.safe_load(kitchen_sink.SETTINGS)
    raw["event_listeners"] = {f"wide-{i}": {
        "type": "http", "uri": f"https://audit.example.com/{'x' * 600}/{i}",
        "events": ["completed", "split"]} for i in range(listeners)}
    path = tmp / f"settings-{listeners}.yaml"
    path.write_text(yaml.safe_dump(raw))
    doc = _doc("listeners", eventListeners=sorted(raw["event_listeners"]))
    case = Case(chart, load_settings(path, environ={}), doc)
    assert not case.problems
    return {role: case.real[case.role(role)] - sum(p.size for p in case.measured[
        case.role(role)].data) for role in ("coordinator", "worker")}


def test_the_option_kinds_files_are_measured(chart: Any, tmp_path: Path) -> None:
    """The event listener files the chart writes beside config.properties (on both roles,
    through additionalConfigFiles) are measured byte for byte: with twelve of them (9 KiB) the
    unmeasured rest of each role's ConfigMap (the chart's own text) is what it is without."""
    assert _unmeasured(chart, tmp_path, 12) == _unmeasured(chart, tmp_path, 0)


# --- just under passes, just over fails -----------------------------------------------------------

WIDE = "日" * 60_000  # 360,000 bytes once escaped (\u65E5)


def _pg(name: str, url: str) -> dict[str, Any]:
    return {"name": name, "properties": {"connector.name": "postgresql", "connection-url": url}}


def _catalogs(pad: int) -> dict[str, Any]:
    return _doc("wide-catalogs", connectors=[
        _pg("c0", WIDE), _pg("c1", WIDE), _pg("c2", WIDE[:54_000]), _pg("pad", "x" * pad)])


def _loggers(pad: int) -> dict[str, Any]:
    """4,000 loggers of ~250 bytes each; the pad is a server property (a logger name is at most
    256 characters)."""
    levels = {f"io.trino.{'l' * 230}.n{i:05d}": "DEBUG" for i in range(4000)}
    return _doc("many-loggers", logLevels=levels, properties={"sql.path": "x" * pad})


def _properties(pad: int) -> dict[str, Any]:
    return _doc("long-properties", properties={
        "sql.path": WIDE[:57_000], "jmx.base-name": "é" * 57_000, "web-ui.user": "ü" * 57_000,
        "http-server.log.path": "x" * pad})


def _files(pad: int) -> dict[str, Any]:
    return _doc("big-files", files=[
        {"name": f"f{i}.txt", "content": "ü" * 120_000} for i in range(4)
    ] + [{"name": "pad.txt", "content": "x" * pad}])


def _target(case: Case, key: tuple[str, str], target: int, exact: bool) -> int:
    """The pad that moves the object's size to `target`: the chart's bytes when exact, else
    trinogen's measure (each pad character is one byte in the object)."""
    now = case.real[key] if exact else _measure(case.measured[key])
    return target - now


BOUNDARY = {  # builder, the object (kind, role or name suffix), exact, the part named
    "catalogs": (_catalogs, "-trino-catalog", True, "connectors"),
    "loggers": (_loggers, "-trino-coordinator", False, "logLevels"),
    "properties": (_properties, "-trino-coordinator", False, "properties"),
    "files": (_files, "-trino-files", True, "files"),
}


@pytest.mark.parametrize("name", sorted(BOUNDARY))
def test_just_under_passes_just_over_fails(chart: Any, settings: Settings, name: str) -> None:
    """A document whose largest ConfigMap sits at 1 MiB renders; one byte more fails, naming the
    part; and through the real chart the passing one fits the API server's rule."""
    build, suffix, exact, field = BOUNDARY[name]
    base = Case(chart, settings, build(1))
    (key,) = [k for k in base.real if k[1].endswith(suffix)]
    pad = 1 + _target(base, key, MIB, exact)
    assert pad > 1, f"{name}: the base case is already over ({base.real[key]})"
    under, over = Case(chart, settings, build(pad)), Case(chart, settings, build(pad + 1))
    assert not under.problems, under.problems
    assert under.real[key] <= MIB
    if exact:
        assert (under.real[key], over.real[key]) == (MIB, MIB + 1)
    assert over.problems, f"{name}: {over.real[key]} bytes passed"
    (problem,) = [p for p in over.problems if f"{key[1]!r}" in p.message]
    assert problem.field.startswith(field), problem
    assert f"{MIB:,}" in problem.message


def test_over_through_the_chart_always_fails(chart: Any, settings: Settings) -> None:
    """What the issue reproduced (15 non-ASCII catalogs: a 10 MB ConfigMap) is refused; the
    chart would have written more than 1 MiB."""
    doc = _doc("fifteen", connectors=[_pg(f"c{i}", WIDE) for i in range(15)])
    case = Case(chart, settings, doc)
    (key,) = [k for k in case.real if k[1].endswith("-trino-catalog")]
    assert case.real[key] > 10 * MIB // 2
    assert case.problems and case.problems[0].field.startswith("connectors")

