"""render.limits: the API server's size rules and one name per kind, judged before git.

The limits come from kubernetes/kubernetes (`ValidateConfigMap`, `ValidateSecret`: the values'
bytes against core.MaxSecretSize = 1 MiB, keys not counted; apimachinery `ValidateAnnotations`:
keys plus values against 256 KiB). Through the real chart: tests/test_chart_limits.py.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import kitchen_sink
from tests.conftest import demo_settings
from tests.fakes import FakeSource
from tests.test_chart_objects import _cluster as sink_cluster
from tests.test_chart_objects import sink_library, sink_settings
from trinogen.model import Cluster, RawDocument, classify
from trinogen.pipeline import validate
from trinogen.render import LimitError, Renderer
from trinogen.render.limits import SMALLEST_LIMIT, _size_problems, collisions, object_problems
from trinogen.render.objects import (
    OTHER_ANNOTATIONS,
    KubeObject,
    Part,
    Written,
    cluster_objects,
    size_bound,
)
from trinogen.render.texts import ServerTexts
from trinogen.secrets import Secret, SecretData
from trinogen.settings import Settings
from trinogen.source import doc_key

MIB = 1024 * 1024
KIB256 = 256 * 1024


def _part(size: int, field: str = "files", what: str = "file a") -> Part:
    return Part(field, what, size)


@pytest.mark.parametrize(("kind", "sizes", "fixed", "fails"), [
    ("ConfigMap", [MIB], 0, False),
    ("ConfigMap", [MIB, 1], 0, True),
    ("ConfigMap", [MIB - 10], 10, False),
    ("ConfigMap", [MIB - 10], 11, True),
    ("Secret", [MIB // 2, MIB // 2], 0, False),
    ("Secret", [MIB // 2, MIB // 2 + 1], 0, True),
    ("Deployment", [10 * MIB], 0, False),  # no data limit: only ConfigMaps and Secrets have one
])
def test_data_fits_one_mib_by_the_api_servers_count(kind: str, sizes: list[int], fixed: int,
                                                     fails: bool) -> None:
    """A ConfigMap's or Secret's data values together at most 1,048,576 bytes, the maker's own
    bytes included; exactly the limit passes."""
    obj = KubeObject(kind, "x", "trinogen", "files", tuple(_part(s) for s in sizes), fixed)
    assert bool(_size_problems("c", obj)) is fails


@pytest.mark.parametrize(("size", "fails"), [(KIB256 - OTHER_ANNOTATIONS, False),
                                             (KIB256 - OTHER_ANNOTATIONS + 1, True)])
def test_annotations_fit_256_kib_with_room_for_the_others(size: int, fails: bool) -> None:
    """An object's annotations (keys plus values) with room kept for those trinogen does not
    write (the chart's checksums, Argo CD's tracking)."""
    obj = KubeObject("ServiceAccount", "sa", "the chart", "serviceAccount",
                     annotations=(_part(size, "serviceAccount", "annotation a"),))
    found = _size_problems("c", obj)
    assert bool(found) is fails
    if fails:
        assert found[0].field == "serviceAccount" and "annotations" in found[0].message


def test_the_message_names_the_heaviest_field_and_the_largest_parts() -> None:
    """Many small loggers outweigh one larger property: the field named is logLevels, and the
    message lists the largest parts with their sizes."""
    parts = (*(Part("logLevels", f"line io.l{i}", 300) for i in range(4000)),
             Part("properties", "line sql.path", 9000))
    obj = KubeObject("ConfigMap", "c-trino-coordinator", "the chart", data=parts)
    (problem,) = _size_problems("c", obj)
    assert problem.field == "logLevels"
    assert "'c-trino-coordinator'" in problem.message and "line sql.path" in problem.message
    assert "1,048,576" in problem.message


@pytest.mark.parametrize(("a", "b", "collide"), [
    (("Secret", "x", "ESO"), ("Secret", "x", "cert-manager"), True),
    (("ConfigMap", "x", "the chart"), ("ConfigMap", "x", "trinogen"), True),
    (("Secret", "x", "ESO"), ("ConfigMap", "x", "trinogen"), False),
    (("Service", "x", "the chart"), ("ServiceAccount", "x", "the chart"), False),
    (("Secret", "x", "ESO"), ("Secret", "y", "ESO"), False),
])
def test_one_name_per_kind(a: tuple[str, str, str], b: tuple[str, str, str],
                           collide: bool) -> None:
    """Two objects of one kind and name collide, whoever makes them; other kinds do not."""
    found = collisions("c", [KubeObject(*a, field="ingress"), KubeObject(*b, field="files")])
    assert bool(found) is collide
    if collide:
        assert a[2] in found[0].message and b[2] in found[0].message


# --- the cluster's objects --------------------------------------------------------------------

def _cluster(**body: Any) -> Cluster:
    doc = {"_id": "c", "clusterId": "c", "owner": "qa_team", "enabled": True, **body}
    cluster = classify(RawDocument(doc_key("c"), doc), demo_settings())
    assert isinstance(cluster, Cluster), cluster
    return cluster


KEYTAB = {"name": "k.keytab", "secret": "{{ vault:secret/trino/c/kerberos#keytab }}",
          "encoding": "base64"}


@pytest.mark.parametrize(("size", "fails"), [(MIB, False), (MIB + 1, True)])
def test_a_secret_is_measured_as_eso_writes_it(size: int, fails: bool) -> None:
    """A secret file's Vault value, decoded as ESO will decode it, against 1 MiB: the Secret of
    the files fails naming the file when this run read a value one byte too large."""
    cluster = _cluster(files=[KEYTAB])
    resolved = {"secret/trino/c/kerberos": SecretData(
        1, {"keytab": Secret(base64.b64encode(b"k" * size).decode())})}
    if not fails:
        Renderer(demo_settings()).render_cluster(cluster, resolved)
        return
    with pytest.raises(LimitError) as caught:
        Renderer(demo_settings()).render_cluster(cluster, resolved)
    (problem,) = caught.value.problems
    assert problem.field == "files" and "c-trino-secret-files" in problem.message
    assert "file k.keytab" in problem.message


def test_a_secret_not_read_is_not_measured() -> None:
    """Without Vault (validate, dry runs without reads) a Secret's size is unknown: no problem."""
    cluster = _cluster(files=[KEYTAB])
    assert Renderer(demo_settings()).object_problems(cluster) == []


