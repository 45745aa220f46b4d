"""SGR Agent Core: OpenAI-compatible streaming research agents kept in the server's memory.

Agents are simulated. A chat completion creates the agent ``{model}_{uuid4}`` and streams a
short, deterministic "research" built from the words of the last user message; the agent then
ends ``completed`` with its report as ``execution_result``. An agent works only while its stream
is open (nothing runs in the background), so no task outlives its request.

Settled where the document is silent (recorded here because the mock is its reference):
- Clarification rule: an agent asks for a clarification when the last user message contains the
  word "clarify" (any case). It streams its questions, ends the stream (finish_reason "stop",
  ``[DONE]``) and waits in ``waiting_for_clarification``. ``clarifications_used`` counts the
  requests (the document's wording; upstream counts the answers). A clarification that itself
  says "clarify" is asked again, up to ``MAX_CLARIFICATIONS`` requests per agent.
- A waiting agent is resumed by POST /agents/{id}/provide_clarification, or by
  /v1/chat/completions whose ``model`` is its id or (as upstream) one of whose messages names it
  in its text. Either stream carries X-Agent-ID but not X-Agent-Model, as upstream.
- provide_clarification for an agent that is not waiting: 500 ``{"detail": ...}``, the only
  failure the document names for it (upstream accepts it and serves a stream that never ends).
- /v1/chat/completions checks ``stream`` before ``model`` (501 before 400), as upstream.
- DELETE of a running or waiting agent reports final_state "cancelled". A running stream sees it
  before its next chunk and ends with the final chunk and ``[DONE]``, as upstream's does.
- A client that disconnects mid-stream cancels the agent (state "cancelled"; it stays listed).
- creation_time is local time without offset, to the second (seed example). Only ``data:`` image
  URLs longer than 200 characters are truncated when echoed (the document; upstream cuts any URL).
- Chunks carry the agent id as ``model``; the first delta has role "assistant", the last is ``{}``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aiohttp import web

from ..api import Call, ProtocolApi, Reply
from ..config import Limits
from ..errors import ApiError
from ..faults import Fault
from ..streaming import SseStream

FAULTS: tuple[Fault, ...] = ()

SERVICE = "SGR Agent Core API"
MODELS = ("sgr_agent", "sgr_tool_calling_agent", "tool_calling_agent")
DEFAULT_MODEL = "sgr_tool_calling_agent"
MODEL_CREATED = 1234567890  # upstream's placeholder timestamp
MAX_CLARIFICATIONS = 3
MAX_SEARCHES = 3
SOURCES_PER_SEARCH = 2
MAX_ECHOED_DATA_URL = 200
MAX_QUOTED = 200  # task and clarification texts are quoted in reports up to this length

INITED, RESEARCHING, WAITING = "inited", "researching", "waiting_for_clarification"
COMPLETED, CANCELLED = "completed", "cancelled"
RUNNING_STATES = (INITED, RESEARCHING, WAITING)

_AGENT_ID = re.compile(r"\b(\w+_[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\b", re.IGNORECASE)
_CLARIFY = re.compile(r"\bclarify\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset({
    "about", "and", "are", "clarify", "for", "from", "how", "into", "please", "research", "that", "the",
    "this", "what", "which", "with",
})


@dataclass(frozen=True, slots=True)
class Step:
    """One streamed content chunk and what producing it changes in the agent."""

    content: str
    reasoning: dict[str, Any] | None = None  # starts a new iteration with this reasoning
    search: bool = False  # one web search, finding SOURCES_PER_SEARCH sources


@dataclass(frozen=True, slots=True)
class Plan:
    steps: list[Step]
    end_state: str
    result: str | None = None


@dataclass(slots=True)
class Agent:
    agent_id: str
    model: str
    task_messages: list[Any]
    task: str
    size: int
    creation_time: str = field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))
    state: str = INITED
    iteration: int = 0
    searches_used: int = 0
    clarifications_used: int = 0
    sources_count: int = 0
    current_step_reasoning: dict[str, Any] | None = None
    execution_result: str | None = None
    clarification: str = ""

    def summary(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id, "task_messages": self.task_messages, "state": self.state,
                "creation_time": self.creation_time}

    def detail(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id, "task_messages": self.task_messages, "state": self.state,
            "iteration": self.iteration, "searches_used": self.searches_used,
            "clarifications_used": self.clarifications_used, "sources_count": self.sources_count,
            "current_step_reasoning": self.current_step_reasoning, "execution_result": self.execution_result,
        }

    def apply(self, step: Step) -> None:
        if step.reasoning is not None:
            self.iteration += 1
            self.current_step_reasoning = step.reasoning
        if step.search:
            self.searches_used += 1
            self.sources_count += SOURCES_PER_SEARCH

    def finish(self, plan: Plan) -> None:
        self.state = plan.end_state
        self.execution_result = plan.result
        if plan.end_state == WAITING:
            self.clarifications_used += 1

    def cancel(self) -> None:
        """Stops a running or waiting agent; a finished one keeps its state."""
        if self.state in RUNNING_STATES:
            self.state = CANCELLED

    def abandon(self) -> None:
        """Its stream broke off mid-run; an agent that already asked or finished keeps its state."""
        if self.state in (INITED, RESEARCHING):
            self.state = CANCELLED


class AgentStore:
    """The agents of one app, bounded by count and by the bytes of their echoed messages."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.agents: dict[str, Agent] = {}
        self.bytes = 0

    def add(self, model: str, messages: list[Any]) -> Agent:
        echoed = _echo(messages)
        size = len(json.dumps(echoed)) + MAX_QUOTED * 4  # room for the clarification and the report
        limits = self.limits
        if len(self.agents) >= limits.max_stored_objects:
            raise ApiError(507, f"Agent storage is full ({limits.max_stored_objects} agents); delete some")
        if self.bytes + size > limits.max_stored_bytes:
            raise ApiError(507, f"Agent storage is full ({limits.max_stored_bytes} bytes); delete some")
        agent = Agent(f"{model}_{uuid.uuid4()}", model, echoed, _quote(_last_user_text(messages)), size)
        self.agents[agent.agent_id] = agent
        self.bytes += size
        return agent

    def get(self, agent_id: str) -> Agent:
        agent = self.agents.get(agent_id)
        if agent is None:
            raise ApiError(404, "Agent not found")
        return agent

    def remove(self, agent_id: str) -> Agent:
        agent = self.get(agent_id)
        del self.agents[agent_id]
        self.bytes -= agent.size
        return agent

    def waiting(self, model: Any, messages: list[Any]) -> Agent | None:
        """The agent a chat completion clarifies: named by ``model`` or in a message's text."""
        for candidate in (model, *_named_ids(messages)):
            agent = self.agents.get(candidate) if isinstance(candidate, str) else None
            if agent is not None and agent.state == WAITING:
                return agent
        return None


