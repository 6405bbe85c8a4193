"""What a sync loads: one whose documents the render cache serves never validates, so it imports
neither the validator nor the parsers of option kinds its settings do not name (the no-op's
start-up time, docs/benchmarks.md). Asserted on the real CLI: the modules a run leaves in
`sys.modules`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT, demo_env, example_docs
from trinogen import kinds
from trinogen.settings import named

VALIDATOR = "trinogen.model.document"


# Runs the CLI as `python -m trinogen.cli sync` does and writes the loaded modules at exit.
_RUN = """
import atexit, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
sys.argv = ["trinogen", "sync"]
runpy.run_module("trinogen.cli", run_name="__main__")
"""


def _sync_imports(env: dict[str, str], tmp_path: Path) -> set[str]:
    """The modules one `trinogen sync` imported (it must succeed)."""
    out = tmp_path / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", _RUN, str(out)], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return set(out.read_text().split())


def _docs() -> list[dict[str, Any]]:
    disabled = {**example_docs()[0], "_id": "off-1", "clusterId": "switched-off",
                "enabled": False}
    return [*example_docs(), disabled]


def test_a_sync_with_nothing_to_validate_loads_no_validator(tmp_path: Path) -> None:
    """The first sync validates (and loads the validator, but not the regex reader of access
    rules nobody wrote); the second, with every enabled document served by the render cache and
    one disabled document, does not."""
    env = {**os.environ, **demo_env(tmp_path, _docs())}
    first = _sync_imports(env, tmp_path)
    assert VALIDATOR in first
    # settings without tenants or profile_requirements: the tenancy rules stay unloaded
    assert "trinogen.model.tenancy" not in first and "trinogen.settings.tenants" not in first
    # no example writes access rules: the Java regex reader (a package of its own) stays unloaded
    assert "trinogen.model.javaregex" not in first
    again = _sync_imports(env, tmp_path)
    assert VALIDATOR not in again
    assert not {m for m in again if m.startswith("trinogen.model.")} & {
        "trinogen.model.roles", "trinogen.model.connectors", "trinogen.model.assemble"}


def test_settings_load_only_the_option_parsers_of_the_kinds_they_name(tmp_path: Path) -> None:
    """The demo settings name some option kinds: only those kinds' modules are imported, by a
    sync that validates every document as much as by one that validates none."""
    named_here = set(yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())) & set(named.KINDS)
    assert named_here and set(named.KINDS) - named_here  # both sides of the rule are exercised
    env = {**os.environ, **demo_env(tmp_path, _docs())}
    for run in ("validates", "served"):
        loaded = _sync_imports(env, tmp_path)
        for kind in named.KINDS:
            assert (named.KINDS[kind] in loaded) == (kind in named_here), (run, kind)


def test_a_kind_the_settings_do_not_name_loads_none_of_its_home(tmp_path: Path) -> None:
    """A kind in its own home (trinogen/kinds/<kind>/) that the demo settings do not name has
    none of its modules imported: not its options, nor its document reading, nor its values (a
    kind each catalog picks, `storage`, included, and `authentication`, whose reading
    model/document.py calls itself while validating documents that pick none)."""
    named_here = set(yaml.safe_load((ROOT / "config" / "demo.yaml").read_text()))
    unnamed = set(kinds.KINDS) - named_here  # every kind's parser is in its home
    assert {"storage", "authentication"} <= unnamed
    assert unnamed  # today: service_accounts, ingress and opa
    loaded = _sync_imports({**os.environ, **demo_env(tmp_path, _docs())}, tmp_path)
    assert "trinogen.kinds" in loaded  # the list itself is read
    for kind in unnamed:
        assert not {m for m in loaded if m.startswith(f"trinogen.kinds.{kind}")}, kind


# Runs the CLI through the console-script entry point with the given arguments and reports the
# cyclic GC's state at exit.
_GC_AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 0))
sys.argv = ["trinogen", *sys.argv[1:]]
from trinogen.cli import main
main()
"""


def _gc_at_exit(*args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", _GC_AT_EXIT, *args], cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc.stdout.split()[-2:]


def test_a_one_shot_command_runs_without_the_cyclic_gc_and_skips_its_pass_at_exit() -> None:
    """A one-shot command (here `--version`) runs with the cyclic GC off and leaves its objects
    frozen, so the interpreter's last collection at exit walks none of them (issue 22)."""
    assert _gc_at_exit("--version") == ["False", "True"]


def test_the_watcher_turns_the_cyclic_gc_on(tmp_path: Path) -> None:
    """`watch` runs for days: it turns the cyclic GC on before anything else (here it then stops
    on a missing settings file), so its cycles are freed."""
    assert _gc_at_exit("watch", "--config", str(tmp_path / "missing.yaml"))[0] == "True"
