#!/usr/bin/env python3
"""Run one trinogen command in this process with a meter around each stage of a sync.

    python bench/stages.py OUT.json --config trinogen.yaml sync --output json

The CLI runs unchanged (`trinogen.cli.main`); this driver only wraps the functions where each
stage happens, from outside (nothing is added to trinogen). Stages and where they are measured:

    import      the CLI and the stage modules a sync imports at its start (trinogen.cli, pipeline,
                gitops with GitPython, source with pymongo, ...); stages import more on first
                use (Jinja in render, the validator in classify) and are charged for it
    setup       settings loaded and checked (cli._settings), the working copy object
    read        the documents and the catalog library from the source (targets.read_documents,
                targets.read_library, source.connect: with mongomock:// that is where the seed
                files are parsed and inserted, a cost a real MongoDB does not have)
    refresh     fetch/clone of the working copy, listing its tree (WorkingCopy.refresh, .tree)
    cache       render-cache load, keys and hits (WorkingCopy.render_cache, Served.select),
                and saving it at the end (cache.RenderCache.save)
    classify    validation into clusters (desired._classify)
    resolve     Vault reads and the per-cluster secret checks (desired.read_secrets,
                desired.secret_problems)
    render      templates -> bytes (desired.render_all, without the nested stages)
    self-check  rendered YAML parsed back and Kubernetes' limits (render.renderer.check_yaml,
                render.renderer.check_objects)
    plan        the plan against the tree (publish.Planner.__call__, incl. reading file heads)
    write       files written, staged and committed (WorkingCopy.apply, .commit)
    push        WorkingCopy.push
    status      status rows written back (pipeline.write_status)
    report      printing the report (cli.print_report)
    other       the rest of the process after `import` (the remainder of the total)

Times are exclusive: a stage called inside another (self-check inside render) is counted in
the inner stage only, so the rows add up to the total. Each stage is counted once at its
outermost call (a stage inside itself is not split).

With TRINOGEN_BENCH_MARKERS=<path of bench/markers.so> (bench/run.py builds it), each stage
runs inside a C function named after it and the stage it runs in (`stage_<name>__<parent>`),
so that valgrind's callgrind attributes the instructions of the stage to that function;
bench/run.py reads the inclusive counts with callgrind_annotate and takes each nested stage off
the stage it ran in.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

STAGES = ("import", "setup", "read", "refresh", "cache", "classify", "resolve", "render",
          "self-check", "plan", "write", "push", "status", "report")


class Meter:
    """Exclusive wall time per stage, with a stack of the stages running now."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.calls: dict[str, int] = dict.fromkeys(STAGES, 0)
        self.parents: dict[str, set[str]] = {s: set() for s in STAGES}
        self.stack: list[str] = []
        self.mark = time.perf_counter()
        self.markers = _markers()

    def _switch(self) -> None:
        now = time.perf_counter()
        if self.stack:
            self.seconds[self.stack[-1]] += now - self.mark
        self.mark = now

    def run(self, stage: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if stage in self.stack:  # counted at its outermost call
            return fn(*args, **kwargs)
        self._switch()
        self.parents[stage].add(self.stack[-1] if self.stack else "")
        self.stack.append(stage)
        self.calls[stage] += 1
        try:
            if self.markers is None:
                return fn(*args, **kwargs)
            return self._in_marker(stage, fn, args, kwargs)
        finally:
            self._switch()
            self.stack.pop()

    def _in_marker(self, stage: str, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """Call fn inside the C function stage_<name>, so callgrind charges it there."""
        box: dict[str, Any] = {}

        def body() -> None:
            try:
                box["value"] = fn(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001 - carried out of the C frame, re-raised
                box["error"] = e

        callback = _CALLBACK(body)
        parent = self.stack[-2] if len(self.stack) > 1 else ""  # this stage is stack[-1]
        pair = (STAGES.index(parent) + 1 if parent else 0) * len(STAGES) + STAGES.index(stage)
        self.markers.enter(pair, callback)
        if "error" in box:
            raise box["error"]
        return box.get("value")


_CALLBACK = ctypes.CFUNCTYPE(None)


def _markers() -> Any:
    path = os.environ.get("TRINOGEN_BENCH_MARKERS")
    return ctypes.CDLL(path) if path else None


def wrap_function(meter: Meter, module: Any, name: str, stage: str) -> None:
    original = getattr(module, name)

    @functools.wraps(original)
    def metered(*args: Any, **kwargs: Any) -> Any:
        return meter.run(stage, original, *args, **kwargs)

    setattr(module, name, metered)


def install(meter: Meter) -> None:
    """Wrap every stage's functions where their callers look them up."""
    from trinogen import cache, cli, desired, gitops, pipeline, publish, served, source
    from trinogen.render import renderer

    for module, name, stage in (
        (cli, "_settings", "setup"), (cli, "_working_copy", "setup"),
        (cli, "print_report", "report"),
        (source, "connect", "read"),
        (pipeline, "read_documents", "read"), (pipeline, "read_library", "read"),
        (desired, "_classify", "classify"),
        (desired, "read_secrets", "resolve"), (desired, "secret_problems", "resolve"),
        (desired, "render_all", "render"),
        (renderer, "check_yaml", "self-check"), (renderer, "check_objects", "self-check"),
        (pipeline, "write_status", "status"),
        (gitops.WorkingCopy, "refresh", "refresh"), (gitops.WorkingCopy, "tree", "refresh"),
        (gitops.WorkingCopy, "render_cache", "cache"), (cache.RenderCache, "save", "cache"),
        (publish.Planner, "__call__", "plan"),
        (gitops.WorkingCopy, "apply", "write"), (gitops.WorkingCopy, "commit", "write"),
        (gitops.WorkingCopy, "push", "push"),
    ):
        wrap_function(meter, module, name, stage)
    select = served.Served.__dict__["select"].__func__  # a classmethod: wrap its function

    def metered_select(cls: Any, *args: Any, **kwargs: Any) -> Any:
        return meter.run("cache", select, cls, *args, **kwargs)

    served.Served.select = classmethod(metered_select)  # type: ignore[method-assign,assignment]


def _imports() -> None:
    """The CLI and the modules a sync imports when it starts (the stages' own lazy imports, such
    as Jinja on the first render, stay in their stages)."""
    import trinogen.cli  # noqa: F401
    from trinogen import cache, desired, gitops, pipeline, publish, served, source  # noqa: F401
    from trinogen.render import renderer  # noqa: F401


def main() -> int:
    started = time.perf_counter()
    out, argv = sys.argv[1], sys.argv[2:]
    meter = Meter()
    meter.run("import", _imports)
    install(meter)
    from trinogen import cli

    sys.argv = ["trinogen", *argv]
    code: int | str | None = 0
    try:
        cli.main()
    except SystemExit as e:
        code = e.code
    total = time.perf_counter() - started
    seconds = dict(meter.seconds)
    seconds["other"] = total - sum(seconds.values())
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"total": total, "seconds": seconds, "calls": meter.calls,
                   "parents": {s: sorted(p) for s, p in meter.parents.items() if p}}, f, indent=1)
    return int(code or 0) if not isinstance(code, str) else 1


if __name__ == "__main__":
    sys.exit(main())
