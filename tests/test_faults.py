"""Faults under a real `trinogen sync`: MongoDB, Vault and git failing in the ways they do.

For each fault: the exit code and the message a user sees, nothing partial or wrong pushed, and
the next run after the fault clears converges to exactly what a clean run renders, nothing lost.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest
from bson import ObjectId, json_util
from mockupdb import MockupDB

from tests import hostile_corpus as hc
from tests.conftest import FakeMongo, commit_count, git, remote_tree
from trinogen import pipeline, vault
from trinogen.errors import ExitCode
from trinogen.gitops import WorkingCopy
from trinogen.settings import Settings, load_settings, replace

pytestmark = pytest.mark.slow

SETTINGS_YAML = """\
argocd:
  repo_url: https://git.example.com/platform/trino-gitops.git
secrets:
  check: false
output:
  root_app: argocd/trino-clusters.yaml
git:
  timeout: 20
"""


def first_docs() -> list[dict[str, Any]]:
    """alpha, beta (with a secret placeholder) and gamma, as synced before each fault."""
    beta = hc.base("beta", connectors=[{"name": "pg", "properties": {
        "connector.name": "postgresql", "connection-url": "jdbc:postgresql://pg.data.svc:5432/x",
        "connection-password": "{{ PG_PASSWORD }}"}}])
    return [hc.base("alpha", _id=ObjectId("653a1a7b8e1f4a1e9c5d8e01")), beta, hc.base("gamma")]


def next_docs() -> list[dict[str, Any]]:
    """The change the faulty run must not lose: alpha resized, gamma disabled, delta new."""
    alpha, beta, gamma = first_docs()
    alpha["clusterConfig"]["worker"]["replicas"] = 5
    gamma["enabled"] = False
    return [alpha, beta, gamma, hc.base("delta")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Site:
    """A bare remote already synced with `first_docs()`, and the CLI pointed at it."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.tmp = tmp_path
        self.remote = tmp_path / "remote.git"
        self.workdir = tmp_path / "workdir"
        self.seed = tmp_path / "seed"
        self.config = tmp_path / "settings.yaml"
        self.config.write_text(SETTINGS_YAML)
        self.base_env = {k: v for k, v in os.environ.items()
                         if not k.startswith(("TRINOGEN_", "VAULT_"))}
        self.base_env.update({
            "TRINOGEN_MONGODB_URI": "mongomock://", "TRINOGEN_MONGODB_SEED_DIR": str(self.seed),
            "TRINOGEN_GIT_REMOTE": str(self.remote), "TRINOGEN_GIT_WORKDIR": str(self.workdir),
            **env,
        })
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))

    def settings(self, **env: str) -> Settings:
        return load_settings(self.config, environ={**self.base_env, **env})

    def start(self, reader: Callable[[], Any] | None = None, **env: str) -> None:
        """Sync `first_docs()` in-process (the state every fault starts from), then stage the change."""
        settings = self.settings(**env)
        mongo = FakeMongo(settings, first_docs())
        report = pipeline.sync(settings, mongo.source,
                               WorkingCopy(settings.git, str(self.remote), self.workdir),
                               reader_factory=reader)
        assert report.pushed and not report.failed
        self.before = remote_tree(self.remote)
        self.write_seed(next_docs())

    def write_seed(self, docs: list[dict[str, Any]]) -> None:
        self.seed.mkdir(exist_ok=True)
        (self.seed / "docs.json").write_text(
            json_util.dumps(docs, json_options=json_util.CANONICAL_JSON_OPTIONS))

    def sync(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`trinogen sync` as a user runs it; a traceback is never acceptable."""
        run = subprocess.run(
            [sys.executable, "-m", "trinogen.cli", "--config", str(self.config), "sync", *args],
            env={**self.base_env, **env}, cwd=self.tmp, capture_output=True, text=True,
            timeout=120, check=False)
        assert "Traceback" not in run.stdout + run.stderr, run.stderr[-3000:]
        return run

    @property
    def gitdir(self) -> Path:
        return self.workdir if (self.workdir / "HEAD").is_file() else self.workdir / ".git"

    def assert_untouched(self) -> None:
        """The remote holds exactly what it held before the faulty run: one commit, same files."""
        assert commit_count(self.remote) == 1
        assert remote_tree(self.remote) == self.before

    def assert_converges(self, reader: Callable[[], Any] | None = None, **env: str) -> None:
        """A normal run pushes exactly what a clean render of `next_docs()` gives; then nothing is pending."""
        run = self.sync("--output", "json", **env)
        assert run.returncode == ExitCode.OK, run.stdout[-2000:] + run.stderr[-2000:]
        report = json.loads(run.stdout)
        assert report["pushed"] and [c["clusterId"] for c in report["clusters"]["pruned"]] == ["gamma"]
        assert commit_count(self.remote) == 2
        settings = self.settings(**env)
        out = self.tmp / "expected"
        pipeline.render(settings, FakeMongo(settings, next_docs()).source, out, reader_factory=reader)
        expected = {p.relative_to(out).as_posix(): p.read_bytes()
                    for p in out.rglob("*") if p.is_file()}
        assert remote_tree(self.remote) == expected
        again = pipeline.sync(settings, FakeMongo(settings, next_docs()).source,
                              WorkingCopy(settings.git, str(self.remote), self.workdir),
                              reader_factory=reader)
        assert again.plan is not None and again.plan.empty and commit_count(self.remote) == 2


@pytest.fixture
def site(tmp_path: Path) -> Site:
    s = Site(tmp_path)
    s.start()
    return s


# --- MongoDB ------------------------------------------------------------------------------------


def test_mongodb_unreachable(site: Site) -> None:
    """Nothing listening: exit 4 saying MongoDB is unreachable, the remote untouched; then it converges."""
    run = site.sync(TRINOGEN_MONGODB_URI=f"mongodb://127.0.0.1:{free_port()}/?directConnection=true",
                    TRINOGEN_MONGODB_TIMEOUT_MS="300")
    assert run.returncode == ExitCode.UNAVAILABLE
    assert "MongoDB" in run.stderr and "unreachable" in run.stderr
    site.assert_untouched()
    site.assert_converges()


class WireMongo:
    """mockupdb as a replica-set primary serving `find` over the real wire protocol, with faults."""

    def __init__(self, docs: list[dict[str, Any]], fault: str) -> None:
        self.docs = docs
        self.fault = fault  # auth | cursor-not-found | hangup
        self.server = MockupDB(auto_ismaster=False)
        self.commands: list[str] = []

    def __enter__(self) -> Self:
        self.server.autoresponds(self._handle)
        self.server.run()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    @property
    def address(self) -> str:
        return f"{self.server.host}:{self.server.port}"

    def _handle(self, request: Any) -> bool:
        name = (request.command_name or "").lower()
        self.commands.append(name)
        if name in ("ismaster", "hello"):
            return bool(request.replies({
                "ismaster": True, "isWritablePrimary": True, "helloOk": True, "setName": "rs0",
                "setVersion": 1, "hosts": [self.address], "primary": self.address,
                "me": self.address, "minWireVersion": 0, "maxWireVersion": 21,
                "maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48_000_000,
                "maxWriteBatchSize": 100_000, "localTime": datetime.now(UTC),
                "logicalSessionTimeoutMinutes": 30, "connectionId": 1,
                "electionId": ObjectId("7fffffff0000000000000001")}))
        if name == "saslstart" and self.fault == "auth":
            return bool(request.replies({"ok": 0, "code": 18, "codeName": "AuthenticationFailed",
                                         "errmsg": "Authentication failed."}))
        if name == "find":  # one document, then the cursor dies
            return bool(request.replies({"ok": 1, "cursor": {
                "id": 4242, "ns": "trino.trino_clusters", "firstBatch": self.docs[:1]}}))
        if name == "getmore":
            if self.fault == "hangup":
                return bool(request.hangup())
            return bool(request.replies({"ok": 0, "code": 43, "codeName": "CursorNotFound",
                                         "errmsg": "cursor id 4242 not found"}))
        return bool(request.ok())  # endSessions, killCursors: never leave the client hanging


def test_mongodb_authentication_failure(site: Site) -> None:
    """Wrong credentials: exit 4 naming the authentication failure (password masked); then it converges."""
    with WireMongo(next_docs(), "auth") as mongo:
        run = site.sync(TRINOGEN_MONGODB_URI=f"mongodb://trinogen:hunter2@{mongo.address}/"
                        "?replicaSet=rs0&authSource=admin", TRINOGEN_MONGODB_TIMEOUT_MS="3000")
    assert run.returncode == ExitCode.UNAVAILABLE
    assert "authentication" in run.stderr.lower() and "hunter2" not in run.stderr + run.stdout
    assert "saslstart" in mongo.commands
    site.assert_untouched()
    site.assert_converges()


@pytest.mark.parametrize("fault", ["cursor-not-found", "hangup"])
def test_mongodb_cursor_dies_mid_read(site: Site, fault: str) -> None:
    """A read that dies after the first batch fails the run (exit 4): the unread clusters are not pruned."""
    with WireMongo(next_docs(), fault) as mongo:
        run = site.sync(TRINOGEN_MONGODB_URI=f"mongodb://{mongo.address}/?replicaSet=rs0",
                        TRINOGEN_MONGODB_BATCH_SIZE="1", TRINOGEN_MONGODB_TIMEOUT_MS="3000")
    assert "getmore" in mongo.commands  # it really died mid-read, after one document
    assert run.returncode == ExitCode.UNAVAILABLE, run.stdout + run.stderr
    assert "MongoDB" in run.stderr
    site.assert_untouched()
    site.assert_converges()


# --- Vault --------------------------------------------------------------------------------------


class FakeVault:
    """A tiny Vault HTTP API: token lookup and KV v2 reads, or 403 for the login or the secrets."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode  # ok | deny-login | deny-secrets
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                if self.path.startswith("/v1/auth/token/lookup-self"):
                    ok = outer.mode != "deny-login"
                    self._reply(200 if ok else 403, {"data": {"policies": ["trinogen"]}} if ok
                                else {"errors": ["permission denied"]})
                elif self.path.startswith("/v1/secret/data/trino/") and outer.mode == "ok":
                    cluster = self.path.split("?")[0].rsplit("/", 1)[1]
                    self._reply(200, {"data": {"data": {"PG_PASSWORD": f"pw-{cluster}"},
                                               "metadata": {"version": 3}}})
                else:
                    self._reply(403, {"errors": ["1 error occurred:\n\t* permission denied\n\n"]})

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reader(self) -> Any:
        settings = replace(Settings(), vault={"addr": self.url, "retries": 0}).vault
        return vault.connect(settings, 2, {"VAULT_TOKEN": "test-token"})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_vault() -> Iterator[FakeVault]:
    v = FakeVault()
    yield v
    v.close()


def vault_env(addr: str) -> dict[str, str]:
    return {"TRINOGEN_SECRETS_CHECK": "true", "VAULT_ADDR": addr, "VAULT_TOKEN": "test-token",
            "TRINOGEN_VAULT_RETRIES": "0", "TRINOGEN_VAULT_TIMEOUT": "1"}


@pytest.fixture
def vault_site(tmp_path: Path, fake_vault: FakeVault) -> Site:
    s = Site(tmp_path)
    s.start(reader=fake_vault.reader, **vault_env(fake_vault.url))
    return s


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections and never answers (a hung Vault)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield int(s.getsockname()[1])


@pytest.mark.parametrize("where", ["down", "slow", "deny-login"])
def test_vault_down_slow_or_refusing_the_login(
    vault_site: Site, fake_vault: FakeVault, silent_port: int, where: str
) -> None:
    """Vault unusable for the whole run: exit 4 naming Vault and its address, nothing pushed; then it converges."""
    addr = {"down": f"http://127.0.0.1:{free_port()}", "slow": f"http://127.0.0.1:{silent_port}",
            "deny-login": fake_vault.url}[where]
    fake_vault.mode = "deny-login" if where == "deny-login" else "ok"
    run = vault_site.sync(**vault_env(addr))
    assert run.returncode == ExitCode.UNAVAILABLE, run.stdout + run.stderr
    assert "Vault" in run.stderr and addr in run.stderr
    assert "test-token" not in run.stdout + run.stderr
    vault_site.assert_untouched()
    fake_vault.mode = "ok"
    vault_site.assert_converges(reader=fake_vault.reader, **vault_env(fake_vault.url))


def test_vault_forbidding_a_secret_fails_only_the_clusters_using_it(
    vault_site: Site, fake_vault: FakeVault
) -> None:
    """A 403 on one secret path: exit 1, that cluster named and its files kept, the others synced."""
    fake_vault.mode = "deny-secrets"
    run = vault_site.sync(**vault_env(fake_vault.url))
    assert run.returncode == ExitCode.CLUSTERS_FAILED, run.stdout + run.stderr
    assert "FAILED   beta (secrets)" in run.stdout and "secret/trino/beta" in run.stdout
    tree = remote_tree(vault_site.remote)
    assert {p: b for p, b in tree.items() if "/beta" in p} == {
        p: b for p, b in vault_site.before.items() if "/beta" in p}
    assert "workers: 5" in tree["trino-clusters/alpha/values.yaml"].decode()
    assert "trino-applications/delta.yaml" in tree and "trino-applications/gamma.yaml" not in tree
    fake_vault.mode = "ok"
    run = vault_site.sync(**vault_env(fake_vault.url))
    assert run.returncode == ExitCode.OK, run.stdout + run.stderr
    assert "pw-beta" not in str(remote_tree(vault_site.remote))  # references only, never values


# --- git ----------------------------------------------------------------------------------------


def test_git_remote_unreachable(site: Site) -> None:
    """The remote gone: exit 4 naming it, nothing changed; back again, the next run converges."""
    moved = site.tmp / "remote-away.git"
    site.remote.rename(moved)
    run = site.sync()
    assert run.returncode == ExitCode.UNAVAILABLE
    assert str(site.remote) in run.stderr
    moved.rename(site.remote)
    site.assert_untouched()
    site.assert_converges()


def _refusing_hook(remote: Path) -> Path:
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'policy: main is frozen for the release' >&2\nexit 1\n")
    hook.chmod(0o755)
    return hook


def test_push_rejected_by_a_hook(site: Site) -> None:
    """A pre-receive hook refusing: exit 4 saying the remote refused, nothing pushed; hook gone, it converges."""
    hook = _refusing_hook(site.remote)
    run = site.sync()
    assert run.returncode == ExitCode.UNAVAILABLE
    assert "refused the push" in run.stderr and "hook declined" in run.stderr
    site.assert_untouched()
    hook.unlink()
    site.assert_converges()


def test_push_rejected_by_a_hook_shows_the_hooks_reason(site: Site) -> None:
    """The refusal message carries what the hook printed, so the user knows what to fix."""
    _refusing_hook(site.remote)
    run = site.sync()
    assert "main is frozen for the release" in run.stderr


def test_stale_git_lock_files_in_the_working_copy(site: Site) -> None:
    """index.lock and ref locks left by a killed git are removed; the run goes through."""
    for lock in (site.gitdir / "index.lock", site.gitdir / "refs" / "remotes" / "origin" / "main.lock",
                 site.gitdir / "packed-refs.lock"):
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text("")
    site.assert_converges()


def _junk_commit(gitdir: Path, ref: str) -> str:
    """A local commit adding JUNK.txt, on `ref` of the working copy."""
    junk = subprocess.run(["git", "--git-dir", str(gitdir), "hash-object", "-w", "--stdin"],
                          input=b"junk that must never be pushed\n", capture_output=True,
                          check=True).stdout.decode().strip()
    tree = subprocess.run(["git", "--git-dir", str(gitdir), "mktree"],
                          input=f"100644 blob {junk}\tJUNK.txt\n".encode(), capture_output=True,
                          check=True).stdout.decode().strip()
    commit = git("--git-dir", str(gitdir), "commit-tree", tree, "-m", "local junk").strip()
    git("--git-dir", str(gitdir), "update-ref", ref, commit)
    return commit


@pytest.mark.parametrize("damage", [
    "other-branch", "garbage-head", "packs-deleted",
    "not-a-repo",
])
def test_working_copy_corrupted_or_on_another_branch(site: Site, damage: str) -> None:
    """A damaged or diverted working copy is rebuilt from the remote; local junk is never pushed."""
    gitdir = site.gitdir
    if damage == "other-branch":
        _junk_commit(gitdir, "refs/heads/other")
        _junk_commit(gitdir, "refs/heads/main")
        git("--git-dir", str(gitdir), "symbolic-ref", "HEAD", "refs/heads/other")
    elif damage == "garbage-head":
        (gitdir / "HEAD").write_bytes(b"\x00\xffgarbage\n")
    elif damage == "packs-deleted":
        for p in (gitdir / "objects").rglob("*"):
            if p.is_file():
                p.unlink()
    else:
        shutil.rmtree(site.workdir)
        site.workdir.write_text("not a repository\n")
    site.assert_converges()
    assert not any("JUNK" in p for p in remote_tree(site.remote))


def test_disk_full_while_writing(site: Site, tmp_path: Path) -> None:
    """git failing with ENOSPC while writing the commit: exit 4 saying so, nothing pushed; then it converges."""
    shim = tmp_path / "shim"
    shim.mkdir()
    real = shutil.which("git")
    (shim / "git").write_text(f"""#!/bin/sh
# A full disk, as git reports it, for every command that writes objects or the index.
sub=""
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    -c|-C|--git-dir|--work-tree) skip=1 ;;
    -*) ;;
    *) sub="$a"; break ;;
  esac
done
case "$sub" in
  fast-import|commit|add|hash-object|write-tree|commit-tree|update-index|mktree|apply)
    cat >/dev/null
    echo "fatal: unable to write new object file: No space left on device" >&2
    exit 128 ;;
esac
exec {real} "$@"
""")
    (shim / "git").chmod(0o755)
    run = site.sync(PATH=f"{shim}{os.pathsep}{os.environ['PATH']}")
    assert run.returncode == ExitCode.UNAVAILABLE, run.stdout + run.stderr
    assert "No space left on device" in run.stderr or "disk full" in run.stderr
    site.assert_untouched()
    site.assert_converges()


def test_killed_between_commit_and_push(site: Site) -> None:
    """SIGKILL after the local commit: the remote is untouched, and the next run pushes it all."""
    run = site.sync(TRINOGEN_TEST_KILL_AT="after-commit")
    assert run.returncode == -signal.SIGKILL
    site.assert_untouched()
    site.assert_converges()
