"""The reverse proxy: forwards each request to the upstream and its answer back, byte for byte.

Whole answers are read (bounded) and judged before they are sent on, so ``--errors`` can name the
violated requirements in a header. Streams are forwarded chunk by chunk as they arrive and judged
frame by frame on the way; their header can only name what the status and headers broke. Every
wait is bounded (connect, each read, a whole answer, a whole stream) and so are the sizes; an
upstream that is down or stalls is answered 502/504 in the protocol's error shape.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from specs.documents import protocol
from specs.serving import AppServer

from .har import Recorder
from .observer import Observer, Open, Selection
from .report import run_result, write

log = logging.getLogger("conformance.proxy")

VIOLATIONS_HEADER = "X-Conformance-Violations"
"""Names the requirements an answer violated (``--errors``), like Prism's ``sl-violations``."""
REPORT_PATH = "/__conformance/report"
OBSERVER: web.AppKey[Observer] = web.AppKey("observer", Observer)
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    protocol: str
    upstream: str
    tokens: tuple[str, ...] = ()
    """Bearer tokens valid on the upstream: any other one must be refused (401)."""
    errors: bool = False
    timeout: float = 30.0
    """Seconds to connect, for each read, and for a whole non-streamed answer."""
    stream_seconds: float = 600.0
    max_request_bytes: int = 16 << 20
    max_response_bytes: int = 64 << 20
    max_stream_bytes: int = 512 << 20
    report_dir: Path | None = None
    console: Callable[[str], None] = field(default=lambda _: None)
    selection: Selection = field(default_factory=Selection)
    """What is reported and how it gates (``--only/--skip/--level/--expected-failures``, client mode)."""
    har: Path | None = None
    """Where the traffic is written as HAR 1.2 with the reports (``--har``); None: not kept."""


def error_answer(protocol_id: str, status: int, message: str) -> web.Response:
    """A proxy-made answer in the protocol's own error shape (its manifest's, as the mock's)."""
    body = protocol(protocol_id).error.render(status, message)
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json")


def _forwardable(headers: Mapping[str, str]) -> CIMultiDict[str]:
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in headers.items():
        if name.lower() not in HOP_BY_HOP:
            out.add(name, value)
    return out


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


