"""Shared fixtures: real git with bare remotes in tmp_path, mongomock sources, example documents.

Test modules keep fixtures that only they use to themselves.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mongomock
import pytest
from bson import json_util

from trinogen.gitops import WorkingCopy
from trinogen.settings import Settings, load_settings, replace
from trinogen.settings.named import parse_kind
from trinogen.source import Source

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "config" / "examples"
# ../shared beside the clone (as in CI): the chart, CRDs and schemas. TRINOGEN_TEST_SHARED names
# another place (a worktree whose parent holds no shared/); read at import, before any fixture
# clears TRINOGEN_* from the environment.
SHARED = Path(os.environ.get("TRINOGEN_TEST_SHARED") or ROOT.parent / "shared")
SCHEMAS = SHARED / "schemas"
# The official Trino chart: TRINO_CHART_DIR, else the copy in SHARED.
CHART_DIR = Path(os.environ.get("TRINO_CHART_DIR") or SHARED / "charts" / "trino")
IN_CI = bool(os.environ.get("CI"))


def needs(available: bool, reason: str) -> pytest.MarkDecorator:
    """Skip a test whose requirement is missing, except in CI, where a skipped test does not exist.

    Under CI=true the missing requirement fails the run at collection, naming what is missing.
    """
    if not available and IN_CI:
        pytest.fail(f"CI must run this test, but {reason}", pytrace=False)
    return pytest.mark.skipif(not available, reason=reason)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tripwire: no test reads or writes the real home directory or the caller's settings."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("TRINOGEN_CONFIG", "VAULT_ADDR", "VAULT_TOKEN", "VAULT_NAMESPACE", "VAULT_CACERT",
                "KUBECONFIG", "KUBERNETES_SERVICE_HOST"):  # status would read Argo CD through them
        monkeypatch.delenv(var, raising=False)
    for var in list(__import__("os").environ):
        if var.startswith("TRINOGEN_"):
            monkeypatch.delenv(var, raising=False)


def git(*args: str, cwd: Path | None = None, check: bool = True) -> str:
    """Run real git (the tests' view of repositories, independent of trinogen's code)."""
    import os

    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                         env={**os.environ, **GIT_ENV}, check=False)
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def demo_env(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, str]:
    """Env for a demo-like CLI run: its own seed dir holding `docs`, bare remote and workdir."""
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "docs.json").write_text(json_util.dumps(docs))
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    return {
        "TRINOGEN_CONFIG": str(ROOT / "config" / "demo.yaml"),
        "TRINOGEN_MONGODB_SEED_DIR": str(seed),
        "TRINOGEN_GIT_REMOTE": str(remote),
        "TRINOGEN_GIT_WORKDIR": str(tmp_path / "wd"),
        "TRINOGEN_GIT_INIT_LOCAL_REMOTE": "false",
    }


def example_docs() -> list[dict[str, Any]]:
    """The shipped example documents (Extended JSON), freshly parsed each time."""
    return [json_util.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))]


def portable_docs() -> list[dict[str, Any]]:
    """The shipped examples without connectors: documents FerretDB v1 can store (it refuses keys
    containing '.', such as "connector.name")."""
    docs = example_docs()
    for d in docs:
        d["connectors"] = []
    return docs


def demo_settings(**sections: dict[str, Any]) -> Settings:
    """The demo's settings file (defaults, profiles, examples) with sections overridden."""
    settings = load_settings(ROOT / "config" / "demo.yaml", environ={})
    return replace(settings, **sections) if sections else settings


def with_hdfs(settings: Settings) -> Settings:
    """The settings with a storage option `hdfs`: legacy Hadoop, which a document cannot switch
    on itself (it serves file:, issue 19), offered by the platform."""
    stores = {**settings.options("storage"), **parse_kind("storage", {"hdfs": {"type": "hdfs"}}, "t")}
    return dataclasses.replace(settings, named={**settings.named, "storage": stores})


@pytest.fixture
def bare_remote(tmp_path: Path) -> Path:
    """An empty bare repository as the GitOps remote."""
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    return remote


def seed_remote(remote: Path, files: dict[str, str], tmp_path: Path, message: str = "init") -> str:
    """Push one commit with `files` to `remote`; returns its sha."""
    work = tmp_path / f"seed-{len(list(tmp_path.glob('seed-*')))}"
    git("clone", "--quiet", str(remote), str(work))
    git("checkout", "-q", "-B", "main", cwd=work)
    for rel, text in files.items():
        p = work / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", message, cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


def remote_tree(remote: Path, ref: str = "main") -> dict[str, bytes]:
    """Every file in `ref` of the remote, read with plain git."""
    names = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", ref).split("\n")
    out = {}
    for name in filter(None, names):
        blob = subprocess.run(["git", "--git-dir", str(remote), "show", f"{ref}:{name}"],
                              capture_output=True, check=True).stdout
        out[name] = blob
    return out


