"""CORS: on by default for browser front-ends, preflights answered, off with --no-cors."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import httpx
import pytest

from mockserver import EmbeddedServer

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
ORIGIN = "http://localhost:5173"


def _preflight(c: httpx.Client, path: str, method: str = "POST") -> httpx.Response:
    return c.options(
        path,
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )


@pytest.mark.parametrize(
    ("path", "methods"),
    [
        ("/ap/v1/agent/tasks", "GET, POST"),
        ("/api/v1/hello_world/streaming_chat", "POST"),
        ("/v1/chat/completions", "POST"),
        ("/repo/v1/agent/session/1", "GET, PUT"),
    ],
)
def test_preflight_answered_with_the_paths_methods(serve: Serve, path: str, methods: str) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        answer = _preflight(c, path)
        assert answer.status_code == 204
        assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert answer.headers["Access-Control-Allow-Methods"] == methods
        assert answer.headers["Access-Control-Allow-Headers"] == "authorization, content-type"
        assert int(answer.headers["Access-Control-Max-Age"]) > 0


def test_answers_to_a_browser_are_readable(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        plain = c.get("/health")
        assert "Access-Control-Allow-Origin" not in plain.headers  # no Origin, no CORS headers
        ok = c.get("/health", headers={"Origin": ORIGIN})
        assert ok.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert ok.headers["Vary"] == "Origin"
        denied = c.get("/repo/v1/userProfile", headers={"Origin": ORIGIN})  # errors too
        assert denied.status_code == 401 and denied.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert "WWW-Authenticate" in denied.headers["Access-Control-Expose-Headers"]
        with c.stream(
            "POST",
            "/v1/chat/completions",
            headers={"Origin": ORIGIN},
            json={"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]},
        ) as r:
            assert r.headers["Access-Control-Allow-Origin"] == ORIGIN  # streams too
            assert "X-Agent-ID" in r.headers["Access-Control-Expose-Headers"]


def test_a_plain_options_request_is_still_the_protocols_405(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        answer = c.options("/ap/v1/agent/tasks")
        assert answer.status_code == 405 and "message" in answer.json()


def test_no_cors(serve: Serve) -> None:
    with serve(cors=False) as server, httpx.Client(base_url=server.url) as c:
        answer = _preflight(c, "/ap/v1/agent/tasks")
        assert answer.status_code == 405 and "Access-Control-Allow-Origin" not in answer.headers
        assert "Access-Control-Allow-Origin" not in c.get("/health", headers={"Origin": ORIGIN}).headers


def test_chaos_answers_are_readable_too(serve: Serve) -> None:
    """What a browser's resilience test meets (chaos's own 503) carries the headers; the admin API
    never does (tests/mockserver/test_gate.py)."""
    with (
        serve(protocols=("agent-protocol",), chaos=({"error": 503},)) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        failed = c.get("/ap/v1/agent/tasks", headers={"Origin": ORIGIN})
        assert failed.status_code == 503 and failed.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert "Retry-After" in failed.headers["Access-Control-Expose-Headers"]


def test_the_concierge_list_is_behind_the_hooks(serve: Serve) -> None:
    """neuro-san's /api/v1/list, a route of the upstream overlay, is journalled and readable like the rest."""
    with serve(protocols=("neuro-san",), journal=10) as server, httpx.Client(base_url=server.url) as c:
        listed = c.get("/api/v1/list", headers={"Origin": ORIGIN})
        assert listed.status_code == 200 and listed.headers["Access-Control-Allow-Origin"] == ORIGIN
        entries = c.get("/__mock/journal").json()["entries"]
        assert [(e["request"]["method"], e["request"]["path"]) for e in entries] == [("GET", "/api/v1/list")]


def test_a_stream_that_stalls_was_readable_before_it_stalled(serve: Serve) -> None:
    """The download-stall fault sends its headers itself, before its handler returns: with CORS too."""
    with (
        serve(protocols=("agent-protocol",), faults=("ap-download-stalls",)) as server,
        httpx.Client(base_url=server.url, timeout=2) as c,
    ):
        task = c.post("/ap/v1/agent/tasks", json={"input": "x"}).json()["task_id"]
        made = c.post(f"/ap/v1/agent/tasks/{task}/artifacts", files={"file": ("a.txt", b"0123456789")}).json()
        url = f"/ap/v1/agent/tasks/{task}/artifacts/{made['artifact_id']}"
        with c.stream("GET", url, headers={"Origin": ORIGIN}) as answer:
            assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
