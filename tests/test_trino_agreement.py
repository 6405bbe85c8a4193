"""trinogen refuses each mistake that the real Trino refuses (or silently ignores) at startup.

The table is the real-Trino harness's (`tests/test_trino_real.py`: `MISTAKES`, each with the
`key` Trino names and the `document` stating the mistake, and `mistake_document()` applying it to
`MISTAKE_BASE`); the harness proves that Trino 476 refuses each one, this module that trinogen's
validation refuses the same document naming the same property. Nothing here boots Trino.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import demo_settings
from trinogen.model import Cluster, Failed, RawDocument, classify

try:
    from tests.test_trino_real import MISTAKE_BASE, MISTAKES, mistake_document
except ImportError:  # the harness lives on its own branch until it is merged
    MISTAKE_BASE, MISTAKES = None, ()

    def mistake_document(m: Any) -> dict[str, Any]:
        raise AssertionError("unreachable without the harness")

pytestmark = pytest.mark.skipif(
    MISTAKE_BASE is None,
    reason="tests/test_trino_real.py (the real-Trino harness with MISTAKES) is not merged yet",
)


def _classify(doc: dict[str, Any]) -> Any:
    return classify(RawDocument(str(doc["_id"]), doc), demo_settings())


def test_the_base_document_is_valid() -> None:
    """Without a mistake the harness's document validates, so each refusal is the mistake's."""
    assert MISTAKE_BASE is not None
    outcome = _classify(dict(MISTAKE_BASE))
    assert isinstance(outcome, Cluster), getattr(outcome, "problems", None)
    assert outcome.warnings == ()


@pytest.mark.parametrize("m", MISTAKES, ids=lambda m: str(m.id))
def test_trinogen_refuses_what_trino_refuses_naming_the_property(m: Any) -> None:
    """The mistake's document fails, and one problem names the property Trino names."""
    outcome = _classify(mistake_document(m))
    assert isinstance(outcome, Failed), f"{m.id}: trinogen accepts {m.key}={m.value}"
    named = [p for p in outcome.problems if m.key in p.field or m.key in p.message]
    assert named, f"{m.id}: no problem names {m.key}: {outcome.problems}"
    assert all(p.cluster == m.id for p in outcome.problems)
