"""The chart's `accessControl:` values of an OPA pick (templates/values/opa.yaml.j2).

Pure: the lines are escaped by java.util.Properties rules, as the other properties files'; the
chart quotes the text into its ConfigMap, never through `tpl`.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.opa.document import Opa
from trinogen.render.texts import lines
from trinogen.settings import Settings


def values(part: Opa, s: Settings) -> dict[str, Any]:
    """The template variable `opa`: the text of the coordinator's access-control.properties."""
    del s  # the option holds everything
    return {"properties": "\n".join(lines(part.properties)) + "\n"}
