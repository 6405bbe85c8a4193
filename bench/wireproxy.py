"""A MongoDB-wire proxy in front of FerretDB that adds what FerretDB v1 lacks for `trinogen watch`.

FerretDB v1 has no change streams (it answers NotImplemented, 238, and cannot even parse a
database-level `aggregate: 1`), and it refuses keys containing '.' (every connector property).
This proxy listens on 127.0.0.1, passes every command through to FerretDB byte for byte, and:

- serves `aggregate` with `$changeStream` and the `getMore`s of its cursors itself, from an
  in-memory "oplog" the bench appends to (`emit`) right after FerretDB acknowledged a write:
  the server-side `$match` is applied (mongomock's filter), the `$project` too, a `getMore`
  waits up to its `maxTimeMS` (<= 1 s) and returns as soon as an event arrives, as a real
  server does; `resumeAfter` tokens are honoured;
- stores nothing itself: documents, lease, resume token and status rows live in FerretDB;
- renames keys back on the way out: the bench stores a key's '.' as U+FF0E (`escape`), and any
  reply holding that character is decoded, its keys renamed back to '.', and re-encoded (only
  such replies: the cluster documents; a reply without it is passed on untouched).

Only OP_MSG is looked at; the legacy OP_QUERY handshake passes through.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import bson
from bson import Timestamp

# The tests' change-stream server writes its resume tokens the same way (bench/watch.py puts
# the repository root on sys.path).
from tests.mongowire import token, token_seq

OP_MSG = 2013
ESC = "\uff0e"  # FULLWIDTH FULL STOP: stands for '.' inside a key stored in FerretDB
ESC_BYTES = ESC.encode()
CURSOR_BASE = 1 << 62  # the proxy's cursor ids: far from FerretDB's


def escape(value: Any) -> Any:
    """A document with every '.' in its keys replaced by ESC (what FerretDB v1 can store)."""
    if isinstance(value, Mapping):
        return {k.replace(".", ESC): escape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape(v) for v in value]
    return value


def unescape(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k.replace(ESC, "."): unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unescape(v) for v in value]
    return value


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise ConnectionError("peer closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_message(sock: socket.socket) -> bytes:
    head = _recv_exact(sock, 4)
    (length,) = struct.unpack("<i", head)
    return head + _recv_exact(sock, length - 4)


def msg_body(data: bytes) -> tuple[int, dict[str, Any] | None]:
    """The flag bits and the body (kind 0 section) of an OP_MSG; (0, None) for other opcodes."""
    length, _, _, opcode = struct.unpack_from("<iiii", data)
    if opcode != OP_MSG:
        return 0, None
    (flags,) = struct.unpack_from("<I", data, 16)
    pos, end = 20, length - (4 if flags & 1 else 0)
    while pos < end:
        kind = data[pos]
        pos += 1
        (size,) = struct.unpack_from("<i", data, pos)
        if kind == 0:
            return flags, bson.decode(data[pos:pos + size])
        pos += size
    return flags, None


def msg(request_id: int, response_to: int, body: Mapping[str, Any]) -> bytes:
    payload = bson.encode(body)
    return struct.pack("<iiiiI", 21 + len(payload), request_id, response_to, OP_MSG, 0) + \
        b"\x00" + payload


def _project(event: dict[str, Any], stages: list[dict[str, Any]]) -> dict[str, Any]:
    for st in stages:
        if "$project" in st:
            p = st["$project"]
            keep = {k for k, v in p.items() if v} | ({"_id"} if p.get("_id", 1) else set())
            event = {k: v for k, v in event.items() if k in keep}
    return event


class WireProxy:
    """The proxy: `start()`, `uri`, `emit(...)` after each write, `stop()`."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._cond = threading.Condition()
        self._events: list[dict[str, Any]] = []  # event seq n is _events[n - 1]
        self._cursors: dict[int, tuple[int, list[dict[str, Any]]]] = {}  # id -> (next, pipeline)
        self._next_cursor = CURSOR_BASE
        self._ids = 1 << 20
        self._stopped = False
        self.unescaped_replies = 0
        # (when it ended, time.time(); seconds; command name) of every command passed to FerretDB
        self.upstream_calls: list[tuple[float, float, str]] = []

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/"

    def start(self) -> WireProxy:
        threading.Thread(target=self._accept, daemon=True, name="wireproxy").start()
        return self

    def stop(self) -> None:
        self._stopped = True
        with self._cond:
            self._cond.notify_all()
        self._listener.close()

    def emit(self, op: str, db: str, coll: str, doc_id: Any) -> None:
        """Append one change event (the write was acknowledged) and wake waiting getMores."""
        with self._cond:
            seq = len(self._events) + 1
            now = datetime.now(UTC)
            event: dict[str, Any] = {
                "_id": token(seq), "operationType": op,
                "clusterTime": Timestamp(int(now.timestamp()), seq), "wallTime": now,
                "ns": {"db": db, "coll": coll}, "documentKey": {"_id": doc_id},
            }
            if op == "update":
                event["updateDescription"] = {"updatedFields": {}, "removedFields": []}
            self._events.append(event)
            self._cond.notify_all()

    # --- connections ---------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while not self._stopped:
                data = read_message(client)
                flags, body = msg_body(data)
                answer = self._local(data, body) if body is not None else None
                if answer is not None:
                    client.sendall(answer)
                    continue
                sent = time.perf_counter()
                upstream.sendall(data)
                if flags & 2:  # moreToCome: the client expects no reply
                    continue
                while True:
                    reply = read_message(upstream)
                    rflags, _ = msg_body(reply)
                    self.upstream_calls.append((time.time(), time.perf_counter() - sent,
                                                next(iter(body or {}), "?")))
                    client.sendall(self._unescaped(reply))
                    if not rflags & 2:
                        break
        except (ConnectionError, OSError):
            pass
        finally:
            client.close()
            upstream.close()

    def _unescaped(self, reply: bytes) -> bytes:
        if ESC_BYTES not in reply:
            return reply
        _, rid, to, _ = struct.unpack_from("<iiii", reply)
        _, body = msg_body(reply)
        if body is None:
            return reply
        self.unescaped_replies += 1
        return msg(rid, to, unescape(body))

    # --- the change streams --------------------------------------------------------------------

    def _local(self, data: bytes, body: dict[str, Any]) -> bytes | None:
        name = next(iter(body), "")
        (request_id,) = struct.unpack_from("<i", data, 4)
        reply: dict[str, Any] | None = None
        if name == "aggregate":
            pipeline = body.get("pipeline") or [{}]
            if "$changeStream" in pipeline[0]:
                reply = self._aggregate(body, pipeline)
        elif name == "getMore" and body["getMore"] in self._cursors:
            reply = self._getmore(body)
        elif name == "killCursors" and all(c in self._cursors for c in body.get("cursors", [])):
            with self._cond:
                for c in body.get("cursors", []):
                    self._cursors.pop(c, None)
            reply = {"cursorsKilled": body.get("cursors", []), "ok": 1.0}
        if reply is None:
            return None
        with self._cond:
            self._ids += 1
            rid = self._ids
        return msg(rid, request_id, reply)

    def _ns(self, body: dict[str, Any]) -> str:
        coll = body["aggregate"]
        return f"{body['$db']}.{'$cmd.aggregate' if coll == 1 else coll}"

    def _aggregate(self, body: dict[str, Any], pipeline: list[dict[str, Any]]) -> dict[str, Any]:
        stage = pipeline[0]["$changeStream"]
        resume = stage.get("resumeAfter") or stage.get("startAfter")
        with self._cond:
            if resume is not None:
                seq = token_seq(resume)
                if seq is None or seq > len(self._events):
                    return {"ok": 0.0, "code": 260, "codeName": "InvalidResumeToken",
                            "errmsg": "invalid resume token"}
                position = seq + 1
            else:
                position = len(self._events) + 1
            cid = self._next_cursor
            self._next_cursor += 1
            self._cursors[cid] = (position, pipeline[1:])
        return {"cursor": {"id": cid, "ns": self._ns(body), "firstBatch": [],
                           "postBatchResumeToken": token(position - 1)},
                "operationTime": Timestamp(int(time.time()), 1), "ok": 1.0}

    def _getmore(self, body: dict[str, Any]) -> dict[str, Any]:
        from mongomock.filtering import filter_applies

        cid = body["getMore"]
        deadline = time.monotonic() + min(float(body.get("maxTimeMS", 1000)), 1000.0) / 1000
        with self._cond:
            while True:
                if cid not in self._cursors:
                    return {"ok": 0.0, "code": 43, "codeName": "CursorNotFound",
                            "errmsg": "cursor id not found"}
                position, stages = self._cursors[cid]
                if position <= len(self._events) or self._stopped:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            new = self._events[position - 1:]
            self._cursors[cid] = (len(self._events) + 1, stages)
            pbrt = token(len(self._events))
        match = next((st["$match"] for st in stages if "$match" in st), {})
        batch = [_project(e, stages) for e in new if filter_applies(match, e)]
        return {"cursor": {"id": cid, "ns": f"{body['$db']}.{body.get('collection')}",
                           "nextBatch": batch, "postBatchResumeToken": pbrt}, "ok": 1.0}
