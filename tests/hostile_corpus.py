"""Hostile cluster documents as data, for tests/test_hostile.py.

Every `Case` is one document and what trinogen must make of it:

* ``fail``: a clear error for that cluster alone, naming the document (its clusterId, or
  ``_id=...`` when the clusterId is unusable) and the field path `field`;
* ``render``: a correct, safe rendering whose files parse back to exactly the values given;
* ``disabled``: `enabled: false`, which is not an error whatever else the document holds.

Documents are complete on their own (they do not lean on `defaults`/`profiles` from the
settings), use only values MongoDB can store, and carry string `_id`s ``hostile-<name>`` unless
the case is about the `_id` itself.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bson import Binary, Code, Decimal128, Int64, ObjectId, Regex, Timestamp
from bson.dbref import DBRef
from bson.min_key import MinKey


@dataclass(frozen=True)
class Case:
    name: str
    category: str
    doc: dict[str, Any]
    expect: str  # fail | render | disabled
    field: str = ""  # for fail: a field path some problem must name exactly
    big: bool = False  # the 10 MB / 10,000-connector cases: built once, run once

    @property
    def doc_id(self) -> Any:
        return self.doc["_id"]


def base(cluster_id: str, **top: Any) -> dict[str, Any]:
    """A complete, valid document for `cluster_id` (no defaults needed)."""
    role = {
        "resources": {"requests": {"cpu": "1", "memory": "8Gi"},
                      "limits": {"cpu": "2", "memory": "8Gi"}},
        "jvm": {"maxHeapSize": "6G"},
    }
    doc: dict[str, Any] = {
        "_id": f"hostile-{cluster_id}",
        "clusterId": cluster_id,
        "owner": "team-a",
        "enabled": True,
        "trinoVersion": "476",
        "clusterConfig": {"coordinator": copy.deepcopy(role),
                          "worker": {"replicas": 2, **copy.deepcopy(role)}},
        "properties": {"query": {"max-memory-per-node": "2GB"}},
        "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
    }
    doc.update(top)
    return doc


_MISSING = object()


def put(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set (or with `_MISSING` delete) a dotted path; `connectors.0.name` indexes lists."""
    parts = path.split(".")
    node: Any = doc
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is _MISSING:
        del node[last]
    else:
        node[last] = value
    return doc


def connector(name: Any, **props: Any) -> dict[str, Any]:
    return {"name": name, "properties": {"connector.name": "memory", **props}}


