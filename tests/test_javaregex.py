"""trinogen.model.javaregex judges patterns as java.util.regex.Pattern does, without Java.

The expectations come from the real JDK: tests/java/RegexCheck.java compiles every pattern of the
corpus (tests/regex_corpus.py: at least 1,000, fixed and generated) with Pattern.compile, on the
JDK the real-Trino tests use (Java >= 24, as Trino 476 runs on), and prints Java's verdict, its
description and index. The table tests below hold the verdicts that JDK 25 gave for issue 19's
patterns, so they run without Java too.
"""

from __future__ import annotations

import subprocess

import pytest

from tests import trino_server as ts
from tests.conftest import ROOT, needs
from tests.regex_corpus import corpus
from trinogen.model import javaregex

CHECKER = ROOT / "tests" / "java" / "RegexCheck.java"
# Where trinogen leaves the verdict to Java (a warning), as a share of the corpus: at the last
# count 81 of 4,018 (2.0%), nearly all script or block names it does not list, \N{...} names
# Python's database cannot confirm, (?c) and nesting too deep to follow.
UNCHECKED_CEILING = 0.04

JAVA = needs(ts.java_available(),
             f"no Java >= {ts.MIN_JAVA} at {ts.JAVA_HOME} (the corpus is classified by the JDK "
             "Trino runs on; set TRINOGEN_TEST_JAVA_HOME)")


@pytest.fixture(scope="module")
def java_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, int, str]]:
    """Java's verdict per pattern: ("OK", -1, "") or ("ERROR", index, description)."""
    patterns = corpus()
    listing = tmp_path_factory.mktemp("regex") / "patterns.txt"
    listing.write_text("".join(p.encode("utf-8", "surrogatepass").hex() + "\n" for p in patterns))
    out = subprocess.run([str(ts.JAVA_HOME / "bin" / "java"), str(CHECKER), str(listing)],
                         capture_output=True, text=True, check=True, timeout=300)
    lines = out.stdout.split("\n")[:-1]
    assert len(lines) == len(patterns), out.stderr
    verdicts = {}
    for pattern, line in zip(patterns, lines, strict=True):
        outcome, index, description = (line.split("\t", 2) + ["-1", ""])[:3]
        verdicts[pattern] = (outcome, int(index), bytes.fromhex(description).decode("utf-8"))
    return verdicts


def test_corpus_has_a_thousand_patterns_and_the_issues() -> None:
    """The corpus is at least 1,000 distinct patterns, issue 19's and Trino's documentation's
    among them, the same on every run (a fixed seed)."""
    patterns = corpus()
    assert len(patterns) >= 1000
    assert len(set(patterns)) == len(patterns)
    assert {"x{2147483648}", "[[a]", "(?<=a+)b", "\\b{g}", "jdbc#(?<toolname>.*)",
            "([^/]+)(/.*)?@.*"} <= set(patterns)
    assert patterns == corpus()


@JAVA
def test_every_verdict_agrees_with_java(java_verdicts: dict[str, tuple[str, int, str]]) -> None:
    """No pattern Java refuses is OK in trinogen, none Java accepts is an error, and every
    refusal says what Java says, at Java's index."""
    wrong = []
    for pattern, (outcome, index, description) in java_verdicts.items():
        mine = javaregex.judge(pattern)
        if mine.outcome == javaregex.UNCHECKED:
            continue
        if outcome == "OK":
            if mine.outcome != javaregex.OK:
                wrong.append((pattern, "Java accepts", mine))
        elif (mine.outcome, mine.description, mine.index) != ("refused", description, index):
            wrong.append((pattern, f"Java: {description} near index {index}", mine))
    assert wrong == []


@JAVA
def test_corpus_has_both_verdicts_in_number(java_verdicts: dict[str, tuple[str, int, str]]
                                            ) -> None:
    """The corpus tests both directions: hundreds of patterns Java accepts and hundreds it
    refuses, look-behinds of both kinds among them."""
    refused = {p for p, (outcome, _, _) in java_verdicts.items() if outcome != "OK"}
    accepted = set(java_verdicts) - refused
    assert len(refused) >= 300 and len(accepted) >= 300
    behind = "Look-behind group does not have an obvious maximum length"
    assert sum(d == behind for _, _, d in java_verdicts.values()) >= 50
    assert sum("(?<" in p and p in accepted for p in java_verdicts) >= 50


def test_unchecked_share_stays_small() -> None:
    """trinogen leaves at most UNCHECKED_CEILING of the corpus to Java: it decides the rest."""
    patterns = corpus()
    unchecked = [p for p in patterns if javaregex.judge(p).outcome == javaregex.UNCHECKED]
    assert len(unchecked) <= UNCHECKED_CEILING * len(patterns), len(unchecked)


@pytest.mark.parametrize(("pattern", "description", "index"), [
    ("x{2147483648}", "Illegal repetition range", 11),
    ("\\0", "Illegal octal escape sequence", 2),
    ("(?a)x", "Unknown inline modifier", 2),
    ("(a)?(?(1)b|c)", "Unknown inline modifier", 6),
    ("\\U0001F600", "Illegal/unsupported escape sequence", 1),
    ("[[a]", "Unclosed character class", 3),
    ("${USER}", "Illegal repetition", 2),
    ("(?<=(ab)+)c", "Look-behind group does not have an obvious maximum length", 8),
    ("(?<=a{1,1073741824}a{1,1073741824})c",
     "Look-behind group does not have an obvious maximum length", 33),
    ("[a-\\w]", "Illegal character range", 4),
    ("\\p{Greek}", "Unknown character property name {Greek}", 8),
])
def test_java_refuses(pattern: str, description: str, index: int) -> None:
    """Patterns JDK 25 refuses are refused with its description and index."""
    assert javaregex.judge(pattern) == javaregex.Judgement("refused", description, index)
    assert javaregex.verdict(pattern).startswith(
        f"is not a valid Java regular expression: {description} near index {index}")


@pytest.mark.parametrize("pattern", [
    "(?<=a+)b", "\\8", "(a)\\2", "[\\w-z]", "\\b{g}", "^*", "(?<=a+b+)c", "x{2}{3}", "[]a]",
    "[&&a]", "(?x)a {2}", "\\Q(\\E", "jdbc#(?<toolname>.*)", "\\p{IsLatin}", "\\x{1F600}",
])
def test_java_accepts(pattern: str) -> None:
    """Patterns JDK 25 accepts are OK."""
    assert javaregex.verdict(pattern) == javaregex.OK


@pytest.mark.parametrize("pattern", [
    "\\p{IsNoSuchScript}", "\\p{InNoSuchBlock}", "\\N{LINE FEED (LF)}", "(?c)a",
    "(" * 400 + ")" * 400,
])
def test_what_only_java_can_tell_is_unchecked(pattern: str) -> None:
    """Names trinogen does not list, canonical equivalence and very deep nesting are left to
    Java (a warning), never refused: Java accepts some of them."""
    assert javaregex.verdict(pattern) == javaregex.UNCHECKED


def test_illegal_repetition_hints_at_the_escape() -> None:
    """A `{` that starts no repetition is explained with the way to write a literal one."""
    assert javaregex.verdict("a{,3}").endswith("write \\{ for a literal brace")

