"""SGR Agent Core's model: the agents chats create, as the agent list, their state and every
stream must show them.

The ledger holds every agent of the run (and the ids listed before it) with the task messages it
was created with, the clarifications the run answered and the waits it saw, the states seen in
order, and whether the run deleted it. After each call the model reads the agent list and the
agent's state, and judges every stream the run opened, whichever way: a new chat, a clarification
through its endpoint, a clarification as a chat naming the agent, or a clarification sent to an
agent that is not waiting.

Its ids are SGR-FACT-NNN: SGR-MODEL-NNN name the /v1/models requirements of this protocol.

Tolerated because others own them: an answer that is not the documented shape (SGR-SCHEMA-005),
a stream answered with another status (SGR-STREAM-*), an agent that never asks for clarification
(the clarification rules are then not exercised, never failed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize, rule

from ...check.http import Response
from ...check.judgments.echoes import unechoed
from ...check.judgments.lists import miscounted
from ...check.listing import Others, judge_listing, known
from ...check.model import SUPPORT, Model, ModelMachine, Session, Streamed
from ...check.oracle import Window, epoch_problems, zoned_problems
from ...check.shown import shown
from ...verdicts.requirements import Level, Requirement
from .requirements import ANSWER, CHAT, DEFAULT_MODEL, DONE, PROVOKE, TASK, agent_names

DOC = "sgr-agent-core/openapi.yaml"
PROTOCOL = "sgr-agent-core"
WAITING = "waiting_for_clarification"
FINAL = ("completed", "cancelled", "failed", "error")
LOCAL_TIME_SPAN_S = 14 * 3600 + 300
"""creation_time is the server's local time without an offset: any zone, -12 h to +14 h, plus skew. One
with an offset names an instant, held to the usual skew (a local time labelled UTC is hours off)."""

SAME_AGENT = "SGR-FACT-001"
LISTED = "SGR-FACT-002"
VALUES = "SGR-FACT-003"
STATES = "SGR-FACT-004"
MESSAGES = "SGR-FACT-005"
STREAMS = "SGR-FACT-006"

REQUIREMENTS = (
    Requirement(
        SAME_AGENT,
        Level.MUST,
        "GET /agents and GET /agents/{agent_id}/state show an agent with the same agent_id, task_messages "
        "and state, and the list's total counts the agents it lists",
        f"{DOC}#/components/schemas/AgentList",
        PROTOCOL,
        "model",
    ),
    Requirement(
        LISTED,
        Level.MUST,
        "GET /agents lists every agent the run's chats created (and those listed before) exactly once until "
        "it is deleted, and none after: a deleted agent's state answers 404; a clarification creates no "
        "agent",
        f"{DOC}#/paths/~1agents/get",
        PROTOCOL,
        "model",
    ),
    Requirement(
        VALUES,
        Level.MUST,
        "A chunk's created is Unix seconds within 5 minutes of its stream, and an agent's creation_time a "
        "date-time of its creating chat in some time zone (local, without offset, as documented), or, with an "
        "offset (Z, +00:00, +03:00), the instant of that chat; every list shows it the same",
        f"{DOC}#/components/schemas/ChatCompletionChunk/properties/created",
        PROTOCOL,
        "model",
    ),
    Requirement(
        STATES,
        Level.MUST,
        "An agent's state moves only forward (a final state is final; waiting_for_clarification only goes "
        "on to research), execution_result is a text once completed and null before it finished, and "
        "clarifications_used never decreases and lies between the clarifications answered and the "
        "requests for one seen",
        f"{DOC}#/components/schemas/AgentStateResponse",
        PROTOCOL,
        "model",
    ),
    Requirement(
        MESSAGES,
        Level.MUST,
        "An agent's task_messages are the messages of the chat that created it, in order, with their roles "
        "and content; a clarification does not change them",
        f"{DOC}#/components/schemas/AgentListItem/properties/task_messages",
        PROTOCOL,
        "model",
    ),
    Requirement(
        STREAMS,
        Level.MUST,
        "Every stream, whichever way it is opened (a chat, provide_clarification, a chat naming a waiting "
        "agent, a clarification for an agent that is not waiting), is text/event-stream, carries the "
        "agent's X-Agent-ID, chunks whose model names that agent (its id or the model it was created from), "
        "and ends with data: [DONE]",
        f"{DOC}#/components/schemas/ChatCompletionStreamEvent",
        PROTOCOL,
        "model",
    ),
)

ORDER = {"inited": 0, "researching": 1, WAITING: 1, "completed": 2, "cancelled": 2, "failed": 2, "error": 2}


@dataclass(slots=True)
class AgentModel:
    agent_id: str
    messages: list[dict[str, Any]]
    created: Window
    states: list[str] = field(default_factory=list)
    waits: int = 0
    answers: int = 0
    deleted: bool = False
    last_clarifications: int = 0
    creation_time: Any = None
    """As the list first showed it: every later list shows the same."""


@dataclass(slots=True)
class Ledger:
    model: str
    before: set[str]
    agents: dict[str, AgentModel] = field(default_factory=dict)
    others: Others = field(default_factory=Others)
    """What the run knows of agents others created (check/listing.py)."""


def header(streamed: Streamed, name: str) -> str | None:
    return next((v for k, v in streamed.headers.items() if k.lower() == name.lower()), None)


def agent_ids(listed: Response) -> list[str] | None:
    """The ids GET /agents lists, or None when it does not answer the documented shape."""
    body = listed.json_value() if listed.status == 200 else None
    agents = body.get("agents") if isinstance(body, dict) else None
    return [str(a.get("agent_id")) for a in agents if isinstance(a, dict)] if isinstance(agents, list) else None


def prepare(session: Session) -> Ledger:
    response = session.request("GET", "/v1/models")
    data = (response.json_value() or {}).get("data") if response.status == 200 else None
    first = data[0].get("id") if isinstance(data, list) and data and isinstance(data[0], dict) else None
    listed = session.request("GET", "/agents")
    body = listed.json_value() if listed.status == 200 else {}
    agents = body.get("agents") if isinstance(body, dict) else None
    before = {str(a.get("agent_id")) for a in agents or [] if isinstance(a, dict)}
    return Ledger(first if isinstance(first, str) and first else DEFAULT_MODEL, before, others=known(before))


TEXTS = (PROVOKE, TASK, "Please clarify what you need", "Compare two databases for a small shop")
"""Requests that invite a clarification come first: Hypothesis draws early elements most."""
ACTIONS = ("clarify by endpoint", "clarify by chat", "delete", "reread an agent of the run")


class SgrModel(ModelMachine):
    agents = Bundle("agents")

    @property
    def ledger(self) -> Ledger:
        return self.session.ledger  # type: ignore[no-any-return]

    @initialize(target=agents, text=st.sampled_from(TEXTS))
    def first_chat(self, text: str) -> str:
        return self.chat(text)

    @rule(target=agents, text=st.sampled_from(TEXTS))
    def new_chat(self, text: str) -> str:
        return self.chat(text)

    @rule(agent_id=agents, data=st.data())
    def act(self, agent_id: str, data: st.DataObject) -> None:
        agent = self.ledger.agents.get(agent_id)
        if agent is None:
            return
        kind = data.draw(st.sampled_from(ACTIONS), label="action")
        if kind.startswith("clarify") and not agent.deleted:
            messages = [{"role": "user", "content": ANSWER}]
            waiting = bool(agent.states) and agent.states[-1] == WAITING
            if kind == "clarify by endpoint":
                streamed = self.session.sse(
                    f"/agents/{quote(agent_id, safe='')}/provide_clarification", {"messages": messages}, end=DONE
                )
            elif waiting:  # a chat naming an agent that is not waiting would create a new one
                streamed = self.session.sse(CHAT, {"model": agent_id, "messages": messages, "stream": True}, end=DONE)
            else:
                return self.verify(agent)
            self.judge_stream(streamed, agent_id, f"the clarification ({kind})")
            if waiting and streamed.status == 200:
                agent.answers += 1
        elif kind == "delete" and not agent.deleted:
            response = self.session.request("DELETE", f"/agents/{quote(agent_id, safe='')}")
            if response.status == 200:
                agent.deleted = True
        elif kind == "reread an agent of the run":
            agent = self.ledger.agents[data.draw(st.sampled_from(sorted(self.ledger.agents)), label="agent_id")]
        self.verify(agent)

    def chat(self, text: str, parts: bool = False) -> str:
        """A new chat; ``parts``: its question as content parts (the document's other content form),
        which task_messages must show as sent."""
        content: Any = [{"type": "text", "text": t} for t in (text, PARTS_TAIL)] if parts else text
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": content}]
        streamed = self.session.sse(CHAT, {"model": self.ledger.model, "messages": messages, "stream": True}, end=DONE)
        agent_id = header(streamed, "X-Agent-ID")
        if streamed.status != 200 or not agent_id:
            # every requirement of the model follows the agents the run's chats created
            why = f"a chat answered no stream with an X-Agent-ID ({streamed.answer}; SGR-STREAM-*)"
            self.session.cannot_compare((r.id for r in REQUIREMENTS), why)
            return ""
        self.session.check(
            LISTED,
            agent_id not in self.ledger.agents and agent_id not in self.ledger.before,
            f"a new chat answered X-Agent-ID {shown(agent_id)}, an agent that already exists",
            fact=SUPPORT,
        )
        agent = AgentModel(agent_id, messages, self.session.window())
        self.ledger.agents[agent_id] = agent
        self.judge_stream(streamed, agent_id, "the chat")
        self.verify(agent)
        return agent_id

    # the comparisons -----------------------------------------------------------------------------

    def judge_stream(self, streamed: Streamed, agent_id: str, what: str) -> None:
        if streamed.status != 200:
            return  # the status is the scenarios' subject
        window = self.session.window()
        problems = []
        if streamed.content_type != "text/event-stream":
            problems.append(f"Content-Type {shown(streamed.content_type)}")
        if header(streamed, "X-Agent-ID") != agent_id:
            problems.append(f"X-Agent-ID {shown(header(streamed, 'X-Agent-ID'))}")
        if streamed.error:
            problems.append(f"it did not end cleanly: {streamed.error}")
        elif not streamed.events or streamed.events[-1] != DONE:
            problems.append(f"it ended without data: [DONE] after {len(streamed.events)} events")
        models = sorted({str(c.get("model")) for c in streamed.chunks} - agent_names(agent_id))
        if models:
            problems.append(f"chunks name model(s) {models[:3]}")
        self.session.check(STREAMS, not problems, f"{what} for agent {agent_id}: " + "; ".join(problems))
        created = [
            p
            for c in streamed.chunks
            for p in epoch_problems(c.get("created"), "s", window, f"{what}: a chunk's created")
        ]
        self.session.check(VALUES, not created, "; ".join(created[:2]))

    def verify(self, agent: AgentModel) -> None:
        # the state first, then the list: a list read later may be ahead of the state, never behind
        response = self.session.request("GET", f"/agents/{quote(agent.agent_id, safe='')}/state")
        listed = self.session.request("GET", "/agents")
        body = listed.json_value() if listed.status == 200 else None
        items = body.get("agents") if isinstance(body, dict) else None
        item = None
        if isinstance(items, list):
            self.check_list(body, items, listed)  # type: ignore[arg-type]
            item = next((a for a in items if isinstance(a, dict) and a.get("agent_id") == agent.agent_id), None)
        if agent.deleted:
            self.session.check(
                LISTED,
                response.status == 404,
                f"agent {agent.agent_id} was deleted, yet its state answers {response.status}",
            )
            return
        state = response.json_value() if response.status == 200 else None
        if not isinstance(state, dict):
            return
        self.judge_state(agent, state, response)
        if isinstance(item, dict):
            self.judge_state(agent, item, listed, in_list=True)
            for key in ("agent_id", "task_messages"):
                why = unechoed(item, {key: state.get(key)})  # the list's item reads back its state
                self.session.check(SAME_AGENT, why is None, f"agent {agent.agent_id}: in /agents, {why} (its state's)")
            before, after = state.get("state"), item.get("state")
            ok = before == after or ORDER.get(str(after), -1) > ORDER.get(str(before), 3)
            self.session.check(
                SAME_AGENT,
                ok,
                ""
                if ok
                else f"agent {agent.agent_id}: its state says {shown(before)}, then /agents says {shown(after)}",
            )
            problems = zoned_problems(
                item.get("creation_time"), agent.created, "creation_time", local_span=LOCAL_TIME_SPAN_S
            )
            if agent.creation_time is None:
                agent.creation_time = item.get("creation_time")
            elif moved := unechoed(item, {"creation_time": agent.creation_time}):
                problems.append(f"{moved} (an earlier list's): it moved between reads")
            self.session.check(VALUES, not problems, f"agent {agent.agent_id}: " + "; ".join(problems))

    def check_list(self, body: dict[str, Any], items: list[Any], listed: Response) -> None:
        ids = [str(a.get("agent_id")) for a in items if isinstance(a, dict)]
        if "total" in body:
            miscount = miscounted("total", body["total"], len(ids), "agents")
            self.session.check(SAME_AGENT, miscount is None, f"GET /agents: {miscount}")
        agents = self.ledger.agents.values()
        listing = judge_listing(
            ids,
            live=[a.agent_id for a in agents if not a.deleted],
            deleted=[a.agent_id for a in agents if a.deleted],
            others=self.ledger.others,
            readable=lambda agent_id: (
                self.session.request("GET", f"/agents/{quote(agent_id, safe='')}/state").status == 200
            ),
            relist=lambda: agent_ids(self.session.request("GET", "/agents")),
        )
        self.session.check(
            LISTED,
            listing.ok,
            lambda: f"GET /agents ({len(ids)} agents) " + listing.problems("agent", "a chat of the run created"),
            answer=listed,
            over=len(agents),  # the agents listed before alone are not the run's to judge
        )

    def judge_state(self, agent: AgentModel, got: dict[str, Any], answer: Response, in_list: bool = False) -> None:
        """``got``: the agent as ``answer`` showed it (its state, or its item in the list)."""
        state = got.get("state")
        why = unechoed(got, {"task_messages": agent.messages})  # the chat's messages, as sent
        self.session.check(MESSAGES, why is None, f"agent {agent.agent_id}: {why} (the chat's)", answer)
        if state not in ORDER or in_list:
            return
        problems = []
        last = agent.states[-1] if agent.states else None
        if last in FINAL and state != last:
            problems.append(f"state {shown(state)} after the final {shown(last)}")
        elif last is not None and ORDER[str(state)] < ORDER[last]:
            problems.append(f"state {shown(state)} after {shown(last)}")
        if state == WAITING and last != WAITING:
            agent.waits += 1
        agent.states.append(str(state))
        result = got.get("execution_result")
        if state == "completed" and not (isinstance(result, str) and result):
            problems.append(f"completed with execution_result {shown(result)}")
        if state in ("inited", "researching", WAITING) and result is not None:
            problems.append(f"{state} (not finished) with execution_result {shown(result, 60)}")
        used = got.get("clarifications_used")
        if isinstance(used, int) and not isinstance(used, bool):
            if used < agent.last_clarifications:
                problems.append(f"clarifications_used fell from {agent.last_clarifications} to {used}")
            if not agent.answers <= used <= max(agent.waits, agent.answers):
                problems.append(
                    f"clarifications_used is {used}; the run answered {agent.answers} clarification(s) "
                    f"and saw {agent.waits} request(s) for one"
                )
            agent.last_clarifications = used
        self.session.check(STATES, not problems, f"agent {agent.agent_id}: " + "; ".join(problems), answer)


def more_agents_than_a_page(machine: SgrModel) -> None:
    """More agents than a list of the newest few holds, each chat followed by the list (``verify``
    reads it): every agent of the run must stay listed whatever its age. The draws make a handful,
    so a list of the newest 10 was seen only where earlier phases had left enough agents behind.
    Then one chat whose question is content parts, which its task_messages must keep."""
    for _ in range(LISTED_AGENTS):
        if not machine.chat(TASK):
            return
    machine.chat(TASK, parts=True)  # last: a server that refuses parts (SGR-SCHEMA-007's) cuts nothing short


PARTS_TAIL = "Answer in one line."
"""The second text part of the chat sent as content parts: joined to the first, they read as one text."""
LISTED_AGENTS = 12
"""Agents the fixed sequence creates: more than a default page (10) of a "recent agents" list."""

MODEL = Model(
    SgrModel, prepare, steps=6, calls_per_step=2, requirements=REQUIREMENTS, targeted=(more_agents_than_a_page,)
)
