"""`clusterConfig`: the coordinator and worker roles, their resources, heap, autoscaling, shutdown."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.model.checker import Checker, field_path, show, show_number
from trinogen.model.properties import Bind, Props, properties, refuse_companion, refuse_secret
from trinogen.model.resources import problems as resource_problems
from trinogen.model.rules import (
    CHART_CONFIG_KEYS,
    CLUSTER_ID,
    MAX_INT,
    MAX_REPLICAS,
    MAX_TRIGGERS,
    PER_ROLE_KEYS,
    RESOURCE_NAME,
    ROLE_FIELDS,
    WORKER_FIELDS,
    memory_problem,
)
from trinogen.model.trino import TrinoCheck
from trinogen.model.types import Autoscaling, Role
from trinogen.model.units import JVM_SIZE, QUANTITY, data_size_bytes, jvm_bytes, quantity_value
from trinogen.trino.registry import Role as TrinoRole

Resources = dict[str, dict[str, str]]


@dataclass(frozen=True)
class Sizing:
    """What `clusterConfig` decides; a None role was reported."""

    coordinator: Role | None = None
    worker: Role | None = None
    workers: int = 0
    autoscaling: Autoscaling | None = None
    grace_period_seconds: int | None = None
    drain_seconds: int | None = None  # how long running tasks may take (with grace_period_seconds)


def cluster_config(
    cc: Mapping[str, Any] | None, props: Props, trino: TrinoCheck, c: Checker,
    bind: Bind | None = None,
) -> Sizing:
    """Both roles of `clusterConfig` (already read as a mapping), against the shared `props`.

    `bind` binds secret placeholders in the roles' own properties (see `properties`).
    """
    if cc is None:
        return Sizing()
    c.fields(cc, "clusterConfig", {"coordinator", "worker"})
    coord_raw = c.mapping(cc.get("coordinator"), "clusterConfig.coordinator")
    worker_raw = c.mapping(cc.get("worker"), "clusterConfig.worker")
    coordinator = None if coord_raw is None else _coordinator(coord_raw, props, trino, c, bind)
    if worker_raw is None:
        return Sizing(coordinator=coordinator)
    c.fields(worker_raw, "clusterConfig.worker", WORKER_FIELDS)
    scaling = autoscaling(worker_raw.get("autoscaling"), c)
    workers = _worker_replicas(worker_raw.get("replicas"), scaling, c)
    grace, drain = graceful_shutdown(worker_raw.get("gracefulShutdown"), c)
    worker = role(worker_raw, "worker", props, trino, c, bind)
    return Sizing(coordinator, worker, workers, scaling, grace, drain)


def check_memory(sizing: Sizing, c: Checker) -> None:
    """Report a role whose memory settings Trino would refuse (both roles must be valid)."""
    if sizing.coordinator is None or sizing.worker is None:
        return
    for name, r in (("coordinator", sizing.coordinator), ("worker", sizing.worker)):
        problem = memory_problem(r, name)
        if problem is not None:
            c.error(f"clusterConfig.{name}.jvm.maxHeapSize", problem)


def _coordinator(raw: Mapping[str, Any], props: Props, trino: TrinoCheck,
                 c: Checker, bind: Bind | None) -> Role | None:
    c.fields(raw, "clusterConfig.coordinator", ROLE_FIELDS)
    replicas = raw.get("replicas")
    if replicas is not None and replicas != 1:
        c.integer(replicas, "clusterConfig.coordinator.replicas")
        if isinstance(replicas, int) and not isinstance(replicas, bool):
            c.error("clusterConfig.coordinator.replicas", f"is {replicas}, but the Trino "
                    "chart always runs exactly one coordinator; remove it or set it to 1")
    return role(raw, "coordinator", props, trino, c, bind)


def _worker_replicas(value: Any, scaling: Autoscaling | None, c: Checker) -> int:
    """server.workers: the fixed count, or the autoscaler's minimum (then replicas is unused)."""
    path = "clusterConfig.worker.replicas"
    if scaling is None:
        return c.integer(value, path, minimum=1, maximum=MAX_REPLICAS) or 0
    c.integer(value, path, required=False, minimum=0, maximum=MAX_REPLICAS)
    return scaling.min_replicas


# --- one role --------------------------------------------------------------------------------


