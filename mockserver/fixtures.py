"""Fixtures: put the mock in a known state, at start (``--fixtures FILE``) or through the admin API.

A fixtures document maps protocol ids to what to create, each through the protocol's own store so
that what is loaded behaves exactly as if clients had created it::

    agent-protocol:
      tasks:
        - task_id: 11111111-1111-4111-8111-111111111111   # optional: ids are made up otherwise
          input: write a haiku
          additional_input: {}
          steps: 2                     # execute this many steps (or a list of {input: ...})
          artifacts:
            - {file_name: notes.txt, relative_path: docs, content: "text"}   # or content_base64
    sgr-agent-core:
      agents:
        - {model: sgr_agent, messages: [{role: user, content: "research owls"}], state: completed}
    synapse-agent:
      sessions:
        - owner: alice                 # one of the configured users (--token)
          agentAccessLevel: PUBLICLY_ACCESSIBLE
          history: [{requestText: "hello"}]   # responseText defaults to the mock agent's answer

NeuroSan keeps no state (its networks are built in), so it has no fixtures. The whole document is
checked before anything is stored: a bad one is refused with the reason and changes nothing.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .api import ProtocolApi
from .errors import ApiError
from .protocols.agent_protocol import handlers as ap_handlers
from .protocols.agent_protocol import store as ap
from .protocols.sgr_agent_core import models as sgr
from .protocols.sgr_agent_core import store as sgr_store
from .protocols.synapse_agent import models as syn
from .protocols.synapse_agent import store as syn_store

MAX_OBJECTS = 10_000
"""Most objects (tasks, steps, artifacts, agents, sessions, interactions) one document may create."""
ACCESS_LEVELS = ("PUBLICLY_ACCESSIBLE", "READ_YOUR_PRIVATE_DATA", "WRITE_YOUR_PRIVATE_DATA")
"""Synapse's AgentAccessLevel enum."""
SGR_STATES = (sgr.INITED, sgr.RESEARCHING, sgr.WAITING, sgr.COMPLETED, sgr.CANCELLED)


class FixtureError(ValueError):
    """The document cannot be loaded; the message names the place and the problem."""


@dataclass
class _Budget:
    left: int = MAX_OBJECTS
    planned: list[Callable[[], Any]] = field(default_factory=list)

    def spend(self, where: str, count: int = 1) -> None:
        self.left -= count
        if self.left < 0:
            raise FixtureError(f"{where}: a fixtures document may create at most {MAX_OBJECTS} objects")


