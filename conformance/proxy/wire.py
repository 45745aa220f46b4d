"""HTTP/1.1 between the client and the upstream on asyncio protocols: the proxy's forwarding path.

Each client connection (``Downstream``) parses its requests with httptools (llhttp, Node's parser)
and forwards each head and body piece as it arrives over a pooled keep-alive connection to the
upstream (``Pool``, ``Upstream``); the answer comes back the same way, piece by piece, in the
framing the upstream chose. No second HTTP server and client, no per-request task: one exchange
is a handful of callbacks on the event loop.

The ``Relay`` (forward.py) hears of each step *after* its bytes were handed to the client's
transport, so judging never delays a byte; only an answer the relay asks to ``hold`` (``--errors``
names violations in a header, which needs the whole answer judged) waits for its end. Every wait
is bounded: connecting, each read, a whole answer, a stream; so are heads and bodies.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Protocol, cast

import httptools

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"upgrade",
    }
)
"""Headers that belong to one connection, not to the message (RFC 9110 7.6.1). ``Content-Length``
and ``Transfer-Encoding`` pass: each message keeps the framing its sender chose."""
IDEMPOTENT = frozenset({b"GET", b"HEAD", b"OPTIONS", b"PUT", b"DELETE", b"TRACE"})
MAX_HEAD_BYTES = 64 << 10
"""A request or answer head larger than this is refused (llhttp itself sets no bound)."""
FORWARD, KEEP, HOLD = 0, 1, 2
"""What the relay asks of an answer: pass it on as it comes (a stream, judged piece by piece), pass
it on and keep its pieces for judging the whole (references, not copies), or hold it whole until it
is judged."""


def head_share(tail: bytes, data: bytes) -> int:
    """Bytes of ``data`` that belong to a message head not yet ended: all of them, or those up to the
    blank line that ends it (a body that arrives in the same read is the body's, not the head's);
    ``tail`` is the last three bytes read before, where that line may have begun."""
    end = (tail + data).find(b"\r\n\r\n")
    return len(data) if end < 0 else max(0, end + 4 - len(tail))


@dataclass(frozen=True, slots=True)
class RelayLimits:
    timeout: float
    """Seconds to connect, between two reads of an answer, and for a whole answer."""
    max_request_bytes: int
    max_head_bytes: int = MAX_HEAD_BYTES


REST_S = 2.0
"""How long an answer whose client left is still read, to be judged whole."""


class Relayed:
    """One request and its answer as they pass; the relay keeps its own state in ``note``.

    Scalars default on the class, so a new exchange assigns only what differs (no ``__slots__``:
    an exchange is made per request, and most of these stay at their defaults)."""

    up: Upstream | None = None
    method = b""
    version = "1.1"
    head = b""
    """The request's head as sent to the upstream."""
    chunked = False
    size = 0
    request_done = False
    keep_client = True
    status = 0
    """0 until the answer's head arrived."""
    reason = b""
    response_chunked = False
    close_delimited = False
    answered = False
    """Whether the client got (the start of) an answer: after that a failure can only cut."""
    mode = FORWARD
    response_size = 0
    response_limit = 1 << 62
    total_s = 0.0
    """Longest the answer may take once its head arrived (the relay sets it)."""
    started = 0.0
    last = 0.0
    head_at = 0.0
    retried = False
    finished = False
    told = False
    """Whether the relay heard that the request is complete."""
    early = False
    """The answer ended before the request did: the relay judges both when the request ends."""
    left_at = 0.0
    """When the client left mid-answer: the rest is still read and judged for ``REST_S``."""
    note: object = None

    def __init__(self, down: Downstream) -> None:
        self.down = down
        self.target = b""
        self.headers: list[tuple[bytes, bytes]] = []
        """The request's headers to forward (hop-by-hop ones and Host left out)."""
        self.lowered: dict[str, str] = {}
        """The request's headers, names lower-cased, repeats joined with ``, ``."""
        self.body: list[bytes] = []
        """The request body's pieces as received (kept, not copied: the relay judges the whole)."""
        self.response_headers: list[tuple[bytes, bytes]] = []
        self.response_lowered: dict[str, str] = {}
        self.held: list[bytes] = []
        """The answer's body pieces, when the relay keeps or holds them."""
        self.extra: list[tuple[bytes, bytes]] = []
        """Headers the relay adds to the answer's head."""

    @property
    def path(self) -> str:
        return self.target.partition(b"?")[0].decode("latin-1")

    @property
    def query(self) -> str:
        return self.target.partition(b"?")[2].decode("latin-1")