# --- messages -------------------------------------------------------------------------------


def _messages(body: Any) -> list[Any]:
    """The body's messages; tolerant, because a fault may switch request validation off."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else []


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return " ".join(str(p.get("text", "")) for p in parts)
    return ""


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text(message)
    return ""


def _quote(text: str) -> str:
    flat = " ".join(text[: MAX_QUOTED * 8].split())
    return flat if len(flat) <= MAX_QUOTED else flat[:MAX_QUOTED] + "..."


def _named_ids(messages: list[Any]) -> Iterator[str]:
    for message in messages:
        yield from (m.group(1) for m in _AGENT_ID.finditer(_text(message)))


def _echo(messages: list[Any]) -> list[Any]:
    """The task messages as the /agents endpoints show them: long data: URLs truncated."""
    echoed = copy.deepcopy(messages)
    for message in echoed:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            image = part.get("image_url") if isinstance(part, dict) else None
            url = image.get("url") if isinstance(image, dict) else None
            if isinstance(url, str) and url.startswith("data:") and len(url) > MAX_ECHOED_DATA_URL:
                image["url"] = url[:MAX_ECHOED_DATA_URL] + "...[truncated]"  # type: ignore[index]
    return echoed


def _keywords(text: str) -> list[str]:
    found: dict[str, str] = {}
    for word in _WORD.findall(text):
        if len(word) >= 3 and word.lower() not in _STOPWORDS:
            found.setdefault(word.lower(), word)
            if len(found) == MAX_SEARCHES:
                break
    return list(found.values())


# --- plans: what a run streams ----------------------------------------------------------------


def _opening(agent: Agent, resumed: bool) -> Step:
    # Upstream's agents announce themselves; stateless clients send the marker back to resume.
    if resumed:
        return Step(f"Clarification received: {agent.clarification}\n")
    return Step(f"Agent {agent.agent_id} started\n")


def _clarification_plan(agent: Agent, resumed: bool) -> Plan:
    reason = {"action": "clarification", "reason": "The request asks for a clarification first"}
    return Plan([
        _opening(agent, resumed),
        Step("I need a clarification before researching:\n", reasoning=reason),
        Step(f"1. What exactly should the research on '{agent.task}' focus on?\n"),
        Step("2. Which region and time period matter?\n"),
    ], WAITING)


def _research_plan(agent: Agent, resumed: bool) -> Plan:
    keywords = _keywords(agent.task)
    steps = [_opening(agent, resumed)]
    for word in keywords:
        reasoning = {"action": "web_search", "query": word, "reason": f"Need sources about {word}"}
        steps.append(Step(f"Searching the web for '{word}'\n", reasoning=reasoning, search=True))
    lines = ["## Research report", f"Task: {agent.task}"]
    if agent.clarification:
        lines.append(f"Clarification: {agent.clarification}")
    lines += [f"- {word}: {SOURCES_PER_SEARCH} sources reviewed" for word in keywords]
    lines.append(f"Conclusion: research on {', '.join(keywords) or 'the task'} is complete.")
    final = {"action": "final_answer", "reason": "Enough data collected"}
    steps += [Step(line + "\n", reasoning=final if i == 0 else None) for i, line in enumerate(lines)]
    return Plan(steps, COMPLETED, "".join(line + "\n" for line in lines))


def _first_plan(agent: Agent) -> Plan:
    asks = bool(_CLARIFY.search(agent.task))
    return _clarification_plan(agent, False) if asks else _research_plan(agent, False)


def _resume_plan(agent: Agent, messages: list[Any]) -> Plan:
    """Claims a waiting agent (no await before the run starts) and plans its continuation."""
    agent.clarification = _quote(_last_user_text(messages) or " ".join(_text(m) for m in messages))
    agent.state = RESEARCHING
    asks = bool(_CLARIFY.search(agent.clarification)) and agent.clarifications_used < MAX_CLARIFICATIONS
    return _clarification_plan(agent, True) if asks else _research_plan(agent, True)


# --- streaming --------------------------------------------------------------------------------


def _chunk(chunk_id: str, agent_id: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()),
        "model": agent_id, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


async def _run(agent: Agent, plan: Plan, stream: SseStream) -> None:
    agent.state = RESEARCHING
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    for number, step in enumerate(plan.steps):
        if agent.state == CANCELLED:  # deleted meanwhile: end the stream as upstream does
            break
        agent.apply(step)
        delta = {"role": "assistant", "content": step.content} if number == 0 else {"content": step.content}
        await stream.send(_chunk(completion_id, agent.agent_id, delta))
    if agent.state != CANCELLED:
        agent.finish(plan)  # before the final chunk: a client that read [DONE] sees the end state
    await stream.send(_chunk(completion_id, agent.agent_id, {}, "stop"))
    await stream.done()


def mount(api: ProtocolApi) -> None:
    store = AgentStore(api.config.limits)

    async def stream_run(call: Call, agent: Agent, plan: Plan, headers: dict[str, str]) -> web.StreamResponse:
        """Streams one run of ``agent``; the caller holds the stream gate."""
        stream = SseStream(call.request, headers, delay=api.config.stream_delay)
        try:
            await stream.open()
            await _run(agent, plan, stream)
            return await stream.close()
        except ConnectionResetError:  # the client left (aiohttp's reset error derives from it)
            agent.abandon()
            return stream.response
        except asyncio.CancelledError:  # server shutdown
            agent.abandon()
            raise

    async def resume(call: Call, agent: Agent, messages: list[Any]) -> web.StreamResponse:
        if agent.state != WAITING:
            raise ApiError(500, f"Agent {agent.agent_id} is not waiting for clarification "
                                f"(state: {agent.state})")
        with api.gate:
            plan = _resume_plan(agent, messages)
            return await stream_run(call, agent, plan, {"X-Agent-ID": agent.agent_id})

    @api.operation("health")
    async def health(call: Call) -> Reply:
        return Reply({"status": "healthy", "service": SERVICE})

    @api.operation("listModels")
    async def list_models(call: Call) -> Reply:
        data = [{"id": m, "object": "model", "created": MODEL_CREATED, "owned_by": "sgr-agent-core"}
                for m in MODELS]
        return Reply({"data": data, "object": "list"})

    @api.operation("createChatCompletion")
    async def create_chat_completion(call: Call) -> web.StreamResponse:
        body = call.body if isinstance(call.body, dict) else {}
        if body.get("stream", True) is False:
            raise ApiError(501, "Only streaming responses are supported. Set 'stream=true'")
        messages = _messages(body)
        model = body.get("model", DEFAULT_MODEL)
        waiting = store.waiting(model, messages)
        if waiting is not None:
            return await resume(call, waiting, messages)
        if model not in MODELS:
            raise ApiError(400, f"Invalid model '{model}'. Available models: {list(MODELS)}")
        with api.gate:
            agent = store.add(model, messages)
            headers = {"X-Agent-ID": agent.agent_id, "X-Agent-Model": model}
            return await stream_run(call, agent, _first_plan(agent), headers)

    @api.operation("provideClarification")
    async def provide_clarification(call: Call) -> web.StreamResponse:
        return await resume(call, store.get(call.path["agent_id"]), _messages(call.body))

    @api.operation("listAgents")
    async def list_agents(call: Call) -> Reply:
        agents = [agent.summary() for agent in store.agents.values()]
        return Reply({"agents": agents, "total": len(agents)})

    @api.operation("getAgentState")
    async def get_agent_state(call: Call) -> Reply:
        return Reply(store.get(call.path["agent_id"]).detail())

    @api.operation("deleteAgent")
    async def delete_agent(call: Call) -> Reply:
        agent = store.remove(call.path["agent_id"])
        agent.cancel()  # a running stream notices before its next chunk
        return Reply({"agent_id": agent.agent_id, "deleted": True, "final_state": agent.state})
