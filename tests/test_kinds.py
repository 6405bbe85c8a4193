"""The option-kind shape (trinogen/kinds): a kind registered in the one list reaches the
document, the chart's values and Trino's files, through the real chart (helm-python-sdk).

`probe` is a kind made for this test only, standing for the kinds that add Trino properties and
files (an event listener, resource groups): its three modules are this module's classes,
registered where `trinogen.kinds.module` finds a home. The expectations come from the option's
text below and the chart's own file layout, never from trinogen's output.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from tests.conftest import CHART_DIR
from tests.marks import CHART, helm_python
from tests.test_chart import render_through_chart
from tests.test_workload import doc, outcome, with_options
from trinogen import kinds
from trinogen.kinds.protocol import Manifest
from trinogen.model import Cluster, Failed
from trinogen.model import document as model_document
from trinogen.render import Renderer
from trinogen.settings import Settings
from trinogen.settings import named as settings_named

LISTENER = "probe-listener.properties"
# Text the chart runs through Helm's tpl: `{{` must arrive as written.
LISTENER_TEXT = "event-listener.name=probe\nprobe.note=keep {{ this }} as it is\n"
CONFIG_LINE = ("event-listener.config-files", f"/etc/trino/{LISTENER}")


@dataclasses.dataclass(frozen=True)
class ProbePart:
    name: str
    config: tuple[tuple[str, str], ...] = (CONFIG_LINE,)
    coordinator: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ((LISTENER, LISTENER_TEXT),)


def _parse(where: str, raw: Mapping[str, Any]) -> str:
    return str(raw.get("label", where))


def _fill(option: str, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
          c: Any) -> ProbePart:
    return ProbePart(f"{option}-{cluster_id}")


def _values(part: ProbePart, s: Settings) -> dict[str, Any]:
    return {"name": part.name}


def _manifests(part: ProbePart, cluster: Cluster, s: Settings) -> tuple[Manifest, ...]:
    return (Manifest("probe.yaml", "configmap.yaml.j2",
                     {"name": part.name, "files": [("note.txt", "probe\n")]},
                     "ConfigMap", part.name),)


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """The `probe` kind in the list, its home's modules importable, one option named `audit`."""
    for part, attrs in (("options", {"parse": _parse}),
                        ("document", {"FIELD": "probe", "fill": _fill}),
                        ("values", {"values": _values, "manifests": _manifests})):
        module = types.ModuleType(f"trinogen.kinds.probe.{part}")
        module.__dict__.update(attrs)
        monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(kinds.HOMED, "probe", "probe")
    monkeypatch.setitem(settings_named.KINDS, "probe", kinds.module("probe", "options"))
    # the allowed top-level fields are computed from the list when trinogen.model loads
    monkeypatch.setattr(model_document, "TOP_FIELDS", model_document.TOP_FIELDS | {"probe"})
    base = with_options()
    yield dataclasses.replace(base, named={**base.named, "probe": {"audit": "audit"}})


@pytest.mark.parametrize("kind", sorted(kinds.HOMED))
def test_every_homed_kind_has_its_whole_home(kind: str) -> None:
    """Each kind in HOMED has the three modules the Protocols describe, its document module picks
    by the field the list names, and its template fragment exists and is read up front."""
    import importlib
    import inspect

    from tests.conftest import ROOT
    from trinogen.render.templates import TEMPLATE_NAMES

    options, document, values = (importlib.import_module(kinds.module(kind, part))
                                 for part in ("options", "document", "values"))
    assert kind in kinds.KINDS
    assert list(inspect.signature(options.parse).parameters) == ["where", "raw"]
    assert document.FIELD == kinds.HOMED[kind]
    assert list(inspect.signature(document.fill).parameters) == [
        "option", "cluster_id", "owner", "d", "s", "c"]
    assert list(inspect.signature(values.values).parameters) == ["part", "s"]
    assert (ROOT / "templates" / kinds.fragment(kind)).is_file()
    assert kinds.fragment(kind) in TEMPLATE_NAMES


def test_authentication_has_its_whole_home_outside_homed() -> None:
    """`authentication`, picked by model/document.py rather than through HOMED, has its parser,
    its document reading, its values module and its template fragment, read up front."""
    import importlib
    import inspect

    from tests.conftest import ROOT
    from trinogen.render.templates import TEMPLATE_NAMES

    home = "trinogen.kinds.authentication"
    options, document, values = (importlib.import_module(f"{home}.{part}")
                                 for part in ("options", "document", "values"))
    assert "authentication" in kinds.KINDS and "authentication" not in kinds.HOMED
    assert list(inspect.signature(options.parse).parameters) == ["where", "raw"]
    assert document.FIELD == "authentication"
    assert list(inspect.signature(values.values).parameters) == ["part", "s"]
    assert (ROOT / "templates" / kinds.fragment("authentication")).is_file()
    assert kinds.fragment("authentication") in TEMPLATE_NAMES


