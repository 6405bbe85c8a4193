"""values.yaml through the real Trino chart: every setting a document declares reaches the objects.

Runs against the chart in TRINO_CHART_DIR, else `../shared/charts/trino` beside the clone, with the
`helm-python-sdk` wheel (the Helm Go library, in the `test` extra); outside CI a missing chart skips
these tests, in CI (CI=true) it fails the run. Each document is
rendered once (trinogen, then Helm); the expectations are derived from the document itself (merged
over the settings' defaults and profile by this module's own merge), never from trinogen's output.
Catalog and config texts are read back with an independent java.util.Properties reader and, when
`java` is on PATH, with the real java.util.Properties (tests/java/PropsRoundTrip.java).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import javaprops
from tests.conftest import CHART_DIR, ROOT, demo_settings, example_docs, needs
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData
from trinogen.settings import Settings, replace
from trinogen.source import doc_key

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None

pytestmark = [
    needs(helm_python is not None, "helm-python-sdk is not installed (pip install -e '.[test]')"),
    needs((CHART_DIR / "Chart.yaml").is_file(),
          f"no Trino chart at {CHART_DIR} (set TRINO_CHART_DIR or put shared/ beside the clone)"),
]

JAVA_SOURCE = ROOT / "tests" / "java" / "PropsRoundTrip.java"

# --- documents -------------------------------------------------------------------------------

# Values java.util.Properties, YAML and Helm's tpl each treat specially.
TRICKY_VALUES = {
    "tpl": "pre-{{ .Release.Name }}-post",
    "tpl-fail": '{{- fail "tpl must not run" -}}',
    "tpl-tight": "{{.Values.image.tag}}{{",
    "braces": "a{{{-b}}}c }} {",
    "equals": "a=b==c",
    "colon": "thrift://host:9083:x",
    "hash": "#not-a-comment",
    "bang": "!not-a-comment",
    "leading-spaces": "   three leading spaces",
    "trailing-spaces": "two trailing spaces  ",
    "only-space": " ",
    "empty": "",
    "backslashes": "C:\\new\\table\\u0041\\",
    "tabs": "\tleading tab,\tinner tab\t",
    "formfeed": "\fform feed",
    "controls": "bell\x07 esc\x1b del\x7f vt\x0b",
    "unicode": "naïve café – 日本語 ‘quotes’ ©",
    "non-bmp": "emoji 😀 clef 𝄞 cjk-ext 𠀋",
    "line-separators": "nel\x85 ls\u2028 ps\u2029 bom\ufeff",
    "yaml-syntax": "- [a, b] {c: d} & *alias !tag %dir @at `tick` |pipe >fold ? q",
    "quotes": "'single' \"double\" \\\"",
    "dollar": "$HOME ${HOME} $${x}",
    "yaml-words": "yes",
}
TRICKY_KEYS = {
    "key=with=equals": "v1",
    "key:with:colon": "v2",
    "#hash-key": "v3",
    "!bang-key": "v4",
    "schlüssel.ü": "v5",
    "key\\backslash": "v6",
    "a{{.Release.Name}}b": "v7",
}
TRICKY_TEXT = "pre-{{ .Release.Name }}-post #x = y: z \\ é 😀 "


LONGEST_ID = "long-" + "x" * 44 + "-z"  # 51 characters: refused (worker Service name > 63)
LONGEST_VALID_SERVICE_ID = "long-" + "y" * 45  # 50: "<id>-trino-worker" is then 63 characters


def _doc(cluster_id: str, **body: Any) -> dict[str, Any]:
    doc = {
        "_id": f"test-{cluster_id}",
        "clusterId": cluster_id,
        "owner": "qa_team",
        "enabled": True,
        "connectors": [{"name": "memory", "properties": {"connector.name": "memory"}}],
    }
    doc.update(body)
    return doc


def _worker(**worker: Any) -> dict[str, Any]:
    return {"clusterConfig": {"worker": worker}}


CONSTRUCTED = [
    _doc("hpa-both", **_worker(autoscaling={
        "type": "hpa", "minReplicas": 3, "maxReplicas": 9,
        "targetCPUUtilizationPercentage": 65, "targetMemoryUtilizationPercentage": 75})),
    _doc("hpa-memory", **_worker(autoscaling={
        "type": "hpa", "minReplicas": 2, "maxReplicas": 4,
        "targetMemoryUtilizationPercentage": 70})),
    _doc("tri", **_worker(autoscaling={"type": "hpa", "minReplicas": 1, "maxReplicas": 3})),
    _doc("keda-queue", **_worker(autoscaling={
        "type": "keda", "minReplicas": 0, "maxReplicas": 6, "pollingInterval": 15,
        "cooldownPeriod": 120,
        "triggers": [{
            "type": "prometheus", "name": "queued",
            "metadata": {"serverAddress": "http://prometheus.monitoring.svc:9090",
                         "query": 'sum(trino_queued_queries{namespace="trino-keda-queue"})',
                         "threshold": "5"},
        }]})),
    _doc("keda-cpu", **_worker(autoscaling={
        "type": "keda", "minReplicas": 2, "maxReplicas": 5,
        "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}]})),
    _doc("graceful-short", **_worker(replicas=3, gracefulShutdown={"enabled": True,
                                                                    "gracePeriodSeconds": 10})),
    _doc("graceful-long", **_worker(gracefulShutdown={"enabled": True, "gracePeriodSeconds": 500})),
    _doc("graceful-off", **_worker(gracefulShutdown={"enabled": False})),
    _doc(
        "role-props",
        clusterConfig={
            "coordinator": {
                "jvm": {"maxHeapSize": "7G", "minHeapSize": "7G"},
                "properties": {"query": {"max-history": "500"}},
            },
            "worker": {
                "replicas": 4,
                "jvm": {"maxHeapSize": "7G", "minHeapSize": "2G"},
                "properties": {
                    "task": {"concurrency": "8", "max-worker-threads": "64"},
                    "query": {"max-memory-per-node": "3GB"},
                    "memory": {"heap-headroom-per-node": "1GB"},
                },
            },
        },
    ),
    _doc(
        "extra-props",
        properties={
            # Trino's name has no dot (optimizer.join-distribution-type is refused): whole-name form
            "optimizer": {"join-reordering-strategy": "AUTOMATIC"},
            "join-distribution-type": "PARTITIONED",
            "exchange": {"compression-codec": "LZ4"},
            "query": {"max-memory": "50GB", "max-execution-time": "2h"},
            "node": {"environment": "staging_2", "internal-address-source": "FQDN"},
            "node-scheduler": {"include-coordinator": "true"},
            "http-server": {"process-forwarded": "true"},
        },
    ),
    _doc(
        "escaping",
        properties={
            "qa": {"tricky": TRICKY_TEXT, "hash": "#x", "empty": ""},
            "node": {"environment": "qa", "qa-tricky": TRICKY_TEXT},
        },
        clusterConfig={"worker": {"properties": {"qa": {"worker-tricky": TRICKY_TEXT}}},
                       "coordinator": {"properties": {"qa": {"coordinator-tricky": TRICKY_TEXT}}}},
        connectors=[
            {"name": "tricky-values",
             "properties": {"connector.name": "memory",
                            **{f"qa.{k}": v for k, v in TRICKY_VALUES.items()}}},
            {"name": "tricky_keys", "properties": {"connector.name": "memory", **TRICKY_KEYS}},
        ],
    ),
    _doc("no-connectors", connectors=[]),
    _doc("keda-" + "k" * 40, **_worker(autoscaling={
        "type": "keda", "minReplicas": 1, "maxReplicas": 3,
        "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}]})),
    _doc(LONGEST_VALID_SERVICE_ID, **_worker(autoscaling={"type": "hpa", "minReplicas": 1,
                                                          "maxReplicas": 2})),
    _doc(
        "secrets-mixed",
        connectors=[
            {"name": "pg", "properties": {
                "connector.name": "postgresql",
                "connection-url": "jdbc:postgresql://db:5432/x?ssl=true",
                "connection-user": "u-{{ PG_PASSWORD }}",
                "connection-password": "{{ PG_PASSWORD }}"}},
            {"name": "mysql", "properties": {
                "connector.name": "mysql",
                "connection-url": "jdbc:mysql://m:3306",
                "connection-user": "{{vault:secret/trino/secrets-mixed/mysql#user}}",
                "connection-password":
                    "pre-{{ vault:secret/trino/secrets-mixed/mysql#password }}-post"}},
        ],
    ),
]
EXAMPLE_IDS = [d["clusterId"] for d in example_docs()]
DOCS = {d["clusterId"]: d for d in [*example_docs(), *CONSTRUCTED]}
CASES = sorted(DOCS)
_PLACEHOLDER = re.compile(r"\{\{\s*(vault:[^}]*|[A-Za-z0-9_]+)\s*\}\}")


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """The documented layering: maps merge, lists and scalars replace, null removes."""
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def effective(doc: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """The document as its author sees it: defaults, then its profile, then itself."""
    merged = _merge({}, settings.defaults)
    if doc.get("profile"):
        merged = _merge(merged, settings.profiles[doc["profile"]])
    return _merge(merged, doc)


def flat_properties(props: Mapping[str, Any] | None) -> dict[str, str]:
    """The README's shape: a string is one whole property, an object a section."""
    out: dict[str, str] = {}
    for s, entries in (props or {}).items():
        if isinstance(entries, str):
            out[s] = entries
        else:
            out.update({f"{s}.{k}": v for k, v in entries.items()})
    return out


