"""Kubernetes' limits and unique names, judged before anything reaches git.

The API server's rules (kubernetes/kubernetes, pkg/apis/core/validation/validation.go and
apimachinery's api/validation/objectmeta.go):

- a ConfigMap's `data` and `binaryData` values together at most `core.MaxSecretSize`,
  1 MiB (`ValidateConfigMap` adds `len(value)`, the UTF-8 bytes; keys are not counted);
- a Secret's decoded `data` values together at most the same 1 MiB (`ValidateSecret`);
- an object's annotations, keys plus values, at most 256 KiB (`TotalAnnotationSizeLimitB`).

Two objects of one kind with one name in a namespace are one object that two makers write
(Argo CD: undefined behaviour; ESO and cert-manager overwrite each other): the document fails.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from trinogen.errors import Problem
from trinogen.model import Cluster
from trinogen.render.objects import (
    OTHER_ANNOTATIONS,
    KubeObject,
    Part,
    Written,
    cluster_objects,
    size_bound,
)

MAX_DATA_BYTES = 1024 * 1024  # core.MaxSecretSize: ConfigMap and Secret data
MAX_ANNOTATION_BYTES = 256 * 1024  # TotalAnnotationSizeLimitB
SHOWN_PARTS = 3  # the largest parts a message names
DATA_KINDS = frozenset({"ConfigMap", "Secret"})
# No total at or below this can break a limit: the smaller of the two.
SMALLEST_LIMIT = min(MAX_DATA_BYTES, MAX_ANNOTATION_BYTES)


class LimitError(Exception):
    """The cluster's objects would break a Kubernetes limit or share a name (the problems say
    which); the document fails, its files stay as they are."""

    def __init__(self, problems: tuple[Problem, ...]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


class Total(NamedTuple):  # a tuple: cheaper to create at import than a frozen dataclass
    """One sum the API server compares with a limit."""

    what: str  # "data", "annotations"
    limit: int
    parts: tuple[Part, ...]
    fixed: int  # bytes besides the parts (the maker's own, an upper bound)

    @property
    def size(self) -> int:
        return self.fixed + sum(p.size for p in self.parts)


def check_objects(cluster: Cluster, chart: str, written: Written) -> None:
    """Raise LimitError when the cluster's objects break a limit or share a name."""
    problems = object_problems(cluster, chart, written)
    if problems:
        raise LimitError(tuple(problems))


def object_problems(cluster: Cluster, chart: str, written: Written) -> list[Problem]:
    """Every object too large for the API server, and every name two objects would share.
    Objects are measured part by part only when `size_bound` (which no total exceeds) could
    reach a limit: nearly every cluster is far below them, and its objects are listed for their
    names alone."""
    if size_bound(cluster, written) <= SMALLEST_LIMIT:
        return collisions(cluster.cluster_id, cluster_objects(cluster, chart, written, sizes=False))
    objects = cluster_objects(cluster, chart, written)
    problems = [p for obj in objects if obj.data or obj.annotations or obj.fixed
                for p in _size_problems(cluster.cluster_id, obj)]
    problems.extend(collisions(cluster.cluster_id, objects))
    return problems


def _size_problems(cluster_id: str, obj: KubeObject) -> list[Problem]:
    out = []
    for total in _totals(obj):
        if total.size > total.limit:
            out.append(Problem(cluster_id, _blamed(obj, total), _too_large(obj, total)))
    return out


def _totals(obj: KubeObject) -> list[Total]:
    """The sums to judge (plain sums first: most objects are far below every limit)."""
    totals = []
    if obj.annotations and (sum(p.size for p in obj.annotations) + OTHER_ANNOTATIONS
                            > MAX_ANNOTATION_BYTES):
        totals.append(Total("annotations", MAX_ANNOTATION_BYTES, obj.annotations,
                            OTHER_ANNOTATIONS))
    if obj.kind in DATA_KINDS and obj.fixed + sum(p.size for p in obj.data) > MAX_DATA_BYTES:
        totals.append(Total("data", MAX_DATA_BYTES, obj.data, obj.fixed))
    return totals


def _blamed(obj: KubeObject, total: Total) -> str:
    """The field to name: the one whose parts weigh most (all loggers, one catalog), else the
    object's own."""
    by_field = _by_field(total.parts)
    return max(by_field, key=lambda f: by_field[f]) if by_field else obj.field


def _by_field(parts: Iterable[Part]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in parts:
        if p.field:
            out[p.field] = out.get(p.field, 0) + p.size
    return out


def _too_large(obj: KubeObject, total: Total) -> str:
    fields = sorted(_by_field(total.parts).items(), key=lambda kv: -kv[1])[:SHOWN_PARTS]
    shown = sorted(total.parts, key=lambda p: -p.size)[:SHOWN_PARTS]
    weights = ", ".join(f"{f} {size:,}" for f, size in fields)
    largest = ", ".join(f"{p.what} ({p.field}) {p.size:,}" for p in shown)
    fixed = f", {total.fixed:,} of them the maker's own" if total.fixed else ""
    return (f"the {obj.kind} {obj.name!r} ({obj.maker}) would hold {total.size:,} bytes of "
            f"{total.what}{fixed}, and Kubernetes refuses more than {total.limit:,}; bytes by "
            f"field: {weights or 'none'}; the largest parts: {largest or 'none'} (properties "
            "files write each non-ASCII character as a 6-byte \\uXXXX escape); shorten or "
            "split them")


def collisions(cluster_id: str, objects: Iterable[KubeObject]) -> list[Problem]:
    """Two objects of one kind (every Secret counts as one kind, whoever makes it) with one name."""
    seen: dict[tuple[str, str], KubeObject] = {}
    out = []
    for obj in objects:
        key = (obj.kind, obj.name)
        first = seen.setdefault(key, obj)
        if first is not obj:
            out.append(Problem(cluster_id, obj.field or first.field, (
                f"the {obj.kind} {obj.name!r} would be made twice in the namespace: by "
                f"{first.maker}{_from(first)} and by {obj.maker}{_from(obj)}; each would "
                "overwrite the other, so pick options whose names differ")))
    return out


def _from(obj: KubeObject) -> str:
    return f" (for {obj.field})" if obj.field else ""
