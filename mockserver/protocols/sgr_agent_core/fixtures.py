"""SGR Agent Core's part of a fixtures document: agents in a given state (mockserver/fixtures.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...api import ProtocolApi
from ...fixtures import Allowance, FixtureError, checked, items_of, new_id, rekey, text_of
from . import models as sgr
from . import store as sgr_store

SGR_STATES = (sgr.INITED, sgr.RESEARCHING, sgr.WAITING, sgr.COMPLETED, sgr.CANCELLED)


def plan(api: ProtocolApi, data: Any, budget: Allowance) -> Callable[[], dict[str, Any]]:
    data = checked("sgr-agent-core", data, {"agents"})
    store = api.store(sgr_store.AgentStore)
    seen: set[str] = set()
    agents = []
    for i, item in enumerate(items_of("sgr-agent-core.agents", data.get("agents"))):
        where = f"sgr-agent-core.agents[{i}]"
        item = checked(where, item, {"agent_id", "model", "messages", "state", "execution_result"}, {"messages"})
        model = item.get("model", sgr.DEFAULT_MODEL)
        if model not in sgr.MODELS:
            raise FixtureError(f"{where}.model: one of {', '.join(sgr.MODELS)}")
        messages = items_of(f"{where}.messages", item["messages"])
        for j, message in enumerate(messages):
            checked(f"{where}.messages[{j}]", message, {"role", "content", "name"}, {"role", "content"})
        state = item.get("state", sgr.COMPLETED)
        if state not in SGR_STATES:
            raise FixtureError(f"{where}.state: one of {', '.join(SGR_STATES)}")
        agent_id = new_id(f"{where}.agent_id", item.get("agent_id"), store.agents, seen)
        result = text_of(f"{where}.execution_result", item.get("execution_result"), optional=True)
        budget.spend(where)
        agents.append((agent_id, model, messages, state, result))

    def apply() -> dict[str, Any]:
        created = []
        for agent_id, model, messages, state, result in agents:
            agent = store.add(model, messages)
            rekey(store.agents, agent, "agent_id", agent_id)
            agent.state = state
            if state == sgr.WAITING:
                agent.clarifications_used = 1
            agent.execution_result = result
            created.append(agent.agent_id)
        return {"agents": created}

    return apply


# -- Synapse ------------------------------------------------------------------------------------
