"""SGR Agent Core's hostile faults (``mockserver/hostile.py``): a null chat body that starts an
agent, a lone surrogate that breaks every answer holding it, and their passing control."""

from __future__ import annotations

from ...faults import Fault, fault_maker
from ...hostile_faults import hostile_faults
from .faults import PROTOCOL

FAULTS: tuple[Fault, ...] = hostile_faults(
    fault_maker(PROTOCOL),
    "sgr",
    null_body=(
        "chat-null-body-starts-agent",
        "createChatCompletion",
        ("SGR-ERR-004", "SGR-SCHEMA-006"),
        "a chat reads a body that is not an object as `body or {}` and fills the defaults: a null or [] body "
        "starts a research agent on one empty user message",
    ),
    falsy_as={"messages": [{"role": "user", "content": ""}], "stream": True},
    surrogate=(
        "lone-surrogate-breaks-lists",
        "createChatCompletion",
        ("SGR-HOSTILE-001",),
        "a chat keeps a lone surrogate (\\ud800) of its messages as sent; every answer holding it then fails to "
        "encode as UTF-8 (500): the agent list and the agent's state",
        ("listAgents", "getAgentState"),
    ),
)
