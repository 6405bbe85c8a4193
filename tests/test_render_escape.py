"""trinogen.render.escape: each escaper's output, read back by an independent reader."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests import javaprops
from trinogen.render.escape import (
    Constant,
    helm_escape,
    helm_unescape,
    prop_key,
    prop_value,
    yaml_scalar,
    yaml_text,
)
from trinogen.secrets import Secret


@pytest.mark.parametrize(("value", "text"), [
    (None, "null"),
    (True, "true"),
    (False, "false"),
    (0, "0"),
    (-7, "-7"),
    (2.5, "2.5"),
    ("plain", "plain"),
    ("a/b.c_d-e", "a/b.c_d-e"),
    ("", '""'),
    ("yes", '"yes"'),          # YAML 1.1 booleans must be quoted
    ("NO", '"NO"'),
    ("null", '"null"'),
    ("~", '"~"'),
    ("476", '"476"'),          # a number look-alike stays a string
    ("-x", '"-x"'),            # a leading dash would start a list item
    (".5", '".5"'),
    ("a: b", '"a: b"'),
    ("#c", '"#c"'),
    ("é", '"é"'),               # printable non-ASCII is kept
    ("\u2028", '"\\u2028"'),   # a line separator is escaped
    ("\x85", '"\\x85"'),       # a C1 control
    ({"b": 1, "a": "x"}, "{a: x, b: 1}"),   # sorted flow mapping
    (["x", 1, None], "[x, 1, null]"),
    (Secret("s3cr3t"), "s3cr3t"),           # inline mode writes the value itself
])
def test_yaml_scalar_text(value: Any, text: str) -> None:
    """Each value is written as this YAML text."""
    assert yaml_scalar(value) == text


@pytest.mark.parametrize("value", [
    None, True, 0, -7, 2.5, "", "yes", "476", "-x", "a: b", "é", "\u2028", "\x85", "tab\t",
    "quote\"s and \\back", {"k": ["v", 1]}, "{{ .Release.Name }}",
])
def test_yaml_scalar_reads_back_as_the_value(value: Any) -> None:
    """PyYAML's safe loader reads each scalar back as exactly the value."""
    assert yaml.safe_load(f"k: {yaml_scalar(value)}\n") == {"k": value}


@pytest.mark.parametrize("value", [
    {}, {"runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
    {"drop": ["ALL"], "yes": "no", "n": None},
])
def test_a_constant_reads_as_its_mapping(value: dict[str, Any]) -> None:
    """A Constant is emitted once, as its mapping reads back, nested in other values too, and is
    an ordinary mapping to templates."""
    const = Constant(value)
    assert yaml.safe_load(f"k: {yaml_scalar(const)}\n") == {"k": value}
    assert yaml.safe_load(f"k: {yaml_scalar({'outer': [const]})}\n") == {"k": {"outer": [value]}}
    assert const == value and dict(const.items()) == value and len(const) == len(value)


def test_yaml_scalar_refuses_unknown_types() -> None:
    """An object with no YAML form is a bug in the caller, not silently str()-ed."""
    with pytest.raises(TypeError):
        yaml_scalar(object())


@pytest.mark.parametrize(("value", "block"), [
    ("a=b\nc=d\n", True),         # property lines: a block literal
    ("a=b", False),               # no final newline: quoted
    ("a\n\n", False),             # trailing blank line would be lost by `|`
    (" indented\n", False),        # leading space breaks the indentation indicator
    ("é\n", False),               # non-ASCII: quoted
])
def test_yaml_text_block_or_quoted(value: str, block: bool) -> None:
    """Multi-line text is a `|` block only when that reads back exactly; both forms read back."""
    text = yaml_text(value, 2)
    assert text.startswith("|\n") is block
    assert yaml.safe_load(f"k: {text}\n") == {"k": value}


@pytest.mark.parametrize(("key", "text"), [
    ("connector.name", "connector.name"),
    ("a key", "a\\ key"),
    ("a=b", "a\\=b"),
    ("a:b", "a\\:b"),
    ("#k", "\\#k"),
    ("!k", "\\!k"),
    ("back\\slash", "back\\\\slash"),
    ("é", "\\u00E9"),
    ("😀", "\\uD83D\\uDE00"),     # beyond U+FFFF: a UTF-16 surrogate pair
])
def test_prop_key_text(key: str, text: str) -> None:
    """Keys escape spaces, separators, a leading comment mark and non-ASCII (Java rules)."""
    assert prop_key(key) == text


@pytest.mark.parametrize(("value", "text"), [
    ("jdbc:mysql://h:3306/db?a=b", "jdbc:mysql://h:3306/db?a=b"),   # separators are fine in values
    ("inner space", "inner space"),
    (" lead", "\\ lead"),          # a leading space would be dropped by the reader
    ("#not a comment", "\\#not a comment"),
    ("a#b", "a#b"),
    ("tab\there", "tab\\there"),
    ("c:\\dir", "c:\\\\dir"),
    ("\x7f", "\\u007F"),
    ("", ""),
])
def test_prop_value_text(value: str, text: str) -> None:
    """Values escape only what java.util.Properties would otherwise change."""
    assert prop_value(value) == text


@pytest.mark.parametrize(("key", "value"), [
    ("connector.name", "hive"),
    ("a key=:x", " lead and trail "),
    ("#k!", "#v!"),
    ("k\\", "v\\"),
    ("uni.é", "😀 \t \f"),
])
def test_properties_read_back_by_a_java_properties_reader(key: str, value: str) -> None:
    """An independent java.util.Properties reader gets the key and value back."""
    assert javaprops.loads(f"{prop_key(key)}={prop_value(value)}\n") == {key: value}


@pytest.mark.parametrize(("text", "escaped"), [
    ("no braces", "no braces"),
    ("pre-{{ .Release.Name }}-post", 'pre-{{"{{"}} .Release.Name }}-post'),
    ("{{{{", '{{"{{"}}{{"{{"}}'),
    ("}} only", "}} only"),
])
def test_helm_escape(text: str, escaped: str) -> None:
    """Every `{{` becomes an action printing `{{`, which tpl turns back into the text."""
    assert helm_escape(text) == escaped
    assert helm_unescape(escaped) == text