def commit_count(remote: Path, ref: str = "main") -> int:
    out = git("--git-dir", str(remote), "rev-list", "--count", ref, check=False).strip()
    return int(out) if out else 0


class FakeMongo:
    """A mongomock-backed Source plus helpers to edit its documents."""

    def __init__(self, settings: Settings, docs: list[dict[str, Any]]) -> None:
        self.client = mongomock.MongoClient()
        self.source = Source(self.client, settings.mongodb)
        if docs:
            self.source.collection.insert_many(copy.deepcopy(docs))

    @property
    def coll(self) -> Any:
        return self.source.collection

    def set(self, cluster_id: str, path: str, value: Any) -> None:
        self.coll.update_one({"clusterId": cluster_id}, {"$set": {path: value}})


class RealMongo:
    """A database of its own on a real MongoDB-wire server (FerretDB), seeded with pymongo.

    Same face as FakeMongo. `coll` is the tests' own client, independent of trinogen's; `source`
    and `settings` are what trinogen uses, built the way the CLI builds them (from the URI).
    """

    made = 0

    def __init__(self, server: Any, settings: Settings, docs: list[dict[str, Any]]) -> None:
        from trinogen import source

        RealMongo.made += 1
        self.database = f"trinogen_test_{os.getpid()}_{RealMongo.made}"
        self.settings = replace(settings, mongodb={"uri": server.uri, "database": self.database})
        self.client = server.client()
        self.source = source.connect(self.settings.mongodb)
        if docs:
            self.coll.insert_many(copy.deepcopy(docs))

    @property
    def coll(self) -> Any:
        return self.client[self.database][self.settings.mongodb.collection]

    @property
    def status(self) -> Any:
        return self.client[self.database][self.settings.mongodb.status_collection]

    @property
    def catalogs(self) -> Any:
        return self.client[self.database][self.settings.mongodb.catalog_collection]

    def set(self, cluster_id: str, path: str, value: Any) -> None:
        self.coll.update_one({"clusterId": cluster_id}, {"$set": {path: value}})

    def close(self) -> None:
        self.client.drop_database(self.database)
        self.client.close()
        self.source.client.close()


@pytest.fixture(scope="session")
def ferretdb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One FerretDB (SQLite backend) for the session; each RealMongo uses a database of its own.

    Built on first use and cached outside the clone (tests/ferretdb.py). Tests that use it mark
    themselves with `needs(tests.ferretdb.available(), ...)`.
    """
    from tests.ferretdb import ferretdb

    with ferretdb(tmp_path_factory.mktemp("ferretdb")) as server:
        yield server


@pytest.fixture(scope="session")
def wire_server() -> Iterator[Any]:
    """The tests' change-stream server (`tests.mongowire.ChangeStreamServer`), one for the
    session: stopping one takes ~1 s. Tests take it through `wire`, which resets it."""
    from tests.mongowire import ChangeStreamServer

    server = ChangeStreamServer().start()
    yield server
    server.stop()


@pytest.fixture
def wire(wire_server: Any) -> Any:
    """The change-stream server, emptied of the previous test's collections and failures."""
    wire_server.reset()
    return wire_server


@pytest.fixture(scope="session")
def kube_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One real kube-apiserver (and etcd) for the session, with ../shared/crds installed.

    Built on first use and cached outside the clone (tests/kubeapi.py); a `tests.kubeapi.Cluster`.
    Tests share it: each uses namespaces (and cluster-scoped names) of its own. Modules that use
    it set `pytestmark = KUBE_API` (tests/marks.py).
    """
    from tests.kubeapi import Cluster, kube_apiserver

    with kube_apiserver(tmp_path_factory.mktemp("kube")) as server:
        cluster = Cluster(server)
        cluster.install_crds(SHARED / "crds")
        yield cluster


@pytest.fixture
def make_mongo() -> Callable[..., FakeMongo]:
    def make(settings: Settings, docs: list[dict[str, Any]] | None = None) -> FakeMongo:
        return FakeMongo(settings, example_docs() if docs is None else docs)

    return make


@pytest.fixture
def workdir_for(tmp_path: Path) -> Callable[[Settings, Path], WorkingCopy]:
    def make(settings: Settings, remote: Path, name: str = "workdir") -> WorkingCopy:
        return WorkingCopy(settings.git, str(remote), tmp_path / name)

    return make


def settings_for(remote: Path, tmp_path: Path, **sections: dict[str, Any]) -> Settings:
    """Demo settings pointed at `remote`, with a workdir in tmp_path."""
    git_section = {"remote": str(remote), "workdir": str(tmp_path / "workdir"),
                   "init_local_remote": False, **sections.pop("git", {})}
    return demo_settings(git=git_section, **sections)


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, default=str)
