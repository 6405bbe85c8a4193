"""Option kinds: the one list of what a platform names and a document picks by name.

A kind's home is the package `trinogen.kinds.<kind>` (docs/development.md, "Option kinds"):

- `options.py`: `parse(where, raw)`, one settings entry -> a frozen value (the settings layer:
  it imports nothing of `trinogen.model` or `trinogen.render`);
- `document.py`: `FIELD`, the document field that picks an option, and `fill(...)`, the picked
  option made this cluster's value, checked (the model layer);
- `values.py`: `values(...)`, what the cluster's value adds to the chart's values (the render
  layer), written by its template fragment `templates/values/<kind>.yaml.j2`.

`trinogen.kinds.protocol` types the three modules. Every module is imported by name, when first
needed: a run whose settings name no option of a kind never imports any of them (the import
contracts in pyproject.toml keep each module at its layer). Pure: no I/O, no imports here.
"""

from __future__ import annotations

# Every kind of named option, in the order the settings file is read; the settings file's
# top-level key is the kind's name.
KINDS = ("storage", "exchange", "authentication", "opa", "service_accounts", "ingress",
         "placement", "disruption", "event_listeners", "resource_groups", "images", "runtime",
         "network_policies", "services", "session_defaults")

# The kinds already in their home `trinogen.kinds.<kind>/`, in the order their document fields
# are read: kind -> the document field that picks an option, dotted when it sits inside another
# field (that field's reader picks it: `accessControl.opa` in model/access.py,
# `faultTolerance.exchange` in model/fault_tolerance.py), with `{role}`
# when each role picks its own (`placement`, in model/operation.py). `storage` is homed too, in
# PER_CATALOG. `authentication` has its whole home (`trinogen.kinds.authentication`: options,
# document, values, templates/values/authentication.yaml.j2) but is not here: `model/document.py`
# calls its reading itself, `render/kinds.py` its values, as its value is not a `Part` (issue 21:
# moved one layer at a time, every output byte-identical).
HOMED: dict[str, str] = {
    "service_accounts": "serviceAccount",
    "ingress": "ingress",
    "opa": "accessControl.opa",
    "disruption": "disruption",
    "event_listeners": "eventListeners",
    "resource_groups": "resourceGroups",
    # the platform hatches (issue 21, item 6)
    "images": "image",
    "runtime": "runtime",
    "network_policies": "networkPolicy",
    "services": "service",
    "session_defaults": "sessionDefaults",
    # read by other readers, after the top-level picks (model/operation.py, fault_tolerance.py):
    # last, so that Cluster.kinds stays in this order
    "placement": "clusterConfig.{role}.placement",
    "exchange": "faultTolerance.exchange",
}
ROLES = ("coordinator", "worker")  # what `{role}` stands for, in this order

# Kinds in their home that each catalog picks for itself, not the cluster: kind -> the field
# inside a catalog entry (`{catalog}` is the entry's path: `connectors["lake"]`, a library
# reference's too). The connectors reader (model/connectors.py) picks it with `option_of(...,
# catalog=path)` and, for a pick, imports the kind's `document` module, whose lines join that
# catalog's. Such a kind adds no chart values (no `values` module, no template fragment), is not
# in `Cluster.kinds`, and is not a field a tenant or profile requires.
PER_CATALOG: dict[str, str] = {
    "storage": "{catalog}.storage",
}

# Homed kinds whose document may also write a value of its own, in this top-level field, beside
# (or instead of) picking an option: the kind's `fill` runs when the document picks an option or
# writes this field (`option` None then). Session defaults: the document's own entries.
OWN: dict[str, str] = {
    "session_defaults": "sessionProperties",
}
# Kinds whose `document` module picks for itself, `pick(value, d, s, c)`: several options at
# once, or options the platform requires for some clusters whatever their document says
# (event listeners, issue 21). It is imported only when the settings offer the kind or the
# document writes its field.
SELF_PICKED = frozenset({"event_listeners"})

# Kinds whose field may hold, instead of an option's name, the document's own value (an object:
# a cluster's own resource groups, as `accessControl.rules` are its own access rules); the
# kind's `document.fill` receives it as `trinogen.model.kinds.Own`. A tenant or profile that
# requires such a kind requires a platform option: the document's own value does not count.
OWN_VALUE = frozenset({"resource_groups"})


def module(kind: str, part: str) -> str:
    """The module holding one part (`options`, `document`, `values`) of a kind: every kind's
    parser is in its home; `authentication` is not picked through `HOMED` yet."""
    if part != "options" and kind not in HOMED and kind not in PER_CATALOG:
        raise KeyError(f"{kind} has no {part} module yet: it is not in trinogen/kinds/")
    return f"trinogen.kinds.{kind}.{part}"


def fields(kind: str) -> tuple[str, ...]:
    """Every document field that picks an option of `kind`: one, or one per role."""
    field = HOMED[kind]
    return tuple(field.format(role=r) for r in ROLES) if "{role}" in field else (field,)


def top_field(kind: str) -> str:
    """The document's top-level field a kind is picked in (`accessControl` for `opa`)."""
    return HOMED[kind].partition(".")[0]


def fragment(kind: str) -> str:
    """The template fragment that writes a kind's chart values (`values.yaml.j2` includes it)."""
    return f"values/{kind}.yaml.j2"
