"""sgr-agent-core's facts for the generic tests (tests/facts.py)."""

from __future__ import annotations

import aiohttp
import httpx

from tests.facts import Call, Facts, Fixtures, Stream

CHAT = "/v1/chat/completions"
RESEARCH = {
    "model": "sgr_agent",
    "messages": [{"role": "user", "content": "research the history of tidal power plants"}],
    "stream": True,
}


async def abandoned(url: str) -> None:
    """The agent whose stream lost its client was cancelled, not left running."""
    async with aiohttp.ClientSession(url) as http, http.get("/agents") as r:
        assert [a["state"] for a in (await r.json())["agents"]] == ["cancelled"]


def check_fixtures(c: httpx.Client) -> None:
    agent = c.get("/agents/sgr_agent_fixture/state").json()
    assert agent["state"] == "completed" and agent["execution_result"] == "Owls are birds."


FACTS = Facts(
    "sgr-agent-core",
    # statuses and headers checkable, an agent deleted and no longer served (no create read back
    # under its creating path)
    schema_requirements=frozenset({"001", "002", "003", "004", "005", "006", "007", "009"}),
    served=Call("GET", "/health"),
    json_post=Call("POST", CHAT),
    named_values={"body.model": ("sgr_agent", "sgr_tool_calling_agent", "tool_calling_agent")},
    stream=Stream(
        Call("POST", CHAT, RESEARCH),
        "sse",
        b"data: ",
        before_stall=2,
        stall_fault="sgr-stall-mid-stream",
        abandoned=abandoned,
    ),
    fixtures=Fixtures(
        document={
            "agents": [
                {
                    "agent_id": "sgr_agent_fixture",
                    "model": "sgr_agent",
                    "state": "completed",
                    "messages": [{"role": "user", "content": "research owls"}],
                    "execution_result": "Owls are birds.",
                }
            ]
        },
        loaded={"agents": ["sgr_agent_fixture"]},
        check=check_fixtures,
        gone=Call("GET", "/agents/sgr_agent_fixture/state"),
    ),
)
