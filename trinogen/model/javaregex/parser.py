"""The pattern grammar: alternatives, sequences, atoms, repetitions and groups, as Pattern.expr(),
sequence(), atom(), closure() and group0() read them."""

from __future__ import annotations

from dataclasses import dataclass

from trinogen.model.javaregex.classes import Classes
from trinogen.model.javaregex.cursor import CANON_EQ, FLAG_LETTERS, Undecided, is_alpha, is_digit
from trinogen.model.javaregex.study import (
    CHAR,
    MAX_REPS,
    ZERO,
    Info,
    Node,
    body_deterministic,
    study,
)

_BACKSLASH = 0x5C
_DANGLING = frozenset(map(ord, "?*+"))
_ENDS_ATOM = frozenset(map(ord, "$.^([|)"))
_QUANTIFIERS = frozenset(map(ord, "*+?{"))


@dataclass(frozen=True)
class Quantifier:
    """A repetition read after an atom: `?` (ques), `*`, `+`, `{n,}` (open) or `{n}`, `{n,m}`."""

    cmin: int
    cmax: int
    mode: str  # greedy, lazy or possessive
    ques: bool = False
    open: bool = False


def remove_quoting(cps: list[int]) -> list[int]:
    """Pattern.RemoveQEQuoting(): \\Q...\\E becomes escaped literals before parsing."""
    i = 0
    while i < len(cps) - 1 and not (cps[i] == _BACKSLASH and cps[i + 1] == 0x51):
        i += 2 if cps[i] == _BACKSLASH else 1
    if i >= len(cps) - 1:
        return cps
    out, i, quoted, begin = cps[:i], i + 2, True, True
    while i < len(cps):
        c = cps[i]
        if c == _BACKSLASH:
            i, quoted, begin = _quoting_backslash(cps, i + 1, quoted, out)
        else:
            out += _quoted(c, quoted, begin)
            i, begin = i + 1, False
    return out


def _quoted(c: int, quoted: bool, begin: bool) -> list[int]:
    """One character of the text around and in quotes, as Java rewrites it."""
    if c > 0x7F or is_alpha(c):
        return [c]
    if is_digit(c):  # first in a quote: \x3n, so it cannot continue an escape before the \Q
        return [_BACKSLASH, 0x78, 0x33, c] if begin else [c]
    return [_BACKSLASH, c] if quoted else [c]


def _quoting_backslash(cps: list[int], i: int, quoted: bool, out: list[int]
                       ) -> tuple[int, bool, bool]:
    """A backslash before cps[i]: \\E ends a quote, \\Q opens one, another escape is kept."""
    following = cps[i] if i < len(cps) else -1
    if quoted:
        if following == 0x45:
            return i + 1, False, False
        out += [_BACKSLASH, _BACKSLASH]
        return i, True, False
    if following == 0x51:
        return i + 1, True, True
    out += [_BACKSLASH, *cps[i:i + 1]]
    return i + 1, False, False