class Proxy:
    def __init__(self, config: ProxyConfig, observer: Observer) -> None:
        self.config = config
        self.observer = observer
        self.session: aiohttp.ClientSession | None = None

    async def start(self, _: web.Application) -> None:
        # auto_decompress off: the client gets the upstream's bytes exactly as sent
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=1024), auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar()
        )

    async def stop(self, _: web.Application) -> None:
        if self.session is not None:
            await self.session.close()

    def fail(self, status: int, message: str) -> web.Response:
        self.config.console(f"proxy: {message}")
        return error_answer(self.config.protocol, status, message)

    async def report(self, request: web.Request) -> web.Response:
        if self.config.report_dir is not None:
            result = write(self.observer, self.config.report_dir)
        else:
            result = run_result(self.observer)
        return web.json_response(result.to_dict())

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == REPORT_PATH and request.method == "GET":
            return await self.report(request)
        cfg = self.config
        declared = request.content_length
        if declared is not None and declared > cfg.max_request_bytes:
            return self.fail(413, f"request body of {declared} bytes exceeds the proxy's {cfg.max_request_bytes}")
        body = bytearray()
        async for piece in request.content.iter_chunked(1 << 16):
            body += piece
            if len(body) > cfg.max_request_bytes:
                return self.fail(413, f"request body exceeds the proxy's {cfg.max_request_bytes} bytes")
        flight = self.observer.begin(
            request.method, request.path, list(request.query.items()), _lower(request.headers), bytes(body)
        )
        url = cfg.upstream.rstrip("/") + request.raw_path
        timeout = aiohttp.ClientTimeout(
            total=None, connect=cfg.timeout, sock_connect=cfg.timeout, sock_read=cfg.timeout
        )
        assert self.session is not None
        started = time.monotonic()
        try:
            async with self.session.request(
                request.method,
                url,
                headers=_forwardable(request.headers),
                data=bytes(body) if body else None,
                allow_redirects=False,
                timeout=timeout,
            ) as upstream:
                flight.ex.status = upstream.status
                flight.ex.response_headers = _lower(upstream.headers)
                kind = self.observer.stream_kind(flight)
                if kind is None:
                    return await self._whole(flight, upstream, started)
                return await self._stream(request, flight, upstream, kind, started)
        except (TimeoutError, aiohttp.ServerTimeoutError):
            return self._broken(flight, 504, f"the upstream sent nothing for {cfg.timeout:g} s")
        except aiohttp.ClientConnectorError as exc:
            return self.fail(502, f"{flight.ex.label}: cannot connect to the upstream {cfg.upstream}: {exc.os_error}")
        except aiohttp.ClientError as exc:
            return self._broken(flight, 502, f"the upstream broke the exchange: {exc or type(exc).__name__}")

    def _broken(self, flight: Open, status: int, reason: str) -> web.Response:
        """The upstream answered and then failed mid-answer (or never answered): the checks hear of
        it when an answer had begun; the client gets a proxy-made error."""
        if flight.ex.status is not None:
            self.observer.broken(flight, reason)
        return self.fail(status, f"{flight.ex.label}: {reason}")

    def _headers(self, upstream: aiohttp.ClientResponse, violations: dict[str, str]) -> CIMultiDict[str]:
        headers = _forwardable(upstream.headers)
        if self.config.errors and violations:
            headers[VIOLATIONS_HEADER] = ", ".join(sorted(violations))
        return headers

    async def _whole(self, flight: Open, upstream: aiohttp.ClientResponse, started: float) -> web.StreamResponse:
        cfg = self.config
        body = bytearray()
        async with asyncio.timeout(cfg.timeout):
            async for piece in upstream.content.iter_any():
                body += piece
                if len(body) > cfg.max_response_bytes:
                    return self._broken(flight, 502, f"the answer exceeds the proxy's {cfg.max_response_bytes} bytes")
        flight.ex.response_body = bytes(body)
        flight.ex.elapsed_ms = round((time.monotonic() - started) * 1000, 1)
        violations = self.observer.whole(flight)
        self.observer.end(flight)
        return web.Response(status=upstream.status, headers=self._headers(upstream, violations), body=bytes(body))

    async def _stream(
        self, request: web.Request, flight: Open, upstream: aiohttp.ClientResponse, kind: str, started: float
    ) -> web.StreamResponse:
        cfg = self.config
        violations = self.observer.stream_start(flight, kind)
        answer = web.StreamResponse(status=upstream.status, headers=self._headers(upstream, violations))
        await answer.prepare(request)
        size = 0
        error: str | None = None
        try:
            async with asyncio.timeout(cfg.stream_seconds):
                async for piece in upstream.content.iter_any():
                    size += len(piece)
                    if size > cfg.max_stream_bytes:
                        error = f"the stream exceeds the proxy's {cfg.max_stream_bytes} bytes; cut"
                        break
                    await answer.write(piece)  # forwarded first, judged after: no added delay
                    self.observer.chunk(flight, piece)
        except (ConnectionResetError, aiohttp.ClientConnectionResetError):
            flight.ex.error = "the client went away mid-stream"
            self.observer.commit(flight)  # the stream's end was never seen: not judged
            return answer
        except (TimeoutError, aiohttp.ServerTimeoutError):
            error = f"the stream stalled or outlived {cfg.stream_seconds:g} s; cut"
        except aiohttp.ClientError as exc:
            error = f"the upstream broke the stream: {exc or type(exc).__name__}"
        flight.ex.error = error
        flight.ex.elapsed_ms = round((time.monotonic() - started) * 1000, 1)
        self.observer.end(flight, error)
        if error:
            cfg.console(f"proxy: {flight.ex.label}: {error}")
            if request.transport is not None:
                request.transport.close()  # the client must see a broken stream
            return answer
        await answer.write_eof()
        return answer


def new_observer(config: ProxyConfig) -> Observer:
    recorder = Recorder(config.har, config.upstream) if config.har is not None else None
    return Observer(
        config.protocol,
        config.upstream,
        config.tokens,
        config.console,
        settle_s=config.timeout,
        selection=config.selection,
        recorder=recorder,
    )


def create_app(config: ProxyConfig, observer: Observer | None = None) -> web.Application:
    observer = observer or new_observer(config)
    proxy = Proxy(config, observer)
    app = web.Application(client_max_size=config.max_request_bytes)
    app[OBSERVER] = observer
    app.on_startup.append(proxy.start)
    app.on_cleanup.append(proxy.stop)
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    return app


class ProxyServer(AppServer):
    """``with ProxyServer(config) as proxy: proxy.url``: the proxy on a loopback port in a thread
    (tests, benchmarks); ``proxy.observer`` holds the tally."""

    name = "proxy"

    def __init__(self, config: ProxyConfig, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.config = config
        self.observer = new_observer(config)

    def make_app(self) -> web.Application:
        return create_app(self.config, self.observer)