class Relay(Protocol):
    """What the proxy does with each exchange; every method runs on the loop, none may block."""

    def local(self, x: Relayed) -> tuple[int, bytes] | None:
        """An answer the proxy gives itself (status, JSON body) instead of forwarding, or None."""

    def request_complete(self, x: Relayed) -> None:
        """The whole request was forwarded (or the answer began before it ended)."""

    def response_head(self, x: Relayed) -> int:
        """The answer's status and headers: ``FORWARD``, ``KEEP`` or ``HOLD``; it sets the
        answer's bounds (``total_s``, ``response_limit``) and may add headers (``extra``)."""

    def response_piece(self, x: Relayed, data: bytes) -> None:
        """A piece of a ``FORWARD`` answer's body, already passed on."""

    def response_complete(self, x: Relayed) -> None:
        """The answer ended (passed on, unless held: then it goes once this returns, with
        whatever ``extra`` headers were added)."""

    def failed(self, x: Relayed, status: int, message: str) -> bytes:
        """The upstream failed, stalled or was cut (after its answer began when ``x.status``):
        the body of the proxy-made answer the client gets if it saw nothing yet."""

    def error(self, status: int, message: str) -> bytes:
        """A proxy-made answer's body in the protocol's error shape (a request refused unforwarded)."""

    def client_gone(self, x: Relayed) -> None:
        """The client left before its answer ended."""

    def late(self, x: Relayed) -> None:
        """The request ended after its answer was passed on whole (an early refusal): judge both."""


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b"Unknown"


def plain_answer(status: int, body: bytes, close: bool, content_type: bytes = b"application/json") -> bytes:
    head = b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (
        status,
        _reason(status),
        content_type,
        len(body),
    )
    return head + (b"Connection: close\r\n\r\n" if close else b"\r\n") + body


