"""Text and YAML values -> the typed value a setting declares, or a ConfigError naming it.

Environment variables and flags are always strings; a file gives YAML scalars, lists and maps.
Each declared type has one converter, chosen by the field's type hint.
"""

from __future__ import annotations

import functools
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from trinogen.errors import ConfigError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_SCALARS = (str, int, float, bool)
_LARGEST = 2**31 - 1  # seconds, milliseconds, counts: more is a typo, and C APIs overflow


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    """A dataclass's field types, resolved once."""
    return typing.get_type_hints(cls)


def scalar_type(hint: Any) -> type | None:
    """The plain type behind a hint (`str | None` -> str, `tuple[str, ...]` -> tuple), if any."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        return rest[0] if len(rest) == 1 and rest[0] in _SCALARS else None
    if hint == tuple[str, ...]:
        return tuple
    return hint if hint in _SCALARS else None


def is_scalar(cls: type, name: str) -> bool:
    """Whether a setting can come from one environment variable."""
    return scalar_type(hints(cls)[name]) is not None


def build(cls: type, section: str, values: Mapping[str, Any]) -> Any:
    """One section's dataclass from its raw values (unset keys keep their defaults)."""
    section_hints = hints(cls)
    kwargs = {k: coerce(v, section_hints[k], f"{section}.{k}") for k, v in values.items()}
    return cls(**kwargs)


def _to_bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConfigError(f"setting {where} must be true or false, not {value!r}")


def _number(kind: type[int | float]) -> Callable[[Any, str], int | float]:
    def convert(value: Any, where: str) -> int | float:
        if isinstance(value, bool):  # True is an int to Python, not a number to a user
            raise ConfigError(f"setting {where} must be a number, not {value!r}")
        try:
            number = kind(value)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"setting {where} must be a number, not {value!r}") from None
        # "inf" and "nan" parse as floats, and Python ints have no bound; no setting means
        # them, and sleep(), sockets and subprocess timeouts overflow on them.
        if abs(number) > _LARGEST or not math.isfinite(number):
            raise ConfigError(f"setting {where} must be a finite number of at most "
                              f"{_LARGEST}, not {str(value)[:40]!r}")
        return number

    return convert


def _to_str(value: Any, where: str) -> str:
    if isinstance(value, (dict, list)):
        raise ConfigError(f"setting {where} must be a string")
    return str(value)


def _to_tuple(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):  # from the environment: comma-separated
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"setting {where} must be a list of strings")


def _to_mapping(value: Any, where: str) -> dict[str, str]:
    """Mapping[str, str], the one non-scalar setting type (secrets.refs)."""
    if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str)
                                          for k, v in value.items()):
        return dict(value)
    raise ConfigError(f"setting {where} must be a mapping of strings")


_CONVERTERS: dict[type | None, Callable[[Any, str], Any]] = {
    bool: _to_bool,
    int: _number(int),
    float: _number(float),
    str: _to_str,
    tuple: _to_tuple,
}


def coerce(value: Any, hint: Any, where: str) -> Any:
    """`value` as the type `hint` declares; `where` names the setting in errors."""
    optional = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
    if value is None or (optional and value == ""):
        if optional:
            return None
        raise ConfigError(f"setting {where} must not be empty")
    convert: Callable[[Any, str], Any] = _CONVERTERS.get(scalar_type(hint), _to_mapping)
    return convert(value, where)
