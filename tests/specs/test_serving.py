"""The event loop the mock's and the proxy's commands run on: uvloop when installed, or ``--loop``."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import socket
import sys
import threading

import pytest
from aiohttp import web

from specs import serving


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_the_default_is_uvloop_exactly_when_it_is_installed() -> None:
    installed = importlib.util.find_spec("uvloop") is not None
    assert serving.default_loop() == ("uvloop" if installed else "asyncio")
    assert serving.run(loop_module()) == serving.default_loop()


def test_the_standard_loop_on_request() -> None:
    assert serving.run(loop_module(), "asyncio") == "asyncio"


def test_uvloop_on_request() -> None:
    pytest.importorskip("uvloop")
    assert serving.run(loop_module(), "uvloop") == "uvloop"


def test_uvloop_asked_for_but_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else object())
    assert serving.default_loop() == "asyncio"
    coroutine = loop_module()
    with pytest.raises(serving.LoopUnavailable, match=r"pip install 'agent-api-conformance\[uvloop\]'"):
        serving.run(coroutine, "uvloop")
    assert coroutine.cr_frame is None  # closed, not left to warn "never awaited"


def test_the_option_takes_only_the_two_loops() -> None:
    parser = argparse.ArgumentParser()
    serving.add_loop_argument(parser)
    assert parser.parse_args([]).loop is None
    assert parser.parse_args(["--loop", "asyncio"]).loop == "asyncio"
    with pytest.raises(SystemExit):
        parser.parse_args(["--loop", "tokio"])


class _Lingering(serving.AppServer):
    """A handler that goes on after its client left (as the recorder's relay reads the rest of an
    answer), and notes how its cleanup went."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.cleanup: list[str] = []

    def make_app(self) -> web.Application:
        async def linger(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse()
            await response.prepare(request)
            await response.write(b"started")
            self.entered.set()
            try:
                await asyncio.Event().wait()  # never set: only a cancel ends it
            finally:
                try:  # what a relay's cleanup does: cancel a read, on the loop
                    asyncio.get_running_loop().call_soon(lambda: None)
                    self.cleanup.append("on an open loop")
                except RuntimeError as exc:
                    self.cleanup.append(str(exc))
            return response

        app = web.Application()
        app.router.add_get("/", linger)
        return app


def test_a_handler_still_under_way_at_stop_ends_before_its_loop_closes() -> None:
    server = _Lingering().start()
    try:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert server.entered.wait(5)
        # the client left; the handler goes on
    finally:
        stopped = server.stop()
    assert stopped
    # cancelled and run to its end while the loop still ran (before: left pending on a closed
    # loop, its cleanup run later by the collector, where it failed unraisably)
    assert server.cleanup == ["on an open loop"]
