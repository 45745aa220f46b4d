"""Run the mock in a background thread on a free loopback port: for the suite's default target,
for tests and for interop clients that want a real socket."""

from __future__ import annotations

import asyncio
import logging
import threading
from types import TracebackType

from aiohttp import web

from .app import create_app
from .config import MockConfig


class EmbeddedServer:
    """``with EmbeddedServer(config) as server: server.url`` -> ``http://127.0.0.1:PORT``."""

    def __init__(self, config: MockConfig | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config or MockConfig()
        self.host = host
        self.port = port
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None

    def start(self) -> EmbeddedServer:
        # Fuzzing sends requests aiohttp's parser rejects before any handler runs (NUL in a
        # header); its per-request tracebacks would drown the suite's own progress output.
        logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
        self._thread = threading.Thread(target=self._run, name="mockserver", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the embedded mock server did not start within 30 s")
        if self._error is not None:
            raise RuntimeError(f"the embedded mock server failed to start: {self._error}") from self._error
        return self

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as exc:  # surfaced to the starting thread
            self._error = exc
            self._ready.set()
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        runner = web.AppRunner(create_app(self.config), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{self.port}"
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
