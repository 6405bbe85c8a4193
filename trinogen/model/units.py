"""The three size languages a document speaks: JVM sizes, Trino data sizes, Kubernetes quantities.

Each has a pattern (what the checker accepts) and a reader (its value in bytes, or in units for
quantities such as CPU), plus the writers messages use to suggest a size that would work.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

# -Xmx syntax: a positive whole number with an optional binary unit letter, either case.
JVM_SIZE = re.compile(r"([1-9][0-9]*)([kKmMgGtT]?)")
# Trino's DataSize syntax (airlift): a number and a unit, all binary.
DATA_SIZE = re.compile(r"(\d+(?:\.\d+)?)(B|kB|MB|GB|TB|PB)")
# Kubernetes resource.Quantity: a decimal number with a binary or decimal suffix or an exponent.
QUANTITY = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?")

_JVM_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_DATA_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5}
_QUANTITY_UNITS = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


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


def quantity_value(text: str) -> Decimal | None:
    """The value of a Kubernetes quantity (`"16Gi"`, `"500m"`, `"1e3"`), or None."""
    m = QUANTITY.fullmatch(text)
    if not m:
        return None
    suffix = m.group(2) or ""
    try:
        if suffix in _QUANTITY_UNITS:  # before the exponent: "E" and "Ei" are units (exa, exbi)
            return Decimal(m.group(1)) * Decimal(str(_QUANTITY_UNITS[suffix]))
        return Decimal(m.group(1)) * (Decimal(10) ** int(suffix[1:]))
    except (InvalidOperation, OverflowError, ValueError):
        return None


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