# --- java.util.Properties, read independently (tests/javaprops.py) -----------------------------

def properties_map(text: str) -> dict[str, str]:
    pairs = javaprops.pairs(text)
    keys = [k for k, _ in pairs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    assert not dupes, f"duplicated keys {dupes} in:\n{text}"
    return dict(pairs)


def test_the_reader_follows_java_properties_rules() -> None:
    """The test's own reader handles separators, comments, escapes, continuations and surrogates."""
    text = (
        "# comment\n  ! also a comment\na=1\nb : 2\nc 3\nd\\=e\\:f = x=y\n"
        "g = \\ \\ two\\tt\\\\\nh = con\\\n    tinued\ni=\\uD83D\\uDE00\\u00e9\nj\n"
    )
    assert javaprops.loads(text) == {
        "a": "1", "b": "2", "c": "3", "d=e:f": "x=y", "g": "  two\tt\\", "h": "continued",
        "i": "😀é", "j": "",
    }


# --- rendering --------------------------------------------------------------------------------


@dataclass
class Rendered:
    """One document through trinogen and then through the chart."""

    doc: dict[str, Any]
    eff: dict[str, Any]  # the document merged over defaults and profile
    cluster: Cluster
    files: dict[str, bytes]
    values: dict[str, Any]  # values.yaml as Helm parses it
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cid(self) -> str:
        return str(self.doc["clusterId"])

    @property
    def fullname(self) -> str:
        """The chart's trino.fullname (hasPrefix rule in _helpers.tpl), computed independently."""
        return _trunc("trino" if "trino".startswith(self.cid) else f"{self.cid}-trino")

    def role_name(self, role: str) -> str:
        """The chart's trino.coordinator / trino.worker: `<fullname>-<role>`, truncated."""
        return _trunc(f"{self.fullname}-{role}")

    def get(self, kind: str, name: str) -> dict[str, Any]:
        found = [o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name]
        assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}: {self.kinds()}"
        return found[0]

    def all(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind and not _is_hook(o)]

    def kinds(self) -> list[str]:
        return sorted(f"{o['kind']}/{o['metadata']['name']}" for o in self.objects)

    def deployment(self, role: str) -> dict[str, Any]:
        return self.get("Deployment", self.role_name(role))

    def container(self, role: str) -> dict[str, Any]:
        pod = self.deployment(role)["spec"]["template"]["spec"]
        (c,) = [c for c in pod["containers"] if c["name"] == f"trino-{role}"]
        return c

    def config(self, role: str, name: str) -> str:
        return str(self.get("ConfigMap", self.role_name(role))["data"][name])

    def catalog_data(self) -> dict[str, str] | None:
        """The data of the chart's catalog ConfigMap; None when the chart renders none."""
        found = [o for o in self.objects if o["kind"] == "ConfigMap"
                 and o["metadata"]["name"] == f"{self.fullname}-catalog"]
        assert len(found) <= 1
        return dict(found[0].get("data") or {}) if found else None

    def role_doc(self, role: str) -> dict[str, Any]:
        return dict(self.eff.get("clusterConfig", {}).get(role, {}))

    def file(self, suffix: str) -> bytes | None:
        hits = [v for k, v in self.files.items() if k.endswith(suffix)]
        return hits[0] if hits else None

    @property
    def external_secret(self) -> dict[str, Any] | None:
        raw = self.file("/externalsecret.yaml")
        return yaml.safe_load(raw) if raw is not None else None


