"""The chart's `serviceAccount:` values (templates/values/service_accounts.yaml.j2).

Pure: the name and annotations were checked as Kubernetes names and annotations when the
document was read (`document.fill`); the chart writes them without `tpl`.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.service_accounts.document import ServiceAccount
from trinogen.settings import Settings


def values(part: ServiceAccount, s: Settings) -> dict[str, Any]:
    """The template variable `service_accounts`: the ServiceAccount the chart creates (the
    mapping `service_account` held before issue 21, which render/workload.py still sets)."""
    del s  # the option holds everything
    return {"create": True, "name": part.name, "annotations": dict(part.annotations)}
