"""trinogen.model.units: the three size languages, read and written, at their boundaries."""

from __future__ import annotations

from decimal import Decimal

import pytest

from trinogen.model.units import (
    data_size_bytes,
    data_size_text,
    jvm_bytes,
    jvm_size_text,
    quantity_value,
)

KI, MI, GI, TI = 1024, 1024**2, 1024**3, 1024**4


@pytest.mark.parametrize(("text", "expected"), [
    ("1", 1),                 # plain bytes
    ("512", 512),
    ("1k", KI), ("1K", KI),    # unit letters in either case, all binary (as -Xmx reads them)
    ("512m", 512 * MI), ("512M", 512 * MI),
    ("20G", 20 * GI), ("20g", 20 * GI),
    ("2T", 2 * TI),
    ("16384m", 16 * GI),
])
def test_jvm_sizes_are_binary_multiples(text: str, expected: int) -> None:
    """A JVM size is a positive whole number times 1024**n for k/m/g/t."""
    assert jvm_bytes(text) == expected


@pytest.mark.parametrize("text", ["0", "0G", "01G", "1.5G", "1GB", "G", "", "-1G", "1P", " 1G"])
def test_what_the_jvm_refuses_is_not_a_jvm_size(text: str) -> None:
    """Zero, leading zeros, fractions, two-letter units and unknown units are not JVM sizes."""
    with pytest.raises(ValueError):
        jvm_bytes(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("0B", 0),
    ("1B", 1),
    ("1kB", KI),
    ("12GB", 12 * GI),
    ("1.5GB", int(1.5 * GI)),
    ("100TB", 100 * TI),
    ("1PB", 1024**5),
])
def test_trino_data_sizes_are_binary(text: str, expected: int) -> None:
    """Trino's DataSize units (B, kB, MB, GB, TB, PB) are powers of 1024."""
    assert data_size_bytes(text) == expected


@pytest.mark.parametrize("text", ["12G", "12gb", "12 GB", "12KB", "GB", ".5GB", "1e3GB", ""])
def test_other_spellings_are_not_data_sizes(text: str) -> None:
    """Units are case-sensitive (kB, not KB) and a number must lead: anything else is None."""
    assert data_size_bytes(text) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("4", Decimal(4)),
    ("500m", Decimal("0.5")),
    ("100u", Decimal("0.0001")),
    ("1n", Decimal("1e-9")),
    ("16Gi", Decimal(16 * GI)),
    ("1Ki", Decimal(KI)),
    ("1k", Decimal(1000)),        # decimal suffixes are powers of 1000
    ("1M", Decimal(10**6)),
    ("1E", Decimal(10**18)),
    ("1Ei", Decimal(2**60)),
    ("1e3", Decimal(1000)),       # an exponent, not the suffix E
    ("1E3", Decimal(1000)),
    ("2.5", Decimal("2.5")),
    (".5", Decimal("0.5")),
    ("1.", Decimal(1)),
])
def test_kubernetes_quantities(text: str, expected: Decimal) -> None:
    """Binary (Ki..Ei) and decimal (n..E) suffixes and exponents, as resource.Quantity reads them."""
    assert quantity_value(text) == expected


@pytest.mark.parametrize("text", ["", "Gi", "16GB", "16gi", "-1", "1 Gi", "1e"])
def test_what_is_not_a_quantity(text: str) -> None:
    """Unknown suffixes, signs, spaces and a bare exponent marker are not quantities."""
    assert quantity_value(text) is None


@pytest.mark.parametrize(("n", "up", "expected"), [
    (0, False, "0B"),
    (1023, False, "1023B"),
    (KI, False, "1kB"),
    (GI, False, "1GB"),
    (int(1.25 * GI), False, "1.2GB"),   # rounded down to one decimal
    (int(1.25 * GI), True, "1.3GB"),    # or up
    (int(8.4 * GI), True, "8.4GB"),
    (TI - 1, False, "1023.9GB"),
    (TI, False, "1TB"),
])
def test_data_size_text(n: int, up: bool, expected: str) -> None:
    """Byte counts are written in the largest unit they reach, one decimal at most."""
    assert data_size_text(n, up=up) == expected


@pytest.mark.parametrize(("n", "expected"), [
    (1, "1M"),
    (MI, "1M"),
    (MI + 1, "2M"),
    (GI, "1024M"),        # up to 1G megabytes are written
    (GI + 1, "2G"),       # beyond it whole gigabytes, rounded up
    (int(17.2 * GI), "18G"),
])
def test_jvm_size_text_rounds_up(n: int, expected: str) -> None:
    """A suggested heap is never smaller than what is needed."""
    assert jvm_size_text(n) == expected
    assert jvm_bytes(expected) >= n
