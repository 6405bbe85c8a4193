"""`accessControl`: who may do what on the cluster's coordinator.

A document gives either its own file-based rules (`{"rules": {...}}`, Trino's rules.json format,
checked by `access_rules`) or the name of an OPA endpoint the platform offers
(`{"opa": "central"}`: the `opa` kind, trinogen/kinds/opa/, picked here and filled with the
other kinds by `model.kinds`), never both. Only the coordinator authorizes
queries: the chart gives the workers, when graceful shutdown is on, a rules file of their own that
lets `admin` (the preStop hook's user) shut them down, so no document rule can break that. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trinogen.model.access_rules import check_rules, strict_fields
from trinogen.model.checker import Checker
from trinogen.model.kinds import Picked, pick_one
from trinogen.model.types import AccessControl
from trinogen.settings import Settings

FIELD = "accessControl"
# How often Trino re-reads the rules file (security.refresh-period): a changed ConfigMap reaches
# the pod within the kubelet's sync period (about a minute), then this; no restart.
REFRESH_PERIOD = "60s"
MAX_RULES_BYTES = 512 * 1024  # the rules ConfigMap holds at most 1 MiB


def access_control(value: Any, settings: Settings, c: Checker
                   ) -> tuple[AccessControl | None, Picked]:
    """The cluster's own rules, or the OPA option it picks (`model.kinds` fills it); neither
    when none is declared or a problem was reported."""
    spec: Mapping[str, Any] | None = c.mapping(value, FIELD, required=False)
    if spec is None:
        return None, ()
    strict_fields(spec, FIELD, ("rules", "opa"), c)
    if ("rules" in spec) == ("opa" in spec):
        c.error(FIELD, "give either rules (file-based access control) or opa (the name of an OPA "
                "endpoint of the settings), not both and not neither (a value inherited from the "
                "settings' defaults or profile is removed with null)")
        return None, ()
    if "opa" in spec:
        return None, pick_one("opa", spec["opa"], settings, c, required=True)
    return _rules(spec["rules"], c), ()


def _rules(value: Any, c: Checker) -> AccessControl | None:
    """The document's own rules file, checked (None: reported)."""
    rules = check_rules(value, f"{FIELD}.rules", c)
    if rules is None:
        return None
    text = json.dumps(rules, indent=2, sort_keys=True) + "\n"  # ASCII: \\u escapes, no raw controls
    if len(text) > MAX_RULES_BYTES:
        c.error(f"{FIELD}.rules", f"is {len(text)} bytes as JSON; at most {MAX_RULES_BYTES} fit in "
                "the rules ConfigMap")
        return None
    return AccessControl(rules_json=text, refresh_period=REFRESH_PERIOD)
