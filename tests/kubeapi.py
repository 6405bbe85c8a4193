"""A real Kubernetes API server for the tests: kube-apiserver 1.34 on an embedded etcd 3.6.

Both are built from the Go module proxy on first use (about 15 minutes of CPU on 2 cores, see
../shared/guide/kube-apiserver.md) and cached outside the clone next to FerretDB:

    ${TRINOGEN_TEST_CACHE:-~/.cache/trinogen}/kube/<version>/kube-apiserver   the API server
    ${TRINOGEN_TEST_CACHE:-~/.cache/trinogen}/kube/<version>/etcd             etcd (embed.StartEtcd)

`python -m tests.kubeapi` builds both (if needed) and prints their paths; `.ci/run` does that
before the tests so the build's time shows on its own. `kube_apiserver(workdir)` runs them on
loopback with a static admin token until the block ends; nothing else of a cluster runs (no
controller-manager, no scheduler, no kubelet), so Deployments create no Pods and namespaces get no
ServiceAccount: tests that need either create them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.ferretdb import CACHE, _go_env, _run, free_port, go_binary

KUBERNETES = "v1.34.4"
STAGING = "v0.34.4"  # the k8s.io/* staging modules published for KUBERNETES
ETCD = "v3.6.5"
HOME = CACHE / "kube" / KUBERNETES
APISERVER = HOME / "kube-apiserver"
ETCD_BINARY = HOME / f"etcd-{ETCD}"

_APISERVER_MAIN = """\
package main

import (
\t"os"

\t"k8s.io/component-base/cli"
\t"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
\tos.Exit(cli.Run(app.NewAPIServerCommand()))
}
"""

_ETCD_MAIN = """\
package main

import (
\t"log"
\t"net/url"
\t"os"

\t"go.etcd.io/etcd/server/v3/embed"
)

// etcd DIR CLIENT_URL PEER_URL: one member, data in DIR, until killed.
func main() {
\tcfg := embed.NewConfig()
\tcfg.Dir = os.Args[1]
\tclient, err := url.Parse(os.Args[2])
\tif err != nil {
\t\tlog.Fatal(err)
\t}
\tpeer, err := url.Parse(os.Args[3])
\tif err != nil {
\t\tlog.Fatal(err)
\t}
\tcfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
\tcfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
\tcfg.InitialCluster = cfg.Name + "=" + peer.String()
\tcfg.LogLevel = "error"
\te, err := embed.StartEtcd(cfg)
\tif err != nil {
\t\tlog.Fatal(err)
\t}
\t<-e.Server.ReadyNotify()
\tlog.Print("etcd ready")
\tlog.Fatal(<-e.Err())
}
"""


def available() -> bool:
    """True when both binaries are built already or can be built (Go is installed)."""
    return (APISERVER.is_file() and ETCD_BINARY.is_file()) or go_binary() is not None


def _staging_replaces(kubernetes_mod: str) -> list[str]:
    """One `replace` per staging module k8s.io/kubernetes points at ./staging (not in its zip)."""
    names = re.findall(r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/", kubernetes_mod,
                       re.MULTILINE)
    if not names:
        raise RuntimeError("k8s.io/kubernetes' go.mod names no ./staging replacements")
    return [f"replace {name} => {name} {STAGING}" for name in names]


def _build_module(go: str, env: dict[str, str], src: Path, mod: str, main: str) -> None:
    src.mkdir(parents=True)
    (src / "go.mod").write_text(mod)
    (src / "main.go").write_text(main)
    _run([go, "mod", "tidy"], env, src)


def _build_apiserver(go: str, env: dict[str, str], scratch: Path) -> None:
    info = json.loads(_run([go, "mod", "download", "-json", f"k8s.io/kubernetes@{KUBERNETES}"],
                           env, scratch))
    replaces = _staging_replaces(Path(info["GoMod"]).read_text())
    src = scratch / "apiserver"
    mod = "\n".join(["module trinogen.test/kube-apiserver", "", "go 1.24.0", "",
                     f"require k8s.io/kubernetes {KUBERNETES}", "", *replaces, ""])
    _build_module(go, env, src, mod, _APISERVER_MAIN)
    flags = f"-X k8s.io/component-base/version.gitVersion={KUBERNETES}"
    out = scratch / "kube-apiserver"
    _run([go, "build", "-trimpath", "-ldflags", flags, "-o", str(out), "."], env, src)
    os.replace(out, APISERVER)


def _build_etcd(go: str, env: dict[str, str], scratch: Path) -> None:
    src = scratch / "etcd"
    mod = "\n".join(["module trinogen.test/etcd", "", "go 1.24.0", "",
                     f"require go.etcd.io/etcd/server/v3 {ETCD}", ""])
    _build_module(go, env, src, mod, _ETCD_MAIN)
    out = scratch / "etcd.bin"  # not scratch/etcd: that is the source directory
    _run([go, "build", "-trimpath", "-o", str(out), "."], env, src)
    os.replace(out, ETCD_BINARY)


def build(log: Any = sys.stderr) -> tuple[Path, Path]:
    """(kube-apiserver, etcd), built into the cache unless they are there already."""
    if APISERVER.is_file() and ETCD_BINARY.is_file():
        return APISERVER, ETCD_BINARY
    go = go_binary()
    if go is None:
        raise FileNotFoundError("kube-apiserver is not built and `go` is not on PATH to build it")
    HOME.mkdir(parents=True, exist_ok=True)
    with (HOME / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for binary, builder in ((ETCD_BINARY, _build_etcd), (APISERVER, _build_apiserver)):
            if binary.is_file():
                continue
            started = time.monotonic()
            print(f"building {binary.name} into {binary} (first run only, minutes)...", file=log,
                  flush=True)
            with tempfile.TemporaryDirectory(dir=HOME, prefix="build-") as tmp:
                env = {**_go_env(Path(tmp)), "CGO_ENABLED": "0"}
                builder(go, env, Path(tmp))
            print(f"built {binary.name} in {time.monotonic() - started:.0f} s", file=log,
                  flush=True)
    return APISERVER, ETCD_BINARY


@dataclass
class KubeAPI:
    """A running API server: its address, a token with system:masters, and its CA."""

    url: str
    token: str
    ca_file: Path
    kubeconfig: Path
    log: Path

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def request(self, method: str, path: str, body: Any = None, *,
                content_type: str = "application/json",
                token: str | None = None) -> tuple[int, Any]:
        """(HTTP status, decoded JSON body) of one call; errors are returned, not raised."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {token or self.token}", "Content-Type": content_type,
            "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.context(), timeout=60) as resp:
                return resp.status, _decoded(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, _decoded(err.read())


def _decoded(raw: bytes) -> Any:
    """A JSON body decoded; any other body (`/readyz` answers `ok`) as text."""
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode(errors="replace")


def _kubeconfig(path: Path, url: str, ca: Path, token: str) -> None:
    import yaml

    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": url,
                                                  "certificate-authority": str(ca)}}],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}]}))


