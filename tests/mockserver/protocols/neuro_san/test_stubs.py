"""NeuroSan's data stubs: agent networks (connectivity, function, the answer), checked against the
document when loaded."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.stubs import StubError

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
WEATHER = {
    "name": "weather_bot",
    "description": "I forecast the weather.",
    "tags": ["weather"],
    "front": "Forecaster",
    "tools": ["almanac", "radar"],
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "answers": ["Sunny.", "Rain later."],
}


def chat(c: httpx.Client, network: str, text: str, context: Any = None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"user_message": {"type": "HUMAN", "text": text}}
    if context is not None:
        body["chat_context"] = context
    answer = c.post(f"/api/v1/{network}/streaming_chat", json=body)
    assert answer.status_code == 200, answer.text
    return [json.loads(line)["response"] for line in answer.text.splitlines()]


def test_a_stubbed_network_is_served_whole(serve: Serve) -> None:
    stubs = {"data": {"neuro-san": {"networks": [WEATHER]}}}
    with serve(protocols=("neuro-san",), stubs=stubs) as server, httpx.Client(base_url=server.url) as c:
        connectivity = c.get("/api/v1/weather_bot/connectivity").json()
        assert connectivity["connectivity_info"] == [
            {"origin": "Forecaster", "tools": ["almanac", "radar"], "display_as": "llm_agent"},
            {"origin": "almanac", "tools": [], "display_as": "llm_agent"},
            {"origin": "radar", "tools": [], "display_as": "llm_agent"},
        ]
        assert c.get("/api/v1/weather_bot/function").json()["function"] == {
            "description": "I forecast the weather.",
            "parameters": WEATHER["parameters"],
        }
        first = chat(c, "weather_bot", "Will it rain?")[-1]
        assert first["text"] == "Sunny." and first["origin"][0]["tool"] == "Forecaster"
        second = chat(c, "weather_bot", "And tomorrow?", first["chat_context"])[-1]
        assert second["text"] == "Rain later."  # one answer per turn
        listed = [a["agent_name"] for a in c.get("/api/v1/list").json()["agents"]]
        assert "weather_bot" in listed and "hello_world" in listed
        assert c.get("/api/v1/hello_world/function").status_code == 200  # the built-in ones stay


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ({**WEATHER, "parameters": "city"}, r"data\.neuro-san\.networks\[0\]/function/parameters: \"city\" is not"),
        ({**WEATHER, "tags": [3]}, r"data\.neuro-san\.networks\[0\]\.tags\[0\]: expected text"),
        ({**WEATHER, "name": "a/b"}, r"data\.neuro-san\.networks\[0\]\.name: 'a/b' is empty"),
        ({**WEATHER, "answer": "x"}, r"data\.neuro-san\.networks\[0\]: give answer or answers, not both"),
        ({**WEATHER, "colour": "red"}, r"data\.neuro-san\.networks\[0\]: unknown field\(s\) colour"),
    ],
)
def test_a_network_that_violates_the_document_is_refused_with_the_path(network: Any, message: str) -> None:
    with pytest.raises(StubError, match=f"^{message}"):
        create_app(MockConfig(protocols=("neuro-san",), stubs={"data": {"neuro-san": {"networks": [network]}}}))
