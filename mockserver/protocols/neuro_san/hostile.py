"""NeuroSan's hostile faults (``mockserver/hostile.py``): a null chat body that streams an answer,
a lone surrogate kept as sent, and their passing control."""

from __future__ import annotations

from ...faults import Fault, fault_maker
from ...hostile_faults import hostile_faults

FAULTS: tuple[Fault, ...] = hostile_faults(
    fault_maker("neuro-san"),
    "ns",
    null_body=(
        "chat-null-body-streams",
        "AgentService_StreamingChat",
        ("NS-ERR-003",),
        "streaming_chat reads a body that is not an object as `body or {}`: a null or [] body streams a chat",
    ),
    surrogate=(
        "lone-surrogate-breaks-chat",
        "AgentService_StreamingChat",
        ("NS-HOSTILE-001",),
        "a chat keeps a lone surrogate (\\ud800) of its user_message as sent, and its stream, which echoes the "
        "question in chat_context, fails to encode it as UTF-8: 500",
        (),
    ),
    echoed=True,
)
