"""The static checks the house style holds trinogen to: `mypy --strict` and ruff, both green.

They ran by hand before; run here, a change that breaks them fails CI like any other test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("command", [
    ["mypy", "--strict", "--no-incremental", "trinogen"],
    ["ruff", "check", "--no-cache", "trinogen"],
], ids=["mypy", "ruff"])
def test_static_check_is_green(command: list[str]) -> None:
    """The tool, from the test environment, finds nothing in trinogen/."""
    proc = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