def _fields(where: str, item: Any, allowed: set[str], required: frozenset[str] | set[str] = frozenset()) -> Any:
    if not isinstance(item, Mapping):
        raise FixtureError(f"{where}: expected a mapping, got {type(item).__name__}")
    unknown = sorted(set(item) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        raise FixtureError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; known: {known}")
    missing = sorted(required - set(item))
    if missing:
        raise FixtureError(f"{where}: missing {', '.join(missing)}")
    return item


def _list(where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FixtureError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _text(where: str, value: Any, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise FixtureError(f"{where}: expected text, got {type(value).__name__}")
    return value


def _new_id(where: str, value: Any, taken: Any, seen: set[str]) -> str | None:
    if value is None:
        return None
    value = _text(where, value)
    if not value or value in taken or value in seen:
        raise FixtureError(f"{where}: id {value!r} is empty or already in use")
    seen.add(value)
    return str(value)


# -- Agent Protocol ------------------------------------------------------------------------------


def _plan_agent_protocol(api: ProtocolApi, data: Any, budget: _Budget) -> Callable[[], dict[str, Any]]:
    data = _fields("agent-protocol", data, {"tasks"})
    store = api.store(ap.Store)
    seen: set[str] = set()
    tasks = []
    for i, item in enumerate(_list("agent-protocol.tasks", data.get("tasks"))):
        where = f"agent-protocol.tasks[{i}]"
        item = _fields(where, item, {"task_id", "input", "additional_input", "steps", "artifacts"})
        task_id = _new_id(f"{where}.task_id", item.get("task_id"), store.tasks, seen)
        task_input = _text(f"{where}.input", item.get("input"), optional=True)
        additional = item.get("additional_input", {})
        if not isinstance(additional, dict):
            raise FixtureError(f"{where}.additional_input: expected a mapping")
        steps = item.get("steps", 0)
        if isinstance(steps, int) and not isinstance(steps, bool):
            if not 0 <= steps <= 1000:
                raise FixtureError(f"{where}.steps: between 0 and 1000")
            step_bodies: list[dict[str, Any]] = [{} for _ in range(steps)]
        else:
            step_bodies = [
                dict(_fields(f"{where}.steps[{j}]", s, {"input", "additional_input"}))
                for j, s in enumerate(_list(f"{where}.steps", steps))
            ]
        artifacts = []
        for j, art in enumerate(_list(f"{where}.artifacts", item.get("artifacts"))):
            aw = f"{where}.artifacts[{j}]"
            art = _fields(
                aw, art, {"file_name", "relative_path", "content", "content_base64", "agent_created"}, {"file_name"}
            )
            if ("content" in art) == ("content_base64" in art):
                raise FixtureError(f"{aw}: give exactly one of content, content_base64")
            if "content" in art:
                blob = _text(f"{aw}.content", art["content"]).encode()
            else:
                try:
                    blob = base64.b64decode(_text(f"{aw}.content_base64", art["content_base64"]), validate=True)
                except binascii.Error:
                    raise FixtureError(f"{aw}.content_base64: not base64") from None
            try:
                name = ap_handlers.check_file_name(_text(f"{aw}.file_name", art["file_name"]))
            except ApiError as exc:
                raise FixtureError(f"{aw}.file_name: {exc.message}") from None
            artifacts.append(
                (
                    name,
                    _text(f"{aw}.relative_path", art.get("relative_path"), optional=True),
                    blob,
                    bool(art.get("agent_created", False)),
                )
            )
        budget.spend(where, 1 + 2 * len(step_bodies) + len(artifacts))
        tasks.append((task_id, task_input, additional, step_bodies, artifacts))

    def apply() -> dict[str, Any]:
        created = []
        for task_id, task_input, additional, step_bodies, artifacts in tasks:
            task = store.create_task(task_input, additional)
            if task_id is not None:
                del store.tasks[task.task_id]
                task.task_id = task_id
                store.tasks[task_id] = task
            for body in step_bodies:
                store.execute_step(task, body)
            for name, relative_path, blob, agent_created in artifacts:
                store.reserve(1, len(blob))
                store.add_artifact(task, name, relative_path, blob, agent_created)
            created.append(task.task_id)
        return {"tasks": created}

    return apply


# -- SGR Agent Core ------------------------------------------------------------------------------


def _plan_sgr(api: ProtocolApi, data: Any, budget: _Budget) -> Callable[[], dict[str, Any]]:
    data = _fields("sgr-agent-core", data, {"agents"})
    store = api.store(sgr_store.AgentStore)
    seen: set[str] = set()
    agents = []
    for i, item in enumerate(_list("sgr-agent-core.agents", data.get("agents"))):
        where = f"sgr-agent-core.agents[{i}]"
        item = _fields(where, item, {"agent_id", "model", "messages", "state", "execution_result"}, {"messages"})
        model = item.get("model", sgr.DEFAULT_MODEL)
        if model not in sgr.MODELS:
            raise FixtureError(f"{where}.model: one of {', '.join(sgr.MODELS)}")
        messages = _list(f"{where}.messages", item["messages"])
        for j, message in enumerate(messages):
            _fields(f"{where}.messages[{j}]", message, {"role", "content", "name"}, {"role", "content"})
        state = item.get("state", sgr.COMPLETED)
        if state not in SGR_STATES:
            raise FixtureError(f"{where}.state: one of {', '.join(SGR_STATES)}")
        agent_id = _new_id(f"{where}.agent_id", item.get("agent_id"), store.agents, seen)
        result = _text(f"{where}.execution_result", item.get("execution_result"), optional=True)
        budget.spend(where)
        agents.append((agent_id, model, messages, state, result))

    def apply() -> dict[str, Any]:
        created = []
        for agent_id, model, messages, state, result in agents:
            agent = store.add(model, messages)
            if agent_id is not None:
                del store.agents[agent.agent_id]
                agent.agent_id = agent_id
                store.agents[agent_id] = agent
            agent.state = state
            if state == sgr.WAITING:
                agent.clarifications_used = 1
            agent.execution_result = result
            created.append(agent.agent_id)
        return {"agents": created}

    return apply


# -- Synapse ------------------------------------------------------------------------------------


def _plan_synapse(api: ProtocolApi, data: Any, budget: _Budget) -> Callable[[], dict[str, Any]]:
    data = _fields("synapse-agent", data, {"sessions"})
    store = api.store(syn_store.Store)
    levels = ACCESS_LEVELS
    seen: set[str] = set()
    sessions = []
    for i, item in enumerate(_list("synapse-agent.sessions", data.get("sessions"))):
        where = f"synapse-agent.sessions[{i}]"
        item = _fields(
            where, item, {"sessionId", "owner", "agentAccessLevel", "agentRegistrationId", "history"}, {"owner"}
        )
        owner = item["owner"]
        if owner not in store.user_ids:
            raise FixtureError(f"{where}.owner: one of the configured users {', '.join(store.user_ids)}")
        level = item.get("agentAccessLevel", levels[0])
        if level not in levels:
            raise FixtureError(f"{where}.agentAccessLevel: one of {', '.join(levels)}")
        session_id = _new_id(f"{where}.sessionId", item.get("sessionId"), store.sessions, seen)
        registration = _text(f"{where}.agentRegistrationId", item.get("agentRegistrationId"), optional=True)
        history = []
        for j, turn in enumerate(_list(f"{where}.history", item.get("history"))):
            turn = _fields(f"{where}.history[{j}]", turn, {"requestText", "responseText"}, {"requestText"})
            asked = _text(f"{where}.history[{j}].requestText", turn["requestText"])
            answered = _text(f"{where}.history[{j}].responseText", turn.get("responseText", syn.answer_for(asked)))
            history.append((asked, answered))
        budget.spend(where, 1 + len(history))
        sessions.append((session_id, owner, level, registration, history))

    def apply() -> dict[str, Any]:
        created = []
        for session_id, owner, level, registration, history in sessions:
            session = store.create_session(owner, level, registration)
            if session_id is not None:
                del store.sessions[session.id]
                session.id = session_id
                store.sessions[session_id] = session
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


PLANNERS: dict[str, Callable[[ProtocolApi, Any, _Budget], Callable[[], dict[str, Any]]]] = {
    "agent-protocol": _plan_agent_protocol,
    "sgr-agent-core": _plan_sgr,
    "synapse-agent": _plan_synapse,
}


def load(apis: Mapping[str, ProtocolApi], document: Any) -> dict[str, Any]:
    """Check the whole document, then create everything; answers the ids created, per protocol."""
    if not isinstance(document, Mapping):
        raise FixtureError("a fixtures document maps protocol ids to what to create")
    budget = _Budget()
    plans = []
    for pid, data in document.items():
        if pid not in apis:
            raise FixtureError(f"{pid}: not served here; served: {', '.join(sorted(apis))}")
        if pid not in PLANNERS:
            raise FixtureError(f"{pid}: keeps no state, so it has no fixtures")
        plans.append((pid, PLANNERS[pid](apis[pid], data, budget)))
    try:
        return {pid: apply() for pid, apply in plans}
    except ApiError as exc:  # a store limit (507): what was created so far stays, and is reported
        raise FixtureError(f"a store refused the fixtures: {exc.message}") from None


def load_file_text(text: str, name: str) -> Any:
    """A fixtures or chaos file's content (YAML, which JSON is a subset of)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FixtureError(f"{name}: not valid YAML or JSON: {exc}") from None