def _trunc(name: str) -> str:
    """Helm's `trunc 63 | trimSuffix "-"`."""
    name = name[:63]
    return name.removesuffix("-")


def _is_hook(obj: Mapping[str, Any]) -> bool:
    return "helm.sh/hook" in (obj.get("metadata", {}).get("annotations") or {})


def render_through_chart(chart: Any, values_text: str, release: str, namespace: str) -> tuple[
        dict[str, Any], list[dict[str, Any]]]:
    values = helm_python.values_from_yaml(values_text)  # Helm's own YAML reading of the file
    manifests = chart.render(values, name=release, namespace=namespace, is_install=True)
    objects = []
    for path, text in sorted(manifests.items()):
        if not path.endswith((".yaml", ".yml")):
            continue
        objects.extend(o for o in yaml.safe_load_all(text) if o)
    return values, objects


@pytest.fixture(scope="module")
def chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


@pytest.fixture(scope="module")
def chart_defaults() -> dict[str, Any]:
    """The chart's own values.yaml."""
    return dict(yaml.safe_load((Path(CHART_DIR) / "values.yaml").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def settings() -> Settings:
    return demo_settings()


@pytest.fixture(scope="module")
def render(chart: Any, settings: Settings) -> Callable[..., Rendered]:
    """Renders a case once per module (per `resolved` variant)."""
    cache: dict[Any, Rendered] = {}

    def get(case: str, resolved: Mapping[str, SecretData] | None = None) -> Rendered:
        key = (case, tuple(sorted((p, d.version) for p, d in (resolved or {}).items())))
        if key not in cache:
            doc = copy.deepcopy(DOCS[case])
            # The escaping case's keys are made up (as an unchecked platform plugin's catalog
            # may carry any): it proves escaping, so the registry checks are off for it alone.
            judge = (replace(settings, validation={"trino_properties": "off"})
                     if case == "escaping" else settings)
            cluster = classify(RawDocument(doc_key(doc["_id"]), doc), judge)
            assert isinstance(cluster, Cluster), f"{case} does not validate: {cluster}"
            files = Renderer(settings).render_cluster(cluster, resolved or {})
            values_text = files[f"{settings.output.clusters_dir}/{case}/values.yaml"].decode()
            values, objects = render_through_chart(chart, values_text, case, f"trino-{case}")
            cache[key] = Rendered(doc, effective(doc, settings), cluster, files, values, objects)
        return cache[key]

    return get


def _autoscaling(r: Rendered) -> dict[str, Any] | None:
    a = r.role_doc("worker").get("autoscaling")
    if a is None:
        return None
    return {"type": "hpa", **a}


# --- workers, coordinator, autoscaling ----------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_worker_replicas_follow_the_document(render: Callable[..., Rendered], case: str) -> None:
    """Without autoscaling the worker Deployment has the declared replicas; with it, none."""
    r = render(case)
    spec = r.deployment("worker")["spec"]
    if _autoscaling(r) is None:
        assert spec["replicas"] == r.role_doc("worker")["replicas"]
    else:
        assert "replicas" not in spec, "the Deployment must leave replicas to the autoscaler"


@pytest.mark.parametrize("case", CASES)
def test_coordinator_is_always_one_replica(render: Callable[..., Rendered], case: str) -> None:
    """The coordinator Deployment always runs exactly one pod."""
    assert render(case).deployment("coordinator")["spec"]["replicas"] == 1


@pytest.mark.parametrize("case", CASES)
def test_image_is_the_declared_trino_version(render: Callable[..., Rendered], case: str) -> None:
    """Both roles run trinodb/trino at the document's trinoVersion."""
    r = render(case)
    for role in ("coordinator", "worker"):
        assert r.container(role)["image"] == f"trinodb/trino:{r.eff['trinoVersion']}"


HPA_CASES = [c for c in CASES if (_a := DOCS[c].get("clusterConfig", {}).get("worker", {})
                                  .get("autoscaling")) and _a.get("type", "hpa") == "hpa"]
KEDA_CASES = [c for c in CASES if (DOCS[c].get("clusterConfig", {}).get("worker", {})
                                   .get("autoscaling") or {}).get("type") == "keda"]


def _hpa_metrics(hpa: Mapping[str, Any]) -> dict[str, int]:
    return {m["resource"]["name"]: m["resource"]["target"]["averageUtilization"]
            for m in hpa["spec"].get("metrics") or []}


@pytest.mark.parametrize("case", HPA_CASES)
def test_hpa_gets_the_declared_bounds(render: Callable[..., Rendered], case: str) -> None:
    """HPA autoscaling gives an HPA on the worker Deployment with the declared min/max replicas."""
    r = render(case)
    a = _autoscaling(r)
    assert a is not None
    (hpa,) = r.all("HorizontalPodAutoscaler")
    assert hpa["spec"]["minReplicas"] == a["minReplicas"]
    assert hpa["spec"]["maxReplicas"] == a["maxReplicas"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == r.deployment("worker")["metadata"]["name"]
    assert r.all("ScaledObject") == []


@pytest.mark.parametrize("case", HPA_CASES)
def test_hpa_scales_on_exactly_the_declared_metrics(
    render: Callable[..., Rendered], case: str
) -> None:
    """The HPA scales on the declared CPU/memory targets only (chart defaults when none is)."""
    r = render(case)
    a = _autoscaling(r)
    assert a is not None
    (hpa,) = r.all("HorizontalPodAutoscaler")
    declared = {name: a[key] for name, key in (("cpu", "targetCPUUtilizationPercentage"),
                                               ("memory", "targetMemoryUtilizationPercentage"))
                if key in a}
    if declared:
        assert _hpa_metrics(hpa) == declared
    else:
        assert _hpa_metrics(hpa), "an HPA without metrics does not scale on anything declared"


@pytest.mark.parametrize("case", KEDA_CASES)
def test_keda_gets_the_declared_scaled_object(render: Callable[..., Rendered], case: str) -> None:
    """KEDA autoscaling gives a ScaledObject with the declared bounds, intervals and triggers."""
    r = render(case)
    a = _autoscaling(r)
    assert a is not None
    (so,) = r.all("ScaledObject")
    spec = so["spec"]
    assert spec["minReplicaCount"] == a["minReplicas"]
    assert spec["maxReplicaCount"] == a["maxReplicas"]
    assert spec["triggers"] == a["triggers"]
    for key in ("pollingInterval", "cooldownPeriod"):
        if key in a:
            assert spec[key] == a[key]
    assert spec["scaleTargetRef"]["name"] == r.deployment("worker")["metadata"]["name"]
    assert r.all("HorizontalPodAutoscaler") == []


@pytest.mark.parametrize("case", [c for c in CASES if c not in HPA_CASES + KEDA_CASES])
def test_no_autoscaler_unless_declared(render: Callable[..., Rendered], case: str) -> None:
    """A document without autoscaling gets neither an HPA nor a ScaledObject."""
    r = render(case)
    assert r.all("HorizontalPodAutoscaler") == [] and r.all("ScaledObject") == []


@pytest.mark.parametrize("case", HPA_CASES + KEDA_CASES)
def test_ignore_differences_names_the_charts_worker_deployment(
    render: Callable[..., Rendered], settings: Settings, case: str
) -> None:
    """With autoscaling the Application ignores replicas of the Deployment the chart creates."""
    r = render(case)
    app = yaml.safe_load(r.files[f"{settings.output.applications_dir}/{case}.yaml"])
    worker = r.deployment("worker")["metadata"]
    ignored = [d for d in app["spec"].get("ignoreDifferences", [])
               if d.get("kind") == "Deployment" and "/spec/replicas" in d.get("jsonPointers", [])]
    assert [(d["name"], d.get("namespace"), d.get("group")) for d in ignored] == [
        (worker["name"], worker["namespace"], "apps")]


# --- JVM and Trino properties --------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_heap_sizes_reach_jvm_config(render: Callable[..., Rendered], case: str) -> None:
    """Each role's jvm.config has exactly one -Xmx (and -Xms when declared) of the declared size."""
    r = render(case)
    for role in ("coordinator", "worker"):
        jvm = r.role_doc(role)["jvm"]
        lines = [ln.strip() for ln in r.config(role, "jvm.config").splitlines()]
        assert [ln for ln in lines if ln.startswith("-Xmx")] == [f"-Xmx{jvm['maxHeapSize']}"]
        expected_xms = [f"-Xms{jvm['minHeapSize']}"] if jvm.get("minHeapSize") else []
        assert [ln for ln in lines if ln.startswith("-Xms")] == expected_xms


@pytest.mark.parametrize("case", CASES)
def test_config_properties_have_no_duplicate_keys(
    render: Callable[..., Rendered], case: str
) -> None:
    """No key appears twice in any role's config.properties or node.properties."""
    r = render(case)
    for role in ("coordinator", "worker"):
        for name in ("config.properties", "node.properties"):
            properties_map(r.config(role, name))  # asserts on duplicates


@pytest.mark.parametrize("case", CASES)
def test_memory_and_environment_reach_the_right_files(
    render: Callable[..., Rendered], case: str
) -> None:
    """query.max-memory, per-role max-memory-per-node/heap headroom and node.environment arrive."""
    r = render(case)
    top = flat_properties(r.eff.get("properties"))
    for role in ("coordinator", "worker"):
        config = properties_map(r.config(role, "config.properties"))
        node = properties_map(r.config(role, "node.properties"))
        own = flat_properties(r.role_doc(role).get("properties"))
        if "query.max-memory" in top:
            assert config["query.max-memory"] == top["query.max-memory"]
        for key in ("query.max-memory-per-node", "memory.heap-headroom-per-node"):
            expected = own.get(key, top.get(key))
            if expected is not None:
                assert config.get(key) == expected, f"{role} {key}"
        if "node.environment" in top:
            assert node["node.environment"] == top["node.environment"]
        assert "node.environment" not in config


_DATA_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5}
_JVM_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def _data_size(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(B|kB|MB|GB|TB|PB)", text.strip())
    assert m, f"{text!r} is not a Trino data size"
    return float(m.group(1)) * _DATA_UNITS[m.group(2)]


@pytest.mark.parametrize("case", CASES)
def test_trino_memory_startup_check_passes(render: Callable[..., Rendered], case: str) -> None:
    """Per role, query.max-memory-per-node plus heap headroom (default 30%) fits in -Xmx."""
    r = render(case)
    for role in ("coordinator", "worker"):
        config = properties_map(r.config(role, "config.properties"))
        (xmx,) = [ln.strip()[4:] for ln in r.config(role, "jvm.config").splitlines()
                  if ln.strip().startswith("-Xmx")]
        m = re.fullmatch(r"(\d+)([kKmMgGtT]?)", xmx)
        assert m, xmx
        heap = int(m.group(1)) * _JVM_UNITS[m.group(2).lower()]
        per_node = _data_size(config["query.max-memory-per-node"])
        headroom = (_data_size(config["memory.heap-headroom-per-node"])
                    if "memory.heap-headroom-per-node" in config else 0.3 * heap)
        assert per_node + headroom <= heap, f"{role}: Trino refuses to start"


_CHART_MAPPED = {"query.max-memory", "query.max-memory-per-node", "memory.heap-headroom-per-node",
                 "node-scheduler.include-coordinator"}


@pytest.mark.parametrize("case", CASES)
def test_extra_properties_reach_the_right_roles(render: Callable[..., Rendered], case: str) -> None:
    """Top-level properties reach both roles, role properties one role, node.* node.properties."""
    r = render(case)
    top = flat_properties(r.eff.get("properties"))
    own = {role: flat_properties(r.role_doc(role).get("properties"))
           for role in ("coordinator", "worker")}
    for role, other in (("coordinator", "worker"), ("worker", "coordinator")):
        config = properties_map(r.config(role, "config.properties"))
        node = properties_map(r.config(role, "node.properties"))
        for key, value in top.items():
            if key.startswith("node."):
                assert node.get(key) == value, f"{role} node.properties {key}"
            elif key not in _CHART_MAPPED:
                assert config.get(key) == value, f"{role} config.properties {key}"
        for key, value in own[role].items():
            if key not in _CHART_MAPPED:
                assert config.get(key) == value, f"{role} config.properties {key}"
        for key in own[other]:
            if key not in _CHART_MAPPED and key not in top:
                assert key not in config, f"{other}-only {key} leaked into the {role}"


@pytest.mark.parametrize("case", [c for c in CASES if "node-scheduler.include-coordinator"
                                  in flat_properties(DOCS[c].get("properties"))])
def test_include_coordinator_reaches_the_coordinator(
    render: Callable[..., Rendered], case: str
) -> None:
    """node-scheduler.include-coordinator from the document is the coordinator's value."""
    r = render(case)
    value = flat_properties(r.eff["properties"])["node-scheduler.include-coordinator"]
    config = properties_map(r.config("coordinator", "config.properties"))
    assert config["node-scheduler.include-coordinator"] == value


@pytest.mark.parametrize("case", CASES)
def test_resources_are_copied_verbatim(render: Callable[..., Rendered], case: str) -> None:
    """Each role's container resources equal the document's requests and limits."""
    r = render(case)
    for role in ("coordinator", "worker"):
        declared = r.role_doc(role).get("resources", {})
        actual = r.container(role).get("resources") or {}
        assert {k: {n: str(q) for n, q in v.items()} for k, v in actual.items()} == {
            k: {n: str(q) for n, q in v.items()} for k, v in declared.items()}


# --- graceful shutdown ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_graceful_shutdown_is_configured_when_declared(
    render: Callable[..., Rendered], case: str
) -> None:
    """Graceful shutdown sets shutdown.grace-period and a termination grace of at least 2x."""
    r = render(case)
    g = r.role_doc("worker").get("gracefulShutdown")
    config = properties_map(r.config("worker", "config.properties"))
    pod = r.deployment("worker")["spec"]["template"]["spec"]
    if g and g.get("enabled", True):
        seconds = g["gracePeriodSeconds"]
        assert config["shutdown.grace-period"] == f"{seconds}s"
        assert pod["terminationGracePeriodSeconds"] >= 2 * seconds
    else:
        assert "shutdown.grace-period" not in config


# --- catalogs ---------------------------------------------------------------------------------


def _expected_catalog(props: Mapping[str, str], env_for: Callable[[str], str]) -> dict[str, str]:
    return {k: _PLACEHOLDER.sub(lambda m: f"${{ENV:{env_for(m.group(0))}}}", v)
            for k, v in props.items()}


def _env_resolver(r: Rendered) -> Callable[[str], str]:
    """Maps a placeholder to the variable its ExternalSecret entry provides (checked below)."""
    es = r.external_secret
    entries = {d["secretKey"]: d["remoteRef"] for d in (es or {}).get("spec", {}).get("data", [])}
    settings = demo_settings()

    def ref_of(placeholder: str) -> tuple[str, str, str]:
        body = _PLACEHOLDER.fullmatch(placeholder).group(1)  # type: ignore[union-attr]
        if body.startswith("vault:"):
            target = body[len("vault:"):].strip()
        else:
            target = settings.secrets.refs.get(body) or settings.secrets.default_ref.format(
                cluster=r.cid, owner=r.doc["owner"], name=body)
        where, _, key = target.partition("#")
        mount, _, path = where.partition("/")
        return mount, path, key

    def env_for(placeholder: str) -> str:
        mount, path, key = ref_of(placeholder)
        names = [n for n, ref in entries.items()
                 if ref.get("property") == key and ref.get("key") in (path, f"{mount}/{path}")]
        assert len(names) == 1, f"{placeholder}: no single ExternalSecret entry for it: {entries}"
        return names[0]

    return env_for


@pytest.mark.parametrize("case", CASES)
def test_catalog_configmap_holds_exactly_the_declared_catalogs(
    render: Callable[..., Rendered], case: str
) -> None:
    """The chart's catalog ConfigMap has one file per declared connector and no default catalog."""
    r = render(case)
    declared = sorted(f"{c['name']}.properties" for c in r.eff.get("connectors", []))
    data = r.catalog_data()
    if declared:
        assert data is not None and sorted(data) == declared
    else:  # no ConfigMap, and no pod mounts one that does not exist
        assert data is None
        for role in ("coordinator", "worker"):
            volumes = r.deployment(role)["spec"]["template"]["spec"].get("volumes") or []
            assert not [v for v in volumes if v.get("configMap", {}).get("name")
                        == f"{r.fullname}-catalog"]


@pytest.mark.parametrize("case", CASES)
def test_catalog_text_survives_tpl_and_reads_back_exactly(
    render: Callable[..., Rendered], case: str
) -> None:
    """Each catalog, after Helm's tpl, reads back (Java rules) as the document's properties."""
    r = render(case)
    data = r.catalog_data() or {}
    env_for = _env_resolver(r)
    for conn in r.eff.get("connectors", []):
        parsed = properties_map(data[f"{conn['name']}.properties"])
        assert parsed == _expected_catalog(conn["properties"], env_for), conn["name"]


@pytest.mark.parametrize("case", CASES)
def test_chart_default_catalogs_appear_only_when_declared(
    render: Callable[..., Rendered], chart_defaults: dict[str, Any], case: str
) -> None:
    """The chart's default catalogs (tpch, tpcds) are dropped unless the document declares them."""
    assert chart_defaults["catalogs"], "the chart no longer declares default catalogs"
    r = render(case)
    declared = {c["name"] for c in r.eff.get("connectors", [])}
    present = {n.removesuffix(".properties") for n in (r.catalog_data() or {})}
    for name in chart_defaults["catalogs"]:
        assert (name in present) == (name in declared), name


# --- secrets wiring ---------------------------------------------------------------------------


def _uses_placeholders(doc: Mapping[str, Any]) -> bool:
    return any(_PLACEHOLDER.search(v) for c in doc.get("connectors", [])
               for v in c["properties"].values())


@pytest.mark.parametrize("case", CASES)
def test_secrets_reach_the_pods_through_the_external_secret(
    render: Callable[..., Rendered], case: str
) -> None:
    """With placeholders both containers load the ExternalSecret's target and carry its checksum."""
    r = render(case)
    es = r.external_secret
    for role in ("coordinator", "worker"):
        env_from = r.container(role).get("envFrom") or []
        annotations = r.deployment(role)["spec"]["template"]["metadata"].get("annotations") or {}
        if _uses_placeholders(r.eff):
            assert es is not None
            assert env_from == [{"secretRef": {"name": es["spec"]["target"]["name"]}}]
            checksum = annotations.get("trinogen.io/secrets-checksum", "")
            assert re.fullmatch(r"[0-9a-f]{8,}", checksum)
        else:
            assert es is None and env_from == []
            assert "trinogen.io/secrets-checksum" not in annotations
    text = "\n".join(str(v) for o in r.objects for v in (o.get("data") or {}).values())
    assert not _PLACEHOLDER.search(text.replace("{{ .Release.Name }}", "")), "placeholder leaked"
    if es is not None:  # every ${ENV:X} the catalogs use is provided by the ExternalSecret
        used = set(re.findall(r"\$\{ENV:([A-Za-z0-9_]+)\}", text))
        assert used == {d["secretKey"] for d in es["spec"]["data"]}


def test_a_new_secret_version_rolls_the_pods(render: Callable[..., Rendered]) -> None:
    """A new Vault version of a referenced secret changes both pod templates (pods restart)."""
    case = "secrets-mixed"
    paths = {f"secret/trino/{case}", f"secret/trino/{case}/mysql"}

    def resolved(version: int) -> dict[str, SecretData]:
        keys = ("PG_PASSWORD", "user", "password")
        return {p: SecretData(version, {k: Secret("x") for k in keys}) for p in paths}

    one, two = render(case, resolved(1)), render(case, resolved(2))
    for role in ("coordinator", "worker"):
        a = one.deployment(role)["spec"]["template"]["metadata"]["annotations"]
        b = two.deployment(role)["spec"]["template"]["metadata"]["annotations"]
        assert a["trinogen.io/secrets-checksum"] != b["trinogen.io/secrets-checksum"]


# --- values keys the chart reads ----------------------------------------------------------------

# Maps the chart copies verbatim (toYaml): catalogs, and the Kubernetes SecurityContext objects,
# whose keys tests/test_pod_security.py checks on the rendered pods instead.
_FREE_FORM = {("catalogs",), ("securityContext",), ("containerSecurityContext",)}


def _unknown_keys(user: Any, default: Any, path: tuple[str, ...] = ()) -> list[str]:
    if not isinstance(user, dict) or not isinstance(default, dict) or not default:
        return []
    if path in _FREE_FORM:
        return []
    out = []
    for key, value in user.items():
        if key not in default:
            out.append(".".join((*path, key)))
        else:
            out.extend(_unknown_keys(value, default[key], (*path, key)))
    return out


@pytest.mark.parametrize("case", CASES)
def test_values_use_only_keys_the_chart_declares(
    render: Callable[..., Rendered], chart_defaults: dict[str, Any], case: str
) -> None:
    """Every key in values.yaml exists in the chart's values.yaml (Helm ignores the rest)."""
    assert _unknown_keys(render(case).values, chart_defaults) == []


# --- the real java.util.Properties ---------------------------------------------------------------


@pytest.fixture(scope="module")
def java_read(
    render: Callable[..., Rendered], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], dict[str, str]]:
    """Reads every properties text of every case with java.util.Properties in one JVM run."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not on PATH")
    texts: dict[str, str] = {}
    for case in CASES:
        r = render(case)
        for name, text in (r.catalog_data() or {}).items():
            texts[f"{case}/catalog/{name}"] = text
        for role in ("coordinator", "worker"):
            for name in ("config.properties", "node.properties"):
                texts[f"{case}/{role}/{name}"] = r.config(role, name)
    folder = tmp_path_factory.mktemp("props")
    files = []
    for i, (label, text) in enumerate(sorted(texts.items())):
        path = folder / f"{i}.properties"
        path.write_bytes(text.encode("utf-8"))
        files.append((label, path))
    out = subprocess.run([java, str(JAVA_SOURCE), *(str(p) for _, p in files)],
                         capture_output=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    results: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in out.stdout.decode("ascii").splitlines():
        if line.startswith("FILE "):
            current = results.setdefault(files[int(line[5:])][0], {})
        elif line:
            k, _, v = line.partition(" ")
            current[bytes.fromhex(k).decode("utf-8")] = bytes.fromhex(v).decode("utf-8")
    return lambda label: results[label]


@pytest.mark.parametrize("case", CASES)
def test_real_java_properties_reads_the_document_values(
    render: Callable[..., Rendered], java_read: Callable[[str], dict[str, str]], case: str
) -> None:
    """java.util.Properties reads every catalog and config file as the document and reader do."""
    r = render(case)
    env_for = _env_resolver(r)
    for conn in r.eff.get("connectors", []):
        assert java_read(f"{case}/catalog/{conn['name']}.properties") == _expected_catalog(
            conn["properties"], env_for)
    for role in ("coordinator", "worker"):
        for name in ("config.properties", "node.properties"):
            assert java_read(f"{case}/{role}/{name}") == properties_map(r.config(role, name))


def test_the_escaping_case_covers_every_tricky_value() -> None:
    """The escaping document really carries the tricky keys and values (guards the table above)."""
    conns = {c["name"]: c["properties"] for c in DOCS["escaping"]["connectors"]}
    assert set(TRICKY_VALUES.values()) <= set(conns["tricky-values"].values())
    assert set(TRICKY_KEYS) <= set(conns["tricky_keys"])
    assert any(ord(ch) > 0xFFFF for v in TRICKY_VALUES.values() for ch in v)


# --- the objects as the API server sees them -----------------------------------------------------

_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS_1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


def test_cluster_ids_whose_worker_service_name_would_not_fit_are_rejected(settings: Settings) -> None:
    """A 51-character clusterId (legal for Helm) is refused: "<id>-trino-worker" would exceed 63."""
    doc = _doc(LONGEST_ID)
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    assert not isinstance(outcome, Cluster)
    assert any("Service" in p.message for p in outcome.problems)


@pytest.mark.parametrize("case", CASES)
def test_object_names_and_labels_are_valid_for_their_kind(
    render: Callable[..., Rendered], case: str
) -> None:
    """Every object the chart derives from the cluster id has a name and labels K8s accepts."""
    r = render(case)
    bad = []
    for o in r.objects:
        if _is_hook(o):
            continue  # `helm test` pods, which Argo CD does not deploy
        name = o["metadata"]["name"]
        if o["kind"] == "Service":
            ok = len(name) <= 63 and _DNS_1035.fullmatch(name)
        else:
            ok = len(name) <= 253 and _DNS_1123_SUBDOMAIN.fullmatch(name)
        if not ok:
            bad.append(f"{o['kind']}/{name} ({len(name)} characters)")
        for key, value in (o["metadata"].get("labels") or {}).items():
            if len(str(value)) > 63 or not _LABEL_VALUE.fullmatch(str(value)):
                bad.append(f"{o['kind']}/{name} label {key}={value}")
    assert bad == []


@pytest.mark.parametrize("case", CASES)
def test_objects_validate_against_the_kubernetes_schemas(
    render: Callable[..., Rendered], case: str
) -> None:
    """Every built-in object the chart renders passes strict Kubernetes OpenAPI validation."""
    kv = pytest.importorskip("kubernetes_validate")
    errors = []
    for o in render(case).objects:
        if _is_hook(o):
            continue
        try:
            kv.validate(o, "1.33", strict=True)
        except kv.SchemaNotFoundError:
            assert o["apiVersion"].startswith("keda.sh/"), f"no schema for {o['apiVersion']}"
        except kv.ValidationError as e:
            errors.append(f"{o['kind']}/{o['metadata']['name']}: {e.message}")
    assert errors == []


# --- documents the real Trino would refuse or misread ------------------------------------------


@pytest.mark.parametrize("name", ["system", "SYSTEM"])
def test_catalog_names_trino_reserves_are_rejected(settings: Settings, name: str) -> None:
    """Trino refuses to start with a catalog named system ("reserved for internal usage")."""
    connectors = [{"name": name, "properties": {"connector.name": "memory"}}]
    doc = _doc("bad-catalog", connectors=connectors)
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    assert not isinstance(outcome, Cluster), f"catalog {name!r} was accepted"


def test_uppercase_catalog_names_render_with_a_warning(settings: Settings) -> None:
    """Trino matches catalog names in lowercase: an uppercase name renders but is warned about."""
    connectors = [{"name": "Hive_Prod", "properties": {"connector.name": "memory"}}]
    doc = _doc("upper-catalog", connectors=connectors)
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    assert isinstance(outcome, Cluster)
    assert any("lowercase" in w.message for w in outcome.warnings)


def test_node_unique_properties_are_not_shared_by_all_pods(
    chart: Any, settings: Settings
) -> None:
    """A per-node property (node.id) is rejected rather than given identically to every pod."""
    doc = _doc("node-id", properties={"node": {"environment": "qa", "id": "worker-1"}})
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    if not isinstance(outcome, Cluster):
        return
    files = Renderer(settings).render_cluster(outcome, {})
    _, objects = render_through_chart(
        chart, files[f"{settings.output.clusters_dir}/node-id/values.yaml"].decode(),
        "node-id", "trino-node-id")
    r = Rendered(doc, effective(doc, settings), outcome, files, {}, objects)
    assert "node.id" not in properties_map(r.config("worker", "node.properties"))


# --- KEDA trigger metadata keys reach Helm's tpl (issue 11, item 3) ----------------------------

# A key that, run through the chart's `tpl (toYaml triggers)`, closes the metadata map and adds
# `authenticationRef: {kind: ClusterTriggerAuthentication, name: evil}` to the trigger.
_INJECTING_KEY = ('x{{ ":" }} one{{ "\\n  authenticationRef:\\n    kind:" }} '
                  'ClusterTriggerAuthentication{{ "\\n    name:" }} evil{{ "\\n  y" }}')
HOSTILE_TRIGGER_KEYS = [_INJECTING_KEY, '{{ fail "x" }}', "line\nbreak", "nul\x00", "ls\u2028",
                        "surrogate\ud800", "dotted.key", "", "9lives", "k" * 64]


def _keda_doc(metadata: Mapping[str, str]) -> dict[str, Any]:
    return _doc("keda-keys", **_worker(autoscaling={
        "type": "keda", "minReplicas": 1, "maxReplicas": 3,
        "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": dict(metadata)}]}))


def _scaled_object_triggers(chart: Any, settings: Settings, doc: dict[str, Any]) -> Any:
    """The ScaledObject's triggers as the real chart renders them, or the validation outcome."""
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), settings)
    if not isinstance(outcome, Cluster):
        return outcome
    files = Renderer(settings).render_cluster(outcome, {})
    text = files[f"{settings.output.clusters_dir}/keda-keys/values.yaml"].decode()
    _, objects = render_through_chart(chart, text, "keda-keys", "trino-keda-keys")
    (so,) = [o for o in objects if o["kind"] == "ScaledObject"]
    return so["spec"]["triggers"]


