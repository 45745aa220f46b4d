"""SGR Agent Core's data stubs: models served beside the built-in ones, and what their agents say::

    data:
      sgr-agent-core:
        models:
          - name: owl_expert                     # listed by /v1/models, accepted as a chat's model
            reply: "Owls hoot.\\nThey fly at night.\\n"   # streamed line by line; the agent's result
            chunks: ["Owls ", "hoot."]           # or exactly these content chunks
            clarify: ["Which owls?"]             # optional: ask these first, wait, then reply

An agent of a stubbed model runs as any other (its id, state, X-Agent-ID, clarification), only
its words are the stub's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...api import ProtocolApi
from ...fixtures import checked, items_of, text_of
from ...stubs import StubError
from .models import COMPLETED, MODELS, WAITING, Agent, Plan, Step

NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


@dataclass(frozen=True, slots=True)
class StubbedModel:
    name: str
    chunks: tuple[str, ...]
    clarify: tuple[str, ...] = ()

    def plan(self, agent: Agent, resumed: bool) -> Plan:
        if self.clarify and not resumed:
            reason = {"action": "clarification", "reason": "The stub asks first"}
            steps = [Step(q, reasoning=reason if i == 0 else None) for i, q in enumerate(self.clarify)]
            return Plan(steps, WAITING)
        final = {"action": "final_answer", "reason": "The stub's reply"}
        steps = [Step(c, reasoning=final if i == 0 else None) for i, c in enumerate(self.chunks)]
        return Plan(steps, COMPLETED, "".join(self.chunks))


@dataclass(frozen=True, slots=True)
class Data:
    models: Mapping[str, StubbedModel] = field(default_factory=dict)


def read(where: str, raw: Any, api: ProtocolApi) -> Data:
    raw = checked(where, raw, {"models"})
    models: dict[str, StubbedModel] = {}
    for i, item in enumerate(items_of(f"{where}.models", raw.get("models"))):
        at = f"{where}.models[{i}]"
        item = checked(at, item, {"name", "reply", "chunks", "clarify"}, {"name"})
        name = text_of(f"{at}.name", item["name"])
        if not name or not set(name) <= NAME_CHARS or name in models or name in MODELS:
            raise StubError(f"{at}.name: {name!r} is empty, not letters, digits and _-., or taken")
        if ("reply" in item) == ("chunks" in item):
            raise StubError(f"{at}: give reply or chunks (one of them)")
        if "reply" in item:
            reply = text_of(f"{at}.reply", item["reply"])
            chunks = tuple(reply.splitlines(keepends=True)) or ("",)
        else:
            listed = items_of(f"{at}.chunks", item["chunks"])
            chunks = tuple(text_of(f"{at}.chunks[{j}]", c) for j, c in enumerate(listed))
            if not chunks:
                raise StubError(f"{at}.chunks: at least one")
        clarify = tuple(
            text_of(f"{at}.clarify[{j}]", q) for j, q in enumerate(items_of(f"{at}.clarify", item.get("clarify")))
        )
        models[name] = StubbedModel(name, chunks, clarify)
    return Data(models)