def _service_account_key(workdir: Path) -> tuple[Path, Path]:
    key, pub = workdir / "sa.key", workdir / "sa.pub"
    subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True,
                   capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)], check=True,
                   capture_output=True)
    return key, pub


def _wait_ready(server: KubeAPI, procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"kube-apiserver or etcd exited ({proc.returncode}): "
                                   f"{server.log.read_text(errors='replace')[-3000:]}")
        ca = server.ca_file
        if ca.is_file():
            try:
                status, last = server.request("GET", "/readyz")
                if status == 200:
                    return
            except (OSError, ssl.SSLError) as err:
                last = err
        time.sleep(0.5)
    raise RuntimeError(f"kube-apiserver not ready in {timeout:.0f} s ({last}): "
                       f"{server.log.read_text(errors='replace')[-3000:]}")


@contextlib.contextmanager
def kube_apiserver(workdir: Path, timeout: float = 180.0) -> Iterator[KubeAPI]:
    """Run etcd and kube-apiserver on 127.0.0.1 (free ports, state in `workdir`) until the block ends."""
    apiserver, etcd = build()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "kube.log"
    token = secrets.token_hex(16)
    (workdir / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
    key, pub = _service_account_key(workdir)
    etcd_client = f"http://127.0.0.1:{free_port()}"
    etcd_peer = f"http://127.0.0.1:{free_port()}"
    port = free_port()
    certs = workdir / "certs"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir)}
    procs: list[subprocess.Popen[bytes]] = []
    with log_path.open("ab") as log:
        procs.append(subprocess.Popen([str(etcd), str(workdir / "etcd"), etcd_client, etcd_peer],
                                      stdout=log, stderr=subprocess.STDOUT, env=env))
        procs.append(subprocess.Popen([
            str(apiserver), f"--etcd-servers={etcd_client}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={port}", f"--cert-dir={certs}",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={pub}", f"--service-account-signing-key-file={key}",
            "--service-cluster-ip-range=10.0.0.0/24", "--authorization-mode=RBAC",
            f"--token-auth-file={workdir / 'tokens.csv'}", "--v=0"],
            stdout=log, stderr=subprocess.STDOUT, env=env))
    url = f"https://127.0.0.1:{port}"
    ca = certs / "apiserver.crt"  # self-signed: its own CA
    kubeconfig = workdir / "kubeconfig"
    server = KubeAPI(url, token, ca, kubeconfig, log_path)
    try:
        _wait_ready(server, procs, timeout)
        _kubeconfig(kubeconfig, url, ca, token)
        yield server
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(workdir / "etcd", ignore_errors=True)


