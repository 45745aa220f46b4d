"""SGR Agent Core's hostile faults (``mockserver/hostile.py``): a null chat body that starts an
agent, a lone surrogate that breaks every answer holding it, and their passing control; a lone
surrogate in a clarification that fails its stream (500), and the passing control that replaces it."""

from __future__ import annotations

from ...faults import Fault, fault_maker
from ...hostile import Hostile, Surrogates
from ...hostile_faults import hostile_faults
from .faults import PROTOCOL

_fault = fault_maker(PROTOCOL)

CLARIFICATIONS: tuple[Fault, ...] = (
    _fault(
        "sgr-clarification-surrogate-500",
        ("SGR-HOSTILE-001",),
        "provide_clarification keeps a lone surrogate of its messages as sent; the stream that echoes it "
        "fails to encode as UTF-8 before it starts (500)",
        operation="provideClarification",
        hostile=Hostile(surrogates=Surrogates.KEPT, echoed=True),
    ),
    _fault(
        "sgr-clarification-surrogate-replaced",
        (),
        "control: a lone surrogate in a clarification's messages is replaced by U+FFFD and the clarification "
        "accepted, as a lenient decoder does",
        control=True,
        operation="provideClarification",
        hostile=Hostile(surrogates=Surrogates.REPLACED),
    ),
)

FAULTS: tuple[Fault, ...] = CLARIFICATIONS + hostile_faults(
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
