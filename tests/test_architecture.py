"""The import rules in pyproject.toml ([tool.importlinter]) hold for the code as it is."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

CONTRACTS = (
    "The pure core imports no I/O library",
    "The pipeline reaches the outside only through its ports",
    "Layers point down",
)


def _lint_imports() -> str:
    found = Path(sys.executable).parent / "lint-imports"
    return str(found) if found.exists() else shutil.which("lint-imports") or "lint-imports"


def test_import_contracts_are_kept() -> None:
    """lint-imports keeps every contract: the pure core imports no I/O library, layers point down."""
    proc = subprocess.run([_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in CONTRACTS:  # each contract was checked, none silently dropped
        assert any(line.startswith(name) and line.endswith("KEPT")
                   for line in proc.stdout.splitlines()), proc.stdout
