"""The command line: exit codes from the one table, JSON output, quickstart paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT, demo_env, example_docs
from trinogen import __version__
from trinogen.cli import app
from trinogen.errors import ExitCode

runner = CliRunner()


def invoke(args: list[str], env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, args, env=env, catch_exceptions=False)


@pytest.fixture
def seeded(tmp_path: Path) -> dict[str, str]:
    """Env for a demo-like run with its own seed dir, bare remote and workdir."""
    return demo_env(tmp_path, example_docs())


def add_invalid(env: dict[str, str]) -> None:
    seed = Path(env["TRINOGEN_MONGODB_SEED_DIR"])
    (seed / "bad.json").write_text(json.dumps({"_id": "bad-1", "clusterId": "broken",
                                               "owner": "x", "enabled": "true"}))


def test_version() -> None:
    """--version prints the package version and exits 0."""
    result = invoke(["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"trinogen {__version__}"


def _listed_commands(help_text: str) -> list[str]:
    """The command names in the Commands section of --help (rich panel or plain text)."""
    names: list[str] = []
    section = False
    for line in help_text.splitlines():
        if "Commands" in line and (line.lstrip().startswith("╭") or line.strip() == "Commands:"):
            section = True
            continue
        body = line.strip().removeprefix("│").removesuffix("│").rstrip()
        if section and (line.lstrip().startswith("╰") or not body):
            break
        # An entry starts one space in; its wrapped description lines start further in.
        if section and body.startswith(" ") and not body.startswith("  "):
            names.append(body.split()[0])
    return names


def test_help_lists_the_commands() -> None:
    """--help lists exactly the five commands, each as an entry of the Commands section."""
    result = invoke(["--help"])
    assert result.exit_code == 0
    assert _listed_commands(result.output) == ["validate", "render", "sync", "status", "watch"]


@pytest.mark.parametrize("command", ["validate", "render", "sync", "status", "watch"])
def test_each_command_has_its_own_help(command: str) -> None:
    """`trinogen <command> --help` works for every command and shows its usage line."""
    result = invoke([command, "--help"])
    assert result.exit_code == 0 and f"trinogen {command} [OPTIONS]" in result.output


def test_validate_ok_and_failing(seeded: dict[str, str]) -> None:
    """validate exits 0 on valid documents and 1 when one is invalid, naming it and the field."""
    assert invoke(["validate"], seeded).exit_code == 0
    add_invalid(seeded)
    result = invoke(["validate", "--output", "json"], seeded)
    assert result.exit_code == ExitCode.CLUSTERS_FAILED
    data = json.loads(result.stdout)
    assert data["schemaVersion"] == 1 and data["command"] == "validate"
    failed = data["clusters"]["failed"]
    assert [f["clusterId"] for f in failed] == ["broken"]
    assert [p["field"] for p in failed[0]["problems"]] == ["enabled"]
    assert sorted(data["clusters"]["valid"]) == ["adhoc-dev", "analytics-prod", "etl-batch"]


def test_render_writes_the_rest_when_one_document_is_invalid(seeded: dict[str, str], tmp_path: Path) -> None:
    """render writes every valid cluster and exits 1 for the invalid one."""
    add_invalid(seeded)
    out = tmp_path / "out"
    result = invoke(["render", "--out", str(out)], seeded)
    assert result.exit_code == ExitCode.CLUSTERS_FAILED
    assert (out / "trino-applications" / "adhoc-dev.yaml").exists()
    assert not (out / "trino-applications" / "broken.yaml").exists()
    assert "broken" in result.output


def test_render_one_cluster(seeded: dict[str, str], tmp_path: Path) -> None:
    """render --cluster writes only that cluster."""
    out = tmp_path / "out"
    assert invoke(["render", "--out", str(out), "--cluster", "etl-batch"], seeded).exit_code == 0
    assert sorted(p.name for p in (out / "trino-applications").iterdir()) == ["etl-batch.yaml"]


def test_sync_dry_run_exit_code_signals_pending_changes(seeded: dict[str, str]) -> None:
    """sync --dry-run --exit-code exits 5 with changes pending, 0 once synced."""
    assert invoke(["sync", "--dry-run", "--exit-code"], seeded).exit_code == ExitCode.CHANGES_PENDING
    assert invoke(["sync"], seeded).exit_code == 0
    assert invoke(["sync", "--dry-run", "--exit-code"], seeded).exit_code == 0


def test_sync_json_shape(seeded: dict[str, str]) -> None:
    """sync --output json reports clusters, commit, changes and stats."""
    data = json.loads(invoke(["sync", "--output", "json"], seeded).stdout)
    assert data["schemaVersion"] == 1 and data["pushed"] is True and len(data["commit"]) == 40
    assert sorted(c["clusterId"] for c in data["clusters"]["added"]) == [
        "adhoc-dev", "analytics-prod", "etl-batch"]
    assert data["stats"]["commits"] == 1 and data["stats"]["mongoQueries"] == 1
    assert {c["action"] for c in data["changes"]} == {"add"}


def test_safety_refusal_exit_code(seeded: dict[str, str]) -> None:
    """An empty source after a sync is refused with exit 3 and a hint."""
    assert invoke(["sync"], seeded).exit_code == 0
    for f in Path(seeded["TRINOGEN_MONGODB_SEED_DIR"]).glob("*.json"):
        f.write_text("[]")
    result = invoke(["sync"], seeded)
    assert result.exit_code == ExitCode.REFUSED
    assert "--allow-empty" in result.output


def test_config_errors_exit_2(seeded: dict[str, str], tmp_path: Path) -> None:
    """A bad setting or --set exits 2 with the setting named."""
    result = invoke(["sync", "--set", "git.push_retries=many"], seeded)
    assert result.exit_code == ExitCode.USAGE and "git.push_retries" in result.output
    assert invoke(["sync", "--set", "nodot"], seeded).exit_code == ExitCode.USAGE
    assert invoke(["validate", "--output", "yaml"], seeded).exit_code == ExitCode.USAGE


def test_unreachable_remote_exits_4(seeded: dict[str, str], tmp_path: Path) -> None:
    """A git remote that does not exist is a dependency failure (exit 4)."""
    result = invoke(["sync", "--remote", str(tmp_path / "missing.git")], seeded)
    assert result.exit_code == ExitCode.UNAVAILABLE
    assert "cannot fetch from the GitOps repository" in result.output


def test_status_after_sync(seeded: dict[str, str]) -> None:
    """On the embedded database, status right after a sync says it keeps none (not "run sync")."""
    assert invoke(["sync"], seeded).exit_code == 0
    result = invoke(["status"], seeded)
    assert result.exit_code == 0 and "run trinogen sync" not in result.output
    assert "embedded database keeps no status" in result.output and "git log" in result.output


def test_global_options_before_the_command(seeded: dict[str, str], tmp_path: Path) -> None:
    """--config and --set work before the command name too."""
    env = {k: v for k, v in seeded.items() if k != "TRINOGEN_CONFIG"}
    result = invoke(["--config", str(ROOT / "config" / "demo.yaml"),
                     "--set", "validation.min_trino_version=477", "validate"], env)
    assert result.exit_code == ExitCode.CLUSTERS_FAILED
    assert "oldest Trino release" in result.output


def test_console_script_module_runs() -> None:
    """python -m trinogen.cli is the same entry point as the console script."""
    out = subprocess.run([sys.executable, "-m", "trinogen.cli", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == f"trinogen {__version__}"


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_token_in_the_remote_is_never_printed(seeded: dict[str, str], output: str) -> None:
    """A remote with a token (a common CI setup) that fails: neither the error nor -o json nor a
    log line shows the token (git's own message quotes the URL)."""
    token = "TOKSECRET42"
    env = {**seeded, "TRINOGEN_GIT_REMOTE": f"https://oauth2:{token}@127.0.0.1:1/platform/x.git"}
    result = subprocess.run(
        [sys.executable, "-m", "trinogen.cli", "--log-level", "DEBUG", "sync", "-o", output],
        env={**__import__("os").environ, **env}, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == ExitCode.UNAVAILABLE, result.stderr
    assert "127.0.0.1:1/platform/x.git" in result.stdout + result.stderr  # the remote is named
    assert token not in result.stdout and token not in result.stderr


def test_the_document_page_shows_problems_as_validate_prints_them(seeded: dict[str, str]) -> None:
    """The problem-format block of docs/document.md is exactly what `validate` prints for its documents."""
    page = (ROOT / "docs" / "document.md").read_text()
    block = page.split("<!-- problem-format:", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    seed = Path(seeded["TRINOGEN_MONGODB_SEED_DIR"])
    (seed / "more.json").write_text(json.dumps([
        {"_id": "no-id", "owner": "growth_analytics"},
        {"_id": "typo", "clusterId": "adhoc-test", "owner": "growth_analytics",
         "clusterConfig": {"worker": {"replica": 3}}}]))
    result = invoke(["validate"], seeded)
    assert result.exit_code == ExitCode.CLUSTERS_FAILED
    assert result.stdout == block


def test_rollout_flags_and_status_on_the_command_line(tmp_path: Path, seeded: dict[str, str]
                                                      ) -> None:
    """--resume-rollout needs waves (usage error); with waves, sync -o json and status show the
    rollout (none under way after the first sync)."""
    refused = invoke(["sync", "--resume-rollout"], seeded)
    assert refused.exit_code == ExitCode.USAGE and "need rollout waves" in refused.output
    config = tmp_path / "waves.yaml"
    config.write_text((ROOT / "config" / "demo.yaml").read_text()
                      + "\nrollout:\n  waves: [{name: canary, clusters: [adhoc-dev]}]\n")
    env = {**seeded, "TRINOGEN_CONFIG": str(config)}
    synced = invoke(["sync", "-o", "json"], env)
    assert synced.exit_code == 0, synced.output
    assert json.loads(synced.output)["rollout"]["state"] == "idle"
    status = invoke(["status"], env)
    assert status.exit_code == 0 and "rollout: none under way" in status.output


def test_status_still_shows_the_clusters_when_the_rollout_record_cannot_be_read(
        tmp_path: Path, seeded: dict[str, str]) -> None:
    """A broken rollout record (or an unreachable GitOps repository) does not cost `status` its
    cluster rows: the rollout block says it could not be read and why, in text and JSON."""
    from tests.conftest import seed_remote

    config = tmp_path / "waves.yaml"
    config.write_text((ROOT / "config" / "demo.yaml").read_text()
                      + "\nrollout:\n  waves: [{name: canary, clusters: [adhoc-dev]}]\n")
    env = {**seeded, "TRINOGEN_CONFIG": str(config)}
    assert invoke(["sync"], env).exit_code == 0
    seed_remote(Path(env["TRINOGEN_GIT_REMOTE"]), {".trinogen/rollout.json": "not json"},
                tmp_path, "a broken hand edit")
    text = invoke(["status"], env)
    assert text.exit_code == 0, text.output
    assert "status records" in text.output  # the clusters' part (the demo's database keeps none)
    assert "rollout: could not be read: .trinogen/rollout.json: the rollout record" in text.output
    out = json.loads(invoke(["status", "-o", "json"], env).output)
    assert out["command"] == "status" and "clusters" in out and "argocd" in out
    assert out["rollout"]["state"] == "unreadable" and "malformed" in out["rollout"]["error"]
