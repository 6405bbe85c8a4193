#!/usr/bin/env python3
"""Deterministic, realistic Trino cluster documents for trinogen's benchmark harness.

    python bench/gen_docs.py N OUT.json [--seed 42]            # one Extended JSON array
    python bench/gen_docs.py N OUT.json --ansible              # the copy the Ansible baseline can render
    python bench/gen_docs.py N OUT.json --secrets SECRETS.json # also: every Vault secret they reference
    python bench/gen_docs.py N OUT.json --features DIR         # every platform option in use (below)

Every document is complete (no `profile`, nothing from `defaults`) and valid for trinogen:

* clusterId unique (`<purpose>-<env>-<nnnnn>`), `_id` a deterministic ObjectId, `lastUpdated` a date;
* coordinator and worker sized from a table of node shapes; each heap is below its container memory
  limit, and `query.max-memory-per-node` plus the 30% heap headroom fits BOTH heaps;
* 3-6 connectors of distinct kinds; about half the documents use secret placeholders, both forms:
  `{{ NAME }}` (mapped to `secret/trino/<clusterId>#NAME` by trinogen's default reference) and
  `{{ vault:secret/trino/<clusterId>/<connector>#<key> }}` (some inside a longer value);
* exactly round(N/10) documents have `enabled: false`;
* some carry graceful shutdown, HPA autoscaling, extra Trino properties, role properties, a
  description (a metadata field trinogen records but never renders).

With `features` (`--features DIR`), the options of the kitchen sink (tests/kitchen_sink.py: its
settings file and its one document using every platform option of issues 13 and 14) are spread
over the fleet: each document draws its own mix (authentication with TLS in the pod, access rules,
a storage option on a catalog, fault tolerance, files, the shared catalog, placement per role,
disruption, a service account, monitoring, an ingress), each option with its own share, so every
option is used by many clusters and most clusters use several. DIR gets the settings the options
need (`features.yaml`, the kitchen sink's) and the catalog library (`catalogs/warehouse.json`).

The same (N, seed) always gives the same documents, and document i is the same for every N > i, so
N=100 is a prefix of N=1000 (except for which documents are disabled).

`mutate()` changes documents the way owners do (more workers, a Trino upgrade, a connector setting)
and keeps them valid; the runner uses it for the "one changed" and "10% changed" phases.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import kitchen_sink

TEAMS = [
    "data_analytics_team", "marketing_bi", "finance_reporting", "ml_platform", "risk_engineering",
    "growth_analytics", "supply_chain", "customer_insights", "data_platform", "search_relevance",
]
PURPOSES = ["analytics", "adhoc", "etl", "reporting", "ml", "bi", "finance", "search", "lake", "dq"]
ENVS = [("prod", "production"), ("staging", "staging"), ("dev", "development"), ("qa", "qa")]
VERSIONS = ["470", "472", "474", "476", "477", "478", "480"]
# (cpu request, cpu limit, memory request GiB, memory limit GiB)
NODE_SHAPES = [
    ("1", "2", 4, 6), ("2", "4", 8, 12), ("4", "8", 16, 24), ("8", "8", 32, 32),
    ("8", "16", 48, 64), ("16", "16", 96, 128),
]
HEAP_SHARE = [0.7, 0.75, 0.8, 0.85]  # heap as a share of the container memory limit
PER_NODE_SHARE = [0.4, 0.5, 0.6, 0.65]  # max-memory-per-node as a share of the smaller heap (<= 0.7)

CONNECTOR_KINDS = [
    "hive", "iceberg", "iceberg_rest", "delta_lake", "mysql", "postgresql", "sqlserver", "kafka",
    "elasticsearch", "redis", "tpch", "tpcds", "memory", "blackhole", "jmx",
]


def _object_id(rng: random.Random, i: int) -> str:
    return f"{0x65000000 + i:08x}{rng.getrandbits(64):016x}"


def _connector(
    rng: random.Random, kind: str, cid: str, env: str, i: int, with_secrets: bool
) -> dict[str, Any]:
    """One connector: name and properties (string values only, as trinogen requires).

    With `with_secrets` false the cluster authenticates without passwords (IAM, trust auth).
    """
    host = f"{env}-{i:05d}"
    metastore = f"thrift://hive-metastore-{host}.data.svc.cluster.local:9083"
    secret = with_secrets and rng.random() < 0.9

    def vault(name: str, key: str) -> str:
        return f"{{{{ vault:secret/trino/{cid}/{name}#{key} }}}}"

    if kind == "hive":
        return {"name": f"hive-{env}", "properties": {
            "connector.name": "hive",
            "hive.metastore.uri": metastore,
            "hive.non-managed-table-writes-enabled": rng.choice(["true", "false"]),
            "hive.s3.path-style-access": "true",
            "hive.s3.endpoint": f"https://s3.{rng.choice(['eu-west-1', 'us-east-1'])}.amazonaws.com",
            "hive.max-partitions-per-scan": str(rng.choice([10000, 50000, 100000])),
        }}
    if kind == "iceberg":
        return {"name": f"iceberg-{env}", "properties": {
            "connector.name": "iceberg",
            "iceberg.catalog.type": "hive_metastore",
            "hive.metastore.uri": metastore,
            "iceberg.file-format": rng.choice(["PARQUET", "ORC"]),
            "iceberg.compression-codec": rng.choice(["ZSTD", "SNAPPY"]),
        }}
    if kind == "iceberg_rest":
        props = {
            "connector.name": "iceberg",
            "iceberg.catalog.type": "rest",
            "iceberg.rest-catalog.uri": f"http://iceberg-rest-{host}.data.svc.cluster.local:8181",
            "iceberg.rest-catalog.security": "OAUTH2",
        }
        # a placeholder inside a longer value: client id and secret
        props["iceberg.rest-catalog.oauth2.credential"] = (
            f"trino-{env}:{vault('iceberg-rest', 'client-secret')}" if secret else f"trino-{env}:public"
        )
        return {"name": "lakehouse", "properties": props}
    if kind == "delta_lake":
        return {"name": f"delta-{env}", "properties": {
            "connector.name": "delta_lake",
            "hive.metastore.uri": metastore,
            "delta.enable-non-concurrent-writes": "true",
        }}
    if kind == "mysql":
        return {"name": "mysql-rds", "properties": {
            "connector.name": "mysql",
            "connection-url": f"jdbc:mysql://{host}-rds.cluster-c1x2y3.eu-west-1.rds.amazonaws.com:3306",
            "connection-user": "trino_user",
            **({"connection-password": "{{ MYSQL_RDS_PASSWORD }}"} if secret else {}),
        }}
    if kind == "postgresql":
        return {"name": "postgres-main", "properties": {
            "connector.name": "postgresql",
            "connection-url": f"jdbc:postgresql://{host}-pg.db.svc.cluster.local:5432/app",
            "connection-user": "trino_reader",
            **({"connection-password": rng.choice([vault("postgres-main", "password"),
                                                   "{{ POSTGRES_PASSWORD }}"])} if secret else {}),
        }}
    if kind == "sqlserver":
        return {"name": "mssql-erp", "properties": {
            "connector.name": "sqlserver",
            "connection-url": f"jdbc:sqlserver://{host}-mssql:1433;databaseName=erp;encrypt=true",
            "connection-user": "trino",
            **({"connection-password": "{{ MSSQL_PASSWORD }}"} if secret else {}),
        }}
    if kind == "kafka":
        props = {
            "connector.name": "kafka",
            "kafka.nodes": f"kafka-{host}-0:9092,kafka-{host}-1:9092,kafka-{host}-2:9092",
            "kafka.table-names": "events.clicks,events.orders,events.sessions",
            "kafka.hide-internal-columns": "false",
            "kafka.default-schema": "events",
        }
        if secret:
            props["kafka.security-protocol"] = "SASL_SSL"
            props["kafka.ssl.keystore.password"] = "{{ KAFKA_KEYSTORE_PASSWORD }}"
        return {"name": "kafka-events", "properties": props}
    if kind == "elasticsearch":
        props = {
            "connector.name": "elasticsearch",
            "elasticsearch.host": f"es-{host}.logging.svc.cluster.local",
            "elasticsearch.port": "9200",
            "elasticsearch.default-schema-name": "default",
        }
        if secret:
            props["elasticsearch.security"] = "PASSWORD"
            props["elasticsearch.auth.user"] = "trino"
            props["elasticsearch.auth.password"] = vault("es-logs", "password")
        return {"name": "es-logs", "properties": props}
    if kind == "redis":
        return {"name": "redis-cache", "properties": {
            "connector.name": "redis",
            "redis.nodes": f"redis-{host}:6379",
            "redis.table-names": "sessions,carts",
            **({"redis.password": "{{ REDIS_PASSWORD }}"} if secret else {}),
        }}
    if kind in ("tpch", "tpcds"):
        return {"name": kind, "properties": {"connector.name": kind,
                                             f"{kind}.splits-per-node": str(rng.choice([4, 8, 16]))}}
    if kind in ("memory", "blackhole", "jmx"):
        return {"name": kind, "properties": {"connector.name": kind}}
    raise ValueError(kind)


def _role(rng: random.Random, shape: tuple[str, str, int, int]) -> tuple[dict[str, Any], int]:
    cpu_req, cpu_lim, mem_req, mem_lim = shape
    heap = max(1, int(mem_lim * rng.choice(HEAP_SHARE)))
    assert heap < mem_lim
    heap_text = f"{heap * 1024}M" if rng.random() < 0.1 else f"{heap}G"
    return {
        "resources": {
            "requests": {"cpu": cpu_req, "memory": f"{mem_req}Gi"},
            "limits": {"cpu": cpu_lim, "memory": f"{mem_lim}Gi"},
        },
        "jvm": {"maxHeapSize": heap_text},
    }, heap


def document(rng: random.Random, i: int) -> dict[str, Any]:
    """Document number i (enabled; `generate` disables some)."""
    purpose = rng.choice(PURPOSES)
    env_short, env_long = rng.choice(ENVS)
    cid = f"{purpose}-{env_short}-{i:05d}"
    oid = _object_id(rng, i)
    coord_shape = rng.choice(NODE_SHAPES[:5])
    worker_shape = rng.choice(NODE_SHAPES)
    coordinator, c_heap = _role(rng, coord_shape)
    coordinator = {"replicas": 1, **coordinator}
    worker, w_heap = _role(rng, worker_shape)
    worker = {"replicas": rng.randint(1, 40), **worker}
    per_node = max(1, int(min(c_heap, w_heap) * rng.choice(PER_NODE_SHARE)))
    assert per_node <= 0.7 * min(c_heap, w_heap)
    if rng.random() < 0.3:
        worker["gracefulShutdown"] = {"enabled": True, "gracePeriodSeconds": rng.choice([60, 120, 300])}
    if rng.random() < 0.15:
        lo = rng.randint(1, 4)
        worker["autoscaling"] = {"type": "hpa", "minReplicas": lo, "maxReplicas": lo + rng.randint(4, 30),
                                 "targetCPUUtilizationPercentage": rng.choice([60, 70, 80])}
    if rng.random() < 0.1:
        worker["properties"] = {"task": {"concurrency": str(rng.choice([8, 16, 32]))}}
    properties: dict[str, dict[str, str]] = {
        "query": {
            "max-memory": rng.choice(["500GB", "1TB", "10TB", "50TB", "100TB"]),
            "max-memory-per-node": f"{per_node}GB",
        },
        "node": {"environment": env_long},
    }
    if rng.random() < 0.4:
        properties["query"]["max-execution-time"] = rng.choice(["30m", "1h", "4h", "12h"])
    if rng.random() < 0.25:
        properties["exchange"] = {"compression-codec": rng.choice(["LZ4", "ZSTD"])}
    kinds = rng.sample(CONNECTOR_KINDS, rng.randint(3, 6))
    uses_secrets = rng.random() < 0.6
    doc: dict[str, Any] = {
        "_id": {"$oid": oid},
        "clusterId": cid,
        "owner": rng.choice(TEAMS),
        "enabled": True,
        "trinoVersion": rng.choice(VERSIONS),
        "clusterConfig": {"coordinator": coordinator, "worker": worker},
        "properties": properties,
        "connectors": [_connector(rng, k, cid, env_short, i, uses_secrets) for k in kinds],
        "lastUpdated": {"$date": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"},
    }
    if rng.random() < 0.2:
        doc["description"] = f"{purpose} cluster for {doc['owner'].replace('_', ' ')} ({env_long})"
    return doc


# --- the kitchen sink's options, spread over the fleet ------------------------------------------

def _sink_role(role: str, key: str) -> Any:
    return copy.deepcopy(kitchen_sink.document()["clusterConfig"][role][key])


def _lake(doc: dict[str, Any]) -> None:
    """The kitchen sink's Hive catalog on the storage option (a Kerberos keytab from `files`)."""
    lake = copy.deepcopy(kitchen_sink.document()["connectors"][0])
    lake["properties"] = {k: v for k, v in lake["properties"].items() if "kerberos" not in v.lower()
                          and not k.startswith(("hive.metastore.authentication",
                                                "hive.metastore.client", "hive.metastore.service"))}
    doc["connectors"].append(lake)


