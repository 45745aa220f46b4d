"""Which methods a concrete path allows: the fallback routes' 405s must agree with aiohttp's router,
so a path no route takes gets a 404 in the protocol's shape."""

from __future__ import annotations

import re

import httpx
import pytest
from aiohttp import web

from mockserver.routing import allowed_methods, template, templates
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
