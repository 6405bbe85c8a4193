"""The document side of the option kinds in `trinogen.kinds.HOMED`: pick, then fill.

`pick` reads each kind's top-level field (`"ingress": "public"`) against the settings' options;
a kind picked inside another field (`accessControl.opa`) is picked by that field's reader with
`pick_one` (it alone knows when the field picks one: `accessControl` gives rules or an OPA
name), which hands the pick on to `fill` with the others. Only when an option is picked is the
kind's `document` module imported, so a run whose settings name no option of a kind never loads
it. `fill` makes each picked option the cluster's value. A kind of `trinogen.kinds.OWN_VALUE`
may instead hold the document's own object (`Own`), which its `fill` checks; a kind of `OWN`
may be filled with no option, from the document's own field.
Pure: the modules are imported by name, nothing is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from trinogen.kinds import HOMED, OWN, OWN_VALUE, PER_CATALOG, SELF_PICKED, module
from trinogen.model.checker import MAPS, Checker
from trinogen.secrets import SecretUse
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.protocol import DocumentModule, Part, SelfPickingModule

Picked = tuple[tuple[str, Any], ...]  # (kind, the option the document picked)
Parts = tuple[tuple[str, "Part"], ...]  # (kind, its value for this cluster)


@dataclass(frozen=True)
class Own:
    """A document's own value for a kind of `trinogen.kinds.OWN_VALUE` (an object where a name
    would pick an option), handed to the kind's `document.fill` in place of an option."""

    value: Mapping[str, Any]


def pick(d: Mapping[str, Any], s: Settings, c: Checker) -> Picked:
    """The options the document picks in its top-level fields, kind by kind; unknown names are
    reported on `c`. A kind of `OWN` whose own field the document writes is there too, with the
    option it picked or None; a kind of `OWN_VALUE` whose field holds an object, with that
    object as `Own`."""
    out: list[tuple[str, Any]] = []
    for kind, field in HOMED.items():
        if "." in field:
            continue  # picked by the reader of the field it sits in, with pick_one
        value = d.get(field)
        if value is None and _quiet(kind, d):
            continue
        if kind in OWN_VALUE and isinstance(value, MAPS):
            out.append((kind, Own(value)))
            continue
        option = _option(kind, field, value, d, s, c)
        if option is not None or (kind in OWN and d.get(OWN[kind]) is not None):
            out.append((kind, option))
    return tuple(out)


def _quiet(kind: str, d: Mapping[str, Any]) -> bool:
    """Whether a kind whose field the document left out picks nothing: every document takes
    `pick`'s loop and most write none of these fields (Checker.pick of None reports nothing),
    but a kind that picks for itself may be required by the platform whatever the document
    says, and a kind of `OWN` is filled from its own field too."""
    return kind not in SELF_PICKED and (kind not in OWN or d.get(OWN[kind]) is None)


def pick_one(kind: str, value: Any, s: Settings, c: Checker, *, required: bool = False) -> Picked:
    """The option of `kind` that `value` (written at the kind's field) names, if any; problems
    name the field and are reported on `c`."""
    option = option_of(kind, value, s, c, required=required)
    return () if option is None else ((kind, option),)


def option_of(kind: str, value: Any, s: Settings, c: Checker, *, required: bool = False,
              role: str = "", catalog: str = "") -> Any | None:
    """The option `value` names (None: none, or reported on `c`); `role` fills the field of a
    kind each role picks (`clusterConfig.{role}.placement`), `catalog` that of a kind each
    catalog picks (`PER_CATALOG`: `connectors["lake"].storage`)."""
    if value is None and not required:
        return None  # what Checker.pick answers, without naming the field: most documents
    if catalog:
        field = PER_CATALOG[kind].format(catalog=catalog)
    else:
        field = HOMED[kind].format(role=role) if role else HOMED[kind]
    return c.pick(value, field, s.options(kind), kind, required=required)


def _option(kind: str, field: str, value: Any, d: Mapping[str, Any], s: Settings,
            c: Checker) -> Any:
    """The option one kind's field picks: None when it picks none (or a problem is on `c`)."""
    if kind not in SELF_PICKED:
        return c.pick(value, field, s.options(kind), kind)
    if value is None and not s.options(kind):
        return None  # nothing offered, nothing written: the module is not loaded
    picker = cast("SelfPickingModule", _document(kind))
    return picker.pick(value, d, s, c)


def _document(kind: str) -> DocumentModule:
    return cast("DocumentModule", importlib.import_module(module(kind, "document")))


def fill(picked: Picked, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Parts:
    """Each picked option made this cluster's value; a kind whose values are invalid is left
    out (its problems are on `c`)."""
    out = []
    for kind, option in picked:
        part = _document(kind).fill(option, cluster_id, owner, d, s, c)
        if part is not None:
            out.append((kind, part))
    return tuple(out)


def check_private(parts: Parts, uses: Iterable[tuple[str, SecretUse]], c: Checker) -> None:
    """Report a document placeholder (field path, use) naming a secret of a picked option (an
    optional `secrets` of its Part: an event listener's token writes into the platform's audit
    store): a document must not copy it into a property of its own, even when the platform
    keeps that secret inside `secrets.scope`."""
    private = {x.use.ref: (kind, x.path) for kind, part in parts
               for x in getattr(part, "secrets", ())}
    if not private:
        return
    for path, use in uses:
        if use.ref in private:
            kind, where = private[use.ref]
            c.error(path, f"placeholder {use.placeholder.text} names a secret of the {kind} "
                    f"option at {where}; documents may not use it")
