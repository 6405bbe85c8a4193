"""Escaping: how a value becomes text in YAML, Java properties or Helm's `tpl`, unchanged.

Every value a template emits goes through one of these (the environment's filters wrap them in
`Safe`); each returns text that its reader (a YAML parser, `java.util.Properties`, Helm) reads
back as exactly the value given.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from trinogen.secrets import Secret


class Safe(str):
    """Text that went through an escaping filter and may reach a rendered file."""

    __slots__ = ()


# --- YAML emission: every scalar goes through here -----------------------------------------

_PLAIN_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")
_YAML_WORDS = frozenset(
    {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~", ""}
)


class Constant(Mapping[str, Any]):
    """A mapping fixed for good (a platform constant such as a security context): reads like any
    mapping in a template, and its YAML is emitted once instead of for every cluster."""

    __slots__ = ("_items", "yaml")

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)
        self.yaml = yaml_scalar(self._items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def yaml_scalar(value: Any) -> str:
    """One YAML scalar (or a flow collection) that a YAML parser reads back as exactly `value`."""
    if isinstance(value, str):
        return _yaml_str(value)
    if value is None or isinstance(value, (bool, int, float)):
        return _yaml_number(value)
    if isinstance(value, Secret):
        return yaml_scalar(value.reveal())
    if isinstance(value, Constant):
        return value.yaml
    if isinstance(value, (dict, Mapping)):  # dict first: the ABC check is slow
        items = ", ".join(f"{_yaml_str(str(k))}: {yaml_scalar(v)}" for k, v in sorted(value.items()))
        return "{" + items + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_scalar(v) for v in value) + "]"
    raise TypeError(f"cannot emit {type(value).__name__} as YAML")


def _yaml_number(value: bool | float | None) -> str:
    """null, booleans and numbers (a bool is an int to Python: it is checked first)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


@functools.lru_cache(maxsize=8192)
def _yaml_str(s: str) -> str:
    # Plain when unambiguous (letters, digits, "_-./", not a number, bool or null look-alike);
    # otherwise double-quoted with JSON escapes, which YAML reads the same way for ASCII.
    if (
        s
        and set(s) <= _PLAIN_SAFE
        and s.lower() not in _YAML_WORDS
        and s[0] not in "-.0123456789"
    ):
        return s
    if s.isascii():
        return json.dumps(s)
    return _yaml_unicode(s)


def _yaml_unicode(s: str) -> str:
    """Double-quoted YAML for non-ASCII text: printable characters kept, the rest escaped."""
    return '"' + "".join(_yaml_char(ch) for ch in s) + '"'


def _yaml_char(ch: str) -> str:
    o = ord(ch)
    if ch == '"' or ch == "\\":
        return "\\" + ch
    if 0x20 <= o < 0x7F:
        return ch
    if o < 0xA0:  # C0/C1 controls and DEL
        return f"\\x{o:02x}"
    if o in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF) or 0xD800 <= o <= 0xDFFF:
        return f"\\u{o:04x}"  # line separators, BOM, non-characters, surrogates
    return ch


def yaml_text(value: str, indent: int) -> str:
    """A multi-line string as a block literal (`|`) when that reads back exactly, else quoted."""
    lines = value.split("\n")
    if (
        value.endswith("\n")
        and not value.endswith("\n\n")
        and value.isascii()
        and all(line.isprintable() for line in lines)
        and not value.startswith((" ", "\t"))
        and value.strip()
    ):
        pad = " " * indent
        body = "\n".join(pad + line if line else "" for line in lines[:-1])
        return "|\n" + body
    return _yaml_str(value)


# --- java.util.Properties escaping ----------------------------------------------------------

# Escaped wherever they stand, in keys and values alike.
_PROP_ALWAYS = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}
_KEY_SPECIAL = frozenset(" =:\\")


def prop_key(text: str) -> str:
    """A properties key that `java.util.Properties` reads back as `text`."""
    if text.isascii() and text.isprintable() and not _KEY_SPECIAL.intersection(text) and text[:1] not in "#!":
        return text  # nothing to escape (the common case)
    return _prop_escape(text, key=True)


def prop_value(text: str) -> str:
    """A properties value that `java.util.Properties` reads back as `text`."""
    if text.isascii() and text.isprintable() and "\\" not in text and text[:1] not in " #!":
        return text  # nothing to escape (the common case)
    return _prop_escape(text, key=False)


def _prop_escape(text: str, *, key: bool) -> str:
    return "".join(_prop_char(ch, key=key, first=i == 0) for i, ch in enumerate(text))


def _prop_char(ch: str, *, key: bool, first: bool) -> str:
    if ch in _PROP_ALWAYS:
        return _PROP_ALWAYS[ch]
    if ch == " " and (key or first):  # a value's inner spaces are kept; a leading one would go
        return "\\ "
    if (key and ch in "=:") or (first and ch in "#!"):  # separators; a comment mark at the start
        return "\\" + ch
    return ch if " " <= ch <= "~" else _java_unicode(ord(ch))


def _java_unicode(o: int) -> str:
    """A \\uXXXX escape; Java strings are UTF-16, so beyond U+FFFF a surrogate pair."""
    if o > 0xFFFF:
        o -= 0x10000
        return f"\\u{0xD800 + (o >> 10):04X}\\u{0xDC00 + (o & 0x3FF):04X}"
    return f"\\u{o:04X}"


# --- Helm tpl ---------------------------------------------------------------------------------


def helm_escape(text: str) -> str:
    """Make text survive Helm's `tpl` unchanged: every `{{` becomes an action printing `{{`."""
    return text.replace("{{", '{{"{{"}}')


def helm_unescape(text: str) -> str:
    """What Helm's `tpl` makes of `helm_escape(text)` (used by tests and the self-check)."""
    return text.replace('{{"{{"}}', "{{")
