"""Run the mock in a background thread on a free loopback port: for the suite's default target,
for tests and for interop clients that want a real socket."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Self

from aiohttp import web

from specs.serving import AppServer

from .app import create_app
from .config import MockConfig


class EmbeddedServer(AppServer):
    """``with EmbeddedServer(config) as server: server.url`` -> ``http://127.0.0.1:PORT``."""

    name = "embedded mock server"

    def __init__(self, config: MockConfig | None = None, host: str | None = None, port: int = 0) -> None:
        self.config = config or MockConfig()
        if host is not None and host != self.config.host:
            self.config = replace(self.config, host=host)  # the gate answers to the address it listens on
        super().__init__(self.config.host, port)

    def start(self) -> Self:
        # Fuzzing sends requests aiohttp's parser rejects before any handler runs (NUL in a
        # header); its per-request tracebacks would drown the suite's own progress output.
        logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
        return super().start()

    def make_app(self) -> web.Application:
        return create_app(self.config)