def _files(doc: dict[str, Any]) -> None:
    files = copy.deepcopy(kitchen_sink.document()["files"])
    for f in files:  # the keytab's placeholder names the kitchen sink's cluster: use this one's
        if "secret" in f:
            f["secret"] = f["secret"].replace(f"/{kitchen_sink.CID}/", f"/{doc['clusterId']}/")
    doc["files"] = files


def _access(doc: dict[str, Any]) -> None:
    rules = copy.deepcopy(kitchen_sink.document()["accessControl"])
    first = doc["connectors"][0]["name"]  # read-only on one of this cluster's own catalogs
    rules["rules"]["catalogs"][1]["catalog"] = first
    doc["accessControl"] = rules


def _from_sink(key: str) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        doc[key] = copy.deepcopy(kitchen_sink.document()[key])
    return apply


def _role_option(role: str, key: str) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        doc["clusterConfig"][role][key] = _sink_role(role, key)
    return apply


def _shared(doc: dict[str, Any]) -> None:
    doc["connectors"].append(copy.deepcopy(kitchen_sink.document()["connectors"][1]))


# (share of the clusters, option): a realistic platform has most clusters on monitoring and a
# disruption budget, fewer with an ingress, files or fault tolerance.
FEATURES: list[tuple[float, Callable[[dict[str, Any]], None]]] = [
    (0.35, _from_sink("authentication")),
    (0.40, _from_sink("serviceAccount")),
    (0.30, _from_sink("ingress")),
    (0.60, _from_sink("disruption")),
    (0.70, _from_sink("monitoring")),
    (0.15, _from_sink("faultTolerance")),
    (0.25, _access),
    (0.30, _role_option("coordinator", "placement")),
    (0.45, _role_option("worker", "placement")),
    (0.15, _files),
    (0.30, _lake),
    (0.35, _shared),
]


