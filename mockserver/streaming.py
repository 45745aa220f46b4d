"""NDJSON and SSE writers, and the gate that bounds how many streams are open at once."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from . import cors
from .errors import ApiError
from .hooks import EXCHANGE, Handling
from .jsonio import dumps
from .wire import PLAIN, WIRE, Wire


class StreamGate:
    """Counts open streams; beyond the limit a new one is refused with 503 and Retry-After."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0

    def __enter__(self) -> StreamGate:
        if self.open >= self.limit:
            raise ApiError(
                503, f"Too many open streams (limit {self.limit}); retry shortly", headers={"Retry-After": "1"}
            )
        self.open += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.open -= 1


class _Stream:
    def __init__(self, request: web.Request, content_type: str, headers: dict[str, str] | None, delay: float) -> None:
        self.request = request
        self.delay = delay
        self.wire: Wire = request.get(WIRE, PLAIN)
        """How this stream is written (a wire control's choices; ``PLAIN`` in normal runs)."""
        self.response = web.StreamResponse(headers=self.wire.headers({"Content-Type": content_type, **(headers or {})}))
        self.sent = 0
        self.exchange: Handling | None = request.get(EXCHANGE)
        """Present only when chaos or the journal watches this request (hooks.py)."""

    def encode(self, obj: Any) -> bytes:
        raise NotImplementedError

    async def open(self) -> web.StreamResponse:
        cors.opening(self.request, self.response)
        await self.response.prepare(self.request)
        return self.response

    async def _write(self, data: bytes) -> None:
        try:
            await self._write_frame(data)
        except ConnectionResetError:  # the client left mid-stream (aiohttp's reset error derives from it)
            if self.exchange is not None:
                self.exchange.client_left()
            raise

    async def _write_frame(self, data: bytes) -> None:
        if self.exchange is None and not self.delay:  # the common case: one write per frame, nothing else
            await self.response.write(data)
            self.sent += 1
            return
        if self.exchange is not None:
            first = await self.exchange.before_frame(self.request, self.sent, self.encode)
            if first is None:
                return
            if first:
                await self.response.write(first)
                self.exchange.written(first)
                return
        if self.delay and self.sent:
            await asyncio.sleep(self.delay)
        await self.response.write(data)
        self.sent += 1
        if self.exchange is not None:
            self.exchange.written(data)

    async def close(self) -> web.StreamResponse:
        await self.response.write_eof()
        return self.response


class NdjsonStream(_Stream):
    """One JSON object per line, each flushed as it is produced (NeuroSan streaming_chat)."""

    def __init__(
        self,
        request: web.Request,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        pretty: bool = False,
    ) -> None:
        super().__init__(request, content_type, headers, delay)
        self.pretty = pretty  # the multi-line-objects fault

    def encode(self, obj: Any) -> bytes:
        if self.pretty:
            return json.dumps(obj, indent=2).encode() + b"\n"
        return self.wire.json(obj, one_line=True) + b"\n"

    async def send(self, obj: Any) -> None:
        await self._write(self.encode(obj))


class SseStream(_Stream):
    """Server-sent events: ``data: <json>`` blocks, ended by ``data: [DONE]`` (SGR chat)."""

    def __init__(self, request: web.Request, headers: dict[str, str] | None = None, delay: float = 0.0) -> None:
        base = {"Cache-Control": "no-cache", "Connection": "keep-alive"}
        super().__init__(request, "text/event-stream", {**base, **(headers or {})}, delay)

    def encode(self, obj: Any) -> bytes:
        if self.wire is not PLAIN:
            return self.wire.sse_event(self.wire.json(obj, one_line=True), self.sent)
        return b"data: " + dumps(obj) + b"\n\n"

    async def send(self, obj: Any) -> None:
        await self._write(self.encode(obj))

    async def send_event(self, event: str, obj: Any) -> None:
        """An event of a named type (``event: NAME``), which a client listening for the default
        ``message`` events does not see (the HTML Standard's event stream interpretation)."""
        await self._write(b"event: " + event.encode() + b"\n" + self.encode(obj))

    async def done(self) -> None:
        await self._write(self.wire.sse_event(b"[DONE]", self.sent))
        if self.wire.idle_after_done:  # [DONE] ended the stream; the connection is the client's to close
            await stall(request=self.request)


STALL_POLL = 0.1
"""How often a stall given its request looks whether the client is still there."""


async def stall(seconds: float = 3600.0, request: web.Request | None = None) -> None:
    """The stalled-stream and stuck-job faults: hold the connection open, sending nothing.

    Given the ``request``, the stall ends as soon as its client has gone, so that a stalled
    handler (and the stream slot it holds) never outlives its connection.
    """
    if request is None:
        await asyncio.sleep(seconds)
        return
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while (left := end - loop.time()) > 0:
        if request.transport is None or request.transport.is_closing():
            return
        await asyncio.sleep(min(STALL_POLL, left))
