"""A server on a loopback port, run in a background thread with its own event loop.

The embedded mock, the proxy's test server and the tests' hostile targets all start this way;
``ServerThread`` is the start-up and shutdown they share, ``AppServer`` the aiohttp variant.
``run`` is how the mock's and the proxy's commands run their servers: on uvloop when it is
installed (the ``uvloop`` extra), or on the loop ``--loop`` names.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import signal
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

if TYPE_CHECKING:  # aiohttp is imported by the servers that start, not by every command that parses --loop
    from aiohttp import web

T = TypeVar("T")
LOOPS = ("asyncio", "uvloop")


def default_loop() -> str:
    """uvloop where it is installed, else the standard loop."""
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


def add_loop_argument(parser: argparse.ArgumentParser | Any) -> None:
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default=None,
        help=f"the event loop (default uvloop when installed, else asyncio; here: {default_loop()})",
    )


class LoopUnavailable(Exception):
    """``--loop uvloop`` where uvloop is not installed."""


def loop_factory(name: str | None) -> Callable[[], asyncio.AbstractEventLoop]:
    """A factory of the named loop (``None``: the default one)."""
    name = name or default_loop()
    if name == "uvloop":
        try:
            import uvloop
        except ImportError as exc:
            raise LoopUnavailable(
                "--loop uvloop: uvloop is not installed (pip install 'agent-api-conformance[uvloop]')"
            ) from exc
        return uvloop.new_event_loop
    return asyncio.new_event_loop


def stop_on_signals() -> asyncio.Event:
    """An event the running loop sets on SIGINT or SIGTERM: a server command's coroutine waits on it,
    then shuts down cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


def run(main: Coroutine[Any, Any, T], loop: str | None = None) -> T:
    """``asyncio.run`` on the named loop."""
    try:
        factory = loop_factory(loop)
    except LoopUnavailable:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


class ServerThread:
    """Runs ``serve`` in a daemon thread; ``start`` returns once it called ``listening`` (or failed)."""

    name = "server"
    start_timeout_s = 30.0

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None

    async def serve(self, stop: asyncio.Event) -> None:
        """Start listening, call ``listening(port)``, wait for ``stop``, then clean up."""
        raise NotImplementedError

    def listening(self, port: int) -> None:
        self.port = port
        self.url = f"http://{self.host}:{port}"
        self._ready.set()

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        if not self._ready.wait(self.start_timeout_s):
            raise RuntimeError(f"the {self.name} did not start within {self.start_timeout_s:g} s")
        if self._error is not None:
            raise RuntimeError(f"the {self.name} failed to start: {self._error}") from self._error
        return self

    def _run(self) -> None:
        # asyncio.Runner, as asyncio.run: at the end every task still under way (a handler whose
        # client left, a recorder's relay reading the rest of an answer) is cancelled and run to
        # its end before the loop closes, instead of being left to the collector, whose close
        # of it then ran its cleanup on a closed loop ("Event loop is closed", unraisable)
        with asyncio.Runner() as runner:
            self._loop = runner.get_loop()
            try:
                self._stop = asyncio.Event()
                runner.run(self.serve(self._stop))
            except BaseException as exc:  # surfaced to the starting thread
                self._error = exc
                self._ready.set()

    def stop(self, timeout_s: float = 10.0) -> bool:
        """Asks the server to stop and waits for its thread; False if it is still running."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout_s)
            return not self._thread.is_alive()
        return True

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class AppServer(ServerThread):
    """An aiohttp application made by ``make_app`` (in the server's thread, on its loop)."""

    shutdown_timeout_s = 1.0

    def make_app(self) -> web.Application:
        raise NotImplementedError

    async def serve(self, stop: asyncio.Event) -> None:
        from aiohttp import web

        runner = web.AppRunner(self.make_app(), access_log=None, shutdown_timeout=self.shutdown_timeout_s)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.listening(sockets[0].getsockname()[1])
        try:
            await stop.wait()
        finally:
            await runner.cleanup()
