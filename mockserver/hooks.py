"""What sits around an operation when a client developer asks for it: chaos, journal, access log.

The mock has no middleware on purpose (each costs every request a coroutine hop). Instead every
operation's endpoint is built by ``Hooks.wrap``, which checks the ``Host`` (gate.py: one set
lookup for a name already seen) and costs one attribute test while nothing is switched on: no
chaos rule, journal off, no access log. Only then does a request take the slow path here, which
times it, applies chaos, and records it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import hdrs, web

from . import cors
from .chaos import RETRYABLE, Chaos, StreamChaos, error_frame
from .errors import ApiError
from .gate import Gate
from .journal import MAX_BODY, Entry, Journal

access_log = logging.getLogger("mockserver.access")
VERBOSE_BODY = 2000
"""Characters of each body ``-v`` prints."""
CHAOS_MESSAGES = {
    429: "Too many requests (mock chaos)",
    500: "Internal server error (mock chaos)",
    503: "The service is temporarily unavailable (mock chaos)",
}

Endpoint = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Handling:
    """One request on the slow path: its journal entry and the chaos its stream meets."""

    def __init__(self, entry: Entry | None, stream: StreamChaos | None) -> None:
        self.entry = entry
        self.stream = stream
        self.ended = False

    def client_left(self) -> None:
        """The client went away before the stream's end: what the journal keeps is not its end."""
        if self.entry is not None:
            self.entry.client_left = True

    async def before_frame(self, request: web.Request, sent: int, encode: Callable[[Any], bytes]) -> bytes | None:
        """Called by the stream writer before frame ``sent`` (0-based); bytes to write first, or
        None to drop the frame (the stream already ended with an error frame)."""
        chaos = self.stream
        if chaos is None:
            return b""
        if self.ended:
            return None
        if chaos.drip and sent:
            await asyncio.sleep(chaos.drip)
        if chaos.cut_after is not None and sent >= chaos.cut_after:
            reset(request, hard=False)
            raise ConnectionResetError(f"chaos: stream cut after {sent} frame(s)")
        if chaos.error_frame_after is not None and sent >= chaos.error_frame_after:
            self.ended = True
            return encode(error_frame(chaos.protocol, "The service is temporarily unavailable (mock chaos)"))
        return b""

    def read(self, data: bytes) -> None:
        """The request body as the validator read it."""
        if self.entry is not None:
            self.entry.request_body.add(data)

    def written(self, data: bytes) -> None:
        if self.entry is not None:
            self.entry.frames += 1
            self.entry.response_body.add(data)


EXCHANGE = web.RequestKey("mockserver.exchange", Handling)
"""Request key of the ``Handling`` the validator and stream writers consult (absent on the hot path)."""
STUBBED = web.RequestKey("mockserver.stub", str)
"""Request key: the id of the stub that answered (stubs.py sets it, the journal names it)."""
Identify = Callable[[web.Request], "str | None"]
"""Who a request authenticates as (the protocol's configured users), for the journal."""


