"""How long a look-behind can be, computed as Pattern's TreeInfo computes it.

Java refuses a look-behind "that does not have an obvious maximum length". Its measure is not
the mathematical one: lengths are 32-bit ints that wrap, only counted repetitions check for
overflow (`a{1,2147483647}b{1,2147483647}` is refused, `a+b+` is not: a greedy `*`/`+` on one
character adds 2^31-1 without a check), and a repeated group whose body has a variable length
has no maximum at all. The nodes below are the kinds whose measure differs.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPS = 0x7FFFFFFF


def _wrap(n: int) -> int:
    """n as a Java int (two's complement, 32 bits)."""
    return (n + 2**31) % 2**32 - 2**31


@dataclass
class Info:
    """Java's TreeInfo: the maximum length, whether it is valid, whether it is fixed."""

    max_len: int = 0
    max_valid: bool = True
    deterministic: bool = True


@dataclass(frozen=True)
class Node:
    """One node of the compiled pattern, as far as its length goes.

    kind: "fixed" (adds `length`: a character, a slice, an assertion with 0), "open" (adds
    `length`, not fixed: \\R, \\X), "noref" (a back reference: no maximum), "greedy" (one
    character under a greedy `*`/`+`), "curly" (`body` repeated cmin..cmax, overflow checked),
    "loop" (a group repeated, its body of variable length: no maximum), "ques" (`body` or
    nothing), "branch" (one of `alternatives`), "group" (`body` in line), "atomic" (`(?>body)`).
    """

    kind: str
    length: int = 0
    body: tuple[Node, ...] = ()
    alternatives: tuple[tuple[Node, ...], ...] = ()
    cmin: int = 0
    cmax: int = 0


def study(nodes: tuple[Node, ...], info: Info) -> Info:
    """info after the nodes, in order (a group's body is in line, as Java chains it)."""
    flat = _flatten(nodes)
    for i, node in enumerate(flat):
        if node.kind == "branch":  # Java's Branch measures the rest of the chain itself
            _branch(node, info, flat[i + 1:])
            break
        _STUDY[node.kind](node, info)
    return info


def _flatten(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    out: list[Node] = []
    for node in nodes:
        out.extend(_flatten(node.body) if node.kind == "group" else (node,))
    return tuple(out)


def body_deterministic(nodes: tuple[Node, ...]) -> bool:
    """Whether a group's body has one fixed length (Java then repeats it as a GroupCurly)."""
    return study(nodes, Info()).deterministic


def _fixed(node: Node, info: Info) -> None:
    info.max_len = _wrap(info.max_len + node.length)


def _open(node: Node, info: Info) -> None:
    _fixed(node, info)
    info.deterministic = False


def _noref(node: Node, info: Info) -> None:
    info.max_valid = False


def _greedy(node: Node, info: Info) -> None:
    if info.max_valid:
        info.max_len = _wrap(info.max_len + MAX_REPS)
    info.deterministic = False


def _curly(node: Node, info: Info) -> None:
    inner = study(node.body, Info())
    before = info.max_len
    if info.max_valid and inner.max_valid:
        info.max_len = _wrap(before + _wrap(inner.max_len * node.cmax))
        if info.max_len < before:
            info.max_valid = False
    else:
        info.max_valid = False
    if not (inner.deterministic and node.cmin == node.cmax):
        info.deterministic = False


def _loop(node: Node, info: Info) -> None:
    info.max_valid = False
    info.deterministic = False


def _ques(node: Node, info: Info) -> None:
    """`x?`: x measured in the chain (its own repetitions checked against what came before)."""
    study(node.body, info)
    info.deterministic = False


def _branch(node: Node, info: Info, rest: tuple[Node, ...]) -> None:
    """The longest alternative plus the rest measured from zero, added without a check."""
    longest = -1
    for alternative in node.alternatives:
        inner = study(alternative, Info())
        longest = max(longest, inner.max_len)
        info.max_valid = info.max_valid and inner.max_valid
    after = study(rest, Info())
    info.max_len = _wrap(info.max_len + longest + after.max_len)
    info.max_valid = info.max_valid and after.max_valid
    info.deterministic = False


def _atomic(node: Node, info: Info) -> None:
    """(?>...): measured in the chain, but a branch inside ends at the group's end."""
    study(node.body, info)


_STUDY = {"fixed": _fixed, "open": _open, "noref": _noref, "greedy": _greedy, "curly": _curly,
          "loop": _loop, "ques": _ques, "atomic": _atomic}

CHAR = Node("fixed", 1)
ZERO = Node("fixed", 0)
