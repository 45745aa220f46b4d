"""The app factory: mounts the selected protocols on one aiohttp application."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from conformance.specs import load

from .api import ProtocolApi, error_response, owners
from .config import MockConfig
from .errors import ApiError
from .faults import PROTOCOL_MODULES, FaultSet, resolve
from .streaming import StreamGate

log = logging.getLogger("mockserver")

GATE = web.AppKey("stream_gate", StreamGate)
CONFIG = web.AppKey("config", MockConfig)


def create_app(config: MockConfig | None = None) -> web.Application:
    config = config or MockConfig()
    faults: FaultSet = resolve(config.faults) if config.faults else FaultSet()
    specs = {pid: load(pid) for pid in config.protocols}
    gate = StreamGate(config.limits.max_open_streams)
    app = web.Application(
        client_max_size=config.limits.max_upload_bytes + (1 << 16),
        middlewares=[_protocol_errors(owners(specs))],
    )
    app[CONFIG] = config
    app[GATE] = gate
    for pid, spec in specs.items():
        api = ProtocolApi(spec, config, faults, gate)
        module = importlib.import_module(PROTOCOL_MODULES[pid])
        module.mount(api)
        app.router.add_routes(api.routes)
    return app


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _protocol_errors(owner_of: dict[str, str]) -> Middleware:
    """Unrouted paths, wrong methods, oversized bodies and crashes, in the owning protocol's shape."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            pid = owner_of.get(request.path.strip("/").split("/", 1)[0])
            if pid is None or exc.status < 400:
                raise
            headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
            message = "Request body too large" if exc.status == 413 else exc.reason
            return error_response(pid, ApiError(exc.status, message, headers=headers))
        except Exception:
            log.exception("unhandled error on %s %s", request.method, request.path)
            pid = owner_of.get(request.path.strip("/").split("/", 1)[0], "agent-protocol")
            return error_response(pid, ApiError(500, "Internal server error"))

    return middleware
