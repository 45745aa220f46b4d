"""The landing page at ``/``: what this mock serves and where, for a person (HTML) or a program
(JSON, for ``Accept: application/json``): each protocol with its base path and documents, the
``--base-url`` the suite takes for it (this server's origin and the protocol's server path from its
manifest) with the command that runs the suite against it, and the admin API's endpoints. Behind
the ``Host`` check like every route; it holds nothing private (a token the mock was given is
never shown: the command then names ``$TOKEN``)."""

from __future__ import annotations

import html
import json
import posixpath
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from specs.documents import PROTOCOLS
from specs.program import __version__

from .admin import ENDPOINTS, PREFIX
from .api import ProtocolApi
from .config import DEFAULT_TOKENS
from .gate import Gate

DOCS = "docs/mock.md"
SUITE = "python -m conformance run"


def base_path(api: ProtocolApi) -> str:
    """Where the protocol lives: its server path and the path its operations share."""
    paths = [api.base_path + op.path for op in api.spec.operations()]
    shared = posixpath.commonpath(paths) if paths else "/"
    parts = shared.split("/")
    fixed = parts[: next((i for i, part in enumerate(parts) if "{" in part), len(parts))]
    return "/".join(fixed) or "/"


def credentials(apis: Mapping[str, ProtocolApi]) -> str:
    """The suite's token options for a protocol that asks for auth: the mock's default (public)
    tokens as they are, any other only by name."""
    tokens = [api.config.tokens for api in apis.values()][:1]
    if tokens == [DEFAULT_TOKENS]:
        alice, bob = DEFAULT_TOKENS.values()
        return f" --token {alice} --second-token {bob}"
    return ' --token "$TOKEN" --second-token "$SECOND_TOKEN"'


def command(protocol: str, base_url: str, auth: str) -> str:
    return f"{SUITE} --protocol {protocol} --base-url {base_url}{auth}"


def describe(apis: Mapping[str, ProtocolApi], gate: Gate, origin: str) -> dict[str, Any]:
    """``origin``: this server's scheme, host and port as the request named them."""
    auth = credentials(apis)
    return {
        "name": "agent-mock",
        "version": __version__,
        "protocols": [
            {
                "id": pid,
                "title": api.spec.info.title,
                "base_path": base_path(api),
                "base_url": origin + api.base_path,
                "run": command(pid, origin + api.base_path, auth if api.spec.raw.get("security") else ""),
                "openapi": api.spec.version,
                "documents": {"json": f"{PREFIX}/specs/{pid}.json", "yaml": f"{PREFIX}/specs/{pid}.yaml"},
                "operations": sorted(op.operation_id for op in api.spec.operations()),
            }
            for pid, api in apis.items()
        ],
        # the root: the suite appends each protocol's server path itself under --protocol all,
        # which means every protocol it knows: offered only when this mock serves each of them
        "run_all": command("all", origin, auth) if set(apis) == set(PROTOCOLS) and len(apis) > 1 else None,
        "admin": {
            "prefix": f"{PREFIX}/",
            "token_required": gate.token is not None,
            "endpoints": [" ".join(line.split()) for line in ENDPOINTS.strip().splitlines()],
        },
        "documentation": DOCS,
    }


def _page(about: dict[str, Any]) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td><code>{e(p['id'])}</code></td><td>{e(p['title'])}</td><td><code>{e(p['base_path'])}</code></td>"
        f"<td><code>{e(p['base_url'])}</code></td>"
        f'<td>{len(p["operations"])}</td><td><a href="{e(p["documents"]["json"])}">JSON</a> · '
        f'<a href="{e(p["documents"]["yaml"])}">YAML</a> (OpenAPI {e(p["openapi"])})</td></tr>'
        for p in about["protocols"]
    )
    commands = "\n".join(e(p["run"]) for p in about["protocols"])
    every = (
        f"<p>All of them at once (the server's root: the suite appends each protocol's server path):</p>"
        f"<pre>{e(about['run_all'])}</pre>"
        if about["run_all"]
        else ""
    )
    admin = about["admin"]
    token = (
        "<p>The admin API wants <code>Authorization: Bearer &lt;token&gt;</code> (the mock's admin token).</p>"
        if admin["token_required"]
        else ""
    )
    endpoints = "\n".join(e(line) for line in admin["endpoints"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agent-mock {e(about["version"])}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #ddd;padding:.3rem .8rem;text-align:left}}
pre{{background:#f5f5f5;padding:.8rem;overflow-x:auto}}</style></head>
<body><h1>agent-mock {e(about["version"])}</h1>
<p>The reference mock of the agent conformance kit. It serves these protocols, each under its base path:</p>
<table><tr><th>id</th><th>protocol</th><th>base path</th><th><code>--base-url</code></th><th>operations</th>
<th>document</th></tr>{rows}</table>
<h2>Run the conformance suite against it</h2>
<p>Each protocol, from the kit's folder or wherever it is installed:</p>
<pre>{commands}</pre>{every}
<h2>Admin API: <code>{e(admin["prefix"])}</code></h2>{token}
<pre>{endpoints}</pre>
<p>This page as JSON: <code>Accept: application/json</code>. How to use the mock: {e(about["documentation"])}.</p>
</body></html>
"""


def routes(apis: Mapping[str, ProtocolApi], gate: Gate) -> list[web.RouteDef]:
    async def landing(request: web.Request) -> web.StreamResponse:
        refused = gate.refuse_host(request)
        if refused is not None:
            return refused
        about = describe(apis, gate, str(request.url.origin()))  # the address the caller reached it by
        accept = request.headers.get("Accept", "")
        if "application/json" in accept and "text/html" not in accept:
            data = json.dumps(about, indent=2).encode()
            return web.Response(body=data, content_type="application/json", headers={"Vary": "Accept"})
        page = _page(about).encode()
        return web.Response(body=page, content_type="text/html", charset="utf-8", headers={"Vary": "Accept"})

    return [web.get("/", landing)]