def with_features(rng: random.Random, doc: dict[str, Any]) -> dict[str, Any]:
    """The document with its own draw of the kitchen sink's options (in place)."""
    for share, apply in FEATURES:
        if rng.random() < share:
            apply(doc)
    return doc


def write_feature_settings(directory: str) -> tuple[Path, Path]:
    """The settings the options need (the kitchen sink's) and the catalog library they use."""
    out = Path(directory)
    (out / "catalogs").mkdir(parents=True, exist_ok=True)
    settings = out / "features.yaml"
    settings.write_text(kitchen_sink.SETTINGS, encoding="utf-8")
    library = out / "catalogs" / "warehouse.json"
    library.write_text(json.dumps(kitchen_sink.catalogs()) + "\n", encoding="utf-8")
    return settings, library


def generate(n: int, seed: int = 42, *, features: bool = False) -> list[dict[str, Any]]:
    """N documents; exactly round(N/10) of them disabled; with `features`, the kitchen sink's
    options spread over them (drawn from their own RNG, so the plain documents stay a prefix)."""
    docs = [document(random.Random(f"{seed}:{i}"), i) for i in range(n)]
    if features:
        for i, doc in enumerate(docs):
            with_features(random.Random(f"{seed}:features:{i}"), doc)
    pick = random.Random(f"{seed}:disabled:{n}")
    for idx in pick.sample(range(n), round(n * 0.10)):
        docs[idx]["enabled"] = False
    return docs