@pytest.mark.parametrize("kind", sorted(kinds.PER_CATALOG))
def test_every_kind_a_catalog_picks_has_its_home(kind: str) -> None:
    """Each kind in PER_CATALOG is a listed kind whose parser is found in its home, and has a
    document module but no values module nor template fragment (its lines are the catalog's)."""
    import importlib
    import importlib.util
    import inspect

    from tests.conftest import ROOT

    assert kind in kinds.KINDS and kind not in kinds.HOMED
    assert settings_named.KINDS[kind] == f"trinogen.kinds.{kind}.options"
    options = importlib.import_module(kinds.module(kind, "options"))
    assert list(inspect.signature(options.parse).parameters) == ["where", "raw"]
    assert importlib.util.find_spec(kinds.module(kind, "document")) is not None
    assert importlib.util.find_spec(kinds.module(kind, "values")) is None
    assert not (ROOT / "templates" / kinds.fragment(kind)).exists()
    assert "{catalog}" in kinds.PER_CATALOG[kind]


def test_a_listed_kind_is_picked_by_its_field(probe: Settings) -> None:
    """A document's `probe: audit` becomes the cluster's probe value; an unknown name is an
    error naming the field and the known options."""
    c = outcome(doc(probe="audit"), probe)
    assert isinstance(c, Cluster), c
    assert c.kind("probe") == ProbePart("audit-lake")
    failed = outcome(doc(probe="audi"), probe)
    assert isinstance(failed, Failed)
    assert [(p.field, "known: audit" in p.message) for p in failed.problems] == [("probe", True)]


def test_a_kind_s_properties_and_files_reach_the_coordinator(probe: Settings) -> None:
    """The kind's config line is in both roles' config.properties and its file sits beside it in
    the coordinator's ConfigMap exactly as written (through the chart's tpl)."""
    c = outcome(doc(probe="audit"), probe)
    assert isinstance(c, Cluster), c
    files = Renderer(probe).render_cluster(c, {})
    text = files[f"{probe.output.clusters_dir}/lake/values.yaml"].decode()
    _, objects = render_through_chart(helm_python.Chart.load(CHART_DIR), text, "lake",
                                      "trino-lake")
    maps = {o["metadata"]["name"]: o.get("data", {}) for o in objects
            if o.get("kind") == "ConfigMap"}
    coordinator, worker = maps["lake-trino-coordinator"], maps["lake-trino-worker"]
    assert coordinator[LISTENER] == LISTENER_TEXT
    assert LISTENER not in worker
    for data in (coordinator, worker):
        assert "=".join(CONFIG_LINE) in data["config.properties"].splitlines()


def test_a_kind_s_own_objects_are_written_and_checked(probe: Settings) -> None:
    """The objects a kind's `manifests` returns are files under the cluster's manifests/ and are
    listed, with the kind as their maker, among the objects the name and size checks see; a
    cluster that picked none of the kind has none."""
    from trinogen.render.objects import cluster_objects

    c = outcome(doc(probe="audit"), probe)
    assert isinstance(c, Cluster), c
    r = Renderer(probe)
    files = r.render_cluster(c, {})
    manifest = yaml.safe_load(files[f"{probe.output.clusters_dir}/lake/manifests/probe.yaml"])
    assert (manifest["kind"], manifest["metadata"]["name"]) == ("ConfigMap", "audit-lake")
    assert manifest["data"] == {"note.txt": "probe\n"}
    objects = cluster_objects(c, probe.chart.name, r.written(c, {}, False))
    assert [(o.kind, o.maker, o.field) for o in objects if o.name == "audit-lake"] == [
        ("ConfigMap", "trinogen (probe)", "probe")]
    plain = outcome(doc(), probe)
    assert isinstance(plain, Cluster)
    assert not [p for p in r.render_cluster(plain, {}) if p.endswith("manifests/probe.yaml")]


for _mark in CHART:  # needs the chart and helm-python-sdk (fails under CI=true without them)
    test_a_kind_s_properties_and_files_reach_the_coordinator = _mark(
        test_a_kind_s_properties_and_files_reach_the_coordinator)