class Endpoint(asyncio.Protocol):
    """A connection's end in the proxy. While the wire is corked (inside a ``data_received``),
    what it sends is gathered and written once at the end: a request's head and body, or an
    answer's head, body and last chunk, go out in one system call instead of three."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.transport: asyncio.Transport | None = None
        self.out: list[bytes] = []
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio's subclasses

    def send(self, *pieces: bytes) -> None:
        if self.closed or self.transport is None:
            return
        if self.wire.corked:
            if not self.out:
                self.wire.dirty.append(self)
            self.out += pieces
        elif len(pieces) == 1:
            self.transport.write(pieces[0])
        else:
            self.transport.writelines(pieces)

    def flush(self) -> None:
        out = self.out
        if out:
            self.out = []
            if self.transport is not None and not self.closed:
                self.transport.write(out[0]) if len(out) == 1 else self.transport.writelines(out)

    def _close(self) -> None:
        self.flush()
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Downstream(Endpoint):
    """One client connection: its requests in order, one exchange in flight at a time."""

    def __init__(self, wire: Wire) -> None:
        super().__init__(wire)
        self.parser = httptools.HttpRequestParser(self)
        self.current: Relayed | None = None
        """The exchange whose answer the client waits for."""
        self.reading: Relayed | None = None
        """The request being parsed (the current one, or a pipelined one behind it)."""
        self.queue: deque[Relayed] = deque()
        self.in_head = True
        self.head_bytes = 0
        self.head_tail = b""

    # asyncio callbacks --------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.wire.downstreams.add(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        if self.in_head:
            self.head_bytes += head_share(self.head_tail, data)
            self.head_tail = (self.head_tail + data)[-3:]
            if self.head_bytes > self.wire.limits.max_head_bytes:
                return self._refuse(431, "the request head exceeds the proxy's bound")
        wire = self.wire
        wire.corked = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._refuse(501, "the proxy does not forward protocol upgrades or CONNECT")
        except httptools.HttpParserError as exc:
            self._refuse(400, f"the request is not valid HTTP/1.1: {exc}")
        finally:
            wire.corked = False
            wire.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.wire.downstreams.discard(self)
        for x in (self.current, *self.queue):
            if x is not None:
                self.wire.abandon(x, listen=x is self.current)
        self.queue.clear()

    def pause_writing(self) -> None:
        up = self.current.up if self.current is not None else None
        if up is not None and up.transport is not None:
            up.transport.pause_reading()  # the client reads slower than the upstream sends

    def resume_writing(self) -> None:
        up = self.current.up if self.current is not None else None
        if up is not None and up.transport is not None:
            up.transport.resume_reading()

    # httptools callbacks ------------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self.reading = Relayed(self)

    def on_url(self, url: bytes) -> None:
        if self.reading is not None:
            self.reading.target += url

    def on_header(self, name: bytes, value: bytes) -> None:
        x = self.reading
        if x is None:
            return
        key = name.lower()
        text = key.decode("latin-1")
        decoded = value.decode("latin-1")
        lowered = x.lowered
        lowered[text] = f"{lowered[text]}, {decoded}" if text in lowered else decoded
        if key not in HOP_BY_HOP and key != b"host":
            x.headers.append((name, value))

    def on_headers_complete(self) -> None:
        x = self.reading
        if x is None or self.closed:
            return
        parser = self.parser
        self.in_head = False
        self.head_bytes = 0
        self.head_tail = b""
        x.method = parser.get_method()
        x.version = parser.get_http_version()
        x.keep_client = parser.should_keep_alive()
        x.chunked = "chunked" in x.lowered.get("transfer-encoding", "").lower()
        declared = x.lowered.get("content-length")
        limit = self.wire.limits.max_request_bytes
        if declared is not None and declared.isdigit() and int(declared) > limit:
            x.finished = True
            return self._refuse(413, f"request body of {declared} bytes exceeds the proxy's {limit}")
        local = self.wire.relay.local(x)
        if local is not None:
            x.finished = True  # answered by the proxy itself once the request ends
            x.note = local
        elif self.current is None:
            self._start(x)
        else:
            self.queue.append(x)  # pipelined: forwarded once the one before it is answered
            if self.transport is not None:
                self.transport.pause_reading()

    def on_body(self, data: bytes) -> None:
        x = self.reading
        if x is None or (x.finished and not x.early):
            return
        x.size += len(data)
        if x.size > self.wire.limits.max_request_bytes:
            return self._refuse(413, f"request body exceeds the proxy's {self.wire.limits.max_request_bytes} bytes")
        x.body.append(data)  # kept for judging, also past an early answer
        if x is self.current and not x.finished:
            x.last = self.wire.loop.time()  # a slow upload is not a silent upstream
            if x.up is not None:
                x.up.send_body(x, data)

    def on_message_complete(self) -> None:
        self.in_head = True
        x = self.reading
        if x is None:
            return
        x.request_done = True
        if x.early:
            x.early = False
            x.told = True
            return self.wire.relay.late(x)
        if isinstance(x.note, tuple) and x.finished:  # the proxy's own answer
            status, body = x.note
            self.send(plain_answer(status, body, close=not x.keep_client))
            if not x.keep_client:
                self._close()
            return
        if x is self.current and not x.finished:
            if x.up is not None:
                x.up.end_body(x)
            self.wire.told(x)

    # the exchange in flight ---------------------------------------------------------------------
    def _start(self, x: Relayed) -> None:
        self.current = x
        self.wire.dispatch(x)

    def _refuse(self, status: int, message: str) -> None:
        """A request the proxy will not forward: answered in the protocol's error shape, then the
        connection closed (what follows on it cannot be trusted)."""
        self.wire.console(f"proxy: {message}")
        x = self.current
        answered = x is not None and x.answered
        if x is not None:
            self.wire.abandon(x)
        if not answered:
            self.send(plain_answer(status, self.wire.relay.error(status, message), close=True))
        self._close()

    def done(self, x: Relayed) -> None:
        """``x``'s answer was sent whole: the next request on this connection may go."""
        if x is not self.current:
            return
        self.current = None
        if not x.keep_client or self.closed:
            self._close()
            return
        if self.queue:
            nxt = self.queue.popleft()
            self._start(nxt)
            if nxt.request_done:
                self.wire.told(nxt)
        if not self.queue and self.transport is not None:
            self.transport.resume_reading()


