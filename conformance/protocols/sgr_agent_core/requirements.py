"""SGR Agent Core: the SSE chat stream event by event, the agents it creates, errors, clarification.

The schema phase judges every SSE event of the streamed answers against the document's
``itemSchema`` (the judgment ``events.items``, the proxy's rule too: each event's ``data`` is
``[DONE]`` or JSON holding its ``contentSchema``), so its manifest lists no streaming_operations.
What a per-event schema cannot say is checked here: the ``[DONE]`` terminator, the last chunk's
``finish_reason``, chunk ``model`` equal to the X-Agent-ID header, the header values, the agent's
state transitions and the error bodies.

On a real server every chat runs an LLM research, so the framing checks share one recorded
research stream (``ctx.memo``); each check that uses it cites its exchange as evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx

from specs.schemas import SchemaSet

from ...check import edges, hostile
from ...check.concurrent import at_once, expect_distinct
from ...check.context import CheckFailed, Context
from ...check.http import Client, Response, TargetError
from ...check.judgments import echoes, errors, lists
from ...check.shown import body as shown_body
from ...check.shown import shown
from ...check.signature import Signature, has
from ...check.streams import Frame, FrameError, sse_events
from ...check.waiting import Waited, wait_for
from ...verdicts.requirements import Authority, Level, Registry
from ...verdicts.results import Exchange

registry = Registry("sgr-agent-core")
DOC = "sgr-agent-core/openapi.yaml"

SCHEMA_EXPECTED_STATUSES: dict[str, dict[str, tuple[str, ...]]] = {
    "createChatCompletion": {
        # The document prescribes 501 for `stream: false`, a schema-valid request: a contract
        # answer, not a crash. Other 5xx statuses still fail SGR-SCHEMA-001.
        "not_a_server_error": ("501",),
        # `model` is any string in the schema, but only configured models (or a waiting agent's
        # id) are accepted: the document prescribes 400 for the rest, which no schema can express.
        "positive_data_acceptance": ("400",),
    },
}

SIGNATURES = (
    Signature(
        'a health answer {status: "healthy"}',
        "GET",
        "/health",
        lambda status, body: status == 200 and has(body, status=str) and body["status"] == "healthy",
    ),
    Signature(
        'a model list {object: "list", data}',
        "GET",
        "/v1/models",
        lambda status, body: status == 200 and has(body, data=list) and body.get("object") == "list",
    ),
)
"""What only an SGR Agent Core server answers (the preflight's recognition): its health and model list."""

CHAT = "/v1/chat/completions"
DEFAULT_MODEL = "sgr_tool_calling_agent"  # the document's default for `model`
DONE = "[DONE]"
WAITING = "waiting_for_clarification"
RUNNING = ("inited", "researching")
RESEARCH = "an agent's research"
"""The progress ``settle`` waits for (``check/waiting.py``: one wait that runs out is not paid again)."""
UUID = r"[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}"
AGENT_ID = re.compile(rf"^[A-Za-z0-9_]+_{UUID}$")  # components/schemas/AgentIdentifier

TASK = "Research the history of the Rust programming language"
PROVOKE = "Research the best option for me. Before you start, clarify which option and criteria I mean."
"""A request too vague to research, asking for a clarification: the best a client can do to make
an agent ask. A server decides by itself whether to ask; when it does not, CLAR is not verified."""
ANSWER = "I mean electric city cars under 30000 euros, compared by range and price"


def ref(pointer: str) -> str:
    return f"{DOC}#{pointer}"


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


# --- recorded streams -------------------------------------------------------------------------


@dataclass
class Recorded:
    """One streamed answer as it arrived: events, the first invalid one, and how it ended."""

    status: int
    headers: httpx.Headers
    content_type: str
    exchange: Exchange
    events: list[str] = field(default_factory=list)
    """Each event's data, in arrival order (``[DONE]`` included)."""
    chunks: list[dict[str, Any]] = field(default_factory=list)
    """The JSON objects among them, in order."""
    problem: str = ""
    """The first event that is not a valid chat.completion.chunk, found as it arrived."""
    framing: str = ""
    """The first event not framed as the document fixes it (one data: line, no other field)."""
    error: str = ""
    """Why reading stopped before the server ended the stream (stall, broken framing, reset)."""
    body: bytes = b""
    """The whole answer when it was not a 200."""

    @property
    def agent_id(self) -> str | None:
        value = self.headers.get("X-Agent-ID")
        return str(value) if value is not None else None


def record(ctx: Context, path: str, body: dict[str, Any]) -> Recorded:
    """POSTs and reads the SSE answer event by event, validating each chunk as it arrives."""
    with ctx.client.stream("POST", path, json=body) as stream:
        rec = Recorded(stream.status, stream.headers, stream.content_type, ctx.client.log[-1])
        if stream.status != 200:
            rec.body = stream.read()
            return rec
        try:
            for frame in ctx.frames(stream, "sse", end=DONE):  # [DONE] ends it, as it ends the openai client's read
                rec.events.append(frame.raw)
                if not rec.framing and not framed(frame):
                    rec.framing = framing_fault(frame)
                if frame.raw == DONE:
                    continue
                rec.problem = rec.problem or chunk_problem(frame, ctx.schemas)
                if isinstance(frame.value, dict):
                    rec.chunks.append(frame.value)
        except (CheckFailed, TargetError) as exc:
            rec.error = str(exc)
            rec.exchange.error = rec.error
    return rec


def chunk_problem(frame: Frame, schemas: SchemaSet) -> str:
    """Why an event (not ``[DONE]``) is no chat.completion.chunk (SGR-STREAM-004), empty when it is
    one: one rule for the scenario's reading of a stream and the proxy's."""
    where = f"event {frame.index + 1}"
    if not isinstance(frame.value, dict):
        return f"{where} is not a JSON object: {shown(frame.raw[:160])}"
    found = schemas.violations({"$ref": "#/components/schemas/ChatCompletionChunk"}, frame.value, limit=3)
    return f"{where} is not a chat.completion.chunk: " + "; ".join(map(str, found)) if found else ""


SSE_FIELDS = frozenset({"id", "retry"})
"""Fields the SSE standard lets every stream carry without changing an event's data (a reader applies
them to the connection: the last event id, the reconnection delay), as comment lines are skipped;
``event:`` is another matter: it names the event, and the openai client then hands the caller the
data wrapped as ``{"data", "event"}`` instead of a chunk."""


def framed(frame: Frame) -> bool:
    """An event framed as the document fixes it: one data: line, no field that changes what it is."""
    return frame.data_lines == 1 and set(frame.fields) <= SSE_FIELDS


def framing_fault(frame: Frame) -> str:
    others = [f for f in frame.fields if f not in SSE_FIELDS]
    return (
        f"event {frame.index + 1} is {frame.data_lines} data: line(s)"
        + (f" with {', '.join(f + ':' for f in others)} line(s)" if others else "")
        + "; the document fixes each event as a single data: line followed by a blank line (comments, id: and "
        "retry: aside)"
    )


def expect_stream(ctx: Context, rec: Recorded, owner: str | None = "SGR-STREAM-001") -> None:
    """The chat answered 200 with a stream (SGR-STREAM-001's subject; any other check is blocked)."""
    with ctx.setup(owner):
        if rec.status != 200:
            ctx.fail(
                f"expected HTTP 200 with an event stream, got {rec.status}: "
                f"{shown_body(rec.body, rec.content_type, 300)}"
            )


def expect_complete(ctx: Context, rec: Recorded, owner: str | None = "SGR-STREAM-007") -> None:
    """The server ended the stream itself, after ``data: [DONE]`` and nothing else (SGR-STREAM-007's
    subject). A check that needs a finished stream (``owner`` another's) needs only that it ended:
    it is blocked by a stream that stalled or broke, and judges the agent after one the server
    closed without its ``[DONE]`` (that is SGR-STREAM-007's finding alone)."""
    expect_stream(ctx, rec)
    with ctx.setup(owner):
        if owner is None:
            _expect_done(ctx, rec)
        elif rec.error:  # another check needs the stream ended, which a server that closed it did
            ctx.fail(f"the stream did not complete after {len(rec.events)} event(s): {rec.error}")


def _expect_done(ctx: Context, rec: Recorded) -> None:
    if rec.error:
        ctx.fail(f"the stream did not complete after {len(rec.events)} event(s): {rec.error}")
    if DONE not in rec.events:
        ctx.fail(f"the stream ended after {len(rec.events)} event(s) without data: [DONE]")
    if rec.events.index(DONE) != len(rec.events) - 1:
        ctx.fail(f"events after data: [DONE]: {shown(rec.events[rec.events.index(DONE) + 1 :][:3])}")


def finish_reason(chunk: dict[str, Any]) -> Any:
    choices = chunk.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    return first.get("finish_reason")


# --- shared fixtures --------------------------------------------------------------------------


def chat_model(ctx: Context) -> str:
    """A model the server lists (the first), else the document's default."""

    def first_listed() -> str:
        try:
            data = ctx.client.get("/v1/models").json().get("data")
            model = data[0].get("id") if isinstance(data, list) and data and isinstance(data[0], dict) else None
        except (CheckFailed, TargetError, AttributeError):
            model = None
        return model if isinstance(model, str) and model else DEFAULT_MODEL

    return ctx.memo("sgr:model", first_listed)


@dataclass(frozen=True)
class Research:
    model: str
    messages: list[dict[str, str]]
    rec: Recorded


def research(ctx: Context) -> Research:
    """One research chat, recorded once per run and shared by the framing and agent checks."""

    def run() -> Research:
        model = chat_model(ctx)
        messages = [user(TASK)]
        return Research(model, messages, record(ctx, CHAT, {"model": model, "messages": messages, "stream": True}))

    found = ctx.memo("sgr:research", run)
    ctx.cite(found.rec.exchange)
    return found


@dataclass(frozen=True)
class EdgeChat:
    edges: tuple[edges.Edge[str], ...]
    messages: list[dict[str, str]]
    rec: Recorded


def edge_chats(ctx: Context) -> list[EdgeChat]:
    """The corpus's texts as the user messages of new chats: every text the document accepts in one
    chat (one message each), each refusable one (empty, NUL, 64 Ki characters) in a chat of its
    own, so a fair refusal of it refuses nothing else. Recorded once per run."""

    def run() -> list[EdgeChat]:
        model = chat_model(ctx)
        groups = [tuple(e for e in edges.TEXTS if not e.refusable), *((e,) for e in edges.TEXTS if e.refusable)]
        chats = []
        for group in groups:
            messages = [user(e.value) for e in group]
            chats.append(
                EdgeChat(group, messages, record(ctx, CHAT, {"model": model, "messages": messages, "stream": True}))
            )
        return chats

    return list(ctx.memo("sgr:edge-chats", run))


def edge_task_messages(ctx: Context, read: Callable[[str], Any], where: str) -> None:
    """Each corpus text, as the agent its chat created shows it (``read``: the agent's task_messages
    by agent id, read from one route), one part per value."""
    for chat in edge_chats(ctx):
        if 400 <= chat.rec.status < 500 and all(e.refusable for e in chat.edges):
            continue  # refused a value the document lets it refuse
        got: Any = None
        with ctx.part(chat.edges[0].name if len(chat.edges) == 1 else "the corpus's texts"):
            got = read(agent_of(ctx, chat.rec))
            ctx.expect(
                isinstance(got, list) and len(got) == len(chat.messages),
                f"{where}: task_messages holds {len(got) if isinstance(got, list) else shown(got)} messages for the "
                f"{len(chat.messages)} sent",
            )
        if not isinstance(got, list) or len(got) != len(chat.messages):
            continue
        for edge, sent, message in zip(chat.edges, chat.messages, got, strict=True):
            with ctx.part(edge.name):
                ctx.expect(isinstance(message, dict), f"{where}: a task message is {message!r:.80}, not an object")
                ctx.expect_equal(message.get("role"), sent["role"], f"{where}: role")
                ctx.expect(
                    message.get("content") == sent["content"],
                    f"{where}: content " + edges.difference(message.get("content"), sent["content"]),
                )


def agent_of(ctx: Context, rec: Recorded) -> str:
    """The agent a chat created, named by its X-Agent-ID (SGR-STREAM-002's subject)."""
    expect_stream(ctx, rec)
    with ctx.setup("SGR-STREAM-002"):
        ctx.expect(rec.agent_id, "the chat's stream has no X-Agent-ID header: the agent it created cannot be named")
    assert rec.agent_id is not None
    return rec.agent_id


def settle(ctx: Context, agent_id: str) -> Waited[dict[str, Any]]:
    """The agent's state once it is no longer inited or researching, or at the run's bound of a
    wait (``check/waiting.py``; the state's form is SGR-AGENT-002's subject; a check needs only
    its state field)."""

    def state() -> dict[str, Any]:
        with ctx.setup("SGR-AGENT-002"):
            body = ctx.conforms(ctx.client.get(f"/agents/{agent_id}/state"), "getAgentState", 200)
            ctx.expect(
                isinstance(body, dict) and isinstance(body.get("state"), str),
                f"the agent's state has no state field: {shown(body, 300)}",
            )
        return dict(body)

    return wait_for(
        state,
        lambda body: body.get("state") not in RUNNING,
        what=RESEARCH,
        bound=ctx.limits.stream_seconds,
        guard=ctx.guard,
        first=0.1,
    )


DETAIL: dict[str, Any] = {"members": {"detail": "string"}, "nonempty": ["detail"]}
LISTED: dict[str, Any] = {"items": "agents", "id": "agent_id"}
"""GET /agents as ``lists.holds`` reads it (its facts: the list's keys)."""
AGENTS: dict[str, Any] = {**LISTED, "total": "total"}
"""The same with its count: SGR-AGENT-001's fact (SGR-AGENT-004 judges only what is listed)."""
"""The document's DetailError, ``{"detail": "<message>"}`` (other members are allowed): the facts of
the judgment ``errors.shape``, which the checks and the proxy's judge share."""


def expect_detail(ctx: Context, response: Response, what: str) -> None:
    """The answer's body is a DetailError."""
    ctx.judge(errors.SHAPE, response, f"{what}:", **DETAIL)


# --- service and models -----------------------------------------------------------------------


@registry.requirement(
    "SGR-SVC-001",
    Level.MUST,
    'GET /health answers 200 with status "healthy" and the service name',
    ref("/paths/~1health/get"),
    from_traffic=True,
)
def health(ctx: Context) -> None:
    body = ctx.conforms(ctx.client.get("/health"), "health", 200)
    ctx.expect_equal(body.get("status"), "healthy", "status")
    ctx.expect(isinstance(body.get("service"), str) and body["service"], "service should be a non-empty string")


@registry.requirement(
    "SGR-MODEL-001",
    Level.MUST,
    'GET /v1/models answers object "list" whose data are model objects (object "model")',
    ref("/paths/~1v1~1models/get"),
    from_traffic=True,
)
def models(ctx: Context) -> None:
    body = ctx.conforms(ctx.client.get("/v1/models"), "listModels", 200)
    ctx.expect_equal(body.get("object"), "list", "object")
    data = body.get("data")
    ctx.expect(isinstance(data, list) and data, "data should list at least one agent model")
    for n, model in enumerate(data):
        with ctx.part():
            ctx.expect_equal(model.get("object"), "model", f"data[{n}].object")
        with ctx.part():
            ctx.expect(isinstance(model.get("id"), str) and model["id"], f"data[{n}].id should be a non-empty string")
    ids = [m["id"] for m in data]
    ctx.expect(len(set(ids)) == len(ids), f"model ids repeat: {ids}")


# --- the chat stream --------------------------------------------------------------------------


@registry.requirement(
    "SGR-STREAM-001",
    Level.MUST,
    "A chat completion answers 200 with Content-Type text/event-stream and Cache-Control no-cache",
    ref("/components/responses/ChatCompletionStream"),
    from_traffic=True,
)
def stream_headers(ctx: Context) -> None:
    rec = research(ctx).rec
    expect_stream(ctx, rec, owner=None)
    problem = mislabelled(rec.content_type, str(rec.headers.get("Cache-Control", "")))
    ctx.expect(not problem, problem, shown_by=rec.exchange)


def mislabelled(content_type: str | None, cache_control: str) -> str:
    """How a chat stream's labels depart from the document's (SGR-STREAM-001), empty when they do
    not: one rule for the scenario and the proxy."""
    cache = cache_control.strip().lower()
    if content_type == "text/event-stream" and cache == "no-cache":
        return ""
    return f"Content-Type {shown(content_type)} and Cache-Control {shown(cache)}, not text/event-stream and no-cache"


@registry.requirement(
    "SGR-STREAM-002",
    Level.MUST,
    "A new chat's stream carries X-Agent-ID {agent_name}_{uuid}, agent_name the requested model",
    ref("/components/headers/X-Agent-ID"),
    from_traffic=True,
)
def stream_agent_id(ctx: Context) -> None:
    found = research(ctx)
    agent_id = agent_of(ctx, found.rec)
    problem = misnamed(agent_id, found.model)
    ctx.expect(not problem, problem, shown_by=found.rec.exchange)


def misnamed(agent_id: str | None, model: str) -> str:
    """How a new chat's X-Agent-ID departs from ``{model}_{uuid}`` (SGR-STREAM-002), empty when it
    does not: one rule for the scenario and the proxy."""
    if agent_id is not None and re.fullmatch(rf"{re.escape(model)}_{UUID}", agent_id):
        return ""
    return f"X-Agent-ID {shown(agent_id)} is not {model}_<uuid>"


@registry.requirement(
    "SGR-STREAM-003",
    Level.SHOULD,
    "A new chat's stream carries X-Agent-Model: the requested model",
    "seed 001: POST /v1/chat/completions, response headers",
    from_traffic=True,
)
def stream_agent_model(ctx: Context) -> None:
    found = research(ctx)
    expect_stream(ctx, found.rec)
    ctx.expect_equal(found.rec.headers.get("X-Agent-Model"), found.model, "X-Agent-Model")


@registry.requirement(
    "SGR-STREAM-004",
    Level.MUST,
    "Each event of a chat stream, as it arrives, is data: JSON valid as a chat.completion.chunk, framed as "
    "the document fixes it: a single data: line followed by a blank line, with no event: line (comment lines "
    "and the id: and retry: fields the SSE standard gives every stream are accepted)",
    ref("/components/responses/ChatCompletionStream"),
    from_traffic=True,
)
def stream_chunks(ctx: Context) -> None:
    rec = research(ctx).rec
    expect_stream(ctx, rec)
    with ctx.part("framing"):
        ctx.expect(not rec.framing, rec.framing)
    if rec.problem:
        ctx.fail(rec.problem)
    if not rec.chunks:
        with ctx.setup("SGR-STREAM-007" if rec.error else None):
            ctx.fail(f"the stream carried no chat.completion.chunk{f': {rec.error}' if rec.error else ''}")
    if rec.error:  # the events that arrived were valid, but not every event of the stream was seen
        with ctx.setup("SGR-STREAM-007"):
            ctx.fail(f"the stream did not complete after {len(rec.chunks)} valid event(s): {rec.error}")


def agent_names(agent_id: str) -> set[str]:
    """What a chunk's ``model`` may say to name the agent with this id: the id itself (the document's
    description, and upstream) or, as seed 001's example shows, the model it was created from."""
    return {agent_id, re.sub(rf"_{UUID}$", "", agent_id)}


def one_agent(models: Collection[str], requested: object) -> bool:
    """Whether chunk models name one agent when no X-Agent-ID says which (SGR-STREAM-002's finding,
    not SGR-STREAM-005's): one value, an agent id or the model the chat asked for."""
    return len(set(models)) == 1 and any(bool(AGENT_ID.match(m)) or m == requested for m in models)


@registry.requirement(
    "SGR-STREAM-005",
    Level.MUST,
    "Every chunk's model names the stream's agent: the agent id X-Agent-ID names or, as seed 001's example "
    "shows, the model the agent was created from",
    f'{ref("/components/schemas/ChatCompletionChunk/properties/model")} ("The agent ID"; its x-decision: seed '
    "001's example shows the model name)",
    from_traffic=True,
)
def stream_model_is_agent(ctx: Context) -> None:
    found = research(ctx)
    rec = found.rec
    expect_stream(ctx, rec)
    ctx.expect(rec.chunks, "the stream carried no JSON chunk")
    models = sorted({str(c.get("model")) for c in rec.chunks})
    if not rec.agent_id:
        ctx.expect(
            one_agent(models, found.model), f"chunk models {shown(models)} are not one agent id or {shown(found.model)}"
        )
        return
    allowed = agent_names(rec.agent_id) | {found.model}
    names = " or ".join(sorted(allowed))
    ctx.expect(set(models) <= allowed, f"chunk model should name the agent ({names}), got {shown(models)}")


@registry.requirement(
    "SGR-STREAM-008",
    Level.SHOULD,
    "Every chunk's model is the agent id X-Agent-ID names, as upstream sends it",
    "UPSTREAM-FACTS: SGR Agent Core, 'Each chunk is an OpenAI chat.completion.chunk; its model is the agent id'",
    from_traffic=True,
    authority=Authority.PRACTICE,
)
def stream_model_is_agent_id(ctx: Context) -> None:
    rec = research(ctx).rec
    expect_stream(ctx, rec)
    with ctx.setup("SGR-STREAM-002"):
        ctx.expect(rec.agent_id, "the chat's stream has no X-Agent-ID header to compare the chunks with")
    ctx.expect(rec.chunks, "the stream carried no JSON chunk")
    models = sorted({str(c.get("model")) for c in rec.chunks})
    ctx.expect(models == [rec.agent_id], f"chunk model is {models}, not the agent id {shown(rec.agent_id)}")


@registry.requirement(
    "SGR-STREAM-006",
    Level.MUST,
    'The last chunk of a stream has finish_reason "stop"',
    ref("/components/responses/ChatCompletionStream"),
    from_traffic=True,
)
def stream_finish(ctx: Context) -> None:
    rec = research(ctx).rec
    expect_stream(ctx, rec)
    with ctx.setup("SGR-STREAM-007"):
        ctx.expect(not rec.error, f"the stream did not complete, so it has no last chunk: {rec.error}")
    ctx.expect(rec.chunks, "the stream carried no JSON chunk")
    ctx.expect_equal(finish_reason(rec.chunks[-1]), "stop", "finish_reason of the last chunk")


@registry.requirement(
    "SGR-STREAM-007",
    Level.MUST,
    "A stream ends, within the time bound, with data: [DONE] as its last event",
    ref("/components/responses/ChatCompletionStream"),
    from_traffic=True,
)
def stream_done(ctx: Context) -> None:
    expect_complete(ctx, research(ctx).rec, owner=None)


# --- the agents -------------------------------------------------------------------------------


@registry.requirement(
    "SGR-AGENT-001",
    Level.MUST,
    "The agent a chat created is listed by GET /agents with its task messages; total counts the list; the "
    "edge corpus's texts sent as a chat's messages are listed exactly as sent",
    ref("/paths/~1agents/get"),
    from_traffic=True,
)
def agent_listed(ctx: Context) -> None:
    # the list's form is SGR-SCHEMA-005's subject: other clients' agents are listed too
    found = research(ctx)
    agent_id = agent_of(ctx, found.rec)
    listed = ctx.client.get("/agents")
    ctx.conforms(listed, "listAgents", 200, judge=False)
    made = [{"id": agent_id, "members": {"task_messages": found.messages}}]
    ctx.judge(lists.HOLDS, listed, "GET /agents:", **AGENTS, made=made)

    def in_list(agent_id: str) -> Any:
        listed = ctx.conforms(ctx.client.get("/agents"), "listAgents", 200, judge=False)["agents"]
        found = [a for a in listed if a.get("agent_id") == agent_id]
        ctx.expect(found, f"{agent_id} is not listed")
        return found[0].get("task_messages")

    edge_task_messages(ctx, in_list, "GET /agents")


@registry.requirement(
    "SGR-AGENT-002",
    Level.MUST,
    "GET /agents/{id}/state answers every documented field, the task messages as they were sent, the edge "
    "corpus's texts (scripts, combining marks, astral characters, escapes, control characters, spaces at the "
    "ends; the empty, NUL and 64 Ki character ones unless refused with a 4xx) included",
    ref("/paths/~1agents~1{agent_id}~1state/get"),
    from_traffic=True,
)
def agent_state(ctx: Context) -> None:
    found = research(ctx)
    agent_id = agent_of(ctx, found.rec)
    body = ctx.conforms(ctx.client.get(f"/agents/{agent_id}/state"), "getAgentState", 200)
    ctx.expect_equal(body["agent_id"], agent_id, "agent_id")
    ctx.expect_equal(body["task_messages"], found.messages, "task_messages")

    def in_state(agent_id: str) -> Any:
        return ctx.conforms(ctx.client.get(f"/agents/{agent_id}/state"), "getAgentState", 200).get("task_messages")

    edge_task_messages(ctx, in_state, "GET /agents/{agent_id}/state")


@registry.requirement(
    "SGR-AGENT-003",
    Level.MUST,
    "After its stream ends, the agent reaches state completed with a non-empty execution_result",
    ref("/components/schemas/AgentStateResponse"),
    from_traffic=True,
)
def agent_completes(ctx: Context) -> None:
    found = research(ctx)
    agent_id = agent_of(ctx, found.rec)
    expect_complete(ctx, found.rec)
    waited = settle(ctx, agent_id)
    body = waited.last
    if not waited.done:
        ctx.fail(f"the agent is still {body['state']} {waited.seconds:g} s after its stream ended{waited.shortened}")
    ctx.expect_equal(body["state"], "completed", "state")
    result = body.get("execution_result")
    ctx.expect(
        isinstance(result, str) and result.strip(), f"execution_result should be the report, got {shown(result)}"
    )


@registry.requirement(
    "SGR-AGENT-004",
    Level.MUST,
    "DELETE /agents/{id} answers {agent_id, deleted: true, final_state}; then 404 and unlisted",
    ref("/paths/~1agents~1{agent_id}/delete"),
    from_traffic=True,
)
def agent_deleted(ctx: Context) -> None:
    rec = record(ctx, CHAT, {"model": chat_model(ctx), "messages": [user(TASK)], "stream": True})
    agent_id = agent_of(ctx, rec)
    before = settle(ctx, agent_id).last["state"]
    body = ctx.conforms(ctx.client.delete(f"/agents/{agent_id}"), "deleteAgent", 200)
    ctx.expect_equal(body["agent_id"], agent_id, "agent_id")
    ctx.expect(body["deleted"] is True, f"deleted should be true, got {shown(body['deleted'])}")
    expected = "cancelled" if before in (*RUNNING, WAITING) else before
    ctx.expect_equal(body["final_state"], expected, f"final_state of an agent that was {before}")
    # gone: the 404's body is SGR-ERR-003's subject
    ctx.expect_status(ctx.client.get(f"/agents/{agent_id}/state"), 404)
    listed = ctx.client.get("/agents")
    ctx.conforms(listed, "listAgents", 200, judge=False)
    ctx.judge(lists.HOLDS, listed, "GET /agents after the DELETE:", **LISTED, gone=[agent_id])


CHATS_AT_ONCE = 4
"""Chats SGR-AGENT-005 starts together: fewer than other protocols' creates, as each runs a research
(an LLM's calls on a real server)."""


@dataclass(frozen=True)
class Started:
    """A chat started among others: its status and X-Agent-ID, and what ended its stream early."""

    status: int
    agent_id: str | None
    problem: str = ""


def start_chat(body: dict[str, Any], client: Client) -> Started:
    """One chat of several started at once, its stream read to data: [DONE] (its form is the stream
    requirements' subject, not this one's)."""
    status, agent_id = 0, None
    try:
        with client.stream("POST", CHAT, json=body) as stream:
            status, agent_id = stream.status, stream.headers.get("X-Agent-ID")
            if stream.status != 200:
                return Started(stream.status, agent_id, shown_body(stream.read(), stream.content_type, 300))
            for frame in sse_events(stream.chunks(), client.limits.max_frames, end=DONE):
                if frame.raw == DONE:
                    stream.finished()
            return Started(200, agent_id)
    except (TargetError, FrameError) as exc:
        # a stream that broke off or stalled after its headers still named its agent: judged by its id
        # (the stream's end is the stream requirements' subject)
        return Started(status, agent_id, str(exc))


@registry.requirement(
    "SGR-AGENT-005",
    Level.MUST,
    f"Chats started at the same moment ({CHATS_AT_ONCE} POST /v1/chat/completions on separate connections) "
    "create distinct agents: each stream names an X-Agent-ID of its own, and GET /agents/{id}/state answers each "
    "with the task messages it was started with",
    ref("/components/headers/X-Agent-ID"),
)
def concurrent_agents(ctx: Context) -> None:
    # what the document says of a created agent holds whatever else is being created at the time
    model = chat_model(ctx)
    nonce = f"{ctx.draws('concurrent chats').getrandbits(32):08x}"
    chats = [[user(f"{TASK} (chat {n} of several at once, {nonce})")] for n in range(CHATS_AT_ONCE)]
    bodies = [{"model": model, "messages": messages, "stream": True} for messages in chats]
    started = at_once(ctx, [partial(start_chat, body) for body in bodies])
    with ctx.setup("SGR-STREAM-002"):  # a chat's stream and its X-Agent-ID are the stream requirements'
        for chat in started:
            ctx.expect(chat.status == 200, f"a chat answered {chat.status or 'nothing'}: {chat.problem}")
            ctx.expect(chat.agent_id, "a chat's stream has no X-Agent-ID header")
    ids = [str(chat.agent_id) for chat in started]
    with ctx.part("agent ids"):
        expect_distinct(ctx, ids, "agents", "X-Agent-ID")
    for agent_id, messages in zip(ids, chats, strict=True):
        with ctx.part(f"agent {agent_id}"):  # read by id: what a list shows is the list requirements' fact
            with ctx.setup("SGR-AGENT-002"):  # the state's status and form are SGR-AGENT-002's
                answer = ctx.client.get(f"/agents/{agent_id}/state")
                state = ctx.conforms(answer, "getAgentState", 200)
                ctx.expect(isinstance(state, dict), f"the state of {agent_id} is not an object: {shown(state, 200)}")
            ctx.judge(echoes.MEMBERS, answer, f"{agent_id}:", sent={"task_messages": messages})


# --- errors -----------------------------------------------------------------------------------


@registry.requirement(
    "SGR-ERR-001",
    Level.MUST,
    'A chat with an unknown model answers 400 {"detail": string}',
    ref("/paths/~1v1~1chat~1completions/post/responses/400"),
    from_traffic=True,
)
def err_unknown_model(ctx: Context) -> None:
    model = f"no_such_model_{ctx.drawn_id('unknown model')[:8]}"
    response = ctx.client.post(CHAT, json={"model": model, "messages": [user(TASK)], "stream": True})
    ctx.conforms(response, "createChatCompletion", 400)
    expect_detail(ctx, response, "unknown model")


@registry.requirement(
    "SGR-ERR-002",
    Level.MUST,
    'A chat completion with stream=false answers 501 {"detail": string}',
    ref("/paths/~1v1~1chat~1completions/post/responses/501"),
    from_traffic=True,
)
def err_not_streaming(ctx: Context) -> None:
    response = ctx.client.post(CHAT, json={"model": chat_model(ctx), "messages": [user(TASK)], "stream": False})
    ctx.conforms(response, "createChatCompletion", 501)
    expect_detail(ctx, response, "stream=false")


@registry.requirement(
    "SGR-ERR-003",
    Level.MUST,
    'An unknown agent id answers 404 {"detail": string} on state, provide_clarification and delete',
    ref("/components/responses/AgentNotFound"),
    from_traffic=True,
)
def err_unknown_agent(ctx: Context) -> None:
    agent_id = f"{chat_model(ctx)}_{ctx.drawn_id('unknown agent')}"
    answers = [
        ("getAgentState", ctx.client.get(f"/agents/{agent_id}/state")),
        (
            "provideClarification",
            ctx.client.post(f"/agents/{agent_id}/provide_clarification", json={"messages": [user(ANSWER)]}),
        ),
        ("deleteAgent", ctx.client.delete(f"/agents/{agent_id}")),
    ]
    for operation_id, response in answers:
        with ctx.part():
            ctx.conforms(response, operation_id, 404)
            expect_detail(ctx, response, f"{operation_id} of an unknown agent")


INVALID_BODY_STATUS = {"createChatCompletion": (400, 422), "provideClarification": (422,)}
"""The statuses the document gives an invalid body: a chat's 400 ("Invalid model name ... or otherwise
invalid request", seed 001's only error for one) or 422 (BodyValidationFailed); a clarification's 422."""


def invalid_bodies(ctx: Context) -> list[tuple[str, str, dict[str, Any]]]:
    model = chat_model(ctx)
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("createChatCompletion", CHAT, {"model": model, "stream": True}),
        ("createChatCompletion", CHAT, {"model": model, "messages": "not a list", "stream": True}),
    ]
    found = research(ctx)  # an existing agent, so that only the body can be wrong
    if found.rec.agent_id:
        cases.append(
            ("provideClarification", f"/agents/{found.rec.agent_id}/provide_clarification", {"messages": "not a list"})
        )
    return cases


