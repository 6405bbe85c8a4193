"""The validation toolkit: typed reads of untrusted values that record every problem on the way.

A `Checker` collects the problems of one document; each read (`string`, `integer`, `mapping`...)
returns the value when it is acceptable and None otherwise, so a walker carries on and reports
everything at once. Messages name types the way a document author sees them (BSON included).

What one document may cost is bounded (issue 19): the first `max_problems` problems (and as many
warnings) are kept, later ones only counted, and the walk stops (`Saturated`) once
`STOP_FACTOR` times as many are found, so a document of 300,000 mistakes costs what 5,000 do.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from trinogen.errors import Problem
from trinogen.model.rules import (
    MAX_INT,
    MAX_PROPERTY_KEY,
    MAX_STRING,
    PROPERTY_KEY,
    RESERVED_FIELDS,
)

T = TypeVar("T")

# Documents are dicts (pymongo, mongomock, JSON, YAML all give dict or a subclass); checking dict
# first spares the abstract-base-class machinery on every field of every document.
MAPS = (dict, Mapping)

# Problems (and warnings) listed per document, unless validation.max_problems says otherwise.
MAX_PROBLEMS = 50
# The walk stops once this many times max_problems problems are found: beyond it, counting them
# would cost what listing them did (a message and a field path each).
STOP_FACTOR = 100

_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# bson types by class name (trinogen does not import bson here: the model stays dependency-free)
_BSON_NAMES = {"datetime": "a date", "ObjectId": "an ObjectId", "Binary": "binary data",
               "Code": "JavaScript code"}
_PLAIN_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),  # before int: a bool is an int to Python
    (int, "an integer"),
    (float, "a number"),
)


def type_name(value: Any) -> str:
    """How a value's type is named in messages, BSON types included."""
    if value is None:
        return "null"
    for kind, name in _PLAIN_NAMES:
        if isinstance(value, kind):
            return name
    if type(value) is str:  # bson's Code is a str subclass, but not text
        return "a string"
    if isinstance(value, MAPS):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (bytes, bytearray)):
        return "binary data"
    name = type(value).__name__
    return _BSON_NAMES.get(name, name)


def field_path(base: str, *parts: str | int) -> str:
    """Extend a field path: `.key` for simple keys, `["odd.key"]` for the rest, `[n]` for indexes."""
    out = base
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        step = _key_step(part) if len(part) <= 80 else _odd_key(part)
        out = step[1:] if not out and step[0] == "." else out + step
    return out


@functools.lru_cache(maxsize=4096)
def _key_step(key: str) -> str:
    """How a short key extends a path (property names repeat in every document: cached)."""
    return f".{key}" if _SIMPLE_KEY.fullmatch(key) else _odd_key(key)


def _odd_key(key: str) -> str:
    # odd or huge keys (a 10 MB key must not become a 10 MB message)
    return f"[{json.dumps(key[:60])}{'...' if len(key) > 60 else ''}]"


def show(value: Any) -> str:
    """A value for a message: repr-like, single line, truncated."""
    text = json.dumps(value) if isinstance(value, str) else type_name(value)
    return text if len(text) <= 70 else text[:60] + "...(" + str(len(text)) + " chars)"


def show_number(value: Any) -> str:
    """A number for a message (NaN and infinities named as such)."""
    if isinstance(value, float):
        return "NaN/Infinity" if not math.isfinite(value) else repr(value)
    return show(value)


def text_ok(text: str) -> bool:
    """No line breaks, NUL or lone surrogates: such text cannot be a Trino property."""
    if "\n" in text or "\r" in text or "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


PROPERTY_KEY_RULE = "property names may not be empty or contain spaces or control characters"


def property_key_ok(key: str) -> bool:
    """The one rule for a property name (server, catalog, shared catalog): a line of a
    properties file can hold it as its key (PROPERTY_KEY_RULE says what is refused)."""
    return len(key) <= MAX_PROPERTY_KEY and PROPERTY_KEY.fullmatch(key) is not None and text_ok(key)


