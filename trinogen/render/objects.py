"""Every object one cluster puts into its namespace, with what Kubernetes limits in each.

The Trino chart's objects (given the values trinogen writes), trinogen's own manifests, and
what they make others create: ESO the Secret of each ExternalSecret, cert-manager (or the
platform) the Secret of the Ingress' TLS, KEDA the HorizontalPodAutoscaler of its
ScaledObject. `render.limits` judges the list: sizes against the API server's rules, names
unique per kind. tests/test_chart_objects.py holds the chart's part against the real chart.

Measuring every part cost a 1,000-cluster full sync ~1.5% of its instructions, for clusters that
are nearly all far below every limit: `size_bound` bounds every total from the texts' lengths
alone, and `cluster_objects(..., sizes=False)` lists the same objects without their parts (what
the names need) for a cluster whose bound cannot reach a limit.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from trinogen.kinds.protocol import Manifest
from trinogen.model import Cluster, FileConfigMap, FileSecret
from trinogen.render.kinds import added_file_sizes, kind_objects, kind_texts, session_lines
from trinogen.render.names import chart_fullname, chart_worker_name, trunc63
from trinogen.render.texts import ServerTexts
from trinogen.secrets import Resolved, Secret, SecretUse

# What the chart writes into a role's ConfigMap besides the lines it is handed (jvm.config,
# its own config.properties, node.properties and log.properties lines, the password and group
# file settings): 1.5 KiB for the kitchen sink; measured against the real chart in tests/test_chart_limits.py.
CHART_ROLE_TEXT = 4096
# The chart's own pod-template annotations (three sha256 checksums) and what Argo CD may add
# to any object (its tracking annotation): an upper bound for annotations trinogen does not see.
OTHER_ANNOTATIONS = 1024
_DECODERS = {"Base64": base64.b64decode, "Base64URL": base64.urlsafe_b64decode}


class Part(NamedTuple):  # tuples: a cluster lists ~100 of them on every render
    """A piece of an object's data or annotations that a document (or an option) decides."""

    field: str  # the document field it comes from
    what: str  # for the message: "catalog \"hive\"", "property x", "file core-site.xml"
    size: int  # bytes, as the API server counts them


class KubeObject(NamedTuple):
    """One object in the cluster's namespace, who makes it, and its measured parts."""

    kind: str
    name: str
    maker: str  # "the chart", "trinogen (files)", "ESO (authentication)", ...
    field: str = ""  # the document field that brings it ("": every cluster has it)
    data: tuple[Part, ...] = ()  # ConfigMap data / Secret data values
    fixed: int = 0  # bytes of data the maker adds itself (an upper bound)
    annotations: tuple[Part, ...] = ()


class Written(NamedTuple):  # a tuple: cheaper to create at import than a frozen dataclass
    """What the renderer writes for one cluster, in the form the objects will hold it."""

    catalogs: Mapping[str, str]  # catalog name -> its .properties text
    texts: ServerTexts
    resolved: Resolved  # the Vault values read (empty: sizes of Secrets are not known)
    pod_annotations: Mapping[str, str] = MappingProxyType({})
    env_uses: tuple[SecretUse, ...] = ()  # what the env Secret carries (none: no Secret)
    exporter_config: str = ""  # the JMX exporter's configuration (the settings')
    # (kind, object) the option kinds add under manifests/ (render.kinds.kind_manifests)
    manifests: tuple[tuple[str, Manifest], ...] = ()


def cluster_objects(cluster: Cluster, chart: str, w: Written, *,
                    sizes: bool = True) -> list[KubeObject]:
    """Every object of the cluster's namespace: the chart's, then trinogen's and their makers'.
    With `sizes=False`, the same objects with no parts (data and annotations empty)."""
    measure = _measure if sizes else _skip
    return [*_chart_objects(cluster, chart, w, measure), *_own_objects(cluster, chart, w, measure),
            *(KubeObject(*o) for o in kind_objects(cluster, chart_fullname(cluster.cluster_id, chart)))]


# measure(parts, *args): an object's parts, `parts(*args)`, or none when listing names only.
Measure = Callable[..., tuple[Part, ...]]


