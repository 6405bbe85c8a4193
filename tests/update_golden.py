"""Regenerate tests/golden from the shipped examples. Run by a person, never by the tests.

    .venv/bin/python -m tests.update_golden && git diff --stat tests/golden

The golden tree is reviewed data: after running this, read every changed file against
config/examples/ and config/demo.yaml (the change must be the one intended) before committing.
"""

from __future__ import annotations

import shutil

from tests.test_render import GOLDEN, render_examples


def main() -> None:
    files = render_examples()
    shutil.rmtree(GOLDEN, ignore_errors=True)
    for path, content in files.items():
        (GOLDEN / path).parent.mkdir(parents=True, exist_ok=True)
        (GOLDEN / path).write_bytes(content)
    print(f"wrote {len(files)} files under {GOLDEN}; review `git diff {GOLDEN}` before committing")


if __name__ == "__main__":
    main()
