"""What the Trino chart, Trino and Kubernetes allow: limits, names, reserved fields, memory.

Facts, not walking: the walkers (document, roles, connectors, properties) ask these tables and
functions. Each rule names where it comes from.
"""

from __future__ import annotations

import math
import re

from trinogen.kinds import HOMED, OWN, top_field
from trinogen.model.types import Role
from trinogen.model.units import data_size_bytes, data_size_text, jvm_bytes, jvm_size_text

# --- limits (Helm release names at most 53 characters; object sizes: render.limits) ----------
# Helm limits release names to 53 characters, but the chart names the worker Service
# "<release>-trino-worker" without truncating it, and a Service name has at most 63.
MAX_CLUSTER_ID = 50
MAX_CONNECTORS = 500
MAX_CONNECTOR_NAME = 128
MAX_STRING = 65536
MAX_DEPTH = 8
# The document _id is recorded in every file header, and gitops reads only the first 512 bytes of a
# file to find it again; a longer _id would be cut there, and a failing document's files could then
# look orphaned and be pruned. 256 leaves room for the rest of the header.
MAX_DOC_ID = 256
MAX_INT = 2**63 - 1  # BSON int64: larger numbers never come from MongoDB (nor print past 4300 digits)
MAX_TRIGGERS = 20
MAX_REPLICAS = 1000

# --- names -----------------------------------------------------------------------------------
CLUSTER_ID = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")  # DNS-1123 label starting with a letter
LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")  # Kubernetes label value
CONNECTOR_NAME = re.compile(r"[-._a-zA-Z0-9]+")
TRINO_VERSION = re.compile(r"[1-9][0-9]{0,5}")
NODE_ENVIRONMENT = re.compile(r"[a-z0-9][_a-z0-9]*")  # what Trino accepts for node.environment
PROPERTY_KEY = re.compile(r"[^\s\x00-\x1f\x7f]+")  # judged with checker.property_key_ok
MAX_PROPERTY_KEY = 256
RESOURCE_NAME = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")

# --- memory ----------------------------------------------------------------------------------
HEAP_HEADROOM = 0.3  # Trino's default memory.heap-headroom-per-node: 30% of the heap
CHART_DEFAULT_PER_NODE = "1GB"  # the chart's <role>.config.query.maxMemoryPerNode

# --- fields ----------------------------------------------------------------------------------
# Document fields that are recorded but never rendered.
METADATA_FIELDS = frozenset({"_id", "lastUpdated", "createdAt", "updatedAt", "description"})

# Fields a document may NOT set, with the reason shown to its author (docs/security.md).
RESERVED_FIELDS = {
    "project": "the Argo CD project comes from the settings (argocd.project), never from a document",
    "namespace": "the namespace is always trino-<clusterId>",
    "repoURL": "the repositories come from the settings (chart.repo_url, argocd.repo_url)",
    "repository": "the repositories come from the settings (chart.repo_url, argocd.repo_url)",
    "chart": "the chart and its version come from the settings (chart.*)",
    "chartVersion": "the chart and its version come from the settings (chart.*)",
    "values": "raw Helm values are not accepted from documents; use the documented fields",
    "helm": "raw Helm values are not accepted from documents; use the documented fields",
    "syncPolicy": "the Argo CD sync policy comes from trinogen's templates",
}

TOP_FIELDS = frozenset(
    {"clusterId", "owner", "enabled", "trinoVersion", "profile", "clusterConfig",
     "properties", "logLevels", "connectors", "destination", "files", "faultTolerance",
     "authentication", "accessControl", "monitoring", "disruption", "stopped", "spooling"}
) | METADATA_FIELDS | frozenset(map(top_field, HOMED)) | frozenset(OWN.values())  # fmt: skip
ROLE_FIELDS = frozenset({"replicas", "resources", "jvm", "properties", "placement"})
WORKER_FIELDS = ROLE_FIELDS | {"autoscaling", "gracefulShutdown"}

# --- Trino properties the chart owns ---------------------------------------------------------
# Trino properties the chart writes itself, and the chart key trinogen maps each one to.
# None = the chart owns it and a document may not set it.
CHART_CONFIG_KEYS: dict[str, str | None] = {
    "query.max-memory": "server.config.query.maxMemory",
    "query.max-memory-per-node": "<role>.config.query.maxMemoryPerNode",
    "memory.heap-headroom-per-node": "<role>.config.memory.heapHeadroomPerNode",
    "node-scheduler.include-coordinator": "coordinator.config.nodeScheduler.includeCoordinator",
    "coordinator": None,
    "http-server.http.port": None,
    "discovery.uri": None,
    "http-server.authentication.type": None,
    "http-server.https.enabled": None,
    "http-server.https.port": None,
    "http-server.https.keystore.path": None,
    "shutdown.grace-period": None,
    "jmx.rmiregistry.port": None,
    "jmx.rmiserver.port": None,
    "plugin.dir": None,
}
CHART_NODE_KEYS: dict[str, str | None] = {
    "node.environment": "server.node.environment",
    "node.data-dir": None,
}
# Properties a role may set for itself (they override the shared value for that role).
PER_ROLE_KEYS = ("query.max-memory-per-node", "memory.heap-headroom-per-node")
# Node properties that must differ on every pod: the chart writes one node.properties per role,
# so a value from a document would be shared by all workers. Trino chooses them itself.
PER_POD_NODE_KEYS = frozenset({"node.id", "node.internal-address"})
# Catalog names Trino keeps for itself.
RESERVED_CATALOGS = frozenset({"system"})


def memory_problem(role: Role, name: str) -> str | None:
    """Why Trino would refuse this role's memory settings, or None when they fit.

    Trino refuses to start when query.max-memory-per-node plus the heap headroom exceed the heap.
    Sizes that are not data sizes at all were reported already (None here).
    """
    heap = jvm_bytes(role.max_heap)
    per_node_text = role.max_memory_per_node or CHART_DEFAULT_PER_NODE
    per_node = data_size_bytes(per_node_text)
    explicit = data_size_bytes(role.heap_headroom) if role.heap_headroom else None
    if per_node is None or (role.heap_headroom and explicit is None):
        return None
    if explicit is not None:
        headroom, needed = explicit, per_node + explicit
        headroom_text = str(role.heap_headroom)
    else:
        headroom = int(heap * HEAP_HEADROOM)
        needed = math.ceil(per_node / (1 - HEAP_HEADROOM))
        headroom_text = f"30% of the heap = {data_size_text(headroom)}"
    if per_node + headroom <= heap:
        return None
    source = "" if role.max_memory_per_node else " (the chart's default)"
    return (
        f"the {name} heap {role.max_heap} is too small: query.max-memory-per-node "
        f"{per_node_text}{source} plus the heap headroom ({headroom_text}) is "
        f"{data_size_text(per_node + headroom, up=True)}, and Trino refuses to start when that "
        f"exceeds the heap; raise the heap to at least {jvm_size_text(needed)} or lower "
        f"query.max-memory-per-node to at most {data_size_text(max(heap - headroom, 0))}"
    )