def _measure(parts: Callable[..., Iterable[Part]], *args: Any) -> tuple[Part, ...]:
    return tuple(parts(*args))


def _skip(parts: Callable[..., Iterable[Part]], *args: Any) -> tuple[Part, ...]:
    return ()


# The maker's own bytes a total adds: a role ConfigMap's, or the annotations besides trinogen's.
MAX_FIXED = max(CHART_ROLE_TEXT, OTHER_ANNOTATIONS)


def size_bound(cluster: Cluster, w: Written) -> int:
    """At least the largest total `render.limits` judges among the cluster's objects (one
    object's data with the maker's own bytes, or its annotations with the others'), from the
    lengths of the texts alone.

    Why it bounds: every part of every object is measured from one text listed below (a line,
    a catalog, a file, an annotation's key or value, a Vault value read) as at most its UTF-8
    bytes plus one newline: a character takes at most 4 bytes (a code point 1-4, a lone
    surrogate 3 under surrogatepass), an escaped line is ASCII, a decoded Secret value is
    shorter than its text, and the exchange directories' commas are one per directory. One
    object holds each text at most once (the two roles' ConfigMaps are two objects), except a
    Secret holding one Vault value under several keys: those count once per use. So any one
    total is at most MAX_FIXED plus, over all the texts, 4 bytes per character and 1 per text.
    Keep it in step with the parts above: tests/test_render_limits.py holds it to every total
    the objects of the kitchen sink measure.
    """
    t = w.texts
    groups = (t.config, t.node, t.log, t.coordinator, t.worker, t.access, w.catalogs.values(),
              [x.reveal() if isinstance(x, Secret) else x for x in t.exchange],
              [w.exporter_config, *_annotation_texts(w.pod_annotations.items())],
              _cluster_texts(cluster), _secret_texts(cluster, w), kind_texts(cluster))
    chars = count = 0
    for texts in groups:
        chars += sum(map(len, texts))
        count += len(texts)
    return MAX_FIXED + 4 * chars + count


def _cluster_texts(cluster: Cluster) -> list[str]:
    """The texts a part takes from the cluster itself: the values the chart writes into its
    own lines, the exchange directories, the rules file, attached files, option annotations."""
    co, wo = cluster.coordinator, cluster.worker
    out = [v for v in (cluster.node_environment, cluster.max_memory, cluster.log_level,
                       co.max_heap, co.min_heap, co.max_memory_per_node, co.heap_headroom,
                       wo.max_heap, wo.min_heap, wo.max_memory_per_node, wo.heap_headroom) if v]
    if cluster.exchange is not None:
        out.extend(cluster.exchange.base_directories)
    if cluster.access and cluster.access.rules_json is not None:
        out.append(cluster.access.rules_json)
    for cm in cluster.file_config_maps:
        out.extend(text for _, text in cm.files)
    if cluster.service_account is not None:
        out.extend(_annotation_texts(cluster.service_account.annotations))
    if cluster.ingress is not None:
        out.extend(_annotation_texts(cluster.ingress.annotations))
    return out


def _annotation_texts(annotations: Iterable[tuple[str, str]]) -> list[str]:
    return [text for kv in annotations for text in kv]


def _secret_texts(cluster: Cluster, w: Written) -> list[str]:
    """Each Vault value a Secret holds, once per use (none when this run read none)."""
    if not w.resolved:
        return []
    uses = [*w.env_uses, *(use for fs in cluster.file_secrets for _, use in fs.files)]
    out = []
    for use in uses:
        data = w.resolved.get(use.ref.secret_path)
        value = data.values.get(use.ref.key) if data is not None else None
        if value is not None:
            out.append(value.reveal())
    return out


