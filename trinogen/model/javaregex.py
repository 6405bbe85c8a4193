"""Is this text a regular expression Trino (java.util.regex) accepts? Pure, no Java needed.

Trino compiles every pattern of an access-rules file with `java.util.regex.Pattern` and refuses the
whole file on the first bad one. Python's `re` reads the common dialect the same way, with two
kinds of differences, both handled here:
- Python accepts what Java refuses: a `{` that does not start a repetition (`${USER}`, `a{,3}`:
  Java's "Illegal repetition") and the Python-only groups `(?P<name>...)`, `(?P=name)`, `(?#...)`
  ("Unknown inline modifier"). These are errors.
- Java accepts what Python refuses: `\\p{Alpha}`, `\\Q...\\E`, `(?<name>...)`, `\\h`, `\\R`,
  class intersections, a repetition of a repetition (`a*{2}`)... A pattern using them that Python cannot read is "unchecked": trinogen
  cannot tell, so it warns instead of refusing (a false refusal would block a valid document).
"""

from __future__ import annotations

import re
import warnings

# Java-only syntax: where Python fails on a pattern containing one of these, the verdict is open.
_JAVA_ONLY = re.compile(r"\\[pPQEhHRXeGzkcV]|\(\?<[A-Za-z]|&&|\(\?[a-zA-Z]*[dU]")
_PYTHON_ONLY_GROUP = re.compile(r"\(\?P[<=>]|\(\?#")
_REPETITION = re.compile(r"\{[0-9]+(,[0-9]*)?\}")

OK = "ok"
UNCHECKED = "unchecked"


def verdict(pattern: str) -> str:
    """OK, UNCHECKED (Java-only syntax trinogen cannot read), or what is wrong (an error)."""
    if _PYTHON_ONLY_GROUP.search(pattern):
        return "uses Python-only group syntax ((?P<...>, (?P=...), (?#...)); Java writes (?<name>...)"
    brace = _bad_brace(pattern)
    if brace is not None:
        return (f"has a '{{' at position {brace} that does not start a repetition {{n}}, "
                "{n,} or {n,m} (Java: Illegal repetition); write \\{ for a literal brace")
    try:
        with warnings.catch_warnings():  # FutureWarning on '&&' and '[[': Java syntax, judged below
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error as e:
        # Java reads a {n} repetition after another repetition (a*{2}, x{1}{2}); Python does not.
        stacked = e.msg == "multiple repeat" and e.pos is not None and pattern[e.pos:e.pos + 1] == "{"
        if stacked or _JAVA_ONLY.search(pattern):
            return UNCHECKED
        return f"is not a valid regular expression: {e.msg} at position {e.pos}"
    except (OverflowError, RecursionError):
        return "is not a valid regular expression: too large or too deeply nested"
    return OK


def _bad_brace(pattern: str) -> int | None:
    """The position of a `{` outside a character class that Java would not read as a repetition."""
    i, depth = 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i = _after_escape(pattern, i, depth)
            continue
        if ch == "{" and depth == 0 and not _REPETITION.match(pattern, i):
            return i
        i, depth = _class_step(pattern, i, depth)
        i += 1
    return None


def _after_escape(pattern: str, i: int, depth: int) -> int:
    """Where reading goes on after the escape at `i` (its braces are not repetitions)."""
    if pattern.startswith("\\Q", i):  # quoted up to \E: nothing inside is syntax
        end = pattern.find("\\E", i + 2)
        return len(pattern) if end < 0 else end + 2
    if depth == 0 and pattern[i + 1:i + 2] in ("p", "P", "N", "x") and pattern[i + 2:i + 3] == "{":
        end = pattern.find("}", i)  # \p{Alpha}, \N{name}, \x{h...h}: a brace of the escape
        return len(pattern) if end < 0 else end + 1
    return i + 2


def _class_step(pattern: str, i: int, depth: int) -> tuple[int, int]:
    """The position and class depth after the character at `i` opens or closes a class."""
    ch = pattern[i]
    if ch == "[":
        depth += 1
        if pattern[i + 1:i + 2] == "^":
            i += 1
        if pattern[i + 1:i + 2] == "]":  # a leading ']' is literal in both dialects
            i += 1
    elif ch == "]" and depth:
        depth -= 1
    return i, depth
