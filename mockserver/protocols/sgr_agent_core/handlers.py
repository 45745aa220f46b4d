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
- provide_clarification for an agent that is not waiting: 200 with a short stream that says so
  (one content chunk, the final chunk, ``[DONE]``) and leaves the agent as it was. Upstream also
  accepts it with 200, but its stream never ends; the document's 500 would be a server error for
  a client's mistake (the schema phase rightly flags any 5xx), and it names no 4xx for it.
- /v1/chat/completions checks ``stream`` before ``model`` (501 before 400), as upstream.
- DELETE of a running or waiting agent reports final_state "cancelled". A running stream sees it
  before its next chunk and ends with the final chunk and ``[DONE]``, as upstream's does.
- A client that disconnects mid-stream cancels the agent (state "cancelled"; it stays listed).
- creation_time is local time without offset, to the second (seed example). Only ``data:`` image
  URLs longer than 200 characters are truncated when echoed (the document; upstream cuts any URL).
- Chunks carry the agent id as ``model``; the first delta has role "assistant", the last is ``{}``.

FAULTS (end of module) break one requirement each: stream faults are switched on by name in
``Wire``/the handlers, JSON answers are edited by ``mutate`` functions.
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

from ...api import Call, ProtocolApi, Reply
from ...config import Limits
from ...errors import ApiError
from ...faults import Fault, fault_maker
from ...streaming import SseStream, stall

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


@dataclass(frozen=True, slots=True)
class Wire:
    """How a run is put on the wire: all false in normal runs, else the stream faults in force."""

    non_json: bool = False
    wrong_object: bool = False
    model_name: bool = False
    no_stop: bool = False
    no_done: bool = False
    stall: bool = False
    stuck: bool = False
    created_ms: bool = False

    @classmethod
    def of(cls, call: Call) -> Wire:
        return cls(*(call.fault(name) for name in _WIRE_FAULTS))


class _SseStream(SseStream):
    async def send_raw(self, data: bytes) -> None:
        """Bytes as they are: the broken-framing faults."""
        await self._write(data)


async def _run(agent: Agent, plan: Plan, stream: _SseStream, wire: Wire = Wire()) -> None:
    agent.state = RESEARCHING
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    model = agent.model if wire.model_name else agent.agent_id

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        body = _chunk(completion_id, model, delta, finish)
        if wire.created_ms:
            body["created"] = int(time.time() * 1000)
        if wire.wrong_object:
            body["object"] = "chat.completion"
        return body

    for number, step in enumerate(plan.steps):
        if agent.state == CANCELLED:  # deleted meanwhile: end the stream as upstream does
            break
        if wire.stall and number == 2:
            await stall(request=stream.request)  # ends early once the client has gone
        agent.apply(step)
        delta = {"role": "assistant", "content": step.content} if number == 0 else {"content": step.content}
        await stream.send(chunk(delta))
        if wire.non_json and number == 0:
            await stream.send_raw(f"data: {step.content.strip()}\n\n".encode())
    if agent.state != CANCELLED and not (wire.stuck and plan.end_state == COMPLETED):
        agent.finish(plan)  # before the final chunk: a client that read [DONE] sees the end state
    await stream.send(chunk({}, None if wire.no_stop else "stop"))
    if not wire.no_done:
        await stream.done()


