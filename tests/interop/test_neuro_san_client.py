"""The official neuro-san Python HTTP client sessions against the mock.

neuro-san 0.7.x requires Python >= 3.12; on 3.11 the newest installable release is 0.6.98, whose
HTTP sessions speak the same wire protocol (GET with a `{}` JSON body for connectivity and
function, NDJSON streaming_chat, GET /api/v1/list for the concierge).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer

http_session = pytest.importorskip(
    "neuro_san.session.http_service_agent_session", reason="the neuro-san client package is not installed"
)
async_session = pytest.importorskip("neuro_san.session.async_http_service_agent_session")
concierge_session = pytest.importorskip("neuro_san.session.http_concierge_session")

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with EmbeddedServer(MockConfig(protocols=("neuro-san",))) as server:
        yield server.port


def session(port: int, agent: str) -> Any:
    return http_session.HttpServiceAgentSession(
        host="127.0.0.1", port=port, agent_name=agent, metadata={"user_id": "interop", "request_id": "r-1"}
    )


def test_function_and_connectivity(port: int) -> None:
    agent = session(port, "math_guy")
    assert agent.function({})["function"]["parameters"]["required"] == ["inquiry"]
    connectivity = agent.connectivity({})
    assert [node["origin"] for node in connectivity["connectivity_info"]] == ["MathGuy", "calculator"]


def test_unknown_agent_reads_as_a_status(port: int) -> None:
    assert session(port, "nobody").function({})["code"] == 5


def test_concierge_list(port: int) -> None:
    listed = concierge_session.HttpConciergeSession(host="127.0.0.1", port=port).list({})
    assert [a["agent_name"] for a in listed["agents"]] == ["hello_world", "math_guy", "music_nerd_pro"]


def test_streaming_chat_continues_with_the_returned_context(port: int) -> None:
    agent = session(port, "hello_world")
    request: dict[str, Any] = {"user_message": {"type": "HUMAN", "text": "first"}}
    first = list(agent.streaming_chat(request))[-1]["response"]
    assert first["text"] == "Hello, world! You said: first. (turn 1)"
    request = {"user_message": {"type": "HUMAN", "text": "second"}, "chat_context": first["chat_context"],
               "chat_filter": {"chat_filter_type": "MAXIMAL"}}
    responses = [r["response"] for r in agent.streaming_chat(request)]
    assert [r["type"] for r in responses] == ["SYSTEM", "AGENT", "AGENT_TOOL_RESULT", "AI", "AGENT_FRAMEWORK"]
    assert responses[-1]["text"] == "Hello, world! You said: second. (turn 2)"


def test_async_session_streams(port: int) -> None:
    async def run() -> list[dict[str, Any]]:
        agent = async_session.AsyncHttpServiceAgentSession(host="127.0.0.1", port=port, agent_name="math_guy")
        request = {"user_message": {"type": "HUMAN", "text": "6 * 7"}}
        return [r async for r in agent.streaming_chat(request)]

    responses = asyncio.run(run())
    assert responses[-1]["response"]["text"] == "6 * 7 = 42. (turn 1)"
