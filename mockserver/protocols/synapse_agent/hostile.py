"""Synapse's hostile faults (``mockserver/hostile.py``): a null session list body answered as an
empty request, a lone surrogate that breaks every answer holding it, and their passing control."""

from __future__ import annotations

from ...faults import Fault, fault_maker
from ...hostile_faults import hostile_faults
from .faults import PROTOCOL

FAULTS: tuple[Fault, ...] = hostile_faults(
    fault_maker(PROTOCOL),
    "syn",
    null_body=(
        "list-null-body-answers",
        "listAgentSessions",
        ("SYN-ERR-002", "SYN-SCHEMA-006"),
        "the session list reads a body that is not an object as `body or {}`: a null or [] body answers the "
        "first page instead of 400",
    ),
    surrogate=(
        "lone-surrogate-breaks-history",
        "startAgentChat",
        ("SYN-HOSTILE-001",),
        "a chat keeps a lone surrogate (\\ud800) of its chatText as sent; every answer holding it then fails to "
        "encode as UTF-8 (500): the job's result and the session's history",
        ("getAgentChatResult", "getSessionHistory"),
    ),
)