def mount(api: ProtocolApi) -> None:
    store = api.stateful(lambda: AgentStore(api.config.limits))

    ghosts: dict[str, Agent] = {}  # the deleted agents the sgr-deleted-agent-listed fault still lists
    deleted = [0]  # agents deleted so far: the counter sgr-total-counts-deleted never subtracts

    async def stream_run(call: Call, agent: Agent, plan: Plan, headers: dict[str, str]) -> web.StreamResponse:
        """Streams one run of ``agent``; the caller holds the stream gate."""
        if call.fault("sgr-json-content-type"):
            headers = {**headers, "Content-Type": "application/json"}
        stream = _SseStream(call.request, headers, delay=api.config.stream_delay)
        try:
            await stream.open()
            await _run(agent, plan, stream, Wire.of(call))
            if agent.state == WAITING and call.fault("sgr-clarifications-counted-twice"):
                agent.clarifications_used += 1  # counted when asked and again when the stream closes
            if agent.state == WAITING and call.fault("sgr-result-while-waiting"):
                agent.execution_result = "Waiting for your clarification"  # the questions stored as the result
            return await stream.close()
        except ConnectionResetError:  # the client left (aiohttp's reset error derives from it)
            agent.abandon()
            return stream.response
        except asyncio.CancelledError:  # server shutdown
            agent.abandon()
            raise

    async def stream_notice(call: Call, agent: Agent, text: str) -> web.StreamResponse:
        """A one-message stream that leaves ``agent`` as it is; the caller holds the stream gate."""
        stream = SseStream(call.request, {"X-Agent-ID": agent.agent_id}, delay=api.config.stream_delay)
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        try:
            await stream.open()
            await stream.send(_chunk(completion_id, agent.agent_id, {"role": "assistant", "content": text}))
            await stream.send(_chunk(completion_id, agent.agent_id, {}, "stop"))
            if not call.fault("sgr-notice-stream-no-done"):
                await stream.done()
            return await stream.close()
        except ConnectionResetError:
            return stream.response

    async def resume(call: Call, agent: Agent, messages: list[Any]) -> web.StreamResponse:
        if agent.state != WAITING:
            with api.gate:
                return await stream_notice(call, agent, f"Agent {agent.agent_id} is not waiting for "
                                                        f"clarification (state: {agent.state})\n")
        with api.gate:
            if call.fault("sgr-clarification-ignored") and call.operation_id == "provideClarification":
                return await stream_notice(call, agent, "Clarification received\n")
            plan = _resume_plan(agent, messages)
            if call.fault("sgr-task-messages-replaced"):
                agent.task_messages = list(messages)  # the conversation's latest turn overwrote the task
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
        if call.fault("sgr-content-parts-rejected") and any(
            isinstance(m, dict) and isinstance(m.get("content"), list) for m in _messages(body)
        ):
            # the fault: a text-only message model, stricter than the document's content parts
            raise ApiError(422, "Invalid request: message content must be a string")
        if body.get("stream", True) is False and not call.fault("sgr-stream-false-accepted"):
            if call.fault("sgr-stream-false-crashes"):
                raise ApiError(500, "Internal Server Error")
            raise ApiError(501, "Only streaming responses are supported. Set 'stream=true'")
        messages = _messages(body)
        model = body.get("model", DEFAULT_MODEL)
        waiting = None if call.fault("sgr-chat-ignores-waiting-agent") else store.waiting(model, messages)
        if waiting is not None:
            return await resume(call, waiting, messages)
        if model not in MODELS:
            if call.fault("sgr-unknown-model-404"):
                raise ApiError(404, f"Model '{model}' not found")
            raise ApiError(400, f"Invalid model '{model}'. Available models: {list(MODELS)}")
        with api.gate:
            agent = store.add(model, messages)
            headers = {"X-Agent-ID": agent.agent_id, "X-Agent-Model": model}
            if call.fault("sgr-missing-agent-id"):
                del headers["X-Agent-ID"]
            if call.fault("sgr-missing-model-header"):
                del headers["X-Agent-Model"]
            return await stream_run(call, agent, _first_plan(agent), headers)

    @api.operation("provideClarification")
    async def provide_clarification(call: Call) -> web.StreamResponse:
        return await resume(call, store.get(call.path["agent_id"]), _messages(call.body))

    @api.operation("listAgents")
    async def list_agents(call: Call) -> Reply:
        agents = [agent.summary() for agent in store.agents.values()
                  if not (call.fault("sgr-list-drops-finished") and agent.state not in RUNNING_STATES)]
        agents += [agent.summary() for agent in ghosts.values()]
        if call.fault("sgr-list-newest-3"):
            agents = agents[-3:]  # a "recent agents" query
        if call.fault("sgr-list-state-at-creation"):
            agents = [{**a, "state": INITED} for a in agents]  # the row written when the agent was created
        total = len(agents) + (deleted[0] if call.fault("sgr-total-counts-deleted") else 0)
        return Reply({"agents": agents, "total": total})

    @api.operation("getAgentState")
    async def get_agent_state(call: Call) -> Reply:
        return Reply(store.get(call.path["agent_id"]).detail())

    @api.operation("deleteAgent")
    async def delete_agent(call: Call) -> Reply:
        if call.fault("sgr-deleted-agent-served"):
            agent = store.get(call.path["agent_id"])  # the fault: cancelled, but kept in the store
            agent.cancel()
            return Reply({"agent_id": agent.agent_id, "deleted": True, "final_state": agent.state})
        agent = store.remove(call.path["agent_id"])
        deleted[0] += 1
        agent.cancel()  # a running stream notices before its next chunk
        if call.fault("sgr-deleted-agent-listed"):
            ghosts[agent.agent_id] = agent
        return Reply({"agent_id": agent.agent_id, "deleted": True, "final_state": agent.state})


