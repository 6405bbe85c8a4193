"""A container's resources as the API server judges them (core/v1 resource requirements).

Held to a real kube-apiserver in tests/test_kube_rules.py. A resource is a standard one (`cpu`,
`memory`, `ephemeral-storage`, `hugepages-<size>`) or has a domain (`example.com/gpu`). cpu,
memory and ephemeral storage may be overcommitted: a request up to its limit. Huge pages and
extended resources (a domain other than kubernetes.io) may not: a request needs a limit equal to
it, and extended resources are counted in whole units. Pure: values in, problems out.
"""

from __future__ import annotations

from collections.abc import Mapping

from trinogen.model.units import quantity_value

STANDARD = ("cpu", "memory", "ephemeral-storage")
HUGE_PAGES = "hugepages-"
_NATIVE_DOMAIN = "kubernetes.io/"


def _extended(name: str) -> bool:
    return "/" in name and _NATIVE_DOMAIN not in name


def _not_overcommitted(name: str) -> bool:
    return name.startswith(HUGE_PAGES) or _extended(name)


def problems(res: Mapping[str, Mapping[str, str]]) -> list[tuple[str, str, str]]:
    """(requests or limits, resource name, what is wrong) for every rule the resources break."""
    requests, limits = res.get("requests", {}), res.get("limits", {})
    out = [(kind, name, wrong) for kind, entries in (("requests", requests), ("limits", limits))
           for name, q in entries.items()
           if name not in STANDARD and (wrong := _entry(name, q))]  # cpu, memory: fine here
    for name, request in requests.items():
        wrong = _request(name, request, limits.get(name))
        if wrong:
            out.append(("requests", name, wrong))
    return out


def _entry(name: str, q: str) -> str | None:
    if "/" not in name and name not in STANDARD and not name.startswith(HUGE_PAGES):
        return ("is not a resource a container can ask for: cpu, memory, ephemeral-storage, "
                "hugepages-<size>, or a name with a domain (example.com/gpu)")
    if not _extended(name):  # most entries (cpu, memory): the value matters in _request only
        return None
    value = quantity_value(q)
    if value is not None and value != value.to_integral_value():
        return f"{q} is not a whole number: Kubernetes counts extended resources in units"
    return None


def _request(name: str, request: str, limit: str | None) -> str | None:
    rq = quantity_value(request)
    lq = quantity_value(limit) if limit is not None else None
    if _not_overcommitted(name):
        if limit is None:
            return (f"needs a limit equal to the request: Kubernetes does not overcommit {name} "
                    "(give limits only, or both alike)")
        if rq is not None and lq is not None and rq != lq:
            return (f"{request} is not the limit {limit}: Kubernetes does not overcommit {name}, "
                    "so the request must equal the limit")
        return None
    if rq is not None and lq is not None and rq > lq:
        return f"{request} is more than the limit {limit}; Kubernetes rejects such a pod"
    return None
