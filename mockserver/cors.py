"""CORS for browser front-ends, on by default as on the real sgr-agent-core (every origin allowed).

Answers carry the headers only when the request has an ``Origin`` (only browsers send one), and
preflights are answered by each protocol's fallback route, which knows the methods a path allows.
The origin is echoed with credentials allowed, as Starlette's CORSMiddleware does with
``allow_origins=["*"], allow_credentials=True``, so cookie-carrying fetches work too.

Not an ``on_response_prepare`` receiver: aiohttp awaits that signal for every answer (about 1 µs
each, a tenth of the mock's cost over a bare server on a read), so the endpoint wrappers
(``Hooks.wrap``, ``wrap`` for the admin API) look for an ``Origin`` instead and take ``serve`` only
for a browser; a stream, whose headers go out before its handler returns, adds them as it opens.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web

Endpoint = Callable[[web.Request], Awaitable[web.StreamResponse]]
BROWSER = web.RequestKey("mockserver.cors_origin", str)
"""The ``Origin`` of a request that is answered with CORS headers (set by ``serve``)."""

EXPOSED = "Retry-After, WWW-Authenticate, X-Agent-ID, X-Agent-Model, Content-Disposition"
"""Response headers a browser script may read (besides the CORS-safelisted ones)."""
MAX_AGE = "600"


async def serve(request: web.Request, endpoint: Endpoint) -> web.StreamResponse:
    """``endpoint``'s answer to a browser, with the headers that let its script read it."""
    request[BROWSER] = request.headers["Origin"]
    response = await endpoint(request)
    if not response.prepared:  # a stream has sent its headers already, with these (``opening``)
        add_headers(request, response)
    return response


def wrap(endpoint: Endpoint) -> Endpoint:
    async def answer(request: web.Request) -> web.StreamResponse:
        if "Origin" in request.headers:
            return await serve(request, endpoint)
        return await endpoint(request)

    return answer


def opening(request: web.Request, response: web.StreamResponse) -> None:
    """Before a stream prepares: the CORS headers, if ``serve`` answers a browser's request."""
    if BROWSER in request:
        add_headers(request, response)


def add_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer to a browser says it may be read."""
    origin = request.headers.get("Origin")
    if origin is None:
        return
    headers = response.headers
    headers["Access-Control-Allow-Origin"] = origin
    headers["Access-Control-Allow-Credentials"] = "true"
    headers["Access-Control-Expose-Headers"] = EXPOSED
    headers.add("Vary", "Origin")


def is_preflight(request: web.Request) -> bool:
    return (
        request.method == "OPTIONS"
        and "Origin" in request.headers
        and "Access-Control-Request-Method" in request.headers
    )


def preflight(request: web.Request, allowed: Iterable[str]) -> web.Response:
    """204 with what the path allows; a path nothing serves is allowed the method asked for, so the
    browser goes on to send its request and its developer sees the protocol's own 404."""
    methods = sorted(set(allowed)) or [request.headers["Access-Control-Request-Method"]]
    asked = request.headers.get("Access-Control-Request-Headers", "")
    headers = {
        "Access-Control-Allow-Methods": ", ".join(methods),
        "Access-Control-Allow-Headers": asked or "*",
        "Access-Control-Max-Age": MAX_AGE,
    }
    return web.Response(status=204, headers=headers)
