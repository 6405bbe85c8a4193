"""The document side of the option kinds in `trinogen.kinds.HOMED`: pick, then fill.

`pick` reads each kind's field (`"ingress": "public"`) against the settings' options; only
when an option is picked is the kind's `document` module imported, so a run whose settings name
no option of a kind never loads it. `fill` makes each picked option the cluster's value.
Pure: the modules are imported by name, nothing is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, OWN, module
from trinogen.model.checker import Checker
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import DocumentModule, Part

Picked = tuple[tuple[str, Any], ...]  # (kind, the option the document picked)
Parts = tuple[tuple[str, "Part"], ...]  # (kind, its value for this cluster)


def pick(d: Mapping[str, Any], s: Settings, c: Checker) -> Picked:
    """The options the document picks, kind by kind; unknown names are reported on `c`. A kind
    of `OWN` whose field the document writes is there too, with the option it picked or None."""
    out = []
    for kind, field in HOMED.items():
        option = c.pick(d.get(field), field, s.options(kind), kind)
        if option is not None or (kind in OWN and d.get(OWN[kind]) is not None):
            out.append((kind, option))
    return tuple(out)


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