def test_annotations_are_measured_once_filled() -> None:
    """The pod annotations are in the inventory as rendered; an object without data has only
    its annotations judged."""
    cluster = _cluster(files=[{"name": "a.txt", "content": "x"}])
    r = Renderer(demo_settings())
    objects = cluster_objects(cluster, "trino", r.written(cluster, {}, False))
    (deployment,) = [o for o in objects if o.kind == "Deployment" and "coordinator" in o.name]
    assert [p.what for p in deployment.annotations] == ["annotation trinogen.io/files-checksum"]


def test_an_empty_written_has_only_the_charts_objects() -> None:
    """With no catalogs written the chart renders no catalog ConfigMap, and the inventory none."""
    cluster = _cluster()
    written = Written({}, ServerTexts([], [], [], [], [], [], []), {})
    names = {(o.kind, o.name) for o in cluster_objects(cluster, "trino", written)}
    assert ("ConfigMap", "c-trino-catalog") not in names
    assert ("ConfigMap", "c-trino-coordinator") in names
    assert object_problems(cluster, "trino", written) == []


def test_validate_reports_an_object_too_large_and_keeps_the_others() -> None:
    """`validate` fails the document whose catalog ConfigMap would exceed 1 MiB, naming the
    catalog; the other document still validates."""
    wide = {"connector.name": "postgresql", "connection-url": "日" * 60_000}
    big = {"_id": "big", "clusterId": "big", "owner": "qa_team", "enabled": True,
           "connectors": [{"name": f"c{i}", "properties": wide} for i in range(3)]}
    fine = {"_id": "fine", "clusterId": "fine", "owner": "qa_team", "enabled": True}
    report = validate(demo_settings(), FakeSource({doc_key(d["_id"]): d for d in (big, fine)}))
    assert report.rendered == ["fine"]
    (failed,) = report.failed
    assert failed.cluster_id == "big"
    assert failed.problems[0].field.startswith("connectors[")
    assert "'big-trino-catalog'" in failed.problems[0].message


