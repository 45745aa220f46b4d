"""Misbehaving HTTP servers for the suite's hostile-target tests.

``HostileServer(behaviour)`` listens on a free loopback port in a background thread, speaks just
enough raw HTTP/1.1 (by hand, over asyncio streams) to misbehave precisely, and is stopped by the
test (``with HostileServer("stall_headers") as url: ...``). Every wait in it is bounded by the
server's stop event or ``MAX_HOLD_S``, every loop by a byte budget, so nothing outlives a test.

``closed_port_url()`` gives a URL on which nothing listens (connection refused).

Behaviours (``BEHAVIOURS``):

- ``stall_headers``: reads the request, then sends nothing.
- ``stall_mid_stream``: headers (chunked) and one complete frame, then silence.
- ``reset``: headers and part of the announced body, then a TCP RST (``SO_LINGER`` 0).
- ``reset_before_response``: reads the request and answers with a RST.
- ``endless``: a chunked 200 whose frames never end (until the client goes away).
- ``huge``: announces a multi-gigabyte body and streams it lazily, chunk by chunk.
- ``invalid_utf8``: a complete 200 body that is not UTF-8 (one SSE event for an SSE target).
- ``invalid_json``: a complete 200 body that is truncated JSON (one SSE event for an SSE target).
- ``redirect_loop``: ``302`` to the very same URL, forever.
- ``rate_limited`` / ``unavailable``: ``429`` / ``503`` with ``Retry-After`` on everything.
- ``html_error``: a ``502`` HTML page, as a reverse proxy in front of a dead server sends.
- ``garbage``: a reply that is not HTTP at all, then close.
- ``trickle``: a 200 whose body arrives one byte every ``TRICKLE_S`` (each read is quick; the
  whole exchange never ends).
- ``slow``: a whole 200 whose body is ``frame``, sent only after ``SLOW_S``.

With ``healthy_root=True`` a ``GET /`` gets a quick, well-formed ``404`` so the suite's preflight
passes and the misbehaviour is met by the checks themselves; otherwise the root misbehaves too.
``canned`` maps ``"METHOD /path"`` to a well-formed JSON answer ``(status, body)``, so a protocol's
preamble (discovering an agent, say) succeeds and the misbehaviour is met where it matters.
``hostile`` (a regular expression) limits the misbehaviour to the paths it matches whole; any
other request that nothing canned answers gets a quick JSON ``404``.
``frame`` is the one frame streaming behaviours send (a line of NDJSON by default; pass an SSE
``data:`` block for SSE targets).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import struct
from http import HTTPStatus
from types import TracebackType

from specs.serving import ServerThread

MAX_HOLD_S = 120.0
"""Longest a stalling connection is held open if the test forgets to stop the server."""
MAX_STREAM_BYTES = 256 << 20
"""Upper bound of what an endless or huge response ever sends on one connection."""
HUGE_ANNOUNCED = 4 << 30
CHUNK = 64 << 10
TRICKLE_S = 0.2
SLOW_S = 3.0
"""How long a "slow" call takes to answer: longer than the tests' 1 s timeout, far shorter than a hang."""

BEHAVIOURS = (
    "stall_headers",
    "stall_mid_stream",
    "reset",
    "reset_before_response",
    "endless",
    "huge",
    "invalid_utf8",
    "invalid_json",
    "redirect_loop",
    "rate_limited",
    "unavailable",
    "html_error",
    "garbage",
    "trickle",
    "slow",
)

NDJSON_FRAME = b'{"response": {"type": "AI", "text": "hello"}}\n'
SSE_FRAME = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
)


