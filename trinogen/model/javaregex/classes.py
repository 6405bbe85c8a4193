"""Character classes `[...]`, read as Pattern.clazz() and range() read them.

Java's class syntax has quirks the tests pin down: a `]` first in a class is a literal (`[]a]`),
`[` inside opens a nested class (so `[[a]` is unclosed), `&&` intersects (either side may be
empty, not both: `[&&]`), `[\\w-z]` is \\w, `-` and `z`, and a range must not end in a class
(`[a-\\w]`) nor go down (`[z-a]`).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinogen.model.javaregex.cursor import CASE_INSENSITIVE, UNICODE_CASE
from trinogen.model.javaregex.escapes import Escapes
from trinogen.model.javaregex.properties import Properties
from trinogen.model.javaregex.study import Node

_BACKSLASH, _DASH, _OPEN, _CLOSE, _AMP, _CARET = 0x5C, 0x2D, 0x5B, 0x5D, 0x26, 0x5E
# Latin-1 characters whose case partner lies outside Latin-1 (or is the Kelvin or Angstrom sign)
_FOLDS_OUT = frozenset((0xFF, 0xB5, 0x49, 0x69, 0x53, 0x73, 0x4B, 0x6B, 0xC5, 0xE5))


@dataclass
class _Members:
    """What Java's clazz() holds: a union so far (prev), characters in its bit set (hasBits),
    and whether the last member is a predicate of its own (curr: a nested class, a range, an
    escape such as \\w, a property, a character above U+00FF), not only bits."""

    prev: bool = False
    bits: bool = False
    curr: bool = False

    def add(self, predicate: bool) -> None:
        """A member read by range(): a predicate of its own, or a character in the bits."""
        self.curr = predicate
        self.bits = self.bits or not predicate
        self.prev = self.prev or predicate

    def intersect(self, right: bool) -> str:
        """After `&&` and its right side (if any): what Java refuses, or ""."""
        if self.bits:  # the bits join the union first
            self.curr = self.curr or not self.prev
            self.prev, self.bits = True, False
        self.curr = self.curr or right
        if not self.prev and not right:
            return "Bad class syntax"
        if self.prev and not self.curr:
            return "Bad intersection syntax"
        self.prev = True
        return ""


class Classes(Escapes, Properties):
    """clazz(consume) and range(): the cursor ends after the class (or on its `]`)."""

    def clazz(self, consume: bool) -> None:
        ch = self.next()
        if ch == _CARET and self.at(self.cursor - 1) == _OPEN:
            self.next()
        members = _Members()
        while not self._member(members, consume):
            pass

    def _member(self, members: _Members, consume: bool) -> bool:
        """One member at the cursor; True at the class's end (its `]`, taken if consume)."""
        ch = self.peek()
        if ch == _OPEN:
            self.clazz(True)
            members.prev = members.curr = True
        elif ch == _AMP and self._intersection(members):
            pass
        elif ch == 0 and self.cursor >= self.length:
            raise self.error("Unclosed character class")
        elif ch == _CLOSE and (members.prev or members.bits):
            if consume:
                self.next()
            return True
        else:
            members.add(self.range())
        return False

    def _intersection(self, members: _Members) -> bool:
        """At `&`: read `&&` and its right side (True), or leave a lone `&` a literal (False)."""
        if self.next() != _AMP:
            self.unread()
            return False
        ch = self.next()
        right = False
        while ch not in (_CLOSE, _AMP):
            if ch == _OPEN:
                self.clazz(True)
            else:
                self.unread()
                self.clazz(False)
            right = True
            ch = self.peek()
        problem = members.intersect(right)
        if problem:
            raise self.error(problem)
        return True

    def range(self) -> bool:
        """One member: a character, a range of them, an escape or a property; whether it is a
        predicate of its own (False: a character Java keeps in the class's bit set)."""
        ch = self.peek()
        if ch == _BACKSLASH:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):  # \p \P
                self.property_escape()
                return True
            isrange = self.at(self.cursor + 1) == _DASH
            self.unread()
            first = self.escape(True, True, isrange)
            if isinstance(first, Node):
                return True
            ch = first
        else:
            self.next()
        if self.peek() == _DASH and self.at(self.cursor + 1) not in (_OPEN, _CLOSE):
            self.next()
            last = self.escape(True, False, True) if self.peek() == _BACKSLASH else self._take()
            if isinstance(last, Node) or last < ch:
                raise self.error("Illegal character range")
            return True
        return not self._in_bits(ch)

    def _in_bits(self, ch: int) -> bool:
        """Java's bitsOrSingle(): below U+0100 a character joins the bit set, unless case
        folding under (?iu) takes it out of Latin-1."""
        folding = self.has(CASE_INSENSITIVE) and self.has(UNICODE_CASE)
        return ch < 256 and not (folding and ch in _FOLDS_OUT)

    def _take(self) -> int:
        ch = self.peek()
        self.next()
        return ch
