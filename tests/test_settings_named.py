"""Named options: the settings file offers them by kind and name, a document picks one by name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from trinogen.errors import ConfigError
from trinogen.model.checker import Checker
from trinogen.settings import load_settings, named


@dataclass(frozen=True)
class Colour:
    shade: str


def _parse_colour(where: str, raw: Any) -> Colour:
    if not isinstance(raw.get("shade"), str):
        raise ConfigError(f"{where}.shade must be a string")
    return Colour(raw["shade"])


parse = _parse_colour  # this module stands for a kind's module: `named` imports it by name


@pytest.fixture
def colour_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind registered for the test only (the real kinds come with their features)."""
    monkeypatch.setitem(named.KINDS, "colour", __name__)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "settings.yaml"
    path.write_text(text)
    return path


def test_options_are_parsed_by_their_kind(tmp_path: Path, colour_kind: None) -> None:
    """Each named entry becomes its kind's value, reachable by name."""
    s = load_settings(_write(tmp_path, "colour:\n  sky: {shade: blue}\n  sea: {shade: green}\n"),
                      environ={})
    assert s.options("colour") == {"sky": Colour("blue"), "sea": Colour("green")}
    assert s.options("placement") == {}


@pytest.mark.parametrize(("text", "needle"), [
    ("colour: [sky]\n", "colour must be a mapping"),
    ("colour:\n  sky: blue\n", "colour.sky must be a mapping"),
    ("colour:\n  sky: {shade: 3}\n", "colour.sky.shade must be a string"),
    ("colour:\n  3: {shade: x}\n", "option names are strings"),
])
def test_a_bad_option_is_a_configuration_error_naming_it(
    tmp_path: Path, colour_kind: None, text: str, needle: str
) -> None:
    """A malformed option fails loading with kind, name and field in the message."""
    with pytest.raises(ConfigError, match=needle):
        load_settings(_write(tmp_path, text), environ={})


def test_options_cannot_come_from_flags(colour_kind: None) -> None:
    """A flag is text: options are read from the file only, and the flag says so."""
    with pytest.raises(ConfigError, match="named options"):
        load_settings(None, environ={}, overrides={"colour.sky": "blue"})


@pytest.mark.parametrize(("value", "picked", "needle"), [
    ("sky", Colour("blue"), None),
    (None, None, None),
    ("skye", None, "did you mean sky"),
    (3, None, "must be a string"),
])
def test_a_document_picks_an_option_by_name(value: Any, picked: Any, needle: str | None) -> None:
    """pick() returns the named option, or reports an unknown name listing the known ones."""
    c = Checker("demo", "error")
    got = c.pick(value, "storage", {"sky": Colour("blue"), "sea": Colour("green")}, "colour")
    assert got == picked
    if needle is None:
        assert not c.problems
    else:
        assert needle in c.problems[0].message and c.problems[0].field == "storage"
        if "did you mean" in needle:
            assert "known: sea, sky" in c.problems[0].message


# The smallest entry of each kind that reaches its field check (storage and authentication
# check their `type` first).
_TYPED = {"storage": {"type": "s3"}, "authentication": {"type": "PASSWORD"},
          "event_listeners": {"type": "http"}}


@pytest.mark.parametrize("kind", sorted(named.KINDS))
def test_a_misspelt_field_is_named_kind_name_field(kind: str) -> None:
    """A misspelt field of any option kind is named `<kind>.<name>.<field>` (issue 19)."""
    with pytest.raises(ConfigError) as e:
        named.parser(kind)(f"s.yaml: {kind}.x", {**_TYPED.get(kind, {}), "tpyo": 1})
    assert f"s.yaml: {kind}.x.tpyo" in str(e.value)
