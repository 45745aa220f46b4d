"""NeuroSan's faults of facts across calls (issue 34, class 7): a conversation's history, as the
chat_context of one answer and the next shows it (conformance/check/turns.py judges them)."""

from __future__ import annotations

from ...faults import Fault, fault_maker

_fault = fault_maker("neuro-san")

ACROSS: tuple[Fault, ...] = (
    _fault(
        "ns-new-conversation-joins-latest",
        # chats at the same moment (NS-CTX-003) end in one conversation too: each joins the latest
        ("NS-MODEL-003", "NS-CTX-003"),
        "a chat sent without a chat_context continues the most recent conversation the server answered (one "
        "kept per agent, whoever had it): its history holds that conversation's questions before its own",
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-continued-history-doubled",
        ("NS-MODEL-003",),
        "the history sent back in a chat_context is appended to itself before the new turn: every earlier "
        "message comes back twice",
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-history-system-first",
        (),
        "control: a conversation's history opens with a SYSTEM message (the front man's instructions), kept "
        "when the context is sent back: a turn adds what the server chooses beside the one question",
        control=True,
        operation="AgentService_StreamingChat",
    ),
)