class Upstream(Endpoint):
    """One connection to the upstream, carrying one exchange at a time, kept alive between them."""

    def __init__(self, wire: Wire) -> None:
        super().__init__(wire)
        self.parser = httptools.HttpResponseParser(self)
        self.x: Relayed | None = None
        self.reused = False
        self.head_only = False
        self.keep = False
        self.head_bytes = 0
        self.head_tail = b""
        self.got = 0
        """Bytes of answer received for the exchange (a reused connection that dies before any
        is retried once for an idempotent request)."""

    def attach(self, x: Relayed) -> None:
        self.x = x
        x.up = self
        self.got = 0
        self.head_bytes = 0
        self.head_tail = b""
        self.head_only = x.method == b"HEAD"
        x.last = self.wire.loop.time()
        if x.chunked:
            pieces = [x.head]
            for piece in x.body:
                pieces += (b"%x\r\n" % len(piece), piece, b"\r\n")
            if x.request_done:
                pieces.append(b"0\r\n\r\n")
            self.send(*pieces)
        else:
            self.send(x.head, *x.body)

    def send_body(self, x: Relayed, data: bytes) -> None:
        if x.chunked:
            self.send(b"%x\r\n" % len(data), data, b"\r\n")
        else:
            self.send(data)

    def end_body(self, x: Relayed) -> None:
        if x.chunked:
            self.send(b"0\r\n\r\n")

    def pause_writing(self) -> None:
        x = self.x
        if x is not None and x.down.transport is not None:
            x.down.transport.pause_reading()  # the upstream reads the body slower than it comes

    def resume_writing(self) -> None:
        x = self.x
        if x is not None and x.down.transport is not None and not x.down.queue:
            x.down.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        x = self.x
        if x is None:
            return self.close()  # bytes no request asked for: this connection cannot be trusted
        wire = self.wire
        self.got += len(data)
        x.last = wire.loop.time()
        if x.status <= 0:
            self.head_bytes += head_share(self.head_tail, data)
            self.head_tail = (self.head_tail + data)[-3:]
            if self.head_bytes > wire.limits.max_head_bytes:
                return wire.fail(x, 502, "the upstream's answer head exceeds the proxy's bound")
        wire.corked = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            if isinstance(exc.__context__, _HeadDone):
                self.parser = httptools.HttpResponseParser(self)  # a HEAD answer has no body
                self.on_message_complete()
            elif self.x is not None:
                self.wire.fail(self.x, 502, f"the upstream broke the exchange: {exc.__context__ or exc}")
        except httptools.HttpParserUpgrade:
            self.wire.fail(x, 502, "the upstream switched protocols, which the proxy does not forward")
        except httptools.HttpParserError as exc:
            if self.x is not None:
                self.wire.fail(self.x, 502, f"the upstream's answer is not valid HTTP/1.1: {exc}")
        finally:
            wire.corked = False
            wire.flush()

    def eof_received(self) -> bool | None:
        return None  # close: the end of a close-delimited answer is handled in connection_lost

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.wire.pool.discard(self)
        x = self.x
        self.x = None
        if x is None or x.finished:
            return
        if x.status > 0 and x.close_delimited:
            self.x = x
            return self.on_message_complete()  # the body ran to the connection's end
        if self.reused and self.got == 0 and not x.retried and x.method in IDEMPOTENT:
            x.retried = True  # the upstream closed an idle connection as it was reused
            x.up = None
            return self.wire.pool.acquire(x)
        why = f": {exc}" if exc else ""
        self.wire.fail(x, 502, f"the upstream closed the connection mid-exchange{why}")

    def close(self) -> None:
        self._close()

    # httptools callbacks ------------------------------------------------------------------------
    def on_message_begin(self) -> None:
        x = self.x
        if x is not None and x.response_headers:  # after an informational answer
            x.response_headers = []
            x.response_lowered = {}

    def on_status(self, reason: bytes) -> None:
        if self.x is not None:
            self.x.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        x = self.x
        if x is None:
            return
        text = name.decode("latin-1").lower()
        decoded = value.decode("latin-1")
        lowered = x.response_lowered
        lowered[text] = f"{lowered[text]}, {decoded}" if text in lowered else decoded
        if name.lower() not in HOP_BY_HOP:
            x.response_headers.append((name, value))

    def on_headers_complete(self) -> None:
        x = self.x
        if x is None:
            return
        status = self.parser.get_status_code()
        if status < 200:  # informational (100 Continue, 103 Early Hints): passed on, the answer follows
            lines = [b"HTTP/1.1 %d %s\r\n" % (status, x.reason or _reason(status))]
            lines += [k + b": " + v + b"\r\n" for k, v in x.response_headers]
            x.down.send(b"".join(lines) + b"\r\n")
            x.reason = b""
            return
        x.status = status
        x.head_at = self.wire.loop.time()
        lowered = x.response_lowered
        x.response_chunked = "chunked" in lowered.get("transfer-encoding", "").lower()
        bodiless = self.head_only or status in (204, 304)
        x.close_delimited = not bodiless and not x.response_chunked and "content-length" not in lowered
        self.keep = self.parser.should_keep_alive() and not x.close_delimited
        self.wire.head(x)
        if self.head_only:
            raise _HeadDone

    def on_body(self, data: bytes) -> None:
        x = self.x
        if x is not None and x.status > 0:
            self.wire.piece(x, data)

    def on_message_complete(self) -> None:
        x = self.x
        if x is None or x.status <= 0:
            return  # the end of an informational answer
        self.x = None
        self.wire.complete(x)
        # an answer that came before its request was all sent leaves the rest unsent: not reusable
        if self.keep and not self.closed and x.request_done:
            self.reused = True
            self.wire.pool.release(self)
        else:
            self.close()


