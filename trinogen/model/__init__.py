"""Cluster documents -> validated `Cluster` values. Pure: no I/O, no clock, no environment.

`classify()` takes one raw document (with its defaults and profile merged underneath) and returns
either a `Cluster`, a `Disabled` marker or a `Failed` carrying every problem found, each naming
the cluster and the field path. `classify_all()` adds the rules that span documents (a clusterId
several documents claim). See docs/document.md for every field and rule.

The package, one job per module:

- `types`: the values (`Cluster`, `Role`, `Connector`, `Disabled`, `Failed`...);
- `raw_document`: a document as read (`RawDocument`: decoded when its body is asked for);
- `checker`: typed reads of untrusted values that record problems, field paths, suggestions;
- `units`: JVM sizes, Trino data sizes, Kubernetes quantities;
- `rules`: what the chart, Trino and Kubernetes allow (limits, names, reserved keys, memory);
- `document`: merging layers, `classify`, `classify_all`, the top-level fields;
- `raw`: what a raw document says before validation (its label, claimed clusterId, `stopped`);
- `claims`: several documents claiming one clusterId or catalog name (the first create wins);
- `names`: names the platform owns (the app-of-apps, `argocd.reserved_names`), never a cluster's;
- `roles`: `clusterConfig` (resources, heap, autoscaling, KEDA triggers, graceful shutdown);
- `properties`: server properties (`server_properties()` judges and routes each one);
- `connectors`: catalogs (`catalog_properties()` judges each catalog's properties);
- `library`: the catalog library (shared catalogs, references with overrides, owner scope);
- `files`: attached files (a ConfigMap and a Secret) and their mounts;
- `file_paths`: properties naming files must name mounted ones.
- `storage`: a catalog's storage option -> its file-system properties;
- `fault_tolerance`: `faultTolerance` -> retry-policy and the exchange manager.
- `spooling`: `spooling` -> the client spooling protocol's lines and spooling-manager.properties
  (`secret_values`: the Vault values Trino checks itself, checked when Vault is read);
- `server_secrets`: secret placeholders in server properties, bound like a catalog's;
- the `authentication` option a document picks is read by `trinogen.kinds.authentication.document`
  (called from `document`, imported only for a document that picks one).
- `operation`: placement per role (the `placement` kind, read and filled there), `stopped`;
  `shutdown`: the shutdown budget. The option kinds in `trinogen.kinds` are picked and filled
  by `kinds` (`disruption`, `serviceAccount`, `ingress`; `accessControl.opa` through `access`).

The validator (`document` and every feature's reader it calls) is imported on first use of
`classify`, `classify_all` or `deep_merge`: a sync whose documents the render cache serves never
validates, and its start-up time does not grow with every feature (docs/benchmarks.md).
"""

from typing import TYPE_CHECKING

from trinogen.model.checker import Checker, field_path, text_ok, type_name
from trinogen.model.raw import (
    claimed_cluster_id,
    declares_stopped,
    document_label,
    enabled_claims,
    settled,
)
from trinogen.model.raw_document import HEAD_FIELDS, RawDocument, Undecoded
from trinogen.model.rules import (
    CHART_CONFIG_KEYS,
    CHART_DEFAULT_PER_NODE,
    CHART_NODE_KEYS,
    HEAP_HEADROOM,
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
    Failed,
    FileConfigMap,
    FileSecret,
    Mount,
    Outcome,
    Role,
    ServerSecret,
)

if TYPE_CHECKING:
    from trinogen.model.document import classify, classify_all, deep_merge

_VALIDATOR = frozenset({"classify", "classify_all", "deep_merge"})


def __getattr__(name: str) -> object:
    """`classify`, `classify_all` and `deep_merge`, importing the validator on first use."""
    if name in _VALIDATOR:
        from trinogen.model import document

        return getattr(document, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHART_CONFIG_KEYS",
    "CHART_DEFAULT_PER_NODE",
    "CHART_NODE_KEYS",
    "HEAD_FIELDS",
    "HEAP_HEADROOM",
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
    "Failed",
    "FileConfigMap",
    "FileSecret",
    "Mount",
    "Outcome",
    "RawDocument",
    "Role",
    "ServerSecret",
    "Undecoded",
    "claimed_cluster_id",
    "classify",
    "classify_all",
    "declares_stopped",
    "deep_merge",
    "document_label",
    "enabled_claims",
    "field_path",
    "settled",
    "text_ok",
    "type_name",
]