def role(raw: Mapping[str, Any], name: TrinoRole, props: Props, trino: TrinoCheck,
         c: Checker, bind: Bind | None = None) -> Role | None:
    """One role: resources, heap, and the properties it sets for itself."""
    base = f"clusterConfig.{name}"
    res = resources(raw.get("resources"), f"{base}.resources", c)
    max_heap, min_heap = _heap(raw.get("jvm"), f"{base}.jvm", c)
    role_props = properties(raw.get("properties"), f"{base}.properties", c, required=False,
                            bind=bind)
    extra = _role_extra(role_props, props, c)
    trino.role(name, {k: role_props[k] for k, _ in extra})
    per_node, headroom = (_per_role(key, role_props, props, c) for key in PER_ROLE_KEYS)
    if max_heap is None or res is None:
        return None
    _check_heap_fits(max_heap, res, base, c)
    return Role(resources=res, max_heap=max_heap, min_heap=min_heap,
                max_memory_per_node=per_node, heap_headroom=headroom,
                extra_properties=tuple(extra))


def _heap(value: Any, path: str, c: Checker) -> tuple[str | None, str | None]:
    jvm = c.mapping(value, path)
    if jvm is None:
        return None, None
    c.fields(jvm, path, {"maxHeapSize", "minHeapSize"})
    max_heap = jvm_size(jvm.get("maxHeapSize"), f"{path}.maxHeapSize", c, required=True)
    min_heap = jvm_size(jvm.get("minHeapSize"), f"{path}.minHeapSize", c, required=False)
    if max_heap and min_heap and jvm_bytes(min_heap) > jvm_bytes(max_heap):
        c.error(f"{path}.minHeapSize", f"{min_heap} is larger than maxHeapSize {max_heap}")
    return max_heap, min_heap


def jvm_size(value: Any, path: str, c: Checker, *, required: bool) -> str | None:
    return c.string(value, path, required=required, pattern=JVM_SIZE, max_len=24,
                    rule="use a JVM size such as \"20G\", \"512M\" or \"16384m\"")


def _role_extra(role_props: Props, props: Props, c: Checker) -> list[tuple[str, str]]:
    """The role's own lines (server.<role>ExtraConfig); shared or chart keys are refused."""
    extra: list[tuple[str, str]] = []
    for key, (value, path) in sorted(role_props.items()):
        if key in PER_ROLE_KEYS:
            continue
        if key.startswith("node.") or key in CHART_CONFIG_KEYS:
            c.error(path, "cannot be set per role; set it in the top-level properties")
        elif key == "retry-policy" and value.strip().upper() == "TASK":
            # As at the top level (model.fault_tolerance): TASK needs the exchange manager only
            # faultTolerance gives, on every node; by hand, Trino fails every query.
            c.error(path, "retry-policy TASK cannot be set per role: write \"faultTolerance\": "
                    "{\"retryPolicy\": \"TASK\", \"exchange\": \"<an exchange option>\"} for "
                    "the whole cluster instead (without an exchange manager Trino fails every "
                    "query)")
        elif key in props:
            c.error(path, f"is also set in {props[key][1]}; set it in one place")
        elif refuse_companion(key, value, path, c):
            continue
        else:
            extra.append((key, value))
    return extra


def _per_role(key: str, role_props: Props, props: Props, c: Checker) -> str | None:
    """A per-node memory size: the role's own value, else the shared one."""
    entry = role_props.get(key) or props.get(key)
    if entry is None or refuse_secret(entry[0], entry[1], "the chart writes it from "
                                      "values.yaml", c):
        return None
    if data_size_bytes(entry[0]) is None:
        c.error(entry[1], f"{show(entry[0])} is not a Trino data size such as \"8GB\"")
    return entry[0]


def _check_heap_fits(max_heap: str, res: Resources, base: str, c: Checker) -> None:
    """The heap must stay below the container's memory (limit, else request)."""
    limit = res.get("limits", {}).get("memory") or res.get("requests", {}).get("memory")
    limit_bytes = quantity_value(limit) if limit is not None else None
    if limit_bytes is not None and jvm_bytes(max_heap) >= limit_bytes:
        which = "limit" if res.get("limits", {}).get("memory") else "request"
        c.error(f"{base}.jvm.maxHeapSize", f"{max_heap} is not below the container memory "
                f"{which} {limit}; leave room for the JVM's off-heap memory")


# --- resources -------------------------------------------------------------------------------