# --- the bound that spares measuring (render.objects.size_bound) ------------------------------

def _totals_measured(cluster: Cluster, written: Written) -> list[int]:
    """Every total the API server compares with a limit, measured part by part."""
    out = []
    for obj in cluster_objects(cluster, "trino", written):
        out.append(obj.fixed + sum(p.size for p in obj.data))
        if obj.annotations:
            out.append(OTHER_ANNOTATIONS + sum(p.size for p in obj.annotations))
    return out


def _resolved_for(cluster: Cluster, value: str) -> dict[str, SecretData]:
    """Every Vault value the cluster uses, read as `value`."""
    keys: dict[str, dict[str, Secret]] = {}
    for use in (*cluster.vault_uses, *cluster.secret_uses):
        keys.setdefault(use.ref.secret_path, {})[use.ref.key] = Secret(value)
    return {path: SecretData(1, values) for path, values in keys.items()}


def _sink(tmp: Path) -> tuple[Cluster, Settings]:
    settings = sink_settings(tmp)
    return sink_cluster(kitchen_sink.document(), settings, sink_library()), settings


WIDE = "日本\U0001F600\ud800="  # 3-, 4- and lone-surrogate-byte characters and an escaped one


@pytest.mark.parametrize("inline", [False, True], ids=["references", "inline"])
@pytest.mark.parametrize("value", ["", "v", WIDE * 40, base64.b64encode(b"k" * 300).decode()],
                         ids=["empty", "short", "wide", "base64"])
def test_the_bound_is_above_every_total_of_the_kitchen_sink(tmp_path: Path, value: str,
                                                            inline: bool) -> None:
    """With every option at once and Vault values of every width read, no object's total
    (data or annotations, the maker's own bytes included) exceeds size_bound."""
    cluster, settings = _sink(tmp_path)
    written = Renderer(settings).written(cluster, _resolved_for(cluster, value), inline)
    totals = _totals_measured(cluster, written)
    assert len(totals) > 20
    assert max(totals) <= size_bound(cluster, written)


DOC_WIDE = "日本\U0001F600é="  # what a document may hold (no lone surrogate)
WIDE_PROPS = {"connector.name": "postgresql", "connection-url": DOC_WIDE * 2000}


@pytest.mark.parametrize("body", [
    {"connectors": [{"name": "wide", "properties": WIDE_PROPS}]},
    {"files": [{"name": "notes.txt", "content": DOC_WIDE * 3000}]},
    {"logLevels": {f"io.trino.x{i}": "DEBUG" for i in range(2000)}},
], ids=["catalog", "file", "loggers"])
def test_the_bound_is_above_every_total_of_wide_texts(body: dict[str, Any]) -> None:
    """Non-ASCII catalogs and files (each character up to 6 bytes once escaped) and many lines
    stay under the bound."""
    cluster = _cluster(**body)
    written = Renderer(demo_settings()).written(cluster, {}, False)
    assert max(_totals_measured(cluster, written)) <= size_bound(cluster, written)


BIG = 20_000  # characters: more than the kitchen sink's bound without the text (~12,000)


EXPORTER = f'  exporter_config: "{{hostPort: localhost:9080, note: {"e" * BIG}}}"'


