"""trinogen.cli.output: the JSON report written in pieces."""

from __future__ import annotations

import json

import pytest

from trinogen.cli.output import echo_json


@pytest.mark.parametrize("batch", [1, 3, 8192])
def test_json_written_in_pieces_is_what_json_dumps_prints(
        capsys: pytest.CaptureFixture[str], batch: int) -> None:
    """However many pieces it is written in, the text is json.dumps's (indent 2) plus a newline."""
    value = {"changes": [{"path": f"c/{i}/values.yaml", "action": "add", "clusterId": None}
                         for i in range(50)], "stats": {"seconds": 1.5, "é": "\u001b[31m"}}
    echo_json(value, batch=batch)
    assert capsys.readouterr().out == json.dumps(value, indent=2) + "\n"
