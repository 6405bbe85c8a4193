"""The three size languages a document speaks: JVM sizes, Trino data sizes, Kubernetes quantities.

Each has a pattern (what the checker accepts) and a reader (its value in bytes, or in units for
quantities such as CPU), plus the writers messages use to suggest a size that would work.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

# Kubernetes quantities are read where the settings read them too (tenant quotas).
from trinogen.settings.quantity import QUANTITY, quantity_value

__all__ = ["DATA_SIZE", "JVM_SIZE", "QUANTITY", "data_size_bytes", "data_size_text", "jvm_bytes",
           "jvm_size_text", "quantity_value"]

# -Xmx syntax: a positive whole number with an optional binary unit letter, either case.
JVM_SIZE = re.compile(r"([1-9][0-9]*)([kKmMgGtT]?)")
# Trino's DataSize syntax (airlift): a number and a unit, all binary.
DATA_SIZE = re.compile(r"(\d+(?:\.\d+)?)(B|kB|MB|GB|TB|PB)")

_JVM_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_DATA_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5}


def jvm_bytes(text: str) -> int:
    """The bytes of a JVM size the checker accepted (`"20G"` -> 20 * 1024**3)."""
    m = JVM_SIZE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a JVM size: {text!r}")
    return int(m.group(1)) * _JVM_UNITS[m.group(2).lower()]


def data_size_bytes(text: str) -> int | None:
    """The bytes of a Trino data size (`"12GB"`), or None when it is not one."""
    m = DATA_SIZE.fullmatch(text)
    if not m:
        return None
    return int(Decimal(m.group(1)) * _DATA_UNITS[m.group(2)])


def data_size_text(n: float, *, up: bool = False) -> str:
    """A byte count as a Trino data size, rounded down (or up) to one decimal."""
    rnd = math.ceil if up else math.floor
    for unit, size in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if n >= size:
            value = rnd(n / size * 10) / 10
            return f"{value:.1f}".rstrip("0").rstrip(".") + unit
    return f"{int(n)}B"


def jvm_size_text(n: int) -> str:
    """A byte count as a JVM size, rounded up to whole gigabytes (or megabytes up to 1G)."""
    if n > 1024**3:
        return f"{math.ceil(n / 1024**3)}G"
    return f"{math.ceil(n / 1024**2)}M"