def resources(value: Any, path: str, c: Checker) -> Resources | None:
    """`{requests, limits}` of Kubernetes quantities, copied verbatim; None when invalid."""
    res = c.mapping(value, path, required=False)
    if res is None:
        return {} if value is None else None
    c.fields(res, path, {"requests", "limits"})
    out: Resources = {}
    ok = True
    for kind in ("requests", "limits"):
        entries = c.mapping(res.get(kind), f"{path}.{kind}", required=False)
        if entries is None:
            ok = ok and res.get(kind) is None
            continue
        out[kind] = {}
        for name, q in entries.items():
            text = _quantity(name, q, field_path(path, kind, name), c)
            if text is None:
                ok = False
            else:
                out[kind][name] = text
    _check_requests(out, path, c)
    return out if ok else None


def _quantity(name: str, q: Any, path: str, c: Checker) -> str | None:
    if not RESOURCE_NAME.fullmatch(name) or len(name) > 253:
        c.error(path, "is not a valid Kubernetes resource name")
        return None
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        if (isinstance(q, float) and not math.isfinite(q)) or abs(q) > MAX_INT:
            c.error(path, "must be a Kubernetes quantity such as \"4\" or \"16Gi\", not "
                    f"{show_number(q) if isinstance(q, float) else 'a number this large'}")
            return None
        q = repr(q) if isinstance(q, float) else str(q)
    return c.string(q, path, pattern=QUANTITY, max_len=64,
                    rule="use a Kubernetes quantity such as \"500m\", \"4\" or \"16Gi\"")


def _check_requests(res: Resources, path: str, c: Checker) -> None:
    """What Kubernetes refuses in a container's resources (trinogen.model.resources)."""
    for kind, name, wrong in resource_problems(res):
        c.error(field_path(path, kind, name), wrong)


# --- autoscaling and shutdown ----------------------------------------------------------------

_SCALING_PATH = "clusterConfig.worker.autoscaling"
_SCALER_FIELDS = {
    "hpa": frozenset({"type", "minReplicas", "maxReplicas", "targetCPUUtilizationPercentage",
                      "targetMemoryUtilizationPercentage"}),
    "keda": frozenset({"type", "minReplicas", "maxReplicas", "triggers", "pollingInterval",
                       "cooldownPeriod"}),
}
_TRIGGER_FIELDS = frozenset({"type", "metadata", "name", "metricType", "authenticationRef"})
# KEDA's scaler metadata keys are camelCase identifiers (`serverAddress`, `passwordFromEnv`). The
# chart runs the whole trigger list through Helm's `tpl` after `toYaml`, so a key is template
# text too: anything beyond an identifier (braces, quotes, line breaks, U+2028) is refused
# rather than escaped, since no scaler reads such a key (issue 11, item 3).
_METADATA_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}")


def autoscaling(value: Any, c: Checker) -> Autoscaling | None:
    """An HPA (`server.autoscaling`) or KEDA (`server.keda`) for the workers."""
    path = _SCALING_PATH
    a = c.mapping(value, path, required=False)
    if a is None:
        return None
    kind = a.get("type", "hpa")
    if kind not in ("hpa", "keda"):
        c.error(f"{path}.type", f"{show(kind)} is not \"hpa\" or \"keda\"")
        return None
    c.fields(a, path, _SCALER_FIELDS[kind])
    bounds = _replica_bounds(a, lowest=1 if kind == "hpa" else 0, c=c)
    if bounds is None:
        return None
    return _hpa(a, bounds, c) if kind == "hpa" else _keda(a, bounds, c)


def _replica_bounds(a: Mapping[str, Any], *, lowest: int, c: Checker) -> tuple[int, int] | None:
    path = _SCALING_PATH
    min_r = c.integer(a.get("minReplicas"), f"{path}.minReplicas", minimum=lowest,
                      maximum=MAX_REPLICAS)
    max_r = c.integer(a.get("maxReplicas"), f"{path}.maxReplicas", minimum=1, maximum=MAX_REPLICAS)
    if min_r is None or max_r is None:
        return None
    if min_r > max_r:
        c.error(f"{path}.maxReplicas", f"is {max_r}, below minReplicas {min_r}")
        return None
    return min_r, max_r


def _hpa(a: Mapping[str, Any], bounds: tuple[int, int], c: Checker) -> Autoscaling:
    cpu, mem = (
        c.integer(a.get(key), f"{_SCALING_PATH}.{key}", required=False, minimum=1, maximum=100)
        for key in ("targetCPUUtilizationPercentage", "targetMemoryUtilizationPercentage")
    )
    return Autoscaling("hpa", *bounds, target_cpu=cpu, target_memory=mem)


