"""Field rules that several option kinds share, each written once. Pure.

Each kind keeps its own messages for what is its own (which keys it lets a platform tune); the
shape of the field is checked here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from trinogen.errors import ConfigError

_HTTP_URL = re.compile(r"https?://[^\s/?#]+(/[^\s]*)?")


def is_http_url(value: Any) -> bool:
    """An http:// or https:// URL with a host and no spaces."""
    return type(value) is str and _HTTP_URL.fullmatch(value) is not None


def property_lines(where: str, value: Any, check_key: Callable[[Any], None]
                   ) -> tuple[tuple[str, str], ...]:
    """An option's `properties`: Trino property names to one line of plain text, sorted.

    `check_key` raises ConfigError for a key the kind does not let the platform set. A value
    holds no `${` and no `{{`: the line reaches Trino as written, nothing is substituted in it.
    """
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}.properties must be a mapping of property names to text")
    for key, text in value.items():
        check_key(key)
        if type(text) is not str or "\n" in text or "${" in text or "{{" in text:
            raise ConfigError(f"{where}.properties.{key} must be one line of plain text")
    return tuple(sorted(value.items()))
