"""The reading position over a pattern, moved as java.util.regex.Pattern moves its own.

Pattern reads an array of code points ending in zeros; with the COMMENTS flag (`(?x)`) most of
its reads step over white space and `#` comments, a few (escapes, the inside of `{n,m}`'s first
digit) do not. Mirroring those reads one by one is what makes the positions, and the edge cases
of `(?x)`, come out as Java's.
"""

from __future__ import annotations

UNIX_LINES = 0x01
CASE_INSENSITIVE = 0x02
COMMENTS = 0x04
MULTILINE = 0x08
DOTALL = 0x20
UNICODE_CASE = 0x40
CANON_EQ = 0x80
UNICODE_CHARACTER_CLASS = 0x100

FLAG_LETTERS = {"i": CASE_INSENSITIVE, "d": UNIX_LINES, "m": MULTILINE, "s": DOTALL,
                "u": UNICODE_CASE, "c": CANON_EQ, "x": COMMENTS,
                "U": UNICODE_CHARACTER_CLASS | UNICODE_CASE}
_ASCII_SPACE = frozenset(map(ord, " \t\n\x0b\f\r"))
_LINE_ENDS = frozenset((0x0A, 0x0D, 0x85, 0x2028, 0x2029))


class Refused(Exception):
    """Java's PatternSyntaxException: its description and index."""

    def __init__(self, description: str, index: int) -> None:
        super().__init__(description)
        self.description = description
        self.index = index


class Undecided(Exception):
    """The pattern uses something trinogen does not model: only Java can tell (what, in words)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def is_digit(ch: int) -> bool:
    return 0x30 <= ch <= 0x39


def is_alpha(ch: int) -> bool:
    return 0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A


def is_hex(ch: int) -> bool:
    return is_digit(ch) or 0x41 <= ch <= 0x46 or 0x61 <= ch <= 0x66


class Cursor:
    """Java's temp[], cursor and flags0, with its peek/read/next/skip/unread."""

    def __init__(self, codepoints: list[int]) -> None:
        self.length = len(codepoints)
        self.temp = [*codepoints, 0, 0, 0, 0]
        self.cursor = 0
        self.flags = 0

    def at(self, i: int) -> int:
        return self.temp[i] if 0 <= i < len(self.temp) else 0

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)

    def error(self, description: str) -> Refused:
        return Refused(description, self.cursor - 1)

    def peek(self) -> int:
        ch = self.at(self.cursor)
        return self._peek_past_space(ch) if self.has(COMMENTS) else ch

    def read(self) -> int:
        ch = self.at(self.cursor)
        self.cursor += 1
        return self._parse_past_space(ch) if self.has(COMMENTS) else ch

    def next(self) -> int:
        self.cursor += 1
        return self.peek()

    def next_escaped(self) -> int:
        self.cursor += 1
        return self.at(self.cursor)

    def skip(self) -> int:
        ch = self.at(self.cursor + 1)
        self.cursor += 2
        return ch

    def unread(self) -> None:
        self.cursor -= 1

    def _line_end(self, ch: int) -> bool:
        return ch == 0x0A if self.has(UNIX_LINES) else ch in _LINE_ENDS

    def _peek_past_space(self, ch: int) -> int:
        while ch in _ASCII_SPACE or ch == 0x23:
            while ch in _ASCII_SPACE:
                self.cursor += 1
                ch = self.at(self.cursor)
            if ch == 0x23:  # a comment, up to the end of the line
                self.cursor += 1
                ch = self.at(self.cursor)
                while ch != 0 and not self._line_end(ch):
                    self.cursor += 1
                    ch = self.at(self.cursor)
        return ch

    def _parse_past_space(self, ch: int) -> int:
        while ch in _ASCII_SPACE or ch == 0x23:
            while ch in _ASCII_SPACE:
                ch = self.at(self.cursor)
                self.cursor += 1
            if ch == 0x23:
                ch = self.at(self.cursor)
                self.cursor += 1
                while ch != 0 and not self._line_end(ch):
                    ch = self.at(self.cursor)
                    self.cursor += 1
                if ch == 0 and self.cursor > self.length:
                    self.cursor = self.length
                    ch = self.at(self.cursor)
                    self.cursor += 1
        return ch