@registry.requirement(
    "SGR-ERR-004",
    Level.MUST,
    'An invalid request body (null, an array, a string or a number included) answers 422 {"detail": [{type, loc, '
    'msg}, ...]}, or for a chat the 400 {"detail": string} the document also gives an invalid request; it starts '
    "no agent and changes none",
    f"{ref('/components/responses/BodyValidationFailed')}; {ref('/paths/~1v1~1chat~1completions/post/responses/400')}",
    from_traffic=True,
)
def err_invalid_body(ctx: Context) -> None:
    for operation_id, path, body in invalid_bodies(ctx):
        with ctx.part():
            _invalid_body_answer(ctx, operation_id, path, body)
    agent_id = agent_of(ctx, research(ctx).rec)

    def agents() -> object:
        with ctx.setup("SGR-AGENT-001"):
            listed = ctx.conforms(ctx.client.get("/agents"), "listAgents", 200, judge=False)["agents"]
            return sorted(str(a.get("agent_id")) for a in listed)

    def agent() -> object:
        state = settle(ctx, agent_id).last
        return {key: state.get(key) for key in ("state", "clarifications_used", "iteration")}

    hostile.refuses_non_objects(
        ctx,
        [
            hostile.Write("createChatCompletion", "POST", CHAT, "the agents listed", agents, (400, 422), streamed=True),
            hostile.Write(
                "provideClarification",
                "POST",
                f"/agents/{agent_id}/provide_clarification",
                "the agent's state",
                agent,
                INVALID_BODY_STATUS["provideClarification"],
                streamed=True,
            ),
        ],
    )


