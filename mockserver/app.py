"""The app factory: mounts the selected protocols on one aiohttp application.

No middleware sits on the request path (each costs every request a coroutine hop): the
operation wrapper in api.py shapes errors and crashes, and each protocol gets fallback routes,
registered after its own, that answer unrouted paths (404) and wrong methods (405 with Allow) in
the protocol's error shape, and CORS preflights. The admin API (admin.py) lives under ``/__mock``;
every route checks the request's ``Host`` first, and the admin API its origin and token (gate.py).
"""

from __future__ import annotations

import functools

from aiohttp import web

from specs.documents import load

from . import cors, fixtures, landing
from .admin import Admin
from .api import Endpoint, ProtocolApi
from .chaos import Chaos, load_document
from .config import MockConfig
from .descriptor import descriptors, resolve
from .errors import ApiError
from .faults import FaultSet
from .gate import Gate
from .hooks import Hooks
from .journal import Journal
from .record import Recorder
from .routing import allowed_methods, resolution_order, templates
from .streaming import StreamGate
from .stubs import Stubs

GATE = web.AppKey("stream_gate", StreamGate)
CONFIG = web.AppKey("config", MockConfig)
HOOKS = web.AppKey("hooks", Hooks)
APIS = web.AppKey("apis", dict[str, ProtocolApi])
STUBS = web.AppKey("stubs", Stubs)
RECORDER = web.AppKey("recorder", Recorder)


def create_app(config: MockConfig | None = None) -> web.Application:
    config = config or MockConfig()
    recorder = Recorder(config.record) if config.record else None
    if recorder is not None and (config.faults or config.fixtures or config.stubs):
        raise ValueError("recording forwards every request to the real server: no faults, fixtures or stubs with it")
    faults: FaultSet = resolve(config.faults) if config.faults else FaultSet()
    mocks = descriptors(config.protocols)
    specs = {pid: load(pid) for pid in config.protocols}
    streams = StreamGate(config.limits.max_open_streams)
    operations = {pid: [op.operation_id for op in spec.operations()] for pid, spec in specs.items()}
    rules, _ = load_document(list(config.chaos), operations)
    seed = config.chaos_seed if config.chaos_seed is not None else config.seed
    gate = Gate(config.host, config.allowed_hosts, config.admin_token)
    hooks = Hooks(Chaos(rules, seed), Journal(config.journal), config.access_log, config.verbose, config.cors, gate)
    app = web.Application(client_max_size=config.limits.max_upload_bytes + (1 << 16))
    app[CONFIG] = config
    app[GATE] = streams
    app[HOOKS] = hooks
    apis: dict[str, ProtocolApi] = {}
    fallbacks: list[web.RouteDef] = []
    for pid, spec in specs.items():
        api = apis[pid] = ProtocolApi(spec, config, faults, streams, hooks)
        if recorder is None:
            api.mount(mocks[pid].handlers)
        else:
            api.forward(functools.partial(recorder.endpoint, api), mocks[pid].handlers)
        app.router.add_routes(resolution_order(api.routes))
        fallbacks += fallback_routes(api, config.cors, recorder.endpoint(api, None) if recorder else None)
    app[APIS] = apis
    stubs = app[STUBS] = Stubs(apis, {pid: mock.stubs for pid, mock in mocks.items()})
    if config.stubs is not None:
        stubs.load(config.stubs)
    if recorder is not None:
        app[RECORDER] = recorder
        app.on_cleanup.append(recorder.close)
    admin = Admin(apis, hooks, mocks, stubs, recorder)
    app.router.add_routes(admin.routes())
    app.router.add_routes(landing.routes(apis, gate))
    app.router.add_routes(fallbacks)  # after every protocol's own routes: resolution is in order
    app.router.add_routes(admin.fallback())
    if config.fixtures is not None:
        fixtures.load(apis, config.fixtures, {pid: mock.fixtures for pid, mock in mocks.items()})
    return app


def fallback_routes(api: ProtocolApi, answer_cors: bool = False, forward: Endpoint | None = None) -> list[web.RouteDef]:
    """Catch-alls under each first path segment the protocol owns, answering in its shape (or,
    when recording, forwarded like everything else)."""
    routes = api.routes
    compiled = templates(routes)
    error_response = api.errors.response

    async def serve(request: web.Request) -> web.StreamResponse:
        allowed = allowed_methods(compiled, request.path)
        if answer_cors and cors.is_preflight(request):
            return cors.preflight(request, allowed)
        if allowed:
            error = ApiError(405, "Method Not Allowed", headers={"Allow": ",".join(allowed)})
        else:
            error = ApiError(404, "Not Found")
        return error_response(error)

    inner = serve if forward is None else forward
    fallback = inner if api.hooks is None else api.hooks.wrap(api.protocol_id, None, inner, error_response)
    segments = sorted({r.path.strip("/").split("/", 1)[0] for r in routes})
    return [
        web.route("*", path, fallback) for segment in segments for path in (f"/{segment}", f"/{segment}/{{tail:.*}}")
    ]
