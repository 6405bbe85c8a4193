"""A reader of java.util.Properties text, written from the Javadoc of Properties.load(Reader).

Independent of trinogen's writer, so round-trip tests compare two implementations.
"""

from __future__ import annotations

_WS = " \t\f"


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending: str | None = None
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.lstrip(_WS)  # leading blanks are skipped, on continuation lines too
        if pending is None and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        continued = trailing % 2 == 1
        if continued:
            line = line[:-1]
        pending = (pending or "") + line
        if not continued:
            lines.append(pending)
            pending = None
    if pending is not None:
        lines.append(pending)
    return lines


def _unescape(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= len(s):
            break
        c = s[i]
        if c == "u":
            code = int(s[i + 1 : i + 5], 16)
            out.append(chr(code))
            i += 5
            continue
        out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c))
        i += 1
    text = "".join(out)
    # Java strings are UTF-16: join surrogate pairs written as two \\u escapes
    return text.encode("utf-16", "surrogatepass").decode("utf-16")


def loads(text: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        i = 0
        key_end = len(line)
        while i < len(line):
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=:" or c in _WS:
                key_end = i
                break
            i += 1
        key = line[:key_end]
        rest = line[key_end:]
        rest = rest.lstrip(_WS)
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(_WS)
        result[_unescape(key)] = _unescape(rest)
    return result