def closest(key: str, known: Iterable[str]) -> str | None:
    """The known name a misspelt key most likely meant, if one is close enough."""
    import difflib

    if len(key) > 100:  # no field name is that long; difflib would take seconds on a huge key
        return None
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    return match[0] if match else None


def capped(problems: Sequence[Problem], limit: int) -> tuple[Problem, ...]:
    """The first `limit` problems of a list made elsewhere (the secrets stage), and one more
    saying how many were left out."""
    if len(problems) <= limit:
        return tuple(problems)
    return (*problems[:limit], _more(problems[0].cluster, len(problems) - limit, limit, False))


def _more(label: str, more: int, limit: int, stopped: bool) -> Problem:
    what = (f"at least {more:,} more problems: validation stopped there" if stopped
            else f"{more:,} more problems")
    return Problem(label, "", f"... and {what} (at most {limit} are listed per document: "
                   "validation.max_problems); fix these and validate again")


class Saturated(Exception):
    """A document gave enough problems: its walk stops here (`Checker.run` catches it)."""


class Checker:
    """Collects problems (and warnings) for one document, keeping at most `max_problems` of each."""

    def __init__(self, label: str, unknown_fields: str, max_problems: int = MAX_PROBLEMS) -> None:
        self.label = label
        self.unknown_fields = unknown_fields
        self.limit = max_problems
        self.problems: list[Problem] = []  # the first `limit` (distinct) problems
        self.warnings: list[Problem] = []
        self.count = 0  # distinct problems found, listed or not
        self.warned = 0
        self.stopped = False  # the walk stopped at limit * STOP_FACTOR problems
        self._seen: set[Problem] = set()  # bounded: at most limit * STOP_FACTOR entries
        # With tenants declared: may this document pick (kind, name) at path? (model.tenancy)
        self.allowed: Callable[[str, str, str], bool] | None = None

    @property
    def full(self) -> bool:
        """No more problems are listed: spare work that only a message would use (a hint)."""
        return self.count >= self.limit

    def error(self, path: str, message: str) -> None:
        problem = Problem(self.label, path, message)
        if problem in self._seen:
            return
        self._seen.add(problem)
        self.count += 1
        if self.count <= self.limit:
            self.problems.append(problem)
        elif self.count >= self.limit * STOP_FACTOR:
            self.stopped = True
            raise Saturated

    def warn(self, path: str, message: str) -> None:
        self.warned += 1
        if self.warned <= self.limit:
            self.warnings.append(Problem(self.label, path, message))

    def run(self, walk: Callable[[], T]) -> T | None:
        """`walk()`, or None when it stopped because the document gave too many problems."""
        try:
            return walk()
        except Saturated:
            return None

    def listed(self) -> tuple[Problem, ...]:
        """The problems kept, and one more saying how many were not listed."""
        more = self.count - len(self.problems)
        if more <= 0:
            return tuple(self.problems)
        return (*self.problems, _more(self.label, more, self.limit, self.stopped))

    def listed_warnings(self) -> tuple[Problem, ...]:
        more = self.warned - len(self.warnings)
        if more <= 0:
            return tuple(self.warnings)
        return (*self.warnings, Problem(self.label, "", f"... and {more:,} more warnings (at most "
                                        f"{self.limit} are listed per document: "
                                        "validation.max_problems)"))

    def _absent(self, path: str, required: bool) -> None:
        if required:
            self.error(path, "is required")

    def mapping(self, value: Any, path: str, *, required: bool = True) -> Mapping[str, Any] | None:
        if value is None:
            self._absent(path, required)
            return None
        if not isinstance(value, MAPS):
            self.error(path, f"must be an object, not {type_name(value)}")
            return None
        for key in value:  # a plain loop: this runs for every object of every document
            if not isinstance(key, str):
                self.error(path, "has keys that are not strings")
                return None
        return value

    def fields(self, obj: Mapping[str, Any], path: str, known: Iterable[str]) -> None:
        """Report every key of `obj` that is not `known`: reserved, misspelt or unknown."""
        known = set(known)
        for key in obj:
            if key not in known:
                self._unknown(key, field_path(path, key), known)

    def _unknown(self, key: str, where: str, known: set[str]) -> None:
        if key in RESERVED_FIELDS:
            self.error(where, f"may not be set: {RESERVED_FIELDS[key]}")
            return
        warn = self.unknown_fields == "warn"
        listed = self.warned < self.limit if warn else not self.full
        hint = closest(key, known) if listed else None
        msg = (f"unknown field{f' (did you mean {hint}?)' if hint else ''}; remove it or "
               "correct its name")
        if warn:
            self.warn(where, msg + "; ignored")
        else:
            self.error(where, msg)

    def string(
        self, value: Any, path: str, *, required: bool = True, pattern: re.Pattern[str] | None = None,
        rule: str = "", max_len: int = MAX_STRING,
    ) -> str | None:
        if value is None:
            self._absent(path, required)
            return None
        if type(value) is not str:  # not even a str subclass such as bson's Code
            self.error(path, f"must be a string, not {type_name(value)}")
        elif not text_ok(value):
            self.error(path, "contains a newline, carriage return, NUL or invalid unicode")
        elif len(value) > max_len:
            self.error(path, f"is {len(value)} characters long; at most {max_len} are allowed")
        elif pattern is not None and not pattern.fullmatch(value):
            self.error(path, f"{show(value)} is not valid: {rule}")
        else:
            return value
        return None

    def entries(self, value: Any, path: str, limit: int, why: str = "") -> list[Any] | None:
        """A list of at most `limit` entries ([] when absent); None when unusable (reported).

        `why` follows the limit in the message (the object the entries share, say)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, f"must be a list, not {type_name(value)}")
            return None
        if len(value) > limit:
            self.error(path, f"has {len(value)} entries; at most {limit} are allowed{why}")
            return None
        return value

    def pick(self, value: Any, path: str, options: Mapping[str, Any], kind: str, *,
             required: bool = False) -> Any | None:
        """The named option a document chose (`"storage": "lake-eu"`), or None (reported).

        `options` is `settings.options(kind)`: the platform names what a document may pick.
        """
        name = self.string(value, path, required=required, max_len=63)
        if name is None:
            return None
        # With tenants declared, first the tenant's list (model.tenancy): a name outside it is
        # refused without telling whether another tenant has such an option.
        if self.allowed is not None and not self.allowed(kind, name, path):
            return None
        if name not in options:
            hint = closest(name, options)
            known = ", ".join(sorted(options)) or "the settings offer none"
            article = "an" if kind and kind[0] in "aeiou" else "a"  # an exchange, an ingress
            self.error(path, f"{show(name)} is not {article} {kind} option of these settings"
                       f"{f' (did you mean {hint}?)' if hint else ''}; known: {known}")
            return None
        return options[name]

    def integer(
        self, value: Any, path: str, *, required: bool = True, minimum: int | None = None,
        maximum: int | None = None,
    ) -> int | None:
        if value is None:
            self._absent(path, required)
            return None
        number = self._whole_number(value, path, maximum)
        if number is None:
            return None
        if minimum is not None and number < minimum:
            self.error(path, f"is {number}; it must be at least {minimum}")
            return None
        if maximum is not None and number > maximum:
            self.error(path, f"is {number}; it must be at most {maximum}")
            return None
        return number

    def _whole_number(self, value: Any, path: str, maximum: int | None) -> int | None:
        """An int (a float such as 3.0 counts), within MongoDB's 64-bit integers."""
        whole_float = isinstance(value, float) and math.isfinite(value) and value.is_integer()
        if (isinstance(value, bool) or not isinstance(value, int)) and not whole_float:
            self.error(path, f"must be a whole number, not {show_number(value)}")
            return None
        number = int(value)
        if abs(number) > MAX_INT:
            self.error(path, "is a number too large for MongoDB's 64-bit integers; write a "
                       f"whole number{f' of at most {maximum}' if maximum is not None else ''}")
            return None
        return number

    def boolean(self, value: Any, path: str, *, required: bool = True) -> bool | None:
        if value is None:
            self._absent(path, required)
            return None
        if not isinstance(value, bool):
            self.error(path, f"must be true or false (a boolean), not {show(value)}")
            return None
        return value
