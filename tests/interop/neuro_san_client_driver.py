"""Drives the official neuro-san client (0.7.x, Python >= 3.12) against a NeuroSan server.

Run with the peer venv's interpreter, not the project's: ``python neuro_san_client_driver.py PORT``.
It lists the agents through the concierge session and, for every listed agent, calls function and
connectivity, a MINIMAL streaming chat, a MAXIMAL one continuing it through the returned
chat_context, and the async session's streaming chat; then asks for an agent nobody hosts (where
the client raises, the cause is recorded). What each call returned is printed as one JSON object,
for the test in the project's venv to judge.
Only the client package is imported, so this runs in a venv that has nothing of this project.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from neuro_san.session.async_http_service_agent_session import AsyncHttpServiceAgentSession
from neuro_san.session.http_concierge_session import HttpConciergeSession
from neuro_san.session.http_service_agent_session import HttpServiceAgentSession

HOST = "127.0.0.1"
FIRST, SECOND = "6 * 7", "2 + 3"
UNKNOWN = "interop_no_such_agent"
METADATA = {"user_id": "interop", "request_id": "interop-1"}


def chat(text: str, chat_filter: str, context: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "user_message": {"type": "HUMAN", "text": text},
        "chat_filter": {"chat_filter_type": chat_filter},
    }
    if context is not None:
        request["chat_context"] = context
    return request


def responses(stream: Any) -> list[dict[str, Any]]:
    return [item["response"] for item in stream]


async def async_chat(port: str, agent: str) -> list[dict[str, Any]]:
    session = AsyncHttpServiceAgentSession(host=HOST, port=port, agent_name=agent, metadata=METADATA)
    return [item["response"] async for item in session.streaming_chat(chat(FIRST, "MINIMAL"))]


def drive(port: str) -> dict[str, Any]:
    listed = HttpConciergeSession(host=HOST, port=port, metadata=METADATA).list({})
    agents: dict[str, Any] = {}
    for info in listed.get("agents", []):
        name = info["agent_name"]
        session = HttpServiceAgentSession(
            host=HOST,
            port=port,
            agent_name=name,
            metadata=METADATA,
            timeout_in_seconds=10,
            streaming_timeout_in_seconds=30,
        )
        minimal = responses(session.streaming_chat(chat(FIRST, "MINIMAL")))
        context = minimal[-1].get("chat_context") if minimal else None
        agents[name] = {
            "function": session.function({}),
            "connectivity": session.connectivity({}),
            "minimal": minimal,
            "maximal_continued": responses(session.streaming_chat(chat(SECOND, "MAXIMAL", context))),
            "async_minimal": asyncio.run(async_chat(port, name)),
        }
    unknown = HttpServiceAgentSession(host=HOST, port=port, agent_name=UNKNOWN, timeout_in_seconds=10)
    try:
        unknown_function: Any = unknown.function({})
    except ValueError as exc:  # the client's own error when it cannot read the answer as JSON
        unknown_function = {"client_error": f"{type(exc.__cause__).__name__}: {exc.__cause__}"}
    return {"list": listed, "agents": agents, "unknown_function": unknown_function}


if __name__ == "__main__":
    json.dump(drive(sys.argv[1]), sys.stdout)
