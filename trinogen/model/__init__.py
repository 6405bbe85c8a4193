"""Cluster documents -> validated `Cluster` values. Pure: no I/O, no clock, no environment.

`classify()` takes one raw document (with its defaults and profile merged underneath) and returns
either a `Cluster`, a `Disabled` marker or a `Failed` carrying every problem found, each naming
the cluster and the field path. `classify_all()` adds the rules that span documents (duplicate
clusterIds). See the README's document reference for every field and rule.

The package, one job per module:

- `types`: the values (`Cluster`, `Role`, `Connector`, `Disabled`, `Failed`, `RawDocument`...);
- `checker`: typed reads of untrusted values that record problems, field paths, suggestions;
- `units`: JVM sizes, Trino data sizes, Kubernetes quantities;
- `rules`: what the chart, Trino and Kubernetes allow (limits, names, reserved keys, memory);
- `document`: merging layers, `classify`, `classify_all`, the top-level fields;
- `roles`: `clusterConfig` (resources, heap, autoscaling, KEDA triggers, graceful shutdown);
- `properties`: server properties (`server_properties()` judges and routes each one);
- `connectors`: catalogs (`catalog_properties()` judges each catalog's properties);
- `library`: the catalog library (shared catalogs, references with overrides, owner scope);
- `files`: attached files (a ConfigMap and a Secret) and their mounts;
- `file_paths`: properties naming files must name mounted ones.
- `storage`: a catalog's storage option -> its file-system properties;
- `fault_tolerance`: `faultTolerance` -> retry-policy and the exchange manager.
- `server_secrets`: secret placeholders in server properties, bound like a catalog's;
- `auth`: the `authentication` option a document picks, as Trino and the chart need it.
- `operation`: placement per role, disruption option, `stopped`; `shutdown`: the shutdown budget.
"""

from trinogen.model.checker import Checker, field_path, text_ok, type_name
from trinogen.model.document import (
    claimed_cluster_id,
    classify,
    classify_all,
    deep_merge,
    document_label,
    enabled_claims,
)
from trinogen.model.operation import declares_stopped
from trinogen.model.rules import (
    CHART_CONFIG_KEYS,
    CHART_DEFAULT_PER_NODE,
    CHART_NODE_KEYS,
    HEAP_HEADROOM,
    MAX_CATALOG_BYTES,
    MAX_CLUSTER_ID,
    MAX_CONNECTOR_NAME,
    MAX_CONNECTORS,
    MAX_DEPTH,
    MAX_DOC_ID,
    MAX_INT,
    MAX_STRING,
    METADATA_FIELDS,
    PER_POD_NODE_KEYS,
    RESERVED_CATALOGS,
    RESERVED_FIELDS,
)
from trinogen.model.types import (
    AccessControl,
    Authentication,
    Autoscaling,
    Classified,
    Cluster,
    Connector,
    Disabled,
    ExchangeManager,
    Failed,
    FileConfigMap,
    FileSecret,
    Ingress,
    Mount,
    Outcome,
    RawDocument,
    Role,
    ServerSecret,
    ServiceAccount,
)

__all__ = [
    "CHART_CONFIG_KEYS",
    "CHART_DEFAULT_PER_NODE",
    "CHART_NODE_KEYS",
    "HEAP_HEADROOM",
    "MAX_CATALOG_BYTES",
    "MAX_CLUSTER_ID",
    "MAX_CONNECTORS",
    "MAX_CONNECTOR_NAME",
    "MAX_DEPTH",
    "MAX_DOC_ID",
    "MAX_INT",
    "MAX_STRING",
    "METADATA_FIELDS",
    "PER_POD_NODE_KEYS",
    "RESERVED_CATALOGS",
    "RESERVED_FIELDS",
    "AccessControl",
    "Authentication",
    "Autoscaling",
    "Checker",
    "Classified",
    "Cluster",
    "Connector",
    "Disabled",
    "ExchangeManager",
    "Failed",
    "FileConfigMap",
    "FileSecret",
    "Ingress",
    "Mount",
    "Outcome",
    "RawDocument",
    "Role",
    "ServerSecret",
    "ServiceAccount",
    "claimed_cluster_id",
    "classify",
    "classify_all",
    "declares_stopped",
    "deep_merge",
    "document_label",
    "enabled_claims",
    "field_path",
    "text_ok",
    "type_name",
]
