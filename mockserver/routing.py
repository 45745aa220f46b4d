"""A protocol's routes in the order the router resolves them best, and route templates as regexes:
which methods a concrete path allows, for 405s and CORS preflights."""

from __future__ import annotations

import re

from aiohttp import web

Templates = list[tuple[re.Pattern[str], str]]


SEGMENT = "[^{}/]+"
"""What a ``{name}`` of a route matches: aiohttp's own (``DynamicResource.GOOD``), so a path the
router does not give a route (a segment holding ``{`` or ``}``) allows no method here either and
gets a 404, not a 405 naming the very method it was sent with."""


def template(path: str) -> re.Pattern[str]:
    """``/ap/v1/agent/tasks/{task_id}`` -> a regex matching concrete paths of that template."""
    parts = re.split(r"(\{[^}/]+\})", path)
    return re.compile("".join(SEGMENT if p.startswith("{") else re.escape(p) for p in parts))


def templates(routes: list[web.RouteDef]) -> Templates:
    return [(template(r.path), r.method.upper()) for r in routes]


def allowed_methods(compiled: Templates, path: str) -> list[str]:
    return sorted({method for rx, method in compiled if rx.fullmatch(path)})


def resolution_order(routes: list[web.RouteDef]) -> list[web.RouteDef]:
    """``routes`` ordered for aiohttp's router, which tries the resources of a path prefix one by one
    in the order they were added: each path's methods together (adjacent routes of one path share
    one resource, so a GET is not first refused by the path's POST resource), and concrete paths
    before templated ones (OpenAPI's own precedence; a concrete path is one string comparison, a
    template a regex). In document order, ``GET /ap/v1/agent/tasks`` was the eighth of nine
    resources tried: six regexes and a wrong method on the way (bench/README.md)."""
    first: dict[str, int] = {}
    for n, r in enumerate(routes):
        first.setdefault(r.path, n)
    return sorted(routes, key=lambda r: ("{" in r.path, first[r.path]))