def _chart_objects(cluster: Cluster, chart: str, w: Written,
                   measure: Measure) -> Iterator[KubeObject]:
    """The chart's templates, each under the condition it is rendered on."""
    full, cid = chart_fullname(cluster.cluster_id, chart), cluster.cluster_id
    coordinator, worker = trunc63(f"{full}-coordinator"), chart_worker_name(cid, chart)
    has_workers = cluster.workers > 0 or getattr(cluster.autoscaling, "kind", None) == "keda"
    graceful = bool(cluster.grace_period_seconds)
    chart_made = "the chart"
    annotations = measure(_pod_annotation_parts, w)
    yield from _pair(coordinator, measure(_role_parts, cluster, w, "coordinator"), annotations)
    if has_workers:
        yield from _pair(worker, measure(_role_parts, cluster, w, "worker"), annotations)
    if w.catalogs:
        yield KubeObject("ConfigMap", f"{full}-catalog", chart_made, "connectors",
                         measure(_catalog_parts, w.catalogs))
    yield KubeObject("ConfigMap", f"{full}-schemas-volume-coordinator", chart_made)
    if has_workers:
        yield KubeObject("ConfigMap", f"{full}-schemas-volume-worker", chart_made)
    if cluster.access and cluster.access.rules_json is not None:
        yield KubeObject("ConfigMap", f"{full}-access-control-volume-coordinator", chart_made,
                         "accessControl", measure(_text_part, "accessControl",
                                                  "the rules file rules.json",
                                                  cluster.access.rules_json))
    if graceful:  # the chart's rules file for the shutdown request (~110 bytes)
        yield KubeObject("ConfigMap", f"{full}-access-control-volume-worker", chart_made,
                         "clusterConfig.worker.gracefulShutdown", fixed=CHART_ROLE_TEXT)
    if cluster.jmx_exporter:  # a literal block with `|-`: without its final newlines
        exporter = measure(_text_part, "monitoring", "the exporter's configuration (settings)",
                           w.exporter_config.rstrip("\n"))
        for role in ("coordinator", "worker"):
            yield KubeObject("ConfigMap", f"{full}-jmx-exporter-config-{role}", chart_made,
                             "monitoring", exporter)
    yield KubeObject("Service", full, chart_made)
    yield KubeObject("Service", f"{full}-worker", chart_made)
    yield from _chart_options(cluster, full, coordinator, worker, measure)
    yield from _chart_hooks(full, graceful, cluster.jmx_exporter)


def _pair(name: str, parts: tuple[Part, ...],
          annotations: tuple[Part, ...]) -> Iterator[KubeObject]:
    """A role's Deployment (its pod template's annotations) and ConfigMap (its config files)."""
    yield KubeObject("Deployment", name, "the chart", annotations=annotations)
    yield KubeObject("ConfigMap", name, "the chart", data=parts, fixed=CHART_ROLE_TEXT)


def _pod_annotation_parts(w: Written) -> Iterator[Part]:
    for k, v in w.pod_annotations.items():
        yield Part("", f"annotation {k}", len(k) + len(v))  # trinogen's: ASCII


def _chart_options(cluster: Cluster, full: str, coordinator: str, worker: str,
                   measure: Measure) -> Iterator[KubeObject]:
    """What the chart makes for a picked option: the ServiceAccount, Ingress, scaling, monitors."""
    if cluster.service_account is not None:
        sa = cluster.service_account
        yield KubeObject("ServiceAccount", sa.name, "the chart", "serviceAccount",
                         annotations=measure(_annotation_parts, "serviceAccount",
                                             sa.annotations))
    if cluster.ingress is not None:
        yield KubeObject("Ingress", coordinator, "the chart", "ingress", annotations=measure(
            _annotation_parts, "ingress", cluster.ingress.annotations))
    if (rg := cluster.kind("resource_groups")) is not None:  # a `|-` block: no final newline
        yield KubeObject("ConfigMap", f"{full}-resource-groups-volume-coordinator", "the chart",
                         "resourceGroups", measure(_text_part, "resourceGroups", "JSON",
                                                   rg.text.rstrip("\n")))
    scaling = cluster.autoscaling
    if scaling is not None and scaling.kind == "hpa":
        yield KubeObject("HorizontalPodAutoscaler", worker, "the chart",
                         "clusterConfig.worker.autoscaling")
    elif scaling is not None and scaling.kind == "keda":
        yield KubeObject("ScaledObject", worker, "the chart", "clusterConfig.worker.autoscaling")
        yield KubeObject("HorizontalPodAutoscaler", f"keda-hpa-{worker}",
                         "KEDA (the ScaledObject)", "clusterConfig.worker.autoscaling")
    if cluster.service_monitor:
        yield KubeObject("ServiceMonitor", full, "the chart", "monitoring")
        yield KubeObject("ServiceMonitor", f"{full}-worker", "the chart", "monitoring")


