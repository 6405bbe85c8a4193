"""A small S3-compatible server on loopback that keeps objects as files in a local directory.

It stands in for an object store where a real Trino needs one and this machine has none (Trino
476's spooling file system serves s3://, gs:// and abfs:// only, never file://). It speaks the
path-style REST calls Trino's native S3 file system (AWS SDK v2) makes for spooled segments
(PutObject, multipart uploads, GetObject with ranges, HeadObject, DeleteObject, DeleteObjects,
ListObjectsV2) and the presigned GETs a client makes. It checks no signature and ignores
server-side encryption headers (SSE-C): what it keeps is the bytes it was sent. Every request is
recorded (method, bucket/key, User-Agent) so that a test can say who wrote and who read what.
"""

from __future__ import annotations

import hashlib
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.sax.saxutils import escape

_XML = "application/xml"
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
_DELETE_KEY = re.compile(r"<Key>(.*?)</Key>", re.DOTALL)


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # bucket/key (or bucket alone), decoded
    query: str
    agent: str


@dataclass
class S3Server:
    """Serve `root` (one directory per bucket) on 127.0.0.1; `start()` returns the endpoint."""

    root: Path
    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _uploads: dict[str, dict[int, bytes]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> str:
        owner = self

        class Handler(_Handler):
            server_state = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def file(self, path: str) -> Path:
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root.resolve()) or target == self.root.resolve():
            raise ValueError(f"bad object path {path!r}")
        return target


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK expects
    server_state: S3Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return

    # --- request plumbing ----------------------------------------------------------------------

    def _parts(self) -> tuple[str, str, dict[str, list[str]]]:
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path).lstrip("/")
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        self.server_state.record(Request(self.command, path, url.query,
                                         self.headers.get("User-Agent", "")))
        return path, url.query, query

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        sha = self.headers.get("x-amz-content-sha256", "")
        if sha.startswith("STREAMING-") or "aws-chunked" in self.headers.get(
                "Content-Encoding", ""):
            data = _aws_chunks(data)
        return data

    def _send(self, status: int, body: bytes = b"", content_type: str = _XML,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _missing(self, path: str) -> None:
        self._send(404, f"<Error><Code>NoSuchKey</Code><Key>{escape(path)}</Key></Error>"
                   .encode())

    # --- verbs ---------------------------------------------------------------------------------

    def do_PUT(self) -> None:
        path, _, query = self._parts()
        data = self._body()
        if "uploadId" in query:
            with self.server_state._lock:
                parts = self.server_state._uploads[query["uploadId"][0]]
                parts[int(query["partNumber"][0])] = data
        elif "/" in path:
            target = self.server_state.file(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        self._send(200, headers={"ETag": f'"{hashlib.md5(data).hexdigest()}"'})

    def do_POST(self) -> None:
        path, _, query = self._parts()
        data = self._body()
        if "delete" in query:
            deleted = []
            for key in _DELETE_KEY.findall(data.decode()):
                key = key.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                self.server_state.file(f"{path}/{key}").unlink(missing_ok=True)
                deleted.append(f"<Deleted><Key>{escape(key)}</Key></Deleted>")
            self._send(200, f"<DeleteResult>{''.join(deleted)}</DeleteResult>".encode())
        elif "uploads" in query:
            upload = hashlib.sha1(f"{path}{len(self.server_state._uploads)}".encode()).hexdigest()
            with self.server_state._lock:
                self.server_state._uploads[upload] = {}
            bucket, _, key = path.partition("/")
            self._send(200, (f"<InitiateMultipartUploadResult><Bucket>{escape(bucket)}</Bucket>"
                             f"<Key>{escape(key)}</Key><UploadId>{upload}</UploadId>"
                             "</InitiateMultipartUploadResult>").encode())
        elif "uploadId" in query:
            with self.server_state._lock:
                parts = self.server_state._uploads.pop(query["uploadId"][0])
            target = self.server_state.file(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"".join(parts[n] for n in sorted(parts)))
            self._send(200, (f"<CompleteMultipartUploadResult><Key>{escape(path)}</Key>"
                             "<ETag>\"x\"</ETag></CompleteMultipartUploadResult>").encode())
        else:
            self._send(400, b"<Error><Code>NotImplemented</Code></Error>")

    def do_GET(self) -> None:
        path, _, query = self._parts()
        if "/" not in path:
            self._list(path, query.get("prefix", [""])[0])
            return
        target = self.server_state.file(path)
        if not target.is_file():
            self._missing(path)
            return
        data = target.read_bytes()
        m = _RANGE.fullmatch(self.headers.get("Range", ""))
        if m is None:
            self._send(200, data, "application/octet-stream", self._meta(data))
            return
        start = int(m[1]) if m[1] else max(len(data) - int(m[2]), 0)
        end = min(int(m[2]) if m[1] and m[2] else len(data) - 1, len(data) - 1)
        headers = {**self._meta(data), "Content-Range": f"bytes {start}-{end}/{len(data)}"}
        self._send(206, data[start:end + 1], "application/octet-stream", headers)

    def do_HEAD(self) -> None:
        path, _, _ = self._parts()
        target = self.server_state.file(path) if "/" in path else None
        if target is None or not target.is_file():
            self._send(404)
            return
        data = target.read_bytes()
        self.send_response(200)
        for k, v in self._meta(data).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()

    def do_DELETE(self) -> None:
        path, _, query = self._parts()
        if "uploadId" in query:
            with self.server_state._lock:
                self.server_state._uploads.pop(query["uploadId"][0], None)
        elif "/" in path:
            self.server_state.file(path).unlink(missing_ok=True)
        self._send(204)

    def _meta(self, data: bytes) -> dict[str, str]:
        return {"ETag": f'"{hashlib.md5(data).hexdigest()}"',
                "Last-Modified": formatdate(usegmt=True), "Accept-Ranges": "bytes"}

    def _list(self, bucket: str, prefix: str) -> None:
        base = self.server_state.root / bucket
        keys = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()) \
            if base.is_dir() else []
        contents = "".join(
            f"<Contents><Key>{escape(k)}</Key><Size>{(base / k).stat().st_size}</Size>"
            f"<LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>\"x\"</ETag>"
            "<StorageClass>STANDARD</StorageClass></Contents>"
            for k in keys if k.startswith(prefix))
        self._send(200, (f"<ListBucketResult><Name>{escape(bucket)}</Name>"
                         f"<Prefix>{escape(prefix)}</Prefix><KeyCount>{contents.count('<Key>')}"
                         f"</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
                         f"{contents}</ListBucketResult>").encode())


def _aws_chunks(data: bytes) -> bytes:
    """The payload of an `aws-chunked` body (`<hex size>;chunk-signature=...\\r\\n<data>\\r\\n`
    ... `0;...\\r\\n` and optional trailers)."""
    out, pos = b"", 0
    while pos < len(data):
        eol = data.index(b"\r\n", pos)
        size = int(data[pos:eol].split(b";")[0], 16)
        if size == 0:
            break
        out += data[eol + 2:eol + 2 + size]
        pos = eol + 2 + size + 2
    return out