def _keda(a: Mapping[str, Any], bounds: tuple[int, int], c: Checker) -> Autoscaling | None:
    path = _SCALING_PATH
    found = triggers(a.get("triggers"), f"{path}.triggers", c)
    polling = c.integer(a.get("pollingInterval"), f"{path}.pollingInterval", required=False,
                        minimum=1, maximum=86400)
    cooldown = c.integer(a.get("cooldownPeriod"), f"{path}.cooldownPeriod", required=False,
                         minimum=0, maximum=86400)
    if found is None:
        return None
    return Autoscaling("keda", *bounds, triggers=found, polling_interval=polling,
                       cooldown_period=cooldown)


def triggers(value: Any, path: str, c: Checker) -> tuple[Mapping[str, Any], ...] | None:
    """KEDA triggers: {type, metadata: {str: str}, name?, metricType?, authenticationRef?}.

    The chart passes triggers through Helm's `tpl`, so `{{` is rejected here.
    """
    if not isinstance(value, list) or not value:
        c.error(path, "KEDA needs a non-empty list of triggers (the chart refuses to render "
                "without one)")
        return None
    out = []
    for i, raw in enumerate(value[:MAX_TRIGGERS]):
        trigger = _trigger(raw, f"{path}[{i}]", c)
        if trigger is not None:
            out.append(trigger)
    if len(value) > MAX_TRIGGERS:
        c.error(path, f"has {len(value)} triggers; at most {MAX_TRIGGERS} are allowed")
    return tuple(out)


def _trigger(value: Any, path: str, c: Checker) -> dict[str, Any] | None:
    t = c.mapping(value, path)
    if t is None:
        return None
    c.fields(t, path, _TRIGGER_FIELDS)
    trigger: dict[str, Any] = {}
    for key in ("type", "name", "metricType"):
        text = c.string(t.get(key), f"{path}.{key}", required=key == "type", max_len=253)
        if text is not None:
            if "{{" in text:
                c.error(f"{path}.{key}", "may not contain '{{' (the chart runs it through tpl)")
            trigger[key] = text
    metadata = _trigger_metadata(t.get("metadata"), path, c)
    if metadata is not None:
        trigger["metadata"] = metadata
    auth = _trigger_auth(t.get("authenticationRef"), f"{path}.authenticationRef", c)
    if auth:
        trigger["authenticationRef"] = {"name": auth}
    return trigger


def _trigger_metadata(value: Any, path: str, c: Checker) -> dict[str, str] | None:
    meta = c.mapping(value, f"{path}.metadata")
    if meta is None:
        return None
    out = {}
    for key, raw in meta.items():
        mpath = field_path(path, "metadata", key)
        if not _METADATA_KEY.fullmatch(key):
            c.error(mpath, "is not a KEDA metadata key: use a camelCase name of letters and "
                    "digits such as \"serverAddress\" (at most 63 characters)")
            continue
        text = c.string(raw, mpath, max_len=4096)
        if text is not None and "{{" in text:
            c.error(mpath, "may not contain '{{' (the chart runs triggers through tpl)")
        elif text is not None:
            out[key] = text
    return out


def _trigger_auth(value: Any, path: str, c: Checker) -> str | None:
    """The name of a TriggerAuthentication, when one is given and valid."""
    if value is None:
        return None
    auth = c.mapping(value, path)
    if auth is None:
        return None
    c.fields(auth, path, {"name"})
    return c.string(auth.get("name"), f"{path}.name", pattern=CLUSTER_ID, max_len=253,
                    rule="use a Kubernetes name")


def graceful_shutdown(value: Any, c: Checker) -> tuple[int | None, int | None]:
    """`worker.gracefulShutdown`: the grace period and the drain time in seconds, when enabled.

    `drainSeconds` is how long a worker's running tasks may take to finish once it stops getting
    new ones (Trino waits for them without a limit); it defaults to the grace period.
    """
    path = "clusterConfig.worker.gracefulShutdown"
    g = c.mapping(value, path, required=False)
    if g is None:
        return None, None
    c.fields(g, path, {"enabled", "gracePeriodSeconds", "drainSeconds"})
    enabled = c.boolean(g.get("enabled"), f"{path}.enabled", required=False)
    seconds = c.integer(g.get("gracePeriodSeconds"), f"{path}.gracePeriodSeconds",
                        required=enabled is not False, minimum=1, maximum=86400)
    drain = c.integer(g.get("drainSeconds"), f"{path}.drainSeconds", required=False,
                      minimum=0, maximum=86400)
    if enabled is False or seconds is None:
        return None, None
    return seconds, seconds if drain is None else drain
