"""The regular-expression corpus the JDK classifies (tests/test_javaregex.py): the fixed patterns
of tests/regex_corpus.json (issue 19's, Trino's documentation's, hand-picked edge cases) and
generated ones, from a fixed seed so every run judges the same patterns.

The generator builds patterns from Java's syntax, part by part (escapes, classes and nested
classes, intersections, quantifiers and bounds near 2^31, inline flags, look-behinds of bounded
and unbounded length, back references to missing and existing groups, named groups, property
names, quoting, Unicode escapes, boundaries, possessive and lazy repetitions), then mutates some
of them (a character dropped, doubled or inserted) to reach the errors around each part.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from trinogen.model.javaregex.properties import listed

FIXED = Path(__file__).with_name("regex_corpus.json")
SEED = 19
GENERATED = 2000

_LITERALS = ["a", "b", "xy", "_", "-", "0", "9", "é", "\U0001F600", " ", "#", ",", "}", "]", "&",
             "=", "<", "!", ":", "%"]
_ESCAPES = [
    "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\h", "\\H", "\\v", "\\V", "\\R", "\\X", "\\b",
    "\\B", "\\A", "\\G", "\\z", "\\Z", "\\b{g}", "\\b{x}", "\\B{g}", "\\t", "\\n", "\\r", "\\f",
    "\\a", "\\e", "\\0", "\\00", "\\07", "\\077", "\\0377", "\\0400", "\\08", "\\x41", "\\x4",
    "\\xG", "\\x{1F600}", "\\x{110000}", "\\x{}", "\\x{41", "\\u0041", "\\u004", "\\uD83D\\uDE00",
    "\\uD83D", "\\cA", "\\c", "\\c?", "\\N{LATIN SMALL LETTER A}", "\\N{latin small letter b}",
    "\\N{NO SUCH NAME}", "\\N{}", "\\N{SPACE", "\\Na", "\\U0001F600", "\\y", "\\i", "\\E",
    "\\Q.*\\E", "\\Qa\\E", "\\Q", "\\Q\\E", "\\Q1\\E", "\\.", "\\\\", "\\{", "\\}", "\\[", "\\]",
    "\\(", "\\)", "\\-", "\\_", "\\ ", "\\k<n>", "\\k<m>", "\\kn", "\\k<1>", "\\1", "\\2", "\\9",
    "\\10", "\\C", "\\g", "\\o", "\\$", "\\é",
]
_PROPERTIES = [
    "L", "Lu", "Ll", "LC", "L1", "LD", "Nd", "P", "all", "Alpha", "Lower", "Upper", "ASCII",
    "Punct", "XDigit", "Space", "javaLowerCase", "javaMirrored", "javaEmoji", "IsAlphabetic",
    "IsLatin", "IsLatn", "IsGreek", "IsHan", "IsL", "IsLu", "IsWhite_Space", "IsEmoji", "IsWord",
    "Isalpha", "IsPunct", "InBasicLatin", "InBasic Latin", "InBASIC_LATIN", "InGreek",
    "InGreekandCoptic", "InGreek_and_Coptic", "InLatin-1 Supplement", "InLatin_1_Supplement",
    "InCJKUnifiedIdeographs", "InEmoticons", "InNoSuchBlock", "IsNoSuchScript", "sc=Latin",
    "script=Cyrl", "sc=Nope", "blk=BasicLatin", "block=Arrows", "blk=Nope", "gc=Lu", "gc=lu",
    "general_category=L", "GC=Nd", "x=y", "=", "Greek", "Latin", "lower", "alpha", "Foo", "", "L}",
    "IsAscii", "Isascii", "Is", "In",
]
_CLASSES = [
    "[a]", "[^a]", "[]a]", "[^]a]", "[]", "[^]", "[a-z]", "[z-a]", "[a-]", "[-a]", "[--a]", "[a--]",
    "[\\w-z]", "[a-\\w]", "[\\d-\\w]", "[a-\\v]", "[\\v-a]", "[a-z&&[^b]]", "[a&&b]", "[&&a]",
    "[a&&]", "[&&]", "[a&&&&b]", "[a&b]", "[[a]", "[a[b]]", "[[a][b]]", "[a[b]", "[[]]", "[\\[]",
    "[\\]]", "[\\Q]\\E]", "[\\p{L}]", "[\\P{Lu}a]", "[\\pL]", "[a-\\p{L}]", "[\\x{41}-\\x{5A}]",
    "[\\x41-\\x40]", "[\\0101-\\0132]", "[\\u0041-\\u005A]", "[\\cA-\\cZ]", "[\\N{SPACE}]", "[\\1]",
    "[\\b]", "[\\R]", "[\\X]", "[\\k<n>]", "[\\A]", "[\\Z]", "[a-&]", "[a-&&b]", "[a-[b]]",
    "[^-]", "[$^.*+?(){}|]", "[\\e\\a]", "[é-ü]", "[\\U]", "[a\\]", "[a[b]&&]", "[[b]a&&]",
    "[[b]a&&c]", "[\\wa&&]", "[a\\w&&]", "[[b]é&&]", "[[b]K&&]", "[a&&b&&]",
]
_QUANTIFIERS = [
    "*", "+", "?", "*?", "+?", "??", "*+", "++", "?+", "{0}", "{1}", "{2}", "{2,}", "{2,5}",
    "{5,2}", "{,3}", "{", "{x}", "{2", "{2,", "{2,3", "{ 2}", "{2 }", "{2147483647}",
    "{2147483648}", "{0,2147483647}", "{0,2147483648}", "{1073741823}", "{1073741824}",
    "{715827882}", "{715827883}", "{99999999999}", "**", "+*", "?*", "{2}*", "{2}{3}", "*{2}",
    "{2}?", "{2}+", "{2}+?",
]
_FLAGS = ["(?i)", "(?x)", "(?u)", "(?s)", "(?m)", "(?d)", "(?U)", "(?-i)", "(?i-s)", "(?ix)",
          "(?a)", "(?", "(?-)", "(?)", "(?--i)", "(?i:", "(?x:", "(?-x:", "(?P<", "(?#"]
_GROUP_OPENERS = ["(", "(?:", "(?=", "(?!", "(?>", "(?<=", "(?<!", "(?<n>", "(?<m>", "(?<n1>",
                  "(?<1n>", "(?<n_x>", "(?<>", "(?<n", "(?(1)", "(?$", "(?@", "(?i:", "(?x:"]
_META = list("()[]{}*+?|^$.\\&-,")


def _atom(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(_LITERALS)
    if roll < 0.45:
        return rng.choice(_ESCAPES)
    if roll < 0.55:
        return f"\\{rng.choice('pP')}{{{rng.choice(_PROPERTIES)}}}" if rng.random() < 0.85 \
            else f"\\{rng.choice('pP')}{rng.choice('LNXZ')}"
    if roll < 0.68:
        return rng.choice(_CLASSES)
    if roll < 0.72:
        return rng.choice(["^", "$", "."])
    if roll < 0.76:
        return rng.choice(_FLAGS)
    if depth < 3:
        return _group(rng, depth + 1)
    return rng.choice(_LITERALS)


def _group(rng: random.Random, depth: int) -> str:
    body = _sequence(rng, depth, rng.randint(0, 3))
    if rng.random() < 0.2:
        body += "|" + _sequence(rng, depth, rng.randint(0, 2))
    return rng.choice(_GROUP_OPENERS) + body + (")" if rng.random() < 0.95 else "")


def _sequence(rng: random.Random, depth: int, length: int) -> str:
    parts = []
    for _ in range(length):
        part = _atom(rng, depth)
        if rng.random() < 0.35:
            part += rng.choice(_QUANTIFIERS)
        parts.append(part)
    return "".join(parts)


def _lookbehind(rng: random.Random) -> str:
    """A look-behind of a body built from the parts whose lengths Java measures differently."""
    pieces = ["a", "ab", "[ab]", ".", "\\w", "\\R", "\\X", "\\b", "(?:ab)", "(ab)", "(a|bc)",
              "(?:a|b)", "(?>ab)", "(?=ab)", "\\1", "\\k<n>", "\\Qab\\E", "(?<n>a)", "(?i)a",
              "\\x{1F600}", "(?:a+)", "(a?)", "(?:)", "(?:a|bc)", "(a|b)?", "(?:ab)?", "(?:ab)?+",
              "(?:a{2})", "a|b", "(?:(?:a|b)c)", "(?:a(?:b|c)d)", "(?>a|bc)", "(?>(?:a|b)c)",
              "(?=a|bc)"]
    body = ""
    for _ in range(rng.randint(1, 4)):
        body += rng.choice(pieces)
        if rng.random() < 0.6:
            body += rng.choice(["*", "+", "?", "*?", "++", "{2}", "{2,}", "{0,3}", "{1,1073741823}",
                                "{1,1073741824}", "{2147483647}", "{1,2147483647}", "{715827883}",
                                "{1000000000}", "{1073741823,}", "{0,715827882}"])
    return rng.choice(["(?<=", "(?<!"]) + body + ")" + rng.choice(["x", "", "(?<n>y)"])


def _mutate(rng: random.Random, pattern: str) -> str:
    if not pattern:
        return rng.choice(_META)
    i = rng.randrange(len(pattern) + 1)
    roll = rng.random()
    if roll < 0.4:
        return pattern[:i] + pattern[i + 1:]
    if roll < 0.7:
        return pattern[:i] + rng.choice(_META) + pattern[i:]
    return pattern[:i] + pattern[i:i + 1] * 2 + pattern[i + 1:]


def generated() -> list[str]:
    """GENERATED patterns from SEED: a third mutated, a sixth look-behinds."""
    rng = random.Random(SEED)
    out: list[str] = []
    while len(out) < GENERATED:
        roll = rng.random()
        if roll < 0.25:
            pattern = _lookbehind(rng)
        else:
            pattern = _sequence(rng, 0, rng.randint(1, 4))
        if rng.random() < 0.33:
            pattern = _mutate(rng, pattern)
        out.append(pattern)
    return out


def corpus() -> list[str]:
    """Every pattern, each once: the fixed ones, every property name trinogen lists (Java must
    confirm each), the generated ones."""
    fixed = [p for section in json.loads(FIXED.read_text(encoding="utf-8")).values()
             for p in section]
    names = [f"\\p{{{name}}}" for name in listed()] + ["(?U)\\p{" + n.lower() + "}" for n in listed()]
    return list(dict.fromkeys([*fixed, *names, *generated()]))