def _big_rules(doc: dict[str, Any]) -> None:
    doc["accessControl"]["rules"]["catalogs"] = [
        {"user": f"u{i:05d}", "catalog": "lake", "allow": "read-only"} for i in range(BIG // 40)]


@pytest.mark.parametrize(("settings_old", "settings_new", "edit", "value"), [
    ('role/trino-{cluster}"', f'role/trino-{{cluster}}-{"r" * BIG}"', None, "v"),
    ("backend-protocol: HTTPS}", f'backend-protocol: HTTPS, example.com/note: "{"n" * BIG}"}}',
     None, "v"),
    ("", "", _big_rules, "v"),
    ("", "", None, "k" * BIG),
    ("  service_monitor_labels:", EXPORTER + "\n  service_monitor_labels:", None, "v"),
], ids=["service-account annotation", "ingress annotation", "rules file", "vault value",
        "exporter configuration"])
def test_the_bound_counts_each_kind_of_text(
        tmp_path: Path, settings_old: str, settings_new: str,
        edit: Callable[[dict[str, Any]], None] | None, value: str) -> None:
    """One text of each kind larger than all the others together: the total of the object
    holding it stays under the bound (which would not hold if the bound left that text out)."""
    text = kitchen_sink.SETTINGS.replace(settings_old, settings_new)
    assert text != kitchen_sink.SETTINGS or not settings_old
    settings = sink_settings(tmp_path, text)
    doc = kitchen_sink.document()
    if edit is not None:
        edit(doc)
    cluster = sink_cluster(doc, settings, sink_library())
    written = Renderer(settings).written(cluster, _resolved_for(cluster, value), False)
    totals = _totals_measured(cluster, written)
    assert max(totals) > BIG
    assert max(totals) <= size_bound(cluster, written)


def test_the_names_only_inventory_lists_the_same_objects(tmp_path: Path) -> None:
    """Without sizes the inventory holds the same objects in the same order, with no parts:
    name collisions are judged on the same list either way."""
    cluster, settings = _sink(tmp_path)
    written = Renderer(settings).written(cluster, _resolved_for(cluster, "v"), False)
    full = cluster_objects(cluster, "trino", written)
    names = cluster_objects(cluster, "trino", written, sizes=False)
    assert [o._replace(data=(), annotations=()) for o in full] == names
    assert any(o.data for o in full) and any(o.annotations for o in full)


def _catalog_doc(chars: int, char: str = "x", copies: int = 1) -> Cluster:
    return _cluster(connectors=[{"name": f"pad{i}", "properties": {
        "connector.name": "postgresql", "connection-url": char * chars}} for i in range(copies)])


def _chars_at_bound() -> int:
    """The connection-url length whose cluster's bound is exactly the smallest limit (each ASCII
    character adds 4 to the bound), or one below it."""
    one = _catalog_doc(1)
    base = size_bound(one, Renderer(demo_settings()).written(one, {}, False)) - 4
    return (SMALLEST_LIMIT - base) // 4


@pytest.mark.parametrize(("extra", "char", "copies", "measured", "fails"), [
    (-60_000, "x", 1, False, False),  # far below: names only
    (0, "x", 1, False, False),  # the bound at (or just under) 256 KiB: names only
    (1, "x", 1, True, False),  # just past it: measured, and it fits (the real size is a quarter)
    # three catalogs of 60,000 characters escaped to 6 bytes each: over 1 MiB, refused
    (60_000, "日", 3, True, True),
])
def test_sizes_are_measured_exactly_when_the_bound_could_reach_a_limit(
        extra: int, char: str, copies: int, measured: bool, fails: bool) -> None:
    """A cluster whose bound is at or below the smallest limit is listed for its names only;
    past it, every part is measured; either way the problems are those of a full measurement."""
    chars = extra if copies > 1 else _chars_at_bound() + extra
    cluster = _catalog_doc(chars, char, copies)
    written = Renderer(demo_settings()).written(cluster, {}, False)
    assert (size_bound(cluster, written) > SMALLEST_LIMIT) is measured
    problems = object_problems(cluster, "trino", written)
    full = [p for obj in cluster_objects(cluster, "trino", written)
            for p in _size_problems("c", obj)]
    assert problems == full
    assert bool(problems) is fails
    if fails:
        assert problems[0].field.startswith('connectors["pad')
