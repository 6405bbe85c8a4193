"""trinogen.render.selfcheck: rendered YAML is parsed back, with or without libyaml."""

from __future__ import annotations

import pytest
import yaml

from trinogen.render.selfcheck import RenderError, check_yaml

GOOD = {"a.yaml": b"k: v\nl: [1, 2]\n", "b.yaml": b"# comment only\nx: {y: z}"}
BAD = {"a.yaml": b"k: v\n", "b.yaml": b"key: [unclosed\n"}


@pytest.mark.parametrize("libyaml", [True, False])
def test_well_formed_files_pass(monkeypatch: pytest.MonkeyPatch, libyaml: bool) -> None:
    """Valid files (one without a final newline) pass, through libyaml or pure Python."""
    if libyaml and not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml)
    check_yaml(GOOD)


@pytest.mark.parametrize("libyaml", [True, False])
def test_the_broken_file_is_named(monkeypatch: pytest.MonkeyPatch, libyaml: bool) -> None:
    """A broken file fails the check with its path, whichever parser runs."""
    if libyaml and not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml)
    with pytest.raises(RenderError, match=r"^b\.yaml is not valid YAML after rendering"):
        check_yaml(BAD)


def test_files_do_not_run_into_each_other() -> None:
    """Each file is its own document: a file ending inside a block does not swallow the next."""
    check_yaml({"a.yaml": b"k: |\n  text", "b.yaml": b"- item\n"})
