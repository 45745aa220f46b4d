"""Synapse agent chat's part of a fixtures document: sessions and their histories (mockserver/fixtures.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...api import ProtocolApi
from ...fixtures import Allowance, FixtureError, checked, items_of, new_id, rekey, text_of
from . import models as syn
from . import store as syn_store

ACCESS_LEVELS = ("PUBLICLY_ACCESSIBLE", "READ_YOUR_PRIVATE_DATA", "WRITE_YOUR_PRIVATE_DATA")
"""Synapse's AgentAccessLevel enum."""


def plan(api: ProtocolApi, data: Any, budget: Allowance) -> Callable[[], dict[str, Any]]:
    data = checked("synapse-agent", data, {"sessions"})
    store = api.store(syn_store.Store)
    levels = ACCESS_LEVELS
    seen: set[str] = set()
    sessions = []
    for i, item in enumerate(items_of("synapse-agent.sessions", data.get("sessions"))):
        where = f"synapse-agent.sessions[{i}]"
        item = checked(
            where, item, {"sessionId", "owner", "agentAccessLevel", "agentRegistrationId", "history"}, {"owner"}
        )
        owner = item["owner"]
        if owner not in store.user_ids:
            raise FixtureError(f"{where}.owner: one of the configured users {', '.join(store.user_ids)}")
        level = item.get("agentAccessLevel", levels[0])
        if level not in levels:
            raise FixtureError(f"{where}.agentAccessLevel: one of {', '.join(levels)}")
        session_id = new_id(f"{where}.sessionId", item.get("sessionId"), store.sessions, seen)
        registration = text_of(f"{where}.agentRegistrationId", item.get("agentRegistrationId"), optional=True)
        history = []
        for j, turn in enumerate(items_of(f"{where}.history", item.get("history"))):
            turn = checked(f"{where}.history[{j}]", turn, {"requestText", "responseText"}, {"requestText"})
            asked = text_of(f"{where}.history[{j}].requestText", turn["requestText"])
            answered = text_of(f"{where}.history[{j}].responseText", turn.get("responseText", syn.answer_for(asked)))
            history.append((asked, answered))
        budget.spend(where, 1 + len(history))
        sessions.append((session_id, owner, level, registration, history))

    def apply() -> dict[str, Any]:
        created = []
        for session_id, owner, level, registration, history in sessions:
            session = store.create_session(owner, level, registration)
            rekey(store.sessions, session, "id", session_id)
            for asked, answered in history:
                stamp = syn.iso(store.now_ms())
                session.history.append(
                    {
                        "requestText": asked,
                        "requestTimestamp": stamp,
                        "responseText": answered,
                        "responseTimestamp": stamp,
                    }
                )
            created.append(session.id)
        return {"sessions": created}

    return apply
