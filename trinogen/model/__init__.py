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
- `connectors`: catalogs (`catalog_properties()` judges each catalog's properties).
- `library`: the catalog library (shared catalogs, references with overrides, owner scope).
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
    Autoscaling,
    Classified,
    Cluster,
    Connector,
    Disabled,
    Failed,
    FileSecret,
    Mount,
    Outcome,
    RawDocument,
    Role,
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
    "Autoscaling",
    "Checker",
    "Classified",
    "Cluster",
    "Connector",
    "Disabled",
    "Failed",
    "FileSecret",
    "Mount",
    "Outcome",
    "RawDocument",
    "Role",
    "claimed_cluster_id",
    "classify",
    "classify_all",
    "deep_merge",
    "document_label",
    "enabled_claims",
    "field_path",
    "text_ok",
    "type_name",
]