# --- changes between runs ----------------------------------------------------------------------

def mutate(docs: list[dict[str, Any]], count: int, round_no: int, seed: int = 42) -> list[int]:
    """Change `count` enabled documents in place (valid afterwards); returns their indexes.

    Round r picks its documents with its own RNG, so rounds differ. Each change alters the rendered
    output: worker replicas, or HPA maxReplicas when autoscaled (values.yaml), the Trino version
    (values.yaml), or a connector setting (its catalog file and values.yaml).
    """
    rng = random.Random(f"{seed}:mutate:{round_no}:{count}")
    enabled = [i for i, d in enumerate(docs) if d["enabled"]]
    picked = sorted(rng.sample(enabled, min(count, len(enabled))))
    for j, idx in enumerate(picked):
        d = docs[idx]
        how = rng.random() if count > 1 else 0.0  # "one changed" is always the replica bump
        if how < 0.5:
            w = d["clusterConfig"]["worker"]
            if "autoscaling" in w:  # the chart's worker count comes from minReplicas then
                a = w["autoscaling"]
                a["maxReplicas"] = a["minReplicas"] + (a["maxReplicas"] - a["minReplicas"]) % 30 + 1
            else:
                w["replicas"] = w["replicas"] % 40 + 1
        elif how < 0.75:
            cur = d["trinoVersion"]
            d["trinoVersion"] = VERSIONS[(VERSIONS.index(cur) + 1) % len(VERSIONS)]
        else:
            props = d["connectors"][0]["properties"]
            props["metadata.cache-ttl"] = f"{round_no * 1000 + j % 1000 + 1}s"
        d["lastUpdated"] = {"$date": f"2025-01-01T00:00:{round_no % 60:02d}Z"}
    return picked


