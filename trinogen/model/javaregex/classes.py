"""Character classes `[...]`, read as Pattern.clazz() and range() read them.

Java's class syntax has quirks the tests pin down: a `]` first in a class is a literal (`[]a]`),
`[` inside opens a nested class (so `[[a]` is unclosed), `&&` intersects (either side may be
empty, not both: `[&&]`), `[\\w-z]` is \\w, `-` and `z`, and a range must not end in a class
(`[a-\\w]`) nor go down (`[z-a]`).
"""

from __future__ import annotations

from trinogen.model.javaregex.escapes import Escapes
from trinogen.model.javaregex.properties import Properties
from trinogen.model.javaregex.study import Node

_BACKSLASH, _DASH, _OPEN, _CLOSE, _AMP, _CARET = 0x5C, 0x2D, 0x5B, 0x5D, 0x26, 0x5E


class Classes(Escapes, Properties):
    """clazz(consume) and range(): the cursor ends after the class (or on its `]`)."""

    def clazz(self, consume: bool) -> None:
        ch = self.next()
        if ch == _CARET and self.at(self.cursor - 1) == _OPEN:
            self.next()
        filled = False  # Java's "prev != null || hasBits": something is in the class
        while not self._member(filled, consume):
            filled = True

    def _member(self, filled: bool, consume: bool) -> bool:
        """One member at the cursor; True at the class's end (its `]`, taken if consume)."""
        ch = self.peek()
        if ch == _OPEN:
            self.clazz(True)
        elif ch == _AMP and self._intersection(filled):
            pass
        elif ch == 0 and self.cursor >= self.length:
            raise self.error("Unclosed character class")
        elif ch == _CLOSE and filled:
            if consume:
                self.next()
            return True
        else:
            self.range()
        return False

    def _intersection(self, filled: bool) -> bool:
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
        if not filled and not right:
            raise self.error("Bad class syntax")
        return True

    def range(self) -> None:
        """One member: a character, a range of them, an escape or a property."""
        ch = self.peek()
        if ch == _BACKSLASH:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):  # \p \P
                self.property_escape()
                return
            isrange = self.at(self.cursor + 1) == _DASH
            self.unread()
            first = self.escape(True, True, isrange)
            if isinstance(first, Node):
                return
            ch = first
        else:
            self.next()
        if self.peek() == _DASH:
            end = self.at(self.cursor + 1)
            if end not in (_OPEN, _CLOSE):
                self.next()
                last = self.escape(True, False, True) if self.peek() == _BACKSLASH else self._take()
                if isinstance(last, Node) or last < ch:
                    raise self.error("Illegal character range")

    def _take(self) -> int:
        ch = self.peek()
        self.next()
        return ch
