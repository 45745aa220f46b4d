"""Route templates as regexes: which methods a concrete path allows, for 405s and CORS preflights."""

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
