"""CRD OpenAPI v3 schemas as JSON Schema, the way a strict API server reads them.

The files in ../shared/schemas are upstream `openAPIV3Schema` blocks (see their README). Two
differences from JSON Schema matter for validation: `nullable: true` allows null, and an object
that declares `properties` (and is not `x-kubernetes-preserve-unknown-fields`) rejects unknown
fields under strict field validation. The CRD schema leaves `metadata` open (the API server checks
ObjectMeta itself), so `object_meta_errors()` checks the parts of ObjectMeta our files set.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI v3 structural schema as strict JSON Schema."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if out.pop("nullable", False):
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    if (
        "properties" in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
        and "additionalProperties" not in schema
    ):
        out["additionalProperties"] = False
    return out


def load(path: Path) -> dict[str, Any]:
    """Read one schema file and make it strict."""
    return strict(copy.deepcopy(json.loads(path.read_text(encoding="utf-8"))))


def schema_errors(obj: Any, schema: Mapping[str, Any]) -> list[str]:
    """Every violation, as `path: message` lines (empty when the object is valid)."""
    validator = _validator(schema)
    return sorted(
        f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in validator.iter_errors(obj)
    )


_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _validator(schema: Mapping[str, Any]) -> Any:
    """One compiled validator per schema object (building one for a CRD schema takes ~0.2 s)."""
    import jsonschema

    hit = _VALIDATORS.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, jsonschema.Draft7Validator(schema))
        _VALIDATORS[id(schema)] = hit
    return hit[1]


def object_meta_errors(meta: Any, *, namespaced: bool = True) -> list[str]:
    """The ObjectMeta rules the API server applies to name, namespace, labels and annotations."""
    if not isinstance(meta, Mapping):
        return ["metadata: is not an object"]
    errors = []
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        errors.append(f"metadata.name: {name!r} is not a DNS-1123 subdomain")
    ns = meta.get("namespace")
    if namespaced and (not isinstance(ns, str) or len(ns) > 63 or not _DNS_LABEL.fullmatch(ns)):
        errors.append(f"metadata.namespace: {ns!r} is not a DNS-1123 label")
    for field in ("labels", "annotations"):
        entries = meta.get(field) or {}
        if not isinstance(entries, Mapping):
            errors.append(f"metadata.{field}: is not a map")
            continue
        for key, value in entries.items():
            if not isinstance(key, str) or not _qualified_name(key):
                errors.append(f"metadata.{field}: key {key!r} is not a qualified name")
            if not isinstance(value, str):
                errors.append(f"metadata.{field}.{key}: value {value!r} is not a string")
            elif field == "labels" and (len(value) > 63 or not _LABEL_VALUE.fullmatch(value)):
                errors.append(f"metadata.labels.{key}: {value!r} is not a valid label value")
    finalizers = meta.get("finalizers", [])
    if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
        errors.append("metadata.finalizers: is not a list of strings")
    return errors


def _qualified_name(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None
