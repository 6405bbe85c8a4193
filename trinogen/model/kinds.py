"""The document side of the option kinds in `trinogen.kinds.HOMED`: pick, then fill.

`pick` reads each kind's top-level field (`"ingress": "public"`) against the settings' options;
a kind picked inside another field (`accessControl.opa`) is picked by that field's reader with
`pick_one` (it alone knows when the field picks one: `accessControl` gives rules or an OPA
name), which hands the pick on to `fill` with the others. Only when an option is picked is the
kind's `document` module imported, so a run whose settings name no option of a kind never loads
it. `fill` makes each picked option the cluster's value.
Pure: the modules are imported by name, nothing is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, module
from trinogen.model.checker import Checker
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import DocumentModule, Part

Picked = tuple[tuple[str, Any], ...]  # (kind, the option the document picked)
Parts = tuple[tuple[str, "Part"], ...]  # (kind, its value for this cluster)


def pick(d: Mapping[str, Any], s: Settings, c: Checker) -> Picked:
    """The options the document picks in its top-level fields, kind by kind; unknown names are
    reported on `c`."""
    out: Picked = ()
    for kind, field in HOMED.items():
        if "." not in field:
            out += pick_one(kind, d.get(field), s, c)
    return out


def pick_one(kind: str, value: Any, s: Settings, c: Checker, *, required: bool = False) -> Picked:
    """The option of `kind` that `value` (written at the kind's field) names, if any; problems
    name the field and are reported on `c`."""
    option = option_of(kind, value, s, c, required=required)
    return () if option is None else ((kind, option),)


def option_of(kind: str, value: Any, s: Settings, c: Checker, *, required: bool = False,
              role: str = "") -> Any | None:
    """The option `value` names (None: none, or reported on `c`); `role` fills the field of a
    kind each role picks (`clusterConfig.{role}.placement`)."""
    field = HOMED[kind].format(role=role) if role else HOMED[kind]
    return c.pick(value, field, s.options(kind), kind, required=required)


def fill(picked: Picked, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Parts:
    """Each picked option made this cluster's value; a kind whose values are invalid is left
    out (its problems are on `c`)."""
    out = []
    for kind, option in picked:
        document = cast("DocumentModule", importlib.import_module(module(kind, "document")))
        part = document.fill(option, cluster_id, owner, d, s, c)
        if part is not None:
            out.append((kind, part))
    return tuple(out)