def reset(request: web.Request, hard: bool = True) -> None:
    """Drop the connection: ``hard`` sends a TCP RST (SO_LINGER 0), as a crashed server would."""
    transport = request.transport
    if transport is None:
        return
    if hard:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class Hooks:
    def __init__(
        self,
        chaos: Chaos,
        journal: Journal,
        log_access: bool = False,
        verbose: bool = False,
        browsers: bool = False,
        gate: Gate | None = None,
    ) -> None:
        self.chaos = chaos
        self.gate = gate or Gate()
        """The ``Host`` check every route passes first (gate.py)."""
        self.browsers = browsers
        """CORS on: an answer to a request with an ``Origin`` says a browser may read it (cors.py)."""
        self.journal = journal
        self.log_access = log_access or verbose
        self.verbose = verbose
        self.active = False
        self.refresh()

    def refresh(self) -> None:
        """Call after changing rules or the journal: decides whether requests take the slow path."""
        self.active = bool(self.chaos) or self.journal.enabled or self.log_access

    def wrap(
        self,
        protocol_id: str,
        operation_id: str | None,
        serve: Endpoint,
        error_response: Callable[[ApiError], web.Response],
        identify: Identify | None = None,
    ) -> Endpoint:
        async def hooked(request: web.Request) -> web.StreamResponse:
            return await self._around(request, protocol_id, operation_id, serve, error_response, identify)

        browsers = self.browsers
        known_hosts = self.gate.known
        refuse_host = self.gate.refuse_host

        async def endpoint(request: web.Request) -> web.StreamResponse:
            # the hot path: a header lookup in a set, an attribute test, a header lookup
            if request.headers.get(hdrs.HOST) not in known_hosts and (refused := refuse_host(request)) is not None:
                return refused
            inner = hooked if self.active else serve
            if browsers and "Origin" in request.headers:  # chaos's own answers are readable too
                return await cors.serve(request, inner)
            return await inner(request)

        return endpoint

    async def _around(
        self,
        request: web.Request,
        protocol_id: str,
        operation_id: str | None,
        serve: Endpoint,
        error_response: Callable[[ApiError], web.Response],
        identify: Identify | None,
    ) -> web.StreamResponse:
        start = time.perf_counter()
        entry = self._entry(request, protocol_id, operation_id) if self.journal.enabled or self.verbose else None
        if entry is not None and identify is not None:
            entry.identity = identify(request)
        decision = self.chaos.decide(protocol_id, operation_id) if self.chaos and operation_id else None
        response: web.StreamResponse | None = None
        try:
            if decision is not None:
                if entry is not None:
                    entry.chaos = decision.notes
                if decision.delay:
                    await asyncio.sleep(decision.delay)
                if entry is not None and (decision.reset or decision.error is not None) and request.body_exists:
                    # no handler will read it: keep what has arrived
                    entry.request_body.add(await request.content.read(MAX_BODY))
                if decision.reset:
                    reset(request)
                    return web.Response(status=499)  # never sent: the connection is gone
                if decision.error is not None:
                    headers = {"Retry-After": str(decision.retry_after)} if decision.error in RETRYABLE else {}
                    error = ApiError(decision.error, CHAOS_MESSAGES[decision.error], headers=headers)
                    response = error_response(error)
                    return response
            if entry is not None or (decision is not None and decision.stream is not None):
                request[EXCHANGE] = Handling(entry, decision.stream if decision else None)
            response = await serve(request)
            if entry is not None and not entry.request_body.size and request.content_length:
                if self.journal.whole:  # a body the handler read itself (aiohttp keeps it), or never read
                    with contextlib.suppress(web.HTTPException, ConnectionError):
                        entry.request_body.add(await request.read())
                if not entry.request_body.size:
                    entry.request_body.size = request.content_length  # a multipart upload: streamed, not kept
            return response
        finally:
            elapsed = (time.perf_counter() - start) * 1000
            reset_on_purpose = decision is not None and decision.reset
            self._record(
                request,
                entry,
                response,
                elapsed,
                reset_on_purpose,
                protocol_id,
                operation_id,
                decision.notes if decision else [],
            )

    def _entry(self, request: web.Request, protocol_id: str, operation_id: str | None) -> Entry:
        # The body is filled in as the validator reads it (Handling.read): nothing is read twice.
        body = self.journal.body()
        content_type = request.headers.get("Content-Type", "")
        return Entry(
            id=self.journal.new_id(),
            at=time.time(),
            protocol=protocol_id,
            operation=operation_id,
            method=request.method,
            path=request.path,
            query=request.query_string,
            path_params=dict(request.match_info) if operation_id is not None else {},
            request_headers=self.journal.headers(request.headers),
            request_body=body,
            request_type=content_type,
            response_body=self.journal.body(),
        )

    def _record(
        self,
        request: web.Request,
        entry: Entry | None,
        response: web.StreamResponse | None,
        elapsed: float,
        reset_on_purpose: bool,
        protocol_id: str,
        operation_id: str | None,
        notes: list[str],
    ) -> None:
        status = 0 if reset_on_purpose or response is None else response.status
        if entry is not None:
            entry.status = status
            entry.stub = request.get(STUBBED)
            entry.latency_ms = elapsed
            if response is not None and not reset_on_purpose:
                entry.response_headers = dict(response.headers)
                if isinstance(response, web.Response) and isinstance(response.body, bytes | bytearray):
                    entry.response_body.add(bytes(response.body))
            self.journal.add(entry)
        if self.log_access:
            what = f"{protocol_id} {operation_id or '-'}"
            extra = f" chaos: {'; '.join(notes)}" if notes else ""
            shown = status or ("reset" if reset_on_purpose else "aborted")  # aborted: the client left first
            access_log.info(
                "%s %s %s %s %.1fms %s%s", request.remote, request.method, request.path_qs, shown, elapsed, what, extra
            )
            if self.verbose and entry is not None:
                for side, body in (("request", entry.request_body), ("response", entry.response_body)):
                    if body.size:
                        access_log.info("  %s body: %s", side, _shown(bytes(body.kept), body.size))


def _shown(data: bytes, size: int) -> str:
    text = data.decode("utf-8", "replace")
    with contextlib.suppress(ValueError, RecursionError):  # one line per body: compact JSON where it is JSON
        text = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    if len(text) > VERBOSE_BODY or size > len(data):
        return text[:VERBOSE_BODY] + f"... ({size} bytes)"
    return text