def _nested(depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {"leaf": "x"}
    for _ in range(depth):
        out = {"a": out}
    return out


# Property values that must reach the files exactly as given, escaped for each format.
YAML_SPECIALS = {
    "v.yes": "yes", "v.tilde": "~", "v.dash": "- x", "v.colon": "key: value",
    "v.anchor": "&a *a !!python/object/apply:os.system ['id']", "v.hash": "#not a comment",
    "v.quotes": "'\"", "v.null": "null", "v.hex": "0x1F", "v.float": "1e3",
    "v.misc": "@`|>%{}[],", "v.spaces": "  padded  ", "v.empty": "",
}
TEMPLATE_TEXT = {
    "j.expr": "{{ 7*7 }}", "j.stmt": "{% for x in range(3) %}{% endfor %}", "j.comment": "{# c #}",
    "j.dunder": "{{ self.__init__.__globals__ }}", "j.raw": "{% raw %}x{% endraw %}",
    "h.release": "{{ .Release.Name }}", "h.include": '{{ include "trino.fullname" . }}',
    "h.lookup": '{{- lookup "v1" "Secret" "kube-system" "" -}}', "h.escaped": '{{"{{"}}',
    "h.unbalanced": "}} {{", "h.comment": "{{/* x */}}",
}
ODD_TEXT = {
    "u.unicode": "naïve ☃ \u2028 \u00a0 \U0001f600 \u202e",
    "u.controls": "\x1b[31mred\t\x0b\x0c\x7f\x85",
    "u.backslash": "C:\\temp\\new\\u0041",
    "u.trailing": "ends with a backslash \\",
}


def _cases() -> list[Case]:
    out: list[Case] = []

    def fail(name: str, category: str, field: str, edit: Callable[[dict[str, Any]], Any]) -> None:
        doc = base(name)
        edit(doc)
        out.append(Case(name, category, doc, "fail", field))

    def render(name: str, category: str, edit: Callable[[dict[str, Any]], Any]) -> None:
        doc = base(name)
        edit(doc)
        out.append(Case(name, category, doc, "render"))

    # --- wrong types and missing fields at every level ------------------------------------
    t = "types"
    fail("missing-cluster-id", t, "clusterId", lambda d: put(d, "clusterId", _MISSING))
    fail("cluster-id-int", t, "clusterId", lambda d: put(d, "clusterId", 42))
    fail("cluster-id-null", t, "clusterId", lambda d: put(d, "clusterId", None))
    fail("owner-missing", t, "owner", lambda d: put(d, "owner", _MISSING))
    fail("owner-list", t, "owner", lambda d: put(d, "owner", ["team-a"]))
    fail("owner-object", t, "owner", lambda d: put(d, "owner", {"name": "team-a"}))
    fail("enabled-missing", t, "enabled", lambda d: put(d, "enabled", _MISSING))
    fail("version-float", t, "trinoVersion", lambda d: put(d, "trinoVersion", 476.5))
    fail("version-word", t, "trinoVersion", lambda d: put(d, "trinoVersion", "latest"))
    fail("version-too-old", t, "trinoVersion", lambda d: put(d, "trinoVersion", "350"))
    fail("config-string", t, "clusterConfig", lambda d: put(d, "clusterConfig", "big"))
    fail("config-missing", t, "clusterConfig", lambda d: put(d, "clusterConfig", _MISSING))
    fail("coordinator-list", t, "clusterConfig.coordinator",
         lambda d: put(d, "clusterConfig.coordinator", []))
    fail("worker-missing", t, "clusterConfig.worker",
         lambda d: put(d, "clusterConfig.worker", _MISSING))
    fail("replicas-string", t, "clusterConfig.worker.replicas",
         lambda d: put(d, "clusterConfig.worker.replicas", "3"))
    fail("replicas-negative", t, "clusterConfig.worker.replicas",
         lambda d: put(d, "clusterConfig.worker.replicas", -1))
    fail("replicas-fraction", t, "clusterConfig.worker.replicas",
         lambda d: put(d, "clusterConfig.worker.replicas", 1.5))
    fail("replicas-bool", t, "clusterConfig.worker.replicas",
         lambda d: put(d, "clusterConfig.worker.replicas", True))
    fail("coordinator-replicas", t, "clusterConfig.coordinator.replicas",
         lambda d: put(d, "clusterConfig.coordinator.replicas", 3))
    fail("jvm-missing", t, "clusterConfig.worker.jvm",
         lambda d: put(d, "clusterConfig.worker.jvm", _MISSING))
    fail("heap-int", t, "clusterConfig.worker.jvm.maxHeapSize",
         lambda d: put(d, "clusterConfig.worker.jvm.maxHeapSize", 6))
    fail("heap-too-small", t, "clusterConfig.worker.jvm.maxHeapSize",
         lambda d: put(d, "clusterConfig.worker.jvm.maxHeapSize", "1G"))
    fail("memory-list", t, "clusterConfig.worker.resources.limits.memory",
         lambda d: put(d, "clusterConfig.worker.resources.limits.memory", ["8Gi"]))
    fail("requests-string", t, "clusterConfig.worker.resources.requests",
         lambda d: put(d, "clusterConfig.worker.resources.requests", "lots"))
    fail("connectors-object", t, "connectors", lambda d: put(d, "connectors", {"tpch": {}}))
    fail("connector-string", t, "connectors[0]", lambda d: put(d, "connectors", ["tpch"]))
    fail("connector-name-missing", t, "connectors[0].name",
         lambda d: put(d, "connectors", [{"properties": {"connector.name": "tpch"}}]))
    fail("connector-props-list", t, 'connectors["tpch"].properties',
         lambda d: put(d, "connectors.0.properties", ["connector.name=tpch"]))
    fail("connector-no-connector-name", t, 'connectors["tpch"].properties',
         lambda d: put(d, "connectors.0.properties", {"tpch.splits-per-node": "4"}))
    fail("properties-string", t, "properties", lambda d: put(d, "properties", "query.x=1"))
    fail("properties-section-list", t, "properties.query",
         lambda d: put(d, "properties.query", ["max-memory=1GB"]))
    fail("property-value-int", t, "properties.query.max-stage-count",
         lambda d: put(d, "properties.query.max-stage-count", 100))
    fail("connector-value-bool", t, 'connectors["tpch"].properties["tpch.column-naming"]',
         lambda d: d["connectors"][0]["properties"].update({"tpch.column-naming": False}))
    fail("autoscaling-type", t, "clusterConfig.worker.autoscaling.type",
         lambda d: put(d, "clusterConfig.worker.autoscaling", {"type": "vpa"}))
    fail("graceful-string", t, "clusterConfig.worker.gracefulShutdown",
         lambda d: put(d, "clusterConfig.worker.gracefulShutdown", "yes"))
    fail("destination-both", t, "destination",
         lambda d: put(d, "destination", {"name": "a", "server": "https://b"}))
    fail("profile-object", t, "profile", lambda d: put(d, "profile", {"$ne": None}))
    fail("profile-list", t, "profile", lambda d: put(d, "profile", ["prod"]))
    # issue 21's fields, each of a type its reader does not take (tests/test_attack_issue21.py
    # has them against settings that offer the options)
    fail("listeners-string", t, "eventListeners", lambda d: put(d, "eventListeners", "audit"))
    fail("listeners-object", t, "eventListeners", lambda d: put(d, "eventListeners", {"a": 1}))
    fail("listeners-null-entry", t, "eventListeners[0]",
         lambda d: put(d, "eventListeners", [None]))
    fail("listeners-list-entry", t, "eventListeners[0]",
         lambda d: put(d, "eventListeners", [["audit"]]))
    fail("groups-list", t, "resourceGroups", lambda d: put(d, "resourceGroups", [1]))
    fail("groups-empty", t, "resourceGroups.rootGroups", lambda d: put(d, "resourceGroups", {}))
    fail("groups-regex", t, "resourceGroups.selectors[0].user", lambda d: put(
        d, "resourceGroups", {"rootGroups": [{"name": "a", "hardConcurrencyLimit": 1,
                                              "maxQueued": 1}],
                              "selectors": [{"group": "a", "user": "(["}]}))
    fail("groups-limit-nan", t, "resourceGroups.rootGroups[0].hardConcurrencyLimit", lambda d: put(
        d, "resourceGroups", {"rootGroups": [{"name": "a", "hardConcurrencyLimit": float("nan"),
                                              "maxQueued": 1}],
                              "selectors": [{"group": "a"}]}))
    fail("spooling-string", t, "spooling", lambda d: put(d, "spooling", "lake"))
    fail("spooling-storage-list", t, "spooling.storage",
         lambda d: put(d, "spooling", {"storage": ["lake"]}))
    fail("spooling-inlining-list", t, "spooling.inlining",
         lambda d: put(d, "spooling", {"storage": "lake", "inlining": []}))
    fail("image-number", t, "image", lambda d: put(d, "image", 5))
    fail("image-object", t, "image", lambda d: put(d, "image", {"repository": "evil/trino"}))
    fail("runtime-list", t, "runtime", lambda d: put(d, "runtime", ["-Xmx1g"]))
    fail("network-policy-object", t, "networkPolicy",
         lambda d: put(d, "networkPolicy", {"clients": ["everyone"]}))
    fail("service-bool", t, "service", lambda d: put(d, "service", True))
    fail("service-object", t, "service", lambda d: put(d, "service", {"type": "NodePort"}))

    # --- unknown fields: rejected by default (validation.unknown_fields: warn downgrades) ---
    u = "unknown-fields"
    fail("unknown-top", u, "replica", lambda d: put(d, "replica", 3))
    fail("unknown-worker", u, "clusterConfig.worker.replica",
         lambda d: put(d, "clusterConfig.worker.replica", 3))
    fail("unknown-connector", u, "connectors[0].props", lambda d: put(d, "connectors.0.props", {}))
    fail("unknown-jvm", u, "clusterConfig.coordinator.jvm.gcMethod",
         lambda d: put(d, "clusterConfig.coordinator.jvm.gcMethod", "G1"))
    fail("unknown-nested-namespace", u, "clusterConfig.namespace",
         lambda d: put(d, "clusterConfig.namespace", "kube-system"))

    # --- clusterIds that try to leave trino-clusters/ (and other unusable ones) ------------
    c = "cluster-id"
    for i, bad in enumerate([
        "../x", "../../../../etc/cron.d/x", "/abs", "a/b", "..", ".", "", "a" * 54, "a" * 100_000,
        "\u0430nalytics",  # Cyrillic a
        "\uff58",  # fullwidth x
        "Upper", "trailing.", "trailing-", "-leading", "a\nb", "a b", "a\\b", "%2e%2e", "a\x00b",
        "x\u200b",  # zero-width space
    ]):
        out.append(Case(f"cluster-id-{i}", c, base("placeholder", clusterId=bad,
                                                   _id=f"hostile-cluster-id-{i}"), "fail", "clusterId"))

    # --- connector names that try to leave catalog/ or collide -----------------------------
    n = "connector-name"
    for i, bad in enumerate([
        "../x", "/abs", "a/b", "..", ".", "", "c" * 129, "h\u0456ve",  # Cyrillic i
        "hive.", ".hidden", "a\\b", "x:y", "x y", "hive\n", "hive\x00", 17,
    ]):
        fail(f"connector-name-{i}", n, "connectors[0].name",
             lambda d, bad=bad: put(d, "connectors", [connector(bad)]))
    fail("connector-collide-case", n, "connectors[1].name",
         lambda d: put(d, "connectors", [connector("hive"), connector("Hive")]))
    fail("connector-collide-exact", n, "connectors[1].name",
         lambda d: put(d, "connectors", [connector("hive"), connector("hive")]))

    # --- property keys and values that try to break out of their file ----------------------
    p = "properties"
    cp = 'connectors["mem"].properties'
    for name, key, value, field in [
        ("value-newline", "p", "a\nmalicious=1", f"{cp}.p"),
        ("value-cr", "p", "a\rmalicious=1", f"{cp}.p"),
        ("value-nul", "p", "a\x00b", f"{cp}.p"),
        ("key-newline", "a\nb", "1", f'{cp}["a\\nb"]'),
        ("key-empty", "", "1", f'{cp}[""]'),
        ("key-space", "a b", "1", f'{cp}["a b"]'),
        ("env-injection", "p", "${ENV:AWS_SECRET_ACCESS_KEY}", f"{cp}.p"),
        ("broken-vault", "p", "{{ vault:secret/trino/x }}", f"{cp}.p"),
    ]:
        fail(name, p, field, lambda d, key=key, value=value: put(
            d, "connectors", [{"name": "mem", "properties": {"connector.name": "memory", key: value}}]))
    fail("top-env-injection", p, "properties.query.x",
         lambda d: put(d, "properties.query.x", "${ENV:PATH}"))
    # Server properties take placeholders (issue 13) under the catalogs' scope rules.
    fail("top-placeholder-out-of-scope", p, "properties.query.x",
         lambda d: put(d, "properties.query.x", "{{ vault:secret/trino/other-cluster#pw }}"))
    fail("chart-owned-key", p, 'properties.http-server["http.port"]',
         lambda d: put(d, "properties", {"http-server": {"http.port": "1"}}))
    fail("chart-owned-coordinator", p, "properties.node-scheduler.include-coordinator",
         lambda d: put(d, "properties", {"node-scheduler": {"include-coordinator": "maybe"}}))
    fail("node-environment", p, "properties.node.environment",
         lambda d: put(d, "properties.node", {"environment": "prod; rm -rf /"}))
    fail("flattened-twice", p, 'properties["query.a"].b',
         lambda d: put(d, "properties", {"query": {"a.b": "1"}, "query.a": {"b": "2"}}))
    fail("keda-template", p, "clusterConfig.worker.autoscaling.triggers[0].metadata.query",
         lambda d: put(d, "clusterConfig.worker.autoscaling", {
             "type": "keda", "minReplicas": 1, "maxReplicas": 3,
             "triggers": [{"type": "prometheus", "metadata": {"query": "{{ .Values }}"}}]}))
    render("yaml-specials", p, lambda d: put(d, "connectors", [connector("yaml", **YAML_SPECIALS)]))
    render("template-text", p, lambda d: put(d, "connectors", [connector("tpl", **TEMPLATE_TEXT)]))
    render("odd-text", p, lambda d: put(d, "connectors", [connector("odd", **ODD_TEXT)]))
    render("key-syntax", p, lambda d: put(d, "connectors", [connector(
        "keys", **{"a=b:c": "v", "#not-comment": "v", "!bang": "v", "x\\y": "v"})]))
    render("top-template-text", p, lambda d: put(d, "properties", {
        "query": {"max-memory-per-node": "2GB", "x-release": "{{ .Release.Name }}"},
        "a=b": {"c:d": "e=f", "yes": "no"}}))

    # --- huge sizes and deep nesting (the big ones run once) ----------------------------------
    h = "huge"
    doc = base("ten-megabyte-value")
    doc["connectors"][0]["properties"]["tpch.big"] = "x" * 10_000_000
    out.append(Case("ten-megabyte-value", h, doc, "fail", 'connectors["tpch"].properties["tpch.big"]',
                    big=True))
    doc = base("ten-thousand-connectors")
    doc["connectors"] = [connector(f"c{i}") for i in range(10_000)]
    out.append(Case("ten-thousand-connectors", h, doc, "fail", "connectors", big=True))
    fail("deep-nesting", h, "", lambda d: put(d, "clusterConfig.worker.extra", _nested(60)))
    fail("huge-key", h, '["' + "k" * 60 + '"...]', lambda d: put(d, "k" * 1_000_000, 1))
    fail("long-string-id", h, "_id", lambda d: put(d, "_id", "hostile-long-" + "i" * 300))
    fail("long-owner", h, "owner", lambda d: put(d, "owner", "o" * 64))

    # --- NaN and Infinity -----------------------------------------------------------------
    f = "nan-infinity"
    fail("replicas-nan", f, "clusterConfig.worker.replicas",
         lambda d: put(d, "clusterConfig.worker.replicas", float("nan")))
    fail("max-replicas-inf", f, "clusterConfig.worker.autoscaling.maxReplicas",
         lambda d: put(d, "clusterConfig.worker.autoscaling", {"minReplicas": 1,
                                                               "maxReplicas": float("inf")}))
    fail("cpu-minus-inf", f, "clusterConfig.worker.resources.requests.cpu",
         lambda d: put(d, "clusterConfig.worker.resources.requests.cpu", float("-inf")))
    fail("heap-nan", f, "clusterConfig.coordinator.jvm.maxHeapSize",
         lambda d: put(d, "clusterConfig.coordinator.jvm.maxHeapSize", float("nan")))

    # --- BSON types where strings are expected -------------------------------------------
    b = "bson-types"
    fail("owner-objectid", b, "owner", lambda d: put(d, "owner", ObjectId("653a1a7b8e1f4a1e9c5d8e1a")))
    fail("version-date", b, "trinoVersion",
         lambda d: put(d, "trinoVersion", datetime.datetime(2024, 1, 1)))
    fail("replicas-decimal128", b, "clusterConfig.worker.replicas",
         lambda d: put(d, "clusterConfig.worker.replicas", Decimal128("2")))
    fail("heap-decimal128", b, "clusterConfig.worker.jvm.maxHeapSize",
         lambda d: put(d, "clusterConfig.worker.jvm.maxHeapSize", Decimal128("6")))
    fail("cluster-id-binary", b, "clusterId", lambda d: put(d, "clusterId", Binary(b"../x")))
    fail("value-regex", b, 'connectors["tpch"].properties["tpch.x"]',
         lambda d: d["connectors"][0]["properties"].update({"tpch.x": Regex(".*")}))
    fail("value-timestamp", b, 'connectors["tpch"].properties["tpch.x"]',
         lambda d: d["connectors"][0]["properties"].update({"tpch.x": Timestamp(1, 1)}))
    fail("value-dbref", b, 'connectors["tpch"].properties["tpch.x"]',
         lambda d: d["connectors"][0]["properties"].update({"tpch.x": DBRef("c", 1)}))
    fail("owner-minkey", b, "owner", lambda d: put(d, "owner", MinKey()))
    fail("value-int64", b, 'connectors["tpch"].properties["tpch.x"]',
         lambda d: d["connectors"][0]["properties"].update({"tpch.x": Int64(2**40)}))
    render("replicas-int64", b, lambda d: put(d, "clusterConfig.worker.replicas", Int64(3)))
    render("version-int64", b, lambda d: put(d, "trinoVersion", Int64(476)))
    # bson's Code is a str subclass (and unhashable): it must not pass for text anywhere
    fail("owner-code", b, "owner", lambda d: put(d, "owner", Code("team-a")))
    fail("profile-code", b, "profile", lambda d: put(d, "profile", Code("small")))
    out.append(Case("cluster-id-code", b, base("x", _id="hostile-cluster-id-code",
                                               clusterId=Code("cluster-id-code")), "fail", "clusterId"))
    for i, _id in enumerate([12345, Int64(2**40), 1.5, {"a": "b"},
                             datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
                             Binary(b"\x00\xff"), ObjectId("653a1a7b8e1f4a1e9c5d8e2b")]):  # mongomock cannot store a Decimal128 _id
        out.append(Case(f"odd-id-{i}", b, base("x", _id=_id, clusterId=f"Bad_{i}!"), "fail",
                        "clusterId"))

    # --- duplicates and `enabled` as a string ------------------------------------------------
    d = "duplicates"
    for i in (1, 2):
        out.append(Case(f"dup-a-{i}", d, base("dup-a", _id=f"hostile-dup-a-{i}"), "fail", "clusterId"))
    out.append(Case("disabled-twin", d, base("good-one", _id="hostile-disabled-twin", enabled=False),
                    "disabled"))
    e = "enabled"
    fail("enabled-string-false", e, "enabled", lambda d: put(d, "enabled", "false"))
    fail("enabled-string-true", e, "enabled", lambda d: put(d, "enabled", "true"))
    fail("enabled-zero", e, "enabled", lambda d: put(d, "enabled", 0))
    fail("enabled-null", e, "enabled", lambda d: put(d, "enabled", None))
    out.append(Case("disabled-garbage", e, base("x", _id="hostile-disabled-garbage", enabled=False,
                                                clusterId="../../etc", owner=MinKey(),
                                                connectors="all of them"), "disabled"))

    # --- secret scope and Argo CD placement ------------------------------------------------
    s = "scope"
    for name, ref in [
        ("vault-other-cluster", "{{ vault:secret/trino/good-one#password }}"),
        ("vault-other-mount", "{{ vault:kv/trino/vault-other-mount#password }}"),
        ("vault-dotdot", "{{ vault:secret/trino/vault-dotdot/../good-one#password }}"),
        ("vault-prefix", "{{ vault:secret/trino/vault-prefixx#password }}"),
        ("vault-root", "{{ vault:secret/data#password }}"),
    ]:
        fail(name, s, 'connectors["db"].properties.connection-password',
             lambda d, ref=ref: put(d, "connectors", [connector("db", **{"connection-password": ref})]))
    for key, value in [("project", "admin"), ("namespace", "kube-system"),
                       ("repoURL", "https://evil.example/x.git"), ("repository", "x"),
                       ("chart", "evil"), ("chartVersion", "9.9.9"),
                       ("values", {"image": {"repository": "evil/trino"}}),
                       ("helm", {"valueFiles": ["/etc/passwd"]}), ("syncPolicy", {})]:
        fail(f"sets-{key.lower()}", s, key, lambda d, key=key, value=value: put(d, key, value))
    fail("destination-server", s, "destination.server",
         lambda d: put(d, "destination", {"server": "https://prod-admin.example:6443"}))
    fail("destination-name", s, "destination.name",
         lambda d: put(d, "destination", {"name": "in-cluster"}))
    fail("internal-service", s, 'connectors["db"].properties.connection-password',
         lambda d: put(d, "connectors", [connector(
             "db", **{"connection-url": "jdbc:postgresql://vault.vault.svc:8200/x",
                      "connection-password": "{{ vault:secret/platform/vault#root_token }}"})]))
    # issue 19 finding 6: legacy Hadoop serves file: to SQL; JDBC drivers act on the pod
    fail("legacy-hadoop", s, 'connectors["lake"].properties["fs.hadoop.enabled"]',
         lambda d: put(d, "connectors", [connector(
             "lake", **{"connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083",
                        "fs.hadoop.enabled": "true"})]))
    fail("jdbc-class", s, 'connectors["pg"].properties.connection-url',
         lambda d: put(d, "connectors", [connector(
             "pg", **{"connector.name": "postgresql",
                    "connection-url": "jdbc:postgresql://pg/x?ssl=true;SSL%2566actory=a.B"})]))
    fail("jdbc-reads-token", s, 'connectors["my"].properties.connection-url',
         lambda d: put(d, "connectors", [connector("my", **{
             "connector.name": "mysql", "connection-url": "jdbc:mysql://(host=db,port=3306,"
             "serverRSAPublicKeyFile=/var/run/secrets/kubernetes.io/serviceaccount/token)/"})]))
    return out


def corpus() -> list[Case]:
    """Every hostile case (fresh copies: tests may change them)."""
    return _cases()


def good_docs() -> list[dict[str, Any]]:
    """Healthy documents synced in the same run as the corpus."""
    one = base("good-one", _id=ObjectId("653a1a7b8e1f4a1e9c5d8e01"))
    two = base("good-two", _id="good-two", connectors=[connector(
        "pg", **{"connection-url": "jdbc:postgresql://pg.data.svc:5432/x",
                 "connection-user": "trino", "connection-password": "{{ PG_PASSWORD }}"})])
    return [one, two]


def label(case: Case, doc_key: Callable[[Any], str]) -> str:
    """How trinogen's messages name the document of `case`."""
    from trinogen.model import RawDocument, document_label

    return document_label(RawDocument(doc_key(case.doc_id), case.doc))