@pytest.mark.parametrize("key", HOSTILE_TRIGGER_KEYS, ids=range(len(HOSTILE_TRIGGER_KEYS)))
def test_a_hostile_keda_metadata_key_is_refused_before_the_chart(
    chart: Any, settings: Settings, key: str
) -> None:
    """A metadata key that is not a camelCase identifier fails the document at its own path."""
    outcome = _scaled_object_triggers(chart, settings, _keda_doc({"value": "60", key: "v"}))
    assert not isinstance(outcome, list), f"reached the chart and rendered {outcome}"
    (problem,) = outcome.problems
    assert problem.field.startswith("clusterConfig.worker.autoscaling.triggers[0].metadata")
    assert "KEDA metadata key" in problem.message


def test_camel_case_keda_metadata_keys_reach_the_scaled_object_unchanged(
    chart: Any, settings: Settings
) -> None:
    """Ordinary scaler keys come out of the real chart exactly as declared, nothing added."""
    metadata = {"serverAddress": "http://p:9090", "query": "sum(x{a=\"b\"})", "threshold": "5",
                "passwordFromEnv": "PW", "activationThreshold2": "1"}
    triggers = _scaled_object_triggers(chart, settings, _keda_doc(metadata))
    assert triggers == [{"type": "cpu", "metricType": "Utilization", "metadata": metadata}]
