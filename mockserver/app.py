"""The app factory: mounts the selected protocols on one aiohttp application.

No middleware sits on the request path (each costs every request a coroutine hop): the
operation wrapper in api.py shapes errors and crashes, and each protocol gets fallback routes,
registered after its own, that answer unrouted paths (404) and wrong methods (405 with Allow) in
the protocol's error shape.
"""

from __future__ import annotations

import importlib
import re

from aiohttp import web

from conformance.specs import load

from .api import ProtocolApi, error_response
from .config import MockConfig
from .errors import ApiError
from .faults import PROTOCOL_MODULES, FaultSet, resolve
from .streaming import StreamGate

GATE = web.AppKey("stream_gate", StreamGate)
CONFIG = web.AppKey("config", MockConfig)


def create_app(config: MockConfig | None = None) -> web.Application:
    config = config or MockConfig()
    faults: FaultSet = resolve(config.faults) if config.faults else FaultSet()
    specs = {pid: load(pid) for pid in config.protocols}
    gate = StreamGate(config.limits.max_open_streams)
    app = web.Application(client_max_size=config.limits.max_upload_bytes + (1 << 16))
    app[CONFIG] = config
    app[GATE] = gate
    fallbacks: list[web.RouteDef] = []
    for pid, spec in specs.items():
        api = ProtocolApi(spec, config, faults, gate)
        module = importlib.import_module(PROTOCOL_MODULES[pid])
        module.mount(api)
        app.router.add_routes(api.routes)
        fallbacks += fallback_routes(pid, api.routes)
    app.router.add_routes(fallbacks)  # after every protocol's own routes: resolution is in order
    return app


def _template(path: str) -> re.Pattern[str]:
    """``/ap/v1/agent/tasks/{task_id}`` -> a regex matching concrete paths of that template."""
    parts = re.split(r"(\{[^}/]+\})", path)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


def fallback_routes(protocol_id: str, routes: list[web.RouteDef]) -> list[web.RouteDef]:
    """Catch-alls under each first path segment the protocol owns, answering in its shape."""
    templates = [(_template(r.path), r.method.upper()) for r in routes]

    async def fallback(request: web.Request) -> web.StreamResponse:
        allowed = sorted({method for rx, method in templates if rx.fullmatch(request.path)})
        if allowed:
            error = ApiError(405, "Method Not Allowed", headers={"Allow": ",".join(allowed)})
        else:
            error = ApiError(404, "Not Found")
        return error_response(protocol_id, error)

    segments = sorted({r.path.strip("/").split("/", 1)[0] for r in routes})
    return [
        web.route("*", path, fallback) for segment in segments for path in (f"/{segment}", f"/{segment}/{{tail:.*}}")
    ]