# --- secrets and the Ansible copy ---------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{\s*(?:vault:(?P<ref>[^}]*?)|(?P<name>[A-Za-z0-9_]+))\s*\}\}")


def placeholders(doc: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """(vault path, key) for every placeholder of one document (trinogen's default mapping)."""
    for conn in doc.get("connectors", []):
        for value in conn.get("properties", {}).values():
            for m in _PLACEHOLDER.finditer(value):
                if m.group("name"):
                    yield f"secret/trino/{doc['clusterId']}", m.group("name")
                else:
                    path, _, key = m.group("ref").strip().partition("#")
                    yield path, key


def secrets(docs: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Every Vault secret the enabled documents reference: path -> {key: dummy value}."""
    out: dict[str, dict[str, str]] = {}
    for d in docs:
        if not d["enabled"]:
            continue
        for path, key in placeholders(d):
            digest = hashlib.sha256(f"{path}#{key}".encode()).hexdigest()[:12]
            out.setdefault(path, {})[key] = f"bench-{digest}"
    return dict(sorted(out.items()))


ANSIBLE_VARS = ("MYSQL_RDS_PASSWORD", "POSTGRES_PASSWORD")  # what the baseline playbook defines


def for_ansible(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same documents, with placeholders Ansible cannot render made renderable.

    The playbook defines only MYSQL_RDS_PASSWORD and POSTGRES_PASSWORD; any other `{{ NAME }}` is
    an undefined variable there, and `{{ vault:... }}` is a Jinja syntax error. Both become
    `{{ POSTGRES_PASSWORD }}` (same count of files, near-identical bytes).
    """
    out = copy.deepcopy(docs)

    def fix(m: re.Match[str]) -> str:
        return m.group(0) if m.group("name") in ANSIBLE_VARS else "{{ POSTGRES_PASSWORD }}"

    for d in out:
        for conn in d["connectors"]:
            if "properties" in conn:  # a shared catalog (--features) has none of its own
                conn["properties"] = {k: _PLACEHOLDER.sub(fix, v) for k, v in conn["properties"].items()}
    return out


def dump(docs: list[dict[str, Any]], path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(docs, f, separators=(",", ":"))
        f.write("\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--ansible", action="store_true", help="write the Ansible-renderable copy")
    ap.add_argument("--secrets", metavar="FILE", help="also write the referenced Vault secrets")
    ap.add_argument("--change", type=int, default=0, metavar="COUNT",
                    help="apply one round of changes to COUNT enabled documents")
    ap.add_argument("--features", metavar="DIR",
                    help="spread the kitchen sink's options over the documents; write the settings "
                    "they need to DIR/features.yaml and the catalog library to DIR/catalogs/")
    args = ap.parse_args()
    docs = generate(args.n, args.seed, features=bool(args.features))
    if args.features:
        for written in write_feature_settings(args.features):
            print(f"wrote {written}")
    if args.change:
        mutate(docs, args.change, 1, args.seed)
    dump(for_ansible(docs) if args.ansible else docs, args.out)
    if args.secrets:
        with open(args.secrets, "w", encoding="utf-8") as f:
            json.dump(secrets(docs), f, indent=1)
    enabled = [d for d in docs if d["enabled"]]
    with_secrets = sum(1 for d in enabled if any(True for _ in placeholders(d)))
    print(f"wrote {len(docs)} documents ({len(enabled)} enabled, {with_secrets} with secrets, "
          f"{sum(len(d['connectors']) for d in enabled)} connectors on enabled) to {args.out}")


if __name__ == "__main__":
    main()
