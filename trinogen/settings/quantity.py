"""Kubernetes resource quantities (`"16Gi"`, `"500m"`, `"1e3"`): the pattern and the reader.

Here, below both, because the settings read them (tenant quotas) as the model does (requests and
limits of a document); `trinogen.model.units` re-exports them. Pure.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

# Kubernetes resource.Quantity: a decimal number with a binary or decimal suffix or an exponent,
# and an optional "+" (the API server takes "+1"; a "-" it parses too, but no request or quota
# may be negative).
QUANTITY = re.compile(r"\+?(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?")

_QUANTITY_UNITS = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


# A fleet repeats a few dozen quantities ("16Gi", "4") across every document's requests, limits
# and heaps; each is parsed once (values are immutable Decimals; the size bounds what a hostile
# fleet of distinct quantities can hold).
@lru_cache(maxsize=4096)
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
