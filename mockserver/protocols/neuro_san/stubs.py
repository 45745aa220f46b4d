"""NeuroSan's data stubs: agent networks served beside (or instead of) the built-in ones::

    data:
      neuro-san:
        networks:
          - name: weather_bot                    # the agent_name of the paths
            description: I forecast the weather.
            tags: [weather]
            front: Forecaster                    # the front man (default: the name)
            tools: [almanac, radar]              # what it calls: its connectivity
            parameters: {type: object, properties: {city: {type: string}}}   # its function's
            answer: Sunny all week.              # the chat's answer; or answers: [...], one per turn
            sample_queries: [Will it rain?]

What a network answers (connectivity, function, every chat frame) is checked against the document
when the stubs are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...api import ProtocolApi
from ...fixtures import checked, items_of, text_of
from ...stubs import StubError, check_body
from .models import Network, Turn

FIELDS = {"name", "description", "tags", "front", "tools", "parameters", "answer", "answers", "sample_queries"}
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


@dataclass(frozen=True, slots=True)
class Data:
    networks: Mapping[str, Network] = field(default_factory=dict)


def _responder(answers: tuple[str, ...], tool: str) -> Any:
    def respond(text: str, turn: int) -> Turn:
        return Turn({"inquiry": text}, f"{tool} consulted about: {text}", answers[(turn - 1) % len(answers)])

    return respond


def read(where: str, raw: Any, api: ProtocolApi) -> Data:
    raw = checked(where, raw, {"networks"})
    networks: dict[str, Network] = {}
    for i, item in enumerate(items_of(f"{where}.networks", raw.get("networks"))):
        at = f"{where}.networks[{i}]"
        item = checked(at, item, FIELDS, {"name"})
        name = text_of(f"{at}.name", item["name"])
        if not name or not set(name) <= NAME_CHARS or name in networks:
            raise StubError(f"{at}.name: {name!r} is empty, not a path segment of letters, digits, _-. or repeated")
        if "answer" in item and "answers" in item:
            raise StubError(f"{at}: give answer or answers, not both")
        answers = items_of(f"{at}.answers", item["answers"]) if "answers" in item else [item.get("answer", "")]
        if not answers:
            raise StubError(f"{at}.answers: at least one")
        texts = tuple(text_of(f"{at}.answers[{j}]", a) for j, a in enumerate(answers))
        tools = [text_of(f"{at}.tools[{j}]", t) for j, t in enumerate(items_of(f"{at}.tools", item.get("tools")))]
        front = text_of(f"{at}.front", item.get("front", name))
        parameters = item.get("parameters", {"type": "object", "properties": {}})
        tool = tools[0] if tools else front
        network = Network(
            name,
            text_of(f"{at}.description", item.get("description", f"The stubbed network {name}.")),
            tuple(text_of(f"{at}.tags[{j}]", t) for j, t in enumerate(items_of(f"{at}.tags", item.get("tags")))),
            front,
            f"You are {front}.",
            tool,
            "llm_agent",
            parameters,
            tuple(
                text_of(f"{at}.sample_queries[{j}]", q)
                for j, q in enumerate(items_of(f"{at}.sample_queries", item.get("sample_queries")))
            ),
            _responder(texts, tool),
            tools=tuple(tools),
        )
        check_body(at, api, "AgentService_Connectivity", network.connectivity())
        check_body(at, api, "AgentService_Function", network.function())
        for j, text in enumerate(texts):
            frame = {"response": {"type": "AGENT_FRAMEWORK", "text": text, "origin": [{"tool": front}]}}
            check_body(f"{at}.answers[{j}]", api, "AgentService_StreamingChat", frame)
        networks[name] = network
    return Data(networks)