# --- faults -----------------------------------------------------------------------------------

PROTOCOL = "sgr-agent-core"

_WIRE_FAULTS = (  # in the order of Wire's fields
    "sgr-non-json-event", "sgr-wrong-chunk-object", "sgr-chunk-model-name", "sgr-no-finish-stop",
    "sgr-missing-done", "sgr-stall-mid-stream", "sgr-state-stuck", "sgr-created-milliseconds",
)


_fault = fault_maker(PROTOCOL)


def _not_healthy(reply: Reply) -> None:
    reply.body["status"] = "ok"


def _models_as_agents(reply: Reply) -> None:
    for model in reply.body["data"]:
        model["object"] = "agent"


def _drop_sources_count(reply: Reply) -> None:
    if reply.status == 200:
        reply.body.pop("sources_count", None)


def _not_found_as_error(reply: Reply) -> None:
    if reply.status == 404:
        reply.body = {"error": reply.body["detail"]}


def _string_422(reply: Reply) -> None:
    if reply.status == 422:
        reply.body = {"detail": "Request validation failed"}


FAULTS: tuple[Fault, ...] = (
    # wrong facts behind the right shapes (the model-based phase, conformance/protocols/sgr_agent_core/model.py)
    _fault("sgr-list-state-at-creation", ("SGR-FACT-001",),
           "GET /agents shows every agent as inited, the state of the row written when it was created"),
    # SGR-AGENT-001 says it too: "total counts the list"
    _fault("sgr-total-counts-deleted", ("SGR-FACT-001", "SGR-AGENT-001"),
           "GET /agents' total counts every agent ever created, deleted ones included"),
    _fault("sgr-list-newest-3", ("SGR-FACT-002",), "GET /agents lists only the 3 newest agents (and counts them)"),
    _fault("sgr-created-milliseconds", ("SGR-FACT-003",),
           "a chunk's created is milliseconds since the epoch where the document says seconds"),
    _fault("sgr-clarifications-counted-twice", ("SGR-FACT-004",),
           "clarifications_used goes up by two for each request for a clarification"),
    _fault("sgr-result-while-waiting", ("SGR-FACT-004",),
           "an agent waiting for a clarification already has an execution_result"),
    _fault("sgr-task-messages-replaced", ("SGR-FACT-005",),
           "a clarification replaces the agent's task_messages with the clarification's messages"),
    _fault("sgr-notice-stream-no-done", ("SGR-FACT-006",),
           "a clarification for an agent that is not waiting answers a stream that ends without data: [DONE]"),
    # wrong enum values, a missing required field
    _fault("sgr-health-not-healthy", ("SGR-SVC-001", "SGR-SCHEMA-005"),
           'GET /health answers {"status": "ok"} instead of "healthy"', operation="health", mutate=_not_healthy),
    _fault("sgr-model-wrong-object", ("SGR-MODEL-001", "SGR-SCHEMA-005"),
           'GET /v1/models lists its models with object "agent" instead of "model"', operation="listModels",
           mutate=_models_as_agents),
    _fault("sgr-state-missing-field", ("SGR-AGENT-002", "SGR-SCHEMA-005"),
           "GET /agents/{id}/state leaves out the required sources_count", operation="getAgentState",
           mutate=_drop_sources_count),
    # wrong content type, missing headers
    _fault("sgr-json-content-type", ("SGR-STREAM-001", "SGR-SCHEMA-003"),
           "chat and clarification streams are labelled application/json instead of text/event-stream",
           operation="createChatCompletion"),
    _fault("sgr-missing-agent-id", ("SGR-STREAM-002", "SGR-SCHEMA-004"),
           "a new chat's stream carries no X-Agent-ID header", operation="createChatCompletion"),
    _fault("sgr-missing-model-header", ("SGR-STREAM-003",),
           "a new chat's stream carries no X-Agent-Model header", operation="createChatCompletion"),
    # broken stream framing and chunks
    _fault("sgr-non-json-event", ("SGR-STREAM-004", "SGR-SCHEMA-005"),
           "after the first chunk the stream sends a plain-text data: event", operation="createChatCompletion"),
    _fault("sgr-wrong-chunk-object", ("SGR-STREAM-004", "SGR-SCHEMA-005"),
           'chunks say object "chat.completion" instead of "chat.completion.chunk"',
           operation="createChatCompletion"),
    _fault("sgr-chunk-model-name", ("SGR-STREAM-005",),
           "chunks carry the model name (sgr_agent) as model instead of the agent id",
           operation="createChatCompletion"),
    _fault("sgr-no-finish-stop", ("SGR-STREAM-006",),
           'the last chunk has finish_reason null instead of "stop"', operation="createChatCompletion"),
    _fault("sgr-missing-done", ("SGR-STREAM-007", "SGR-FACT-006"),
           "streams end after the final chunk without data: [DONE]", operation="createChatCompletion"),
    # a stream that never ends is SGR-STREAM-007's subject; the events that did arrive are valid
    _fault("sgr-stall-mid-stream", ("SGR-STREAM-007",),
           "streams stall after two chunks and never finish", operation="createChatCompletion", hangs=True),
    # losing data, a never-finishing agent
    _fault("sgr-list-drops-finished", ("SGR-AGENT-001",),
           "GET /agents lists only running agents: finished ones vanish from the list", operation="listAgents"),
    _fault("sgr-state-stuck", ("SGR-AGENT-003",),
           "a research never completes: the agent stays researching with no execution_result",
           operation="createChatCompletion", hangs=True),
    _fault("sgr-deleted-agent-listed", ("SGR-AGENT-004",),
           "a deleted agent is still listed by GET /agents", operation="deleteAgent"),
    _fault("sgr-deleted-agent-served", ("SGR-AGENT-004", "SGR-SCHEMA-009"),
           "DELETE /agents/{id} answers deleted: true but keeps the agent: its state is still served (and listed)",
           operation="deleteAgent"),
    # wrong statuses, error bodies of the wrong shape, accepting invalid input
    _fault("sgr-unknown-model-404", ("SGR-ERR-001", "SGR-SCHEMA-002"),
           "an unknown model is answered 404 instead of 400", operation="createChatCompletion"),
    _fault("sgr-stream-false-accepted", ("SGR-ERR-002",),
           "stream=false is answered 200 with a stream instead of 501", operation="createChatCompletion"),
    _fault("sgr-stream-false-crashes", ("SGR-ERR-002", "SGR-SCHEMA-001"),
           "stream=false crashes with 500 instead of the documented 501 (only 501 is exempt from SCHEMA-001)",
           operation="createChatCompletion"),
    _fault("sgr-not-found-wrong-shape", ("SGR-ERR-003", "SGR-SCHEMA-005"),
           'GET /agents/{id}/state for an unknown agent answers {"error": ...} instead of {"detail": ...}',
           operation="getAgentState", mutate=_not_found_as_error),
    _fault("sgr-422-string-detail", ("SGR-ERR-004", "SGR-SCHEMA-005"),
           "an invalid chat body gets 422 with a string detail instead of a list of errors",
           operation="createChatCompletion", mutate=_string_422),
    # the agents it starts then hold what it accepted: answers off their schema
    _fault("sgr-accepts-invalid-body", ("SGR-ERR-004", "SGR-SCHEMA-006", "SGR-SCHEMA-005"),
           "chat completions do not validate their body: a missing or malformed messages starts an agent",
           operation="createChatCompletion", skip_validation=True),
    # its refusal's detail is a string where the document's 422 carries a list
    _fault("sgr-content-parts-rejected", ("SGR-SCHEMA-007", "SGR-SCHEMA-005"),
           "chat completions refuse messages whose content is a list of content parts (422), which the document "
           "allows", operation="createChatCompletion"),
    # the clarification flow
    _fault("sgr-clarification-ignored", ("SGR-CLAR-001",),
           "provide_clarification streams an acknowledgement but the agent stays waiting, unchanged",
           operation="provideClarification"),
    _fault("sgr-chat-ignores-waiting-agent", ("SGR-CLAR-002",),
           "chat completions with a waiting agent's id as model answer 400 instead of resuming it",
           operation="createChatCompletion"),
)
