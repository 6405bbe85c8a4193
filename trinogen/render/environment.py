"""The Jinja2 environment: strict, and every value reaches a file only through an escaping filter.

Built from sources handed in (`Templates`), never from the disk itself; Jinja is imported only
here, and only when the first template is needed.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from trinogen.render.escape import Safe, prop_key, prop_value, yaml_scalar, yaml_text
from trinogen.render.templates import BytecodeCacheFactory, Templates
from trinogen.secrets import Secret

_FILTERS_HINT = "use | yaml, | yaml_text(indent), | prop_key or | prop_value"


def make_environment(templates: Templates, bytecode_cache: BytecodeCacheFactory | None) -> Any:
    """A jinja2.Environment over `templates`; compiled templates go to the bytecode cache."""
    import jinja2

    def load(name: str) -> tuple[str, str, Any] | None:
        source = templates.source(name)
        if source is None:
            return None
        return source.text, source.filename, _always_current

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        bytecode_cache=bytecode_cache() if bytecode_cache is not None else None,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters["yaml"] = lambda v: Safe(yaml_scalar(v))
    env.filters["yaml_text"] = lambda v, indent: Safe(yaml_text(v, indent))
    env.filters["prop_key"] = lambda v: Safe(prop_key(v))
    env.filters["prop_value"] = lambda v: Safe(prop_value(v.reveal() if isinstance(v, Secret) else v))
    return env


def _always_current() -> bool:
    return True  # the sources were read once for this run: nothing to re-check on disk


def _finalize(value: Any) -> Any:
    """Refuse any value that did not go through an escaping filter."""
    if isinstance(value, Safe):  # the common case, first: no import on the hot path
        return value
    import jinja2

    if isinstance(value, (bool, int)) or value is None:
        raise jinja2.TemplateRuntimeError(
            f"a value reached the output without an escaping filter; {_FILTERS_HINT}"
        )
    raise jinja2.TemplateRuntimeError(
        f"a {type(value).__name__} reached the output without an escaping filter; {_FILTERS_HINT}"
    )


def template_error(e: Exception) -> str:
    """A template failure as `template <name>:<line>: <message>`."""
    name = getattr(e, "name", None) or getattr(e, "filename", None)
    line = getattr(e, "lineno", None)
    where = f"{name}:{line}: " if name and line else ""
    if not where:
        for frame in reversed(traceback.extract_tb(e.__traceback__)):
            if frame.filename.endswith(".j2"):
                where = f"{Path(frame.filename).name}:{frame.lineno}: "
                break
    return f"template {where}{e}"
