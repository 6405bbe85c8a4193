"""trinogen.model.rules: Trino's memory rule at its boundary, and the routing tables."""

from __future__ import annotations

import pytest

from trinogen.model.rules import CHART_CONFIG_KEYS, RESERVED_FIELDS, memory_problem
from trinogen.model.types import Role


def role(heap: str, per_node: str | None, headroom: str | None = None) -> Role:
    return Role(resources={}, max_heap=heap, min_heap=None, max_memory_per_node=per_node,
                heap_headroom=headroom, extra_properties=())


@pytest.mark.parametrize(("heap", "per_node", "headroom", "fits"), [
    ("10G", "7GB", None, True),      # 7 GiB + 30% of 10 GiB (3 GiB) = the heap exactly
    ("10G", "7.1GB", None, False),   # just over
    ("10G", "8GB", "2GB", True),     # an explicit headroom replaces the 30%
    ("10G", "8.1GB", "2GB", False),
    ("20G", "12GB", None, True),     # the README's example
    ("28G", "26GB", None, False),    # the original pipeline's example Trino refuses
    ("2G", None, None, True),        # the chart's default 1GB per node
    ("1G", None, None, False),       # 1 GiB + 0.3 GiB does not fit in 1 GiB
])
def test_per_node_memory_plus_headroom_must_fit_the_heap(
    heap: str, per_node: str | None, headroom: str | None, fits: bool
) -> None:
    """query.max-memory-per-node + heap headroom <= heap, as Trino checks at startup."""
    assert (memory_problem(role(heap, per_node, headroom), "worker") is None) is fits


def test_the_memory_message_says_what_would_work() -> None:
    """The message names the numbers and a heap and a per-node size that would fit."""
    message = memory_problem(role("28G", "26GB"), "worker")
    assert message is not None
    assert "the worker heap 28G is too small" in message
    assert "raise the heap to at least 38G" in message          # ceil(26 / 0.7) GiB
    assert "at most 19.6GB" in message                          # 28 - 8.4 GiB


def test_the_chart_default_is_named_when_the_document_sets_nothing() -> None:
    """A too-small heap with no per-node setting blames the chart's default of 1GB."""
    message = memory_problem(role("1G", None), "coordinator")
    assert message is not None and "1GB (the chart's default)" in message


def test_unreadable_sizes_are_left_to_the_format_check() -> None:
    """A per-node value that is not a data size was reported elsewhere: no memory message."""
    assert memory_problem(role("1G", "lots"), "worker") is None
    assert memory_problem(role("1G", "1GB", "some"), "worker") is None


def test_chart_keys_and_reserved_fields_have_reasons() -> None:
    """Every reserved field explains itself; the mapped chart keys name a values.yaml path."""
    assert all(reason for reason in RESERVED_FIELDS.values())
    mapped = {k: v for k, v in CHART_CONFIG_KEYS.items() if v is not None}
    assert mapped["query.max-memory"] == "server.config.query.maxMemory"
    assert all(v.startswith(("server.", "<role>.", "coordinator.")) for v in mapped.values())
