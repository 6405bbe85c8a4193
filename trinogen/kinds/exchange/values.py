"""The chart's `server.exchangeManager` values of a cluster's exchange
(templates/values/exchange.yaml.j2).

Pure: the base directories were checked as locations when the settings were read and filled
with the cluster's clusterId and owner (`document.fill`); the chart writes them without `tpl`.
The exchange-manager.properties lines are rendered with the run's Vault values by
`render/texts.py` (`exchange_properties`).
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.exchange.document import ExchangeManager
from trinogen.settings import Settings


def values(part: ExchangeManager, s: Settings) -> dict[str, Any]:
    """The template variable `exchange`: the filesystem exchange manager's base directories."""
    del s  # the option holds everything
    return {"baseDir": list(part.base_directories)}