def _invalid_body_answer(ctx: Context, operation_id: str, path: str, body: dict[str, Any]) -> None:
    what = f"{operation_id} with {body}"
    allowed = INVALID_BODY_STATUS[operation_id]
    response = ctx.client.post(path, json=body)
    if response.status not in allowed:
        want = " or ".join(map(str, allowed))
        ctx.fail(f"{what}: expected HTTP {want}, got {response.status}: {response.shown(200)}")
    answer = ctx.conforms(response, operation_id, response.status)
    if response.status == 400:
        expect_detail(ctx, response, what)
        return
    detail = answer.get("detail") if isinstance(answer, dict) else None
    if not isinstance(detail, list) or not detail:
        ctx.fail(f"{what}: detail should be a non-empty list of errors, got {shown(detail)}")
    for n, item in enumerate(detail):
        ctx.expect(isinstance(item, dict), f"{what}: detail[{n}] is not an object")
        ctx.expect(
            isinstance(item.get("type"), str) and isinstance(item.get("msg"), str),
            f"{what}: detail[{n}] needs string type and msg, got {shown(item)}",
        )


@registry.requirement(
    "SGR-ERR-005",
    Level.SHOULD,
    "A 422 for an invalid body locates each error in it: every detail item's loc starts with \"body\", as FastAPI's do",
    'UPSTREAM-FACTS: SGR Agent Core, \'422 {"detail": [{"type","loc","msg","input"}...]} for invalid '
    "bodies' (FastAPI's validation errors; the document's loc is any path: "
    f"{ref('/components/schemas/ValidationError')})",
    from_traffic=True,
    authority=Authority.PRACTICE,
)
def err_invalid_body_located(ctx: Context) -> None:
    seen = 0
    for operation_id, path, body in invalid_bodies(ctx):
        with ctx.part():
            response = ctx.client.post(path, json=body)
            if response.status != 422:
                continue  # refused otherwise (SGR-ERR-004's subject): nothing to locate
            detail = response.json().get("detail") if isinstance(response.json(), dict) else None
            if not isinstance(detail, list):
                continue  # SGR-ERR-004's subject
            seen += 1
            where = [item.get("loc") for item in detail if isinstance(item, dict)]
            ctx.expect(
                all(isinstance(loc, list) and loc and loc[0] == "body" for loc in where),
                f'{operation_id} with {body}: loc {where} does not start with "body"',
            )
    if not seen:
        ctx.not_verified("no invalid body was answered 422 with a list of errors to locate")


