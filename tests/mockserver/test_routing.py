"""Which methods a concrete path allows: the fallback routes' 405s must agree with aiohttp's router,
so a path no route takes gets a 404 in the protocol's shape."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from mockserver.app import APIS, create_app
from mockserver.config import MockConfig
from mockserver.routing import allowed_methods, resolution_order, template, templates
from specs.documents import PROTOCOLS, load


async def _handler(request: web.Request) -> web.Response:
    return web.Response()


def test_a_template_matches_what_the_router_would_route() -> None:
    rx = template("/ap/v1/agent/tasks/{task_id}/steps")
    assert rx.fullmatch("/ap/v1/agent/tasks/abc-1/steps")
    assert not rx.fullmatch("/ap/v1/agent/tasks/a/b/steps")
    # aiohttp's {name} takes no brace (DynamicResource.GOOD), so neither does the template
    for segment in ("{id}", "a{b", "c}"):
        assert not rx.fullmatch(f"/ap/v1/agent/tasks/{segment}/steps")
    compiled = templates([web.get("/t/{x}", _handler), web.put("/t/{x}", _handler), web.post("/t", _handler)])
    assert allowed_methods(compiled, "/t/1") == ["GET", "PUT"]
    assert allowed_methods(compiled, "/t/{1}") == []


def _with_brace(pid: str) -> list[tuple[str, str]]:
    """One (method, path) per documented path with a parameter, the parameter holding braces."""
    spec, seen, out = load(pid), set(), []
    for op in spec.operations():
        if "{" in op.path and op.path not in seen:
            seen.add(op.path)
            out.append((op.method.upper(), spec.info.base_path + re.sub(r"\{[^}]+\}", "%7Bid%7D", op.path)))
    return out


@pytest.mark.parametrize("pid", sorted(PROTOCOLS))
def test_a_path_parameter_holding_a_brace_is_not_found_in_the_protocols_shape(pid: str, mock_url: str) -> None:
    shape = set(PROTOCOLS[pid].error.render(404, "Not Found"))
    cases = _with_brace(pid)
    assert cases
    with httpx.Client(base_url=mock_url, headers={"Authorization": "Bearer alice-token"}, timeout=10) as c:
        for method, path in cases:
            for sent in (path, path.replace("%7B", "{").replace("%7D", "}")):
                response = c.request(method, sent)
                assert response.status_code == 404, (method, sent, response.status_code, response.text)
                assert "allow" not in response.headers
                assert set(response.json()) == shape, response.text


def test_the_base_path_twice_is_not_found(mock_url: str) -> None:
    with httpx.Client(base_url=mock_url, timeout=10) as c:
        response = c.get("/ap/v1/ap/v1/agent/tasks/%7Bid%7D")
    assert response.status_code == 404 and response.json() == {"message": "Not Found"}


def _probes(pid: str, routes: list[web.RouteDef]) -> list[tuple[str, str]]:
    """(method, path) for every route, each parameter filled with a plain value and with every
    literal segment the protocol's paths hold (so a template meets the concrete paths it overlaps)."""
    literals = {s for r in routes for s in r.path.split("/") if s and "{" not in s}
    out = []
    for r in routes:
        parts = r.path.split("/")
        holes = [n for n, s in enumerate(parts) if s.startswith("{")]
        for value in ["x1", *sorted(literals)]:
            filled = [value if n in holes else s for n, s in enumerate(parts)]
            out.append((r.method, "/".join(filled)))
    return out


def _openapi_choice(routes: list[web.RouteDef], method: str, path: str) -> Any:
    """The handler OpenAPI's precedence picks: of the routes whose template matches, the one with
    the most literal segments (a concrete path before a templated one)."""
    matching = [r for r in routes if r.method == method and template(r.path).fullmatch(path)]
    if not matching:
        return None
    return max(matching, key=lambda r: sum(1 for s in r.path.split("/") if s and "{" not in s)).handler


@pytest.mark.parametrize("pid", sorted(PROTOCOLS))
def test_routes_in_resolution_order_pick_what_openapi_precedence_picks(pid: str) -> None:
    """The mock registers each protocol's routes grouped by path and concrete paths first (fewer
    resources tried per request, bench/README.md): every documented path still reaches the
    operation OpenAPI's matching rule names, and each path's methods share one resource."""
    routes = create_app(MockConfig(protocols=(pid,)))[APIS][pid].routes
    app = web.Application()
    app.router.add_routes(resolution_order(routes))
    paths = {r.path for r in routes}
    assert len([r for r in app.router.resources() if r.canonical in paths]) == len(paths)

    async def resolve(method: str, path: str) -> Any:
        match = await app.router.resolve(make_mocked_request(method, path))
        return getattr(match.route, "handler", None) if match.http_exception is None else None

    for method, path in _probes(pid, routes):
        assert asyncio.run(resolve(method, path)) is _openapi_choice(routes, method, path), (method, path)