def _chart_hooks(full: str, graceful: bool, jmx: bool) -> Iterator[KubeObject]:
    """The chart's `helm test` hooks: listed, so that nothing else may take their names."""
    hook = "the chart (a helm test hook)"
    yield KubeObject("Pod", f"{full}-test-connection", hook)
    if graceful:
        for kind, suffix in (("Role", "pod-manager"), ("ServiceAccount", "pod-manager-sa"),
                             ("RoleBinding", "pod-manager-binding"),
                             ("Pod", "test-graceful-shutdown")):
            yield KubeObject(kind, f"{full}-{suffix}", hook)
    if jmx:
        yield KubeObject("Pod", f"{full}-test-jmx", hook)
        yield KubeObject("ConfigMap", f"{full}-test-jmx", hook, fixed=CHART_ROLE_TEXT)


def _own_objects(cluster: Cluster, chart: str, w: Written,
                 measure: Measure) -> Iterator[KubeObject]:
    """trinogen's manifests and the Secrets they make ESO and cert-manager create."""
    yield from _secrets(cluster, w, measure)
    for cm in cluster.file_config_maps:
        yield KubeObject("ConfigMap", cm.name, "trinogen (files)", "files",
                         measure(_file_parts, cm))
    for kind, manifest in w.manifests:
        yield KubeObject(manifest.kind, manifest.name, f"trinogen ({kind})", kind)
    yield from _ingress_tls(cluster)


def _file_parts(cm: FileConfigMap) -> Iterator[Part]:
    for key, text in cm.files:
        yield Part(_entry("files", key), f"file {key}", _utf8(text))


def _secrets(cluster: Cluster, w: Written, measure: Measure) -> Iterator[KubeObject]:
    """The ExternalSecrets, and the Secret ESO fills for each: the environment's, the files'."""
    if w.env_uses:
        name = f"{cluster.cluster_id}-trino-secrets"
        parts = measure(_env_parts, w)
        yield from _external_secret(name, "the environment's placeholders", parts)
    for fs in cluster.file_secrets:
        where = "files" if fs.name.endswith("-trino-secret-files") else "authentication"
        yield from _external_secret(fs.name, where,
                                    measure(_file_secret_parts, fs, where, w.resolved))


def _env_parts(w: Written) -> Iterator[Part]:
    for u in w.env_uses:
        yield _secret_part(f"variable {u.env}", "properties", u, None, w.resolved)


def _file_secret_parts(fs: FileSecret, where: str, resolved: Resolved) -> Iterator[Part]:
    decoding = dict(fs.decoding)
    for key, use in fs.files:
        yield _secret_part(f"file {key}", where, use, decoding.get(key), resolved)


def _ingress_tls(cluster: Cluster) -> Iterator[KubeObject]:
    """The Secret an Ingress' TLS names: cert-manager's (its Certificate too, when the Ingress
    asks cert-manager) or the platform's; either way no other object may have its name."""
    ing = cluster.ingress
    if ing is None or not ing.tls_secret:
        return
    yield KubeObject("Secret", ing.tls_secret, "the Ingress' TLS (cert-manager or the platform)",
                     "ingress")
    if any(k.startswith("cert-manager.io/") for k, _ in ing.annotations):
        yield KubeObject("Certificate", ing.tls_secret, "cert-manager (the Ingress' TLS)",
                         "ingress")


def _external_secret(name: str, where: str, parts: tuple[Part, ...]) -> Iterator[KubeObject]:
    yield KubeObject("ExternalSecret", name, f"trinogen ({where})", where)
    yield KubeObject("Secret", name, f"ESO (the ExternalSecret of {where})", where, parts)