# --- clarification ----------------------------------------------------------------------------


def waiting_agent(ctx: Context) -> tuple[str, dict[str, Any]]:
    """Asks for research in a way that invites a clarification; not verified when none comes."""
    rec = record(ctx, CHAT, {"model": chat_model(ctx), "messages": [user(PROVOKE)], "stream": True})
    agent_id = agent_of(ctx, rec)
    expect_complete(ctx, rec)  # its events' form is the SGR-STREAM requirements' subject
    state = settle(ctx, agent_id).last
    if state["state"] != WAITING:
        ctx.not_verified(
            f"the agent did not ask for a clarification (state {shown(state['state'])} after a vague request that "
            f"says 'clarify'); a server decides by itself when to ask, so the resumption could not be exercised"
        )
    return agent_id, state


def expect_resumed(ctx: Context, agent_id: str, before: dict[str, Any]) -> None:
    waited = settle(ctx, agent_id)
    after = waited.last
    with ctx.setup("SGR-AGENT-003"):  # an agent that never completes is SGR-AGENT-003's finding
        ctx.expect(
            waited.done,
            f"the resumed agent is still {after['state']} {waited.seconds:g} s after its stream ended"
            + waited.shortened,
        )
    if after["state"] == "completed":
        result = after.get("execution_result")
        ctx.expect(
            isinstance(result, str) and result.strip(), f"execution_result should be the report, got {shown(result)}"
        )
        return
    progress = ("clarifications_used", "iteration")
    moved = any(after.get(key) != before.get(key) for key in progress)
    if after["state"] == WAITING and moved:
        ctx.not_verified("the agent asked for another clarification; that it completes could not be observed")
    ctx.fail(
        f"after the clarification the agent is {shown(after['state'])}, "
        + ", ".join(f"{key} {before.get(key)} -> {after.get(key)}" for key in progress)
    )