class Parser(Classes):
    """Parses a whole pattern; raises Refused (as Java would) or Undecided."""

    def __init__(self, pattern: str) -> None:
        super().__init__(remove_quoting([ord(c) for c in pattern]))
        self.group_count = 1  # Java's capturingGroupCount: groups so far, plus one
        self.group_names: set[str] = set()

    def parse(self) -> None:
        self.expr()
        if self.cursor != self.length:
            if self.peek() == 0x29:
                raise self.error("Unmatched closing ')'")
            if self.cursor > self.length and self.at(self.length - 1) == _BACKSLASH:
                # a lone backslash at the end escaped the terminator
                raise self.error("Unescaped trailing backslash")
            raise self.error("Unexpected internal error")

    def expr(self) -> tuple[Node, ...]:
        alternatives = [self.sequence()]
        while self.peek() == 0x7C:
            self.next()
            alternatives.append(self.sequence())
        if len(alternatives) == 1:
            return alternatives[0]
        return (Node("branch", alternatives=tuple(alternatives)),)

    def sequence(self) -> tuple[Node, ...]:
        nodes: list[Node] = []
        while True:
            ch = self.peek()
            if ch == 0x28:
                nodes.extend(self.group0())
                continue
            if ch in (0x7C, 0x29) or (ch == 0 and self.cursor >= self.length):
                return tuple(nodes)
            node = self._sequence_atom(ch)
            nodes.append(apply(node, self.closure()))

    def _sequence_atom(self, ch: int) -> Node:
        if ch == 0x5B:
            if self.has(CANON_EQ):
                raise Undecided("a class under canonical equivalence (?c)")
            self.clazz(True)
            return CHAR
        if ch == _BACKSLASH:
            if self.next_escaped() in (0x70, 0x50):
                self.property_escape()
                return CHAR
            self.unread()
            return self.atom()
        if ch in (0x5E, 0x24, 0x2E):  # ^ $ .
            self.next()
            return CHAR if ch == 0x2E else ZERO
        if ch in _DANGLING:
            self.next()
            raise self.error(f"Dangling meta character '{chr(ch)}'")
        return self.atom()

    def atom(self) -> Node:
        """A run of literal characters (a slice), or one escape that is not a character."""
        first, prev = 0, -1
        ch = self.peek()
        while ch not in _ENDS_ATOM and not (ch == 0 and self.cursor >= self.length):
            if ch in _QUANTIFIERS:
                if first > 1:  # the repetition takes the last character only
                    self.cursor, first = prev, first - 1
                break
            if ch == _BACKSLASH:
                escaped = self._atom_escape(first)
                if isinstance(escaped, Node):
                    return escaped
                if escaped < 0:
                    break
                prev = escaped
            else:
                prev = self.cursor
                self.next()
            first += 1
            ch = self.peek()
        return CHAR if first == 1 else Node("fixed", first)

    def _atom_escape(self, first: int) -> Node | int:
        """In a run: the escape's start (a character), -1 (it ends the run), or its node."""
        if self.next_escaped() in (0x70, 0x50):
            self.unread()
            if first > 0:
                return -1
            self.next_escaped()
            self.property_escape()
            return CHAR
        self.unread()
        start = self.cursor
        got = self.escape(False, first == 0, False)
        if not isinstance(got, Node):
            return start
        if first == 0:
            return got
        self.cursor = start  # parsed again, alone, after the run
        return -1

    def closure(self) -> Quantifier | None:
        ch = self.peek()
        if ch == 0x3F:
            return Quantifier(0, 1, self._mode(self.next()), ques=True)
        if ch in (0x2A, 0x2B):
            return Quantifier(0 if ch == 0x2A else 1, MAX_REPS, self._mode(self.next()), open=True)
        if ch == 0x7B:
            return self._counted()
        return None

    def _mode(self, ch: int) -> str:
        if ch in (0x3F, 0x2B):
            self.next()
            return "lazy" if ch == 0x3F else "possessive"
        return "greedy"

    def _counted(self) -> Quantifier:
        ch = self.at(self.cursor + 1)
        self.skip()
        if not is_digit(ch):
            raise self.error("Illegal repetition")
        cmin, ch = self._number(ch)
        cmax = cmin
        if ch == 0x2C:
            ch = self.read()
            if ch == 0x7D:
                self.unread()
                return Quantifier(cmin, MAX_REPS, self._mode(self.next()), open=True)
            cmax, ch = self._number(ch) if is_digit(ch) else (0, ch)
        if ch != 0x7D:
            raise self.error("Unclosed counted closure")
        if cmax < cmin:
            raise self.error("Illegal repetition range")
        return Quantifier(cmin, cmax, self._mode(self.peek()))

    def _number(self, ch: int) -> tuple[int, int]:
        """The digits from ch on (an int: over 2^31-1 is refused), and the character after."""
        value = 0
        while is_digit(ch):
            value = value * 10 + ch - 0x30
            if value > MAX_REPS:
                raise self.error("Illegal repetition range")
            ch = self.read()
        return value, ch

    def group0(self) -> tuple[Node, ...]:
        """A group and its repetition; nothing for flags alone, `(?i)`."""
        saved = self.flags
        if self.next() != 0x3F:
            self.group_count += 1
            return self._group_end(saved, Node("group", body=self.expr()), capturing=True)
        ch = self.skip()
        if ch == 0x3C:
            return self._angle(saved)
        if ch in (0x3A, 0x3D, 0x21, 0x3E):  # : = ! >
            body = self.expr()
            node = {0x3A: Node("group", body=body), 0x3E: Node("atomic", body=body)}.get(ch, ZERO)
            return self._group_end(saved, node, capturing=ch == 0x3A, single=ch != 0x3A)
        if ch in (0x24, 0x40):
            raise self.error("Unknown group type")
        self.unread()
        self.add_flags()
        ch = self.read()
        if ch == 0x29:
            return ()
        if ch != 0x3A:
            raise self.error("Unknown inline modifier")
        return self._group_end(saved, Node("group", body=self.expr()), capturing=True)

    def _angle(self, saved: int) -> tuple[Node, ...]:
        """After `(?<`: a look-behind or a named group."""
        ch = self.read()
        if ch not in (0x3D, 0x21):
            name = self.group_name(ch)
            if name in self.group_names:
                raise self.error(f"Named capturing group <{name}> is already defined")
            self.group_count += 1
            self.group_names.add(name)
            return self._group_end(saved, Node("group", body=self.expr()), capturing=True)
        body = self.expr()
        if not study(body, Info()).max_valid:
            raise self.error("Look-behind group does not have an obvious maximum length")
        return self._group_end(saved, ZERO, capturing=False, single=True)

    def _group_end(self, saved: int, node: Node, capturing: bool, single: bool = False
                   ) -> tuple[Node, ...]:
        """The closing `)` and a repetition of the group (capturing: any group with a body)."""
        if self.read() != 0x29:
            raise self.error("Unclosed group")
        self.flags = saved
        quantifier = self.closure()
        if quantifier is None or single:
            return (apply(node, quantifier),)
        if quantifier.ques:  # Java: a branch (the group or nothing), or a Ques if possessive
            if quantifier.mode == "possessive":
                return (Node("ques", body=(node,)),)
            return (Node("branch", alternatives=((node,), ())),)
        if quantifier.mode != "possessive" and not body_deterministic(node.body):
            return (Node("loop"),)
        return (Node("curly", body=(node,), cmin=quantifier.cmin, cmax=quantifier.cmax),)

    def add_flags(self) -> None:
        """Inline flags `i`, `x`... then after `-` the ones turned off."""
        ch = self.peek()
        while chr(ch) in FLAG_LETTERS:
            self.flags |= FLAG_LETTERS[chr(ch)]
            if ch == 0x63:  # (?c) canonical equivalence: not modelled
                raise Undecided("canonical equivalence (?c)")
            ch = self.next()
        if ch == 0x2D:
            ch = self.next()
            while chr(ch) in FLAG_LETTERS:
                self.flags &= ~FLAG_LETTERS[chr(ch)]
                ch = self.next()


def apply(node: Node, quantifier: Quantifier | None) -> Node:
    """The node repeated as the quantifier says (Java's node kinds differ in length checks)."""
    if quantifier is None:
        return node
    if quantifier.ques:
        return Node("ques", body=(node,))
    if quantifier.open and quantifier.mode == "greedy" and node is CHAR:
        return Node("greedy")
    return Node("curly", body=(node,), cmin=quantifier.cmin, cmax=quantifier.cmax)