class _HeadDone(Exception):
    """Raised from the parser's callback: a HEAD request's answer ends with its head."""


class Pool:
    """Keep-alive connections to the upstream, reused across clients; at most ``limit`` open."""

    def __init__(self, wire: Wire, host: str, port: int, tls: ssl.SSLContext | None, limit: int = 1024) -> None:
        self.wire = wire
        self.host = host
        self.port = port
        self.tls = tls
        self.limit = limit
        self.idle: list[Upstream] = []
        self.open = 0
        self.waiting: deque[Relayed] = deque()
        self.tasks: set[asyncio.Task[None]] = set()

    def acquire(self, x: Relayed) -> None:
        while self.idle:
            up = self.idle.pop()
            if not up.closed:
                return up.attach(x)
        if self.open < self.limit:
            self.open += 1
            task = self.wire.loop.create_task(self._connect(x))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        else:
            self.waiting.append(x)

    async def _connect(self, x: Relayed) -> None:
        loop = self.wire.loop
        try:
            async with asyncio.timeout(self.wire.limits.timeout):
                _, up = await loop.create_connection(
                    lambda: Upstream(self.wire),
                    self.host,
                    self.port,
                    ssl=self.tls,
                    server_hostname=self.host if self.tls else None,
                )
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            self.open -= 1
            self._next()
            if isinstance(exc, TimeoutError):
                message = f"no connection within {self.wire.limits.timeout:g} s"
            else:
                message = str(getattr(exc, "strerror", None) or exc)
            if not x.finished:
                self.wire.fail(x, 502, message, connect=True)
            return
        if x.finished:  # the client left while the connection was made
            up.reused = True
            self.release(up)
            return
        up.attach(x)

    def release(self, up: Upstream) -> None:
        while self.waiting:
            x = self.waiting.popleft()
            if not x.finished:
                up.reused = True
                return up.attach(x)
        self.idle.append(up)

    def discard(self, up: Upstream) -> None:
        if up in self.idle:
            self.idle.remove(up)
        self.open -= 1
        self._next()

    def _next(self) -> None:
        while self.waiting and self.open < self.limit:
            x = self.waiting.popleft()
            if not x.finished:
                return self.acquire(x)

    def close(self) -> None:
        for up in self.idle:
            up.close()
        self.idle.clear()
        for task in self.tasks:
            task.cancel()