class KubeError(AssertionError):
    """The API server refused a call: its status code and message (the `Status` object)."""

    def __init__(self, what: str, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else body
        super().__init__(f"{what}: HTTP {status}: {message}")
        self.status, self.body = status, body


class Cluster:
    """Calls on a running API server by object (apiVersion and kind mapped through discovery)."""

    def __init__(self, server: KubeAPI) -> None:
        self.server = server
        self._resources: dict[tuple[str, str], tuple[str, bool]] = {}

    def _discover(self, api_version: str) -> None:
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        status, body = self.server.request("GET", base)
        if status != 200:
            raise KubeError(f"discovery of {api_version}", status, body)
        for res in body["resources"]:
            if "/" not in res["name"]:
                self._resources[(api_version, res["kind"])] = (res["name"], res["namespaced"])

    def path(self, api_version: str, kind: str, name: str | None = None,
             namespace: str | None = None) -> str:
        """The REST path of a kind (its collection, or one object when `name` is given)."""
        if (api_version, kind) not in self._resources:
            self._discover(api_version)
        plural, namespaced = self._resources[(api_version, kind)]
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if namespaced:
            base += f"/namespaces/{namespace or 'default'}"
        return f"{base}/{plural}" + (f"/{name}" if name else "")

    def apply(self, obj: dict[str, Any], *, manager: str = "argocd-controller",
              namespace: str | None = None, dry_run: bool = False, force: bool = True,
              strict: bool = True) -> Any:
        """Server-side apply of one object (strict field validation); KubeError when refused."""
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") or namespace
        query = f"?fieldManager={manager}&force={'true' if force else 'false'}"
        query += "&fieldValidation=" + ("Strict" if strict else "Ignore")
        if dry_run:
            query += "&dryRun=All"
        path = self.path(obj["apiVersion"], obj["kind"], meta["name"], ns)
        status, body = self.server.request("PATCH", path + query, obj,
                                           content_type="application/apply-patch+yaml")
        if status not in (200, 201):
            raise KubeError(f"apply {obj['kind']}/{meta['name']}", status, body)
        return body

    def create(self, obj: dict[str, Any], *, namespace: str | None = None,
               dry_run: bool = False) -> Any:
        """POST one object (strict field validation); KubeError when refused."""
        ns = (obj.get("metadata") or {}).get("namespace") or namespace
        query = "?fieldValidation=Strict" + ("&dryRun=All" if dry_run else "")
        status, body = self.server.request(
            "POST", self.path(obj["apiVersion"], obj["kind"], namespace=ns) + query, obj)
        if status not in (200, 201):
            raise KubeError(f"create {obj['kind']}/{obj['metadata'].get('name')}", status, body)
        return body

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        status, body = self.server.request("GET", self.path(api_version, kind, name, namespace))
        if status != 200:
            raise KubeError(f"get {kind}/{name}", status, body)
        return body

    def namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        """Create (or relabel) a namespace and its `default` ServiceAccount (no controller makes it)."""
        self.apply({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": labels or {}}}, manager="test")
        self.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "default", "namespace": name}}, manager="test")

    def install_crds(self, directory: Path, timeout: float = 60.0) -> list[str]:
        """Install every CRD in `directory` (YAML files) and wait until each is Established."""
        import yaml

        names = []
        for path in sorted(directory.glob("*.yaml")):
            # libyaml's loader when built in: the CRDs are 1.4 MB, ~10 s of pure-Python parsing
            for doc in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader",
                                                                       yaml.SafeLoader)):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    self.apply(doc, manager="test")
                    names.append(doc["metadata"]["name"])
        deadline = time.monotonic() + timeout
        for name in names:
            while True:
                crd = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
                conditions = (crd.get("status") or {}).get("conditions") or []
                if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"CRD {name} not Established in {timeout:.0f} s")
                time.sleep(0.2)
        self._resources.clear()  # discovery changed
        return names


if __name__ == "__main__":
    for path in build():
        print(path)