@registry.requirement(
    "SGR-CLAR-001",
    Level.MUST,
    "provide_clarification resumes a waiting agent: a stream under its X-Agent-ID, then completed",
    ref("/paths/~1agents~1{agent_id}~1provide_clarification/post"),
)
def clarification_endpoint(ctx: Context) -> None:
    agent_id, before = waiting_agent(ctx)
    rec = record(ctx, f"/agents/{agent_id}/provide_clarification", {"messages": [user(ANSWER)]})
    # the stream's labels and events are the SGR-STREAM requirements' subject; this one's is that
    # the same agent resumes and completes
    expect_stream(ctx, rec, owner=None)
    ctx.expect_equal(rec.agent_id, agent_id, "X-Agent-ID")
    expect_complete(ctx, rec)
    expect_resumed(ctx, agent_id, before)


@registry.requirement(
    "SGR-CLAR-002",
    Level.MUST,
    "A chat whose model is a waiting agent's id resumes that agent; no new agent is created",
    ref("/paths/~1v1~1chat~1completions/post"),
)
def clarification_by_chat(ctx: Context) -> None:
    agent_id, before = waiting_agent(ctx)
    messages = [user(ANSWER)]
    # agents listed before the chat are not new, whatever their task messages say (SGR-AGENT-002's)
    earlier = {
        a.get("agent_id")
        for a in ctx.conforms(ctx.client.get("/agents"), "listAgents", 200, judge=False).get("agents") or []
    }
    rec = record(ctx, CHAT, {"model": agent_id, "messages": messages, "stream": True})
    expect_stream(ctx, rec, owner=None)
    ctx.expect_equal(rec.agent_id, agent_id, "X-Agent-ID")
    expect_complete(ctx, rec)
    listed = ctx.conforms(ctx.client.get("/agents"), "listAgents", 200, judge=False)
    new = [
        a["agent_id"]
        for a in listed["agents"]
        if a["agent_id"] not in earlier and a["agent_id"] != agent_id and a["task_messages"] == messages
    ]
    ctx.expect(not new, f"the clarification created a new agent {new} instead of resuming {agent_id}")
    expect_resumed(ctx, agent_id, before)
