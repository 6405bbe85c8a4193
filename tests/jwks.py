"""JSON Web Tokens for the tests: an RSA key, its JWKS served over HTTPS on loopback, RS256 tokens.

No JOSE library: openssl (already needed by the authentication tests) makes the key, prints its
modulus and signs (`openssl dgst -sha256 -sign`: RSASSA-PKCS1-v1_5 over SHA-256, which is RS256,
RFC 7518 section 3.3). The JWKS (RFC 7517) names the key by `kid`; tokens carry the same `kid`.
The HTTPS server uses a certificate the caller gives (the test's own CA, trusted by Trino through
the option's `jwks_ca`).
"""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _run(*cmd: str, cwd: Path, data: bytes | None = None) -> bytes:
    out = subprocess.run(cmd, cwd=cwd, input=data, capture_output=True, check=False)
    if out.returncode != 0:
        raise AssertionError(f"{cmd[0]} failed: {out.stderr.decode()[-2000:]}")
    return out.stdout


@dataclass(frozen=True)
class SigningKey:
    """An RSA private key in a PEM file, and the id the JWKS names it by."""

    pem: Path
    kid: str

    @classmethod
    def generate(cls, root: Path, kid: str) -> SigningKey:
        root.mkdir(parents=True, exist_ok=True)
        pem = root / f"{kid}.key"
        _run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
             "-out", str(pem), cwd=root)
        return cls(pem, kid)

    def jwk(self) -> dict[str, str]:
        """The public key as a JWK: modulus from openssl, exponent 65537 (openssl's default)."""
        out = _run("openssl", "rsa", "-in", str(self.pem), "-noout", "-modulus", "-text",
                   cwd=self.pem.parent).decode()
        assert "publicExponent: 65537" in out, out[-500:]
        modulus = next(line for line in out.splitlines() if line.startswith("Modulus="))
        n = bytes.fromhex(modulus.removeprefix("Modulus="))
        return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256", "n": _b64(n),
                "e": _b64((65537).to_bytes(3, "big"))}

    def token(self, claims: Mapping[str, Any], kid: str | None = None) -> str:
        """A compact RS256 JWT with `claims` (kid: the header's key id, this key's by default)."""
        header = {"alg": "RS256", "typ": "JWT", "kid": kid or self.kid}
        signing_input = ".".join(_b64(json.dumps(p, separators=(",", ":")).encode())
                                 for p in (header, dict(claims)))
        signature = _run("openssl", "dgst", "-sha256", "-sign", str(self.pem),
                         cwd=self.pem.parent, data=signing_input.encode())
        return f"{signing_input}.{_b64(signature)}"


def claims(subject: str, issuer: str, audience: str, *, ttl: int = 600) -> dict[str, Any]:
    now = int(time.time())
    return {"sub": subject, "iss": issuer, "aud": audience, "iat": now, "exp": now + ttl}


@dataclass(frozen=True)
class JwksServer:
    url: str  # https://localhost:<port>/jwks.json
    requests: list[str]  # paths fetched, in order


@contextmanager
def serving(keys: list[SigningKey], cert: Path, key: Path) -> Iterator[JwksServer]:
    """The keys' JWKS at https://localhost:<port>/jwks.json, with `cert`/`key` (PEM)."""
    body = json.dumps({"keys": [k.jwk() for k in keys]}).encode()
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            ok = self.path == "/jwks.json"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield JwksServer(f"https://localhost:{server.server_address[1]}/jwks.json", seen)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
