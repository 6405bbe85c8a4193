"""Each distinct JSON body once: the `sets` table of the packaged data files (the registry's
version files and session.json.gz), which entries point into by index."""

from __future__ import annotations

import json
from typing import Any


class SetTable:
    """The distinct bodies in the order first seen, and `ref` giving each one's index."""

    def __init__(self) -> None:
        self.sets: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}

    def ref(self, body: dict[str, Any]) -> int:
        key = json.dumps(body, sort_keys=True)
        if key not in self._index:
            self._index[key] = len(self.sets)
            self.sets.append(body)
        return self._index[key]
