"""A reader of java.util.Properties text, written from the Javadoc of Properties.load(Reader).

Independent of trinogen's writer, so round-trip tests compare two implementations.
"""

from __future__ import annotations

import re

_JAVA_WS = " \t\f"


def pairs(text: str) -> list[tuple[str, str]]:
    """Properties.load(Reader) semantics, as (key, value) pairs in file order (duplicates kept)."""
    natural = re.split(r"\r\n|\r|\n", text)
    pairs = []
    i = 0
    while i < len(natural):
        line = natural[i].lstrip(_JAVA_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        logical = ""
        while True:
            backslashes = len(line) - len(line.rstrip("\\"))
            if backslashes % 2 == 1 and i <= len(natural):
                logical += line[:-1]
                if i == len(natural):
                    break
                line = natural[i].lstrip(_JAVA_WS)
                i += 1
                continue
            logical += line
            break
        pairs.append(_key_value(logical))
    return pairs


def _key_value(line: str) -> tuple[str, str]:
    pos, n = 0, len(line)
    while pos < n:
        ch = line[pos]
        if ch == "\\":
            pos += 2
            continue
        if ch in "=:" or ch in _JAVA_WS:
            break
        pos += 1
    key = line[:pos]
    rest = line[pos:]
    stripped = rest.lstrip(_JAVA_WS)
    if stripped[:1] in ("=", ":"):
        stripped = stripped[1:].lstrip(_JAVA_WS)
    return _unescape(key), _unescape(stripped)


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch if ch != "\\" else "")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u":
            digits = text[i + 2 : i + 6]
            if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                raise ValueError(f"malformed \\uxxxx encoding in {text!r}")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(nxt, nxt))
        i += 2
    # Java strings are UTF-16: join surrogate pairs written as two \\u escapes
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def loads(text: str) -> dict[str, str]:
    """The properties as a dict (a later duplicate key wins, as in Java)."""
    return dict(pairs(text))
