"""The reverse proxy: every request and answer passes through byte for byte, and is judged after.

wire.py moves the bytes; ``Proxy`` is its relay to the observer. A whole answer is passed on as it
arrives and its pieces kept (references) to judge it once it ended; a stream is judged frame by
frame after each piece went on. Only ``--errors`` holds a whole answer until judged, since its
header names what the answer violated; a stream's header can only name what its status and
headers broke. An upstream that is down, stalls or breaks is answered 502/504 in the protocol's
error shape while the client has seen nothing of the answer, and cut mid-answer after.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

from specs.documents import protocol
from specs.serving import ServerThread

from .har import Recorder
from .observer import Observer, Open, Selection
from .report import run_result, write
from .wire import FORWARD, HOLD, KEEP, Relayed, RelayLimits, Wire

VIOLATIONS_HEADER = "X-Conformance-Violations"
"""Names the requirements an answer violated (``--errors``), like Prism's ``sl-violations``."""
REPORT_PATH = "/__conformance/report"


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    protocol: str
    upstream: str
    tokens: tuple[str, ...] = ()
    """Bearer tokens valid on the upstream: any other one must be refused (401)."""
    errors: bool = False
    timeout: float = 30.0
    """Seconds to connect, between two reads of an answer, and for a whole non-streamed answer."""
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


def error_body(protocol_id: str, status: int, message: str) -> bytes:
    """A proxy-made answer's body in the protocol's own error shape (its manifest's, as the mock's)."""
    return json.dumps(protocol(protocol_id).error.render(status, message)).encode()


class Proxy:
    """The relay between the wire and the observer (wire.Relay)."""

    def __init__(self, config: ProxyConfig, observer: Observer, loop: asyncio.AbstractEventLoop) -> None:
        self.config = config
        self.observer = observer
        limits = RelayLimits(config.timeout, config.max_request_bytes)
        self.wire = Wire(loop, config.upstream, self, limits, config.console)

    def flight(self, x: Relayed) -> Open | None:
        return x.note if isinstance(x.note, Open) else None

    # wire.Relay -----------------------------------------------------------------------------------
    def local(self, x: Relayed) -> tuple[int, bytes] | None:
        if x.method != b"GET" or x.path != REPORT_PATH:
            return None
        if self.config.report_dir is not None:
            result = write(self.observer, self.config.report_dir)
        else:
            result = run_result(self.observer)
        return 200, json.dumps(result.to_dict()).encode()

    def request_complete(self, x: Relayed) -> None:
        body = x.body[0] if len(x.body) == 1 else b"".join(x.body)
        query = parse_qsl(x.query, keep_blank_values=True) if b"?" in x.target else []
        x.note = self.observer.begin(x.method.decode("latin-1"), x.path, query, x.lowered, body)

    def response_head(self, x: Relayed) -> int:
        flight = self.flight(x)
        cfg = self.config
        if flight is None:  # the upstream answers before the request ended: judged once it did
            x.total_s, x.response_limit = cfg.timeout, cfg.max_response_bytes
            return KEEP
        kind = self._head(flight, x)
        if kind is not None:
            x.total_s, x.response_limit = cfg.stream_seconds, cfg.max_stream_bytes
            violations = self.observer.stream_start(flight, kind)
            self._name(x, violations)
            return FORWARD
        x.total_s, x.response_limit = cfg.timeout, cfg.max_response_bytes
        return HOLD if cfg.errors else KEEP

    def response_piece(self, x: Relayed, data: bytes) -> None:
        flight = self.flight(x)
        if flight is not None:
            self.observer.chunk(flight, data)

    def _head(self, flight: Open, x: Relayed) -> str | None:
        """The answer's status and headers to the flight; the kind of stream it is, if one."""
        flight.ex.status = x.status
        flight.ex.response_headers = x.response_lowered
        return self.observer.stream_kind(flight)

    def late(self, x: Relayed) -> None:
        self.request_complete(x)
        flight = self.flight(x)
        if flight is not None and self._head(flight, x) is None:
            self.response_complete(x)
        elif flight is not None:
            self.observer.commit(flight)  # a stream that began before its request ended: not judged

    def response_complete(self, x: Relayed) -> None:
        flight = self.flight(x)
        if flight is None:
            return
        ex = flight.ex
        if ex.status is None:  # the answer began before the request ended
            self._head(flight, x)
        ex.elapsed_ms = round((self.wire.loop.time() - x.started) * 1000, 1)
        if flight.stream is not None:
            self.observer.end(flight)
            return
        held = x.held
        ex.response_body = held[0] if len(held) == 1 else b"".join(held)
        violations = self.observer.whole(flight)
        self.observer.end(flight)
        if x.mode == HOLD:
            self._name(x, violations)

    def _name(self, x: Relayed, violations: dict[str, str]) -> None:
        if self.config.errors and violations:
            x.extra.append((VIOLATIONS_HEADER.encode(), ", ".join(sorted(violations)).encode()))

    def failed(self, x: Relayed, status: int, message: str) -> bytes:
        flight = self.flight(x)
        label = flight.ex.label if flight is not None else f"{x.method.decode('latin-1')} {x.path}"
        if flight is not None and x.status > 0:  # the answer had begun: the checks hear of it
            flight.ex.elapsed_ms = round((self.wire.loop.time() - x.started) * 1000, 1)
            if flight.stream is not None:
                flight.ex.error = message
                self.observer.end(flight, message)
            else:
                self.observer.broken(flight, message)
        message = f"{label}: {message}"
        self.config.console(f"proxy: {message}")
        return self.error(status, message)

    def error(self, status: int, message: str) -> bytes:
        return error_body(self.config.protocol, status, message)

    def client_gone(self, x: Relayed) -> None:
        flight = self.flight(x)
        if flight is not None:
            flight.ex.error = "the client went away mid-answer"
            self.observer.commit(flight)  # the answer's end was never seen: it is not judged


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


async def serve(
    config: ProxyConfig,
    observer: Observer,
    host: str,
    port: int,
    stop: asyncio.Event,
    listening: Callable[[int], None] = lambda _: None,
) -> None:
    """Forward on ``host:port`` until ``stop`` is set; ``listening`` hears the bound port."""
    loop = asyncio.get_running_loop()
    proxy = Proxy(config, observer, loop)
    server = await loop.create_server(proxy.wire.connection, host, port, reuse_address=True)
    try:
        listening(server.sockets[0].getsockname()[1])
        await stop.wait()
    finally:
        server.close()
        proxy.wire.close()
        await asyncio.sleep(0)  # let the transports see their close before the loop goes


class ProxyServer(ServerThread):
    """``with ProxyServer(config) as proxy: proxy.url``: the proxy on a loopback port in a thread
    (tests, benchmarks); ``proxy.observer`` holds the tally."""

    name = "proxy"

    def __init__(self, config: ProxyConfig, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.config = config
        self.observer = new_observer(config)

    async def serve(self, stop: asyncio.Event) -> None:
        await serve(self.config, self.observer, self.host, self.port, stop, self.listening)