def closed_port_url() -> str:
    """``http://127.0.0.1:PORT`` where PORT was free a moment ago and nothing listens now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _head(status: str, headers: dict[str, str], close: bool = True) -> bytes:
    fields = {**headers, "Connection": "close"} if close else headers
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in fields.items()), "", ""]
    return "\r\n".join(lines).encode("latin-1")


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class HostileServer(ServerThread):
    name = "hostile server"
    start_timeout_s = 10.0

    def __init__(
        self,
        behaviour: str,
        *,
        healthy_root: bool = False,
        frame: bytes = NDJSON_FRAME,
        content_type: str = "application/json",
        canned: dict[str, tuple[int, object]] | None = None,
        hostile: str | None = None,
    ) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        super().__init__()
        self.behaviour = behaviour
        self.hostile = re.compile(hostile) if hostile is not None else None
        self.canned = {k: (status, json.dumps(body).encode()) for k, (status, body) in (canned or {}).items()}
        if healthy_root:
            self.canned.setdefault("GET /", (404, b'{"message": "Not Found"}'))
        self.frame = frame
        self.content_type = content_type
        self.requests: list[str] = []
        """Request lines seen ("GET /path"), so a test can tell the target was actually hit."""
        self.bytes_sent = 0
        """Body bytes written by streaming behaviours, to show a client stopped reading early."""

    # lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> str:  # type: ignore[override]  # the url: what every test wants
        return self.start().url

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if not self.stop():
            raise RuntimeError("the hostile server did not stop within 10 s")

    async def serve(self, stop: asyncio.Event) -> None:
        tasks: set[asyncio.Task[None]] = set()
        writers: set[asyncio.StreamWriter] = set()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            tasks.add(task)
            writers.add(writer)
            try:
                await self._connection(reader, writer)
            except (
                ConnectionError,
                asyncio.IncompleteReadError,
                asyncio.LimitOverrunError,
                OSError,
                TimeoutError,
                ValueError,
                asyncio.CancelledError,
            ):
                pass  # the client went away, sent nonsense, or the server is stopping
            finally:
                tasks.discard(task)
                writers.discard(writer)
                writer.close()

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        self.listening(server.sockets[0].getsockname()[1])
        try:
            await stop.wait()
        finally:
            server.close()
            for writer in list(writers):
                writer.transport.abort()  # wakes any write blocked on a client that stopped reading
            if tasks:
                await asyncio.wait(list(tasks), timeout=5)
            for task in list(tasks):
                task.cancel()
            await asyncio.wait_for(server.wait_closed(), 5)

    async def _hold(self, seconds: float = MAX_HOLD_S) -> None:
        """Keep the connection open, sending nothing, until the server stops (bounded)."""
        assert self._stop is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    # one connection ----------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(100):  # keep-alive, bounded
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            lines = head.decode("latin-1").split("\r\n")
            method, target = ([*lines[0].split(" "), "", ""])[:2]
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            length = int(headers.get("content-length", "0") or 0)
            if length:
                await reader.readexactly(min(length, 16 << 20))
            elif headers.get("transfer-encoding", "").lower() == "chunked":
                await self._drain_chunked(reader)
            self.requests.append(f"{method} {target}")
            path = target.split("?", 1)[0]
            answer = self.canned.get(f"{method} {path}")
            if answer is None and self.hostile is not None and not self.hostile.fullmatch(path):
                answer = (404, b'{"message": "Not Found"}')
            if answer is not None:
                status, body = answer
                writer.write(
                    _head(
                        f"{status} {HTTPStatus(status).phrase}",
                        {"Content-Type": "application/json", "Content-Length": str(len(body))},
                        close=False,
                    )
                    + body
                )
                await writer.drain()
                continue
            await self._misbehave(target, writer)
            return

    async def _drain_chunked(self, reader: asyncio.StreamReader) -> None:
        for _ in range(10_000):
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            await reader.readexactly(size + 2)
            if size == 0:
                return

    async def _misbehave(self, target: str, writer: asyncio.StreamWriter) -> None:
        b = self.behaviour
        ctype = self.content_type
        if b == "stall_headers":
            await self._hold()
        elif b == "stall_mid_stream":
            writer.write(_head("200 OK", {"Content-Type": ctype, "Transfer-Encoding": "chunked"}) + _chunk(self.frame))
            await writer.drain()
            await self._hold()
        elif b == "reset":
            writer.write(_head("200 OK", {"Content-Type": ctype, "Content-Length": "1000"}) + b'{"task_id": "')
            await writer.drain()
            await asyncio.sleep(0.01)  # let the head and the partial body leave first
            self._reset(writer)
        elif b == "reset_before_response":
            self._reset(writer)
        elif b == "endless":
            writer.write(_head("200 OK", {"Content-Type": ctype, "Transfer-Encoding": "chunked"}))
            block = self.frame * max(1, CHUNK // len(self.frame))
            await self._pump(writer, lambda: _chunk(block))
        elif b == "huge":
            writer.write(_head("200 OK", {"Content-Type": ctype, "Content-Length": str(HUGE_ANNOUNCED)}))
            block = b'{"pad": "' + b"x" * (CHUNK - 10)  # one lazily repeated block, never the whole body
            await self._pump(writer, lambda: block)
        elif b in ("invalid_utf8", "invalid_json"):
            if b == "invalid_utf8":
                body = b'{"task_id": "\xff\xfe\xfa", "input": "\xc3\x28"}'
            else:
                body = b'{"task_id": "t1", "inp'
            if ctype == "text/event-stream":  # well framed, bad inside
                body = b"data: " + body + b"\n\n"
            writer.write(_head("200 OK", {"Content-Type": ctype, "Content-Length": str(len(body))}) + body)
            await writer.drain()
        elif b == "redirect_loop":
            writer.write(_head("302 Found", {"Location": target, "Content-Length": "0"}))
            await writer.drain()
        elif b in ("rate_limited", "unavailable"):
            status = "429 Too Many Requests" if b == "rate_limited" else "503 Service Unavailable"
            body = b'{"message": "come back later"}'
            writer.write(
                _head(
                    status,
                    {"Retry-After": "3600", "Content-Type": "application/json", "Content-Length": str(len(body))},
                )
                + body
            )
            await writer.drain()
        elif b == "html_error":
            body = (
                b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
                b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            )
            writer.write(
                _head("502 Bad Gateway", {"Content-Type": "text/html", "Content-Length": str(len(body))}) + body
            )
            await writer.drain()
        elif b == "trickle":
            writer.write(_head("200 OK", {"Content-Type": ctype, "Content-Length": "100000"}))
            assert self._stop is not None
            for _ in range(100_000):
                writer.write(b" ")
                self.bytes_sent += 1
                await writer.drain()
                await self._hold(TRICKLE_S)
                if self._stop.is_set():
                    return
        elif b == "slow":  # a whole, valid-looking answer, but only after SLOW_S
            await self._hold(SLOW_S)
            writer.write(_head("200 OK", {"Content-Type": ctype, "Content-Length": str(len(self.frame))}) + self.frame)
            await writer.drain()
        elif b == "garbage":
            writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\x00\x01\x02 this is not HTTP\r\n\r\n")
            await writer.drain()
        else:  # pragma: no cover - guarded in __init__
            raise AssertionError(b)

    async def _pump(self, writer: asyncio.StreamWriter, block: object) -> None:
        """Write blocks until the client stops reading (backpressure) or goes away, or the budget or
        the server's stop ends it: never more than MAX_STREAM_BYTES, never buffered in full."""
        assert self._stop is not None and callable(block)
        sent = 0
        while sent < MAX_STREAM_BYTES and not self._stop.is_set():
            data = block()
            writer.write(data)
            sent += len(data)
            self.bytes_sent += len(data)
            try:
                await asyncio.wait_for(writer.drain(), 30)
            except TimeoutError:
                return

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