def _role_parts(cluster: Cluster, w: Written, role: str) -> tuple[Part, ...]:
    """What a role's ConfigMap holds that the document decides: its properties lines (each
    with its newline), the option kinds' files (listeners, LDAP's authenticator) and the
    values the chart writes into its own lines."""
    t = w.texts
    own = t.coordinator if role == "coordinator" else t.worker
    groups: list[tuple[str, Sequence[str]]] = [
        ("properties", t.config), ("properties", t.node), ("logLevels", t.log),
        (f"clusterConfig.{role}.properties", own), ("spooling", t.spooling)]
    if role == "coordinator":
        groups += [("accessControl", t.access), ("sessionProperties", session_lines(cluster))]
    # Escaped lines are ASCII (java.util.Properties escapes the rest): a character is a byte.
    parts = [Part(where, line.partition("=")[0], len(line) + 1)
             for where, lines in groups for line in lines]
    parts.extend(Part("faultTolerance", _key(line), _line_size(line)) for line in t.exchange)
    parts += map(Part._make, added_file_sizes(cluster, role))
    if cluster.exchange is not None:
        dirs = ",".join(cluster.exchange.base_directories)
        parts.append(Part("faultTolerance", "exchange.base-directories", _utf8(dirs) + 1))
    r = cluster.coordinator if role == "coordinator" else cluster.worker
    chart_values = [("properties", "node.environment", cluster.node_environment),
                    ("properties", "query.max-memory", cluster.max_memory),
                    ("logLevels", "io.trino", cluster.log_level),
                    (f"clusterConfig.{role}.jvm", "maxHeapSize", r.max_heap),
                    (f"clusterConfig.{role}.jvm", "minHeapSize", r.min_heap),
                    (f"clusterConfig.{role}.properties", "query.max-memory-per-node",
                     r.max_memory_per_node),
                    (f"clusterConfig.{role}.properties", "memory.heap-headroom-per-node",
                     r.heap_headroom)]
    # validated ASCII text (sizes, [a-z0-9_] environments, levels): a character is a byte
    parts.extend(Part(where, what, len(value)) for where, what, value in chart_values if value)
    return tuple(parts)


def _catalog_parts(catalogs: Mapping[str, str]) -> Iterator[Part]:
    """Each catalog as the chart's ConfigMap holds it: a YAML literal block, whose value ends
    with exactly one newline."""
    for name, body in catalogs.items():
        text = body.rstrip("\n")
        size = len(text) if text.isascii() else _utf8(text)
        yield Part(_entry("connectors", name), f"catalog {name!r}", size + 1 if text else 0)


def _secret_part(what: str, where: str, use: SecretUse, decoding: str | None,
                 resolved: Resolved) -> Part:
    """A Secret's value as ESO writes it: Vault's text, decoded first where asked; 0 when this
    run did not read it (its size is then not known)."""
    data = resolved.get(use.ref.secret_path)
    value = data.values.get(use.ref.key) if data is not None else None
    if value is None:
        return Part(where, what, 0)
    text = value.reveal()
    if decoding in _DECODERS:
        try:
            return Part(where, what, len(_DECODERS[decoding](text)))
        except (binascii.Error, ValueError):
            pass  # ESO refuses it; the raw size bounds the decoded one
    return Part(where, what, _utf8(text))


def _annotation_parts(where: str, annotations: Iterable[tuple[str, str]]) -> Iterator[Part]:
    for k, v in annotations:
        yield Part(where, f"annotation {k}", _utf8(k) + _utf8(v))


def _text_part(where: str, what: str, text: str) -> Iterator[Part]:
    yield Part(where, what, _utf8(text))


def _entry(field: str, name: str) -> str:
    """A named entry of a list field, as the model names it: connectors["hive"] (connector and
    file names are [-._A-Za-z0-9]: nothing to escape)."""
    return f'{field}["{name}"]'


def _key(line: str | Secret) -> str:
    text = line.reveal() if isinstance(line, Secret) else line
    return text.partition("=")[0][:80]


def _line_size(line: str | Secret) -> int:
    """A line of a properties file in the ConfigMap: its bytes and its newline."""
    return _utf8(line.reveal() if isinstance(line, Secret) else line) + 1


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
