"""SGR Agent Core's store: the agents of one app, bounded by count and by the bytes of their messages."""

from __future__ import annotations

from typing import Any

from ...config import MockLimits
from ...errors import ApiError
from ...jsonio import dumps
from ...store import Capacity, new_id
from .models import MAX_QUOTED, WAITING, Agent, echo, last_user_text, named_ids, quote


class AgentStore:
    """The agents of one app, bounded by count and by the bytes of their echoed messages."""

    def __init__(self, limits: MockLimits) -> None:
        self.capacity = Capacity(limits, "Agent storage", "agents")
        self.agents: dict[str, Agent] = {}

    def add(self, model: str, messages: list[Any], uuid: str | None = None) -> Agent:
        """A new agent ``{model}_{uuid}``; ``uuid`` given (sgr-create-race), an agent that had it is replaced."""
        echoed = echo(messages)
        size = len(dumps(echoed)) + MAX_QUOTED * 4  # room for the clarification and the report
        self.capacity.reserve(1, size)
        agent = Agent(f"{model}_{uuid or new_id()}", model, echoed, quote(last_user_text(messages)), size)
        self.agents[agent.agent_id] = agent
        return agent

    def get(self, agent_id: str) -> Agent:
        agent = self.agents.get(agent_id)
        if agent is None:
            raise ApiError(404, "Agent not found")
        return agent

    def remove(self, agent_id: str) -> Agent:
        agent = self.get(agent_id)
        del self.agents[agent_id]
        self.capacity.release(1, agent.size)
        return agent

    def waiting(self, model: Any, messages: list[Any]) -> Agent | None:
        """The agent a chat completion clarifies: named by ``model`` or in a message's text."""
        for candidate in (model, *named_ids(messages)):
            agent = self.agents.get(candidate) if isinstance(candidate, str) else None
            if agent is not None and agent.state == WAITING:
                return agent
        return None