class Wire:
    """The forwarding machinery of one proxy: its pool, its bounds, and the relay it reports to."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        upstream: str,
        relay: Relay,
        limits: RelayLimits,
        console: Callable[[str], None],
    ) -> None:
        from urllib.parse import urlsplit

        self.loop = loop
        self.relay = relay
        self.limits = limits
        self.console = console
        self.upstream = upstream
        parts = urlsplit(upstream)
        tls = ssl.create_default_context() if parts.scheme == "https" else None
        host = parts.hostname or "127.0.0.1"
        port = parts.port or (443 if tls else 80)
        self.host_header = parts.netloc.rpartition("@")[2].encode("idna")
        self.prefix = parts.path.rstrip("/").encode()
        self.pool = Pool(self, host, port, tls)
        self.downstreams: set[Downstream] = set()
        self.corked = False
        self.dirty: list[Endpoint] = []
        self.flying: set[Relayed] = set()
        """Exchanges forwarded and not yet finished, which ``_sweep`` watches."""
        self.sweep_s = max(0.05, min(1.0, limits.timeout / 10))
        self.sweeper: asyncio.TimerHandle | None = None

    def flush(self) -> None:
        dirty = self.dirty
        if dirty:
            self.dirty = []
            for endpoint in dirty:
                endpoint.flush()

    def connection(self) -> Downstream:
        """The protocol factory for ``loop.create_server``."""
        return Downstream(self)

    def dispatch(self, x: Relayed) -> None:
        """The request's head is complete: to the upstream, over a pooled connection."""
        lines = [x.method, b" ", self.prefix, x.target, b" HTTP/1.1\r\nHost: ", self.host_header, b"\r\n"]
        for name, value in x.headers:
            lines += (name, b": ", value, b"\r\n")
        lines.append(b"\r\n")
        x.head = b"".join(lines)
        x.started = x.last = self.loop.time()
        self.flying.add(x)
        if self.sweeper is None:
            self.sweeper = self.loop.call_later(self.sweep_s, self._sweep)
        self.pool.acquire(x)

    def told(self, x: Relayed) -> None:
        if not x.told:
            x.told = True
            if x.up is not None:
                x.up.flush()  # the request goes before it is judged
            self.relay.request_complete(x)

    def _sweep(self) -> None:
        """Every ``sweep_s`` while exchanges are in flight: cut those whose upstream fell silent or
        that outlived their bound (one timer for the wire, not one per exchange)."""
        self.sweeper = None
        now = self.loop.time()
        timeout = self.limits.timeout
        for x in list(self.flying):
            if x.finished:
                self.flying.discard(x)
            elif x.left_at and now - x.left_at >= REST_S:
                self.abandon(x)
            elif x.status <= 0:
                if now - x.last >= timeout:
                    self.fail(x, 504, f"the upstream sent nothing for {timeout:g} s")
            elif now - x.head_at >= x.total_s:
                self.fail(x, 504, f"the answer outlived {x.total_s:g} s; cut")
            elif now - x.last >= timeout:
                self.fail(x, 504, f"the answer stalled: nothing for {timeout:g} s; cut")
        self.flush()
        if self.flying:
            self.sweeper = self.loop.call_later(self.sweep_s, self._sweep)

    # the answer ---------------------------------------------------------------------------------
    def head(self, x: Relayed) -> None:
        x.mode = self.relay.response_head(x)
        if x.mode != HOLD:
            x.answered = True
            x.down.send(self._head_bytes(x))

    def _head_bytes(self, x: Relayed) -> bytes:
        dechunk = x.response_chunked and x.version == "1.0"
        if x.close_delimited or dechunk:
            x.keep_client = False  # the client learns where the body ends when the connection does
        lines = [b"HTTP/1.1 %d %s\r\n" % (x.status, x.reason or _reason(x.status))]
        for name, value in x.response_headers:
            if not (dechunk and name.lower() == b"transfer-encoding"):
                lines += (name, b": ", value, b"\r\n")
        for name, value in x.extra:
            lines += (name, b": ", value, b"\r\n")
        if not x.keep_client:
            lines.append(b"Connection: close\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    def piece(self, x: Relayed, data: bytes) -> None:
        x.response_size += len(data)
        if x.response_size > x.response_limit:
            return self.fail(x, 502, f"the answer exceeds the proxy's {x.response_limit} bytes; cut")
        mode = x.mode
        if mode != FORWARD:
            x.held.append(data)
            if mode == HOLD:
                return
        if x.response_chunked and x.version != "1.0":
            x.down.send(b"%x\r\n" % len(data), data, b"\r\n")
        else:
            x.down.send(data)
        if mode == FORWARD:
            x.down.flush()  # a stream's piece goes before it is judged
            self.relay.response_piece(x, data)

    def complete(self, x: Relayed) -> None:
        x.finished = True
        self.flying.discard(x)
        down = x.down
        chunked = x.response_chunked and x.version != "1.0"
        if x.mode == HOLD:
            self.relay.response_complete(x)
            x.answered = True
            framed = [self._head_bytes(x)]
            if chunked:
                for piece in x.held:
                    framed += (b"%x\r\n" % len(piece), piece, b"\r\n")
                framed.append(b"0\r\n\r\n")
            else:
                framed += x.held
            down.send(*framed)
        else:
            if chunked:
                down.send(b"0\r\n\r\n")
            down.flush()  # the answer goes before it is judged
            if x.told:
                self.relay.response_complete(x)
            else:
                x.early = True  # an upstream may refuse before the request ended (401, 413)
        down.done(x)

    def fail(self, x: Relayed, status: int, message: str, connect: bool = False) -> None:
        """The upstream cannot complete the exchange: a proxy-made error when the client has
        seen nothing of the answer yet, else the client's connection is cut mid-answer."""
        if x.finished:
            return
        x.finished = True
        self.flying.discard(x)
        up = x.up
        if up is not None:
            up.x = None
            up.close()
        if connect:
            message = f"cannot connect to the upstream {self.upstream}: {message}"
        body = self.relay.failed(x, status, message)
        down = x.down
        if x.answered:
            down._close()  # the client must see a broken answer, not a short one
        else:
            x.answered = True
            x.keep_client = x.keep_client and x.request_done
            down.send(plain_answer(status, body, close=not x.keep_client))
            down.done(x)

    def abandon(self, x: Relayed, listen: bool = False) -> None:
        """The client left (or its request was refused) before the answer ended. ``listen``: an
        answer under way is still read, and judged, if it ends within ``REST_S`` (a server's answer
        is what it sent, not what its client read: an openai client closes a stream at its
        ``[DONE]``, before the server's last chunk)."""
        if x.finished:
            return
        if listen and x.told and x.status > 0 and x.up is not None and not x.left_at:
            x.left_at = self.loop.time()  # the sweep abandons it after REST_S
            return
        x.finished = True
        self.flying.discard(x)
        up = x.up
        if up is not None:
            up.x = None
            up.close()
        if x.told:
            self.relay.client_gone(x)

    def close(self) -> None:
        if self.sweeper is not None:
            self.sweeper.cancel()
        self.pool.close()
        for down in list(self.downstreams):
            down._close()
