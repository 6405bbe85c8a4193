"""Is this text a regular expression Trino (java.util.regex) accepts? Pure, no Java needed.

Trino compiles every pattern of an access-rules file with `java.util.regex.Pattern` (Java 24+)
and refuses the whole file on the first bad one. This package reads a pattern the way Pattern
does, step by step (parser.py, classes.py, escapes.py, properties.py), measures look-behinds the
way Java measures them (study.py), and answers with Java's own description and index. What it
does not model (a script or block name it does not list, a `\\N{...}` name Python's database
cannot confirm, canonical equivalence `(?c)`, nesting too deep to follow) is UNCHECKED: Trino
decides it when it loads the rules. The corpus test (tests/test_javaregex.py) compares every
verdict with the real JDK's.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinogen.model.javaregex.cursor import Refused, Undecided
from trinogen.model.javaregex.parser import Parser

OK = "ok"
UNCHECKED = "unchecked"


@dataclass(frozen=True)
class Judgement:
    """OK; UNCHECKED with what only Java can judge; or refused with Java's description and index
    (in the pattern after \\Q...\\E quoting is expanded, as Java counts)."""

    outcome: str
    description: str = ""
    index: int = -1


def judge(pattern: str) -> Judgement:
    """What java.util.regex.Pattern.compile(pattern) would do, where trinogen can tell."""
    try:
        Parser(pattern).parse()
    except Refused as e:
        return Judgement("refused", e.description, e.index)
    except Undecided as e:
        return Judgement(UNCHECKED, e.what)
    except RecursionError:
        return Judgement(UNCHECKED, "groups or classes nested too deep to follow")
    return Judgement(OK)


def verdict(pattern: str) -> str:
    """OK, UNCHECKED (only Java can tell), or what Java would say is wrong (an error)."""
    j = judge(pattern)
    return j.outcome if j.outcome != "refused" else explain(j, pattern)


def explain(j: Judgement, pattern: str) -> str:
    """A refusal as a sentence: Java's own words and index, and a hint where one helps."""
    hint = ""
    if j.description == "Illegal repetition":
        hint = "; write \\{ for a literal brace"
    elif j.description == "Unknown inline modifier" and ("(?P" in pattern or "(?#" in pattern):
        hint = "; (?P<name>...), (?P=name) and (?#...) are Python's: Java writes (?<name>...)"
    return f"is not a valid Java regular expression: {j.description} near index {j.index}{hint}"
