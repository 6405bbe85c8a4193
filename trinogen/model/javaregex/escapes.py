"""Backslash escapes, read as Pattern.escape() reads them (inside a class or out)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from trinogen.model.javaregex.cursor import Cursor, Refused, Undecided, is_digit, is_hex
from trinogen.model.javaregex.study import CHAR, ZERO, Node

GRAPHEME = Node("open", 0)  # \X: Java counts no maximum for it, and no fixed length
LINE_ENDING = Node("open", 2)  # \R: \r\n or one line terminator
BACK_REFERENCE = Node("noref")
_ILLEGAL = "Illegal/unsupported escape sequence"
_MAX_CODE_POINT = 0x10FFFF
_SIMPLE = {"a": 0x07, "e": 0x1B, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09}
_PREDICATES = set("dDhHsSwWV")  # classes \d \w...: one character, of a set
_ANCHORS = set("ABGZz")  # assertions: no character (refused inside a class)


class Escapes(Cursor):
    """The escape readers; the parser supplies group state (count, names) through attributes."""

    group_count: int
    group_names: set[str]

    def escape(self, inclass: bool, create: bool, isrange: bool) -> int | Node:
        """The escape at the cursor: a code point, or the node it stands for."""
        ch = chr(self.skip())
        simple = _SIMPLE.get(ch)
        if simple is not None:
            return simple
        if ch in _PREDICATES:
            return CHAR
        if ch == "v":
            return 0x0B if isrange else CHAR
        reader = _READERS.get(ch)
        if reader is not None:
            return reader(self)
        if not inclass:
            node = self._outside_class(ch, create)
            if node is not None:
                return node
        if ch.isascii() and ch.isalnum():
            raise self.error(_ILLEGAL)
        return ord(ch)

    def _outside_class(self, ch: str, create: bool) -> Node | None:
        if ch in _ANCHORS:
            return ZERO
        if ch == "b":
            return self._word_boundary(create)
        if "1" <= ch <= "9":
            self._number_reference(ord(ch) - 0x30)
            return BACK_REFERENCE
        if ch == "k":
            return self._named_reference()
        return {"R": LINE_ENDING, "X": GRAPHEME}.get(ch)

    def _word_boundary(self, create: bool) -> Node:
        if create and self.peek() == 0x7B:  # \b{g}: a grapheme cluster boundary
            if self.skip() == 0x67:
                if self.read() == 0x7D:
                    return ZERO
                raise self.error(_ILLEGAL)
            self.unread()
            self.unread()
        return ZERO

    def _number_reference(self, number: int) -> None:
        """Java takes more digits only while they name an existing group (\\8 is fine)."""
        while is_digit(ch := self.peek()):
            longer = number * 10 + ch - 0x30
            if self.group_count - 1 < longer:
                break
            number = longer
            self.read()

    def _named_reference(self) -> Node:
        if self.read() != 0x3C:
            raise self.error("\\k is not followed by '<' for named capturing group")
        name = self.group_name(self.read())
        if name not in self.group_names:
            raise self.error(f"named capturing group <{name}> does not exist")
        return BACK_REFERENCE

    def group_name(self, ch: int) -> str:
        """A group's name after `<`, up to `>`: ASCII letters and digits, a letter first."""
        if not (0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A):
            raise self.error("capturing group name does not start with a Latin letter")
        name = []
        while True:
            name.append(chr(ch))
            ch = self.read()
            if not (ch < 0x80 and chr(ch).isalnum()):
                break
        if ch != 0x3E:
            raise self.error("named capturing group is missing trailing '>'")
        return "".join(name)

    def octal(self) -> int:
        n = self.read()
        if not 0x30 <= n <= 0x37:
            raise self.error("Illegal octal escape sequence")
        m = self.read()
        if not 0x30 <= m <= 0x37:
            self.unread()
            return n - 0x30
        o = self.read()
        if 0x30 <= o <= 0x37 and n <= 0x33:
            return (n - 0x30) * 64 + (m - 0x30) * 8 + o - 0x30
        self.unread()
        return (n - 0x30) * 8 + m - 0x30

    def hexadecimal(self) -> int:
        n = self.read()
        if is_hex(n):
            m = self.read()
            if is_hex(m):
                return int(chr(n) + chr(m), 16)
        elif n == 0x7B and is_hex(self.peek()):
            value = 0
            while is_hex(n := self.read()):
                value = value * 16 + int(chr(n), 16)
                if value > _MAX_CODE_POINT:
                    raise self.error("Hexadecimal codepoint is too big")
            if n != 0x7D:
                raise self.error("Unclosed hexadecimal escape sequence")
            return value
        raise self.error("Illegal hexadecimal escape sequence")

    def unicode(self) -> int:
        n = self._four_hex()
        if 0xD800 <= n <= 0xDBFF:  # a high surrogate: a following \\uXXXX low one joins it
            start = self.cursor
            if self.read() == 0x5C and self.read() == 0x75:
                low = self._four_hex()
                if 0xDC00 <= low <= 0xDFFF:
                    return 0x10000 + ((n - 0xD800) << 10) + (low - 0xDC00)
            self.cursor = start
        return n

    def _four_hex(self) -> int:
        value = 0
        for _ in range(4):
            ch = self.read()
            if not is_hex(ch):
                raise self.error("Illegal Unicode escape sequence")
            value = value * 16 + int(chr(ch), 16)
        return value

    def control(self) -> int:
        if self.cursor < self.length:
            return self.read() ^ 64
        raise self.error("Illegal control escape sequence")

    def character_name(self) -> int:
        if self.read() != 0x7B:
            raise self.error("Illegal character name escape sequence")
        start = self.cursor
        while self.read() != 0x7D:
            if self.cursor >= self.length:
                raise self.error("Unclosed character name escape sequence")
        name = "".join(map(chr, self.temp[start:self.cursor - 1]))
        return _named(name, self.error(f"Unknown character name [{name}]"))


def _named(name: str, unknown: Refused) -> int:
    """The code point Character.codePointOf(name) gives, where Python's database is sure of it."""
    wanted = name.strip().upper()
    if not wanted:
        raise unknown
    try:
        ch = unicodedata.lookup(wanted)
    except KeyError:
        # Java also knows other forms ("LINE FEED (LF)", "CJK UNIFIED IDEOGRAPHS 4E00", newer names)
        raise Undecided(f"the character name \\N{{{name}}}") from None
    if unicodedata.name(ch, "") != wanted or wanted.startswith(("CJK ", "HANGUL SYLLABLE ")):
        raise Undecided(f"the character name \\N{{{name}}}")  # an alias, or spelt otherwise
    return ord(ch)


_READERS: dict[str, Callable[[Escapes], int]] = {
    "0": Escapes.octal, "x": Escapes.hexadecimal, "u": Escapes.unicode, "c": Escapes.control,
    "N": Escapes.character_name,
}
