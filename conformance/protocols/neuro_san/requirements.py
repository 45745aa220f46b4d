"""NeuroSan agent service: what the schema cannot say (answers, framing, continuation, errors).

The suite has no option naming an agent, so it discovers one: the agents the upstream concierge
(``GET /api/v1/list``) names, then the well-known ``hello_world``; the first that answers 200 on
connectivity is used. When none does, agent-dependent requirements are reported not verified.

Streams are read frame by frame as they arrive, bounded by the client's limits: a target that
stops sending mid-stream fails the requirement being checked with a "stream stalled" message.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from specs.documents import load
from specs.schemas import SchemaSet

from ...check import edges, hostile
from ...check.concurrent import AT_ONCE, at_once
from ...check.context import CheckFailed, Context, NotVerified
from ...check.http import Client, Response, TargetError
from ...check.judgments import errors
from ...check.shown import body as shown_body
from ...check.shown import shown
from ...check.signature import Signature, has
from ...check.streams import Frame, FrameError, ndjson_frames
from ...verdicts.requirements import Authority, Level, Registry, operation_ref

registry = Registry("neuro-san")
DOC = "neuro-san/openapi.yaml"
EXTRAS = "neuro-san/upstream-extras.yaml"
FACTS = "UPSTREAM-FACTS: NeuroSan"
CONNECTIVITY = operation_ref(DOC, "/api/v1/{agent_name}/connectivity", "get")
FUNCTION = operation_ref(DOC, "/api/v1/{agent_name}/function", "get")
CHAT = operation_ref(DOC, "/api/v1/{agent_name}/streaming_chat", "post")

WELL_KNOWN_AGENT = "hello_world"
SIGNATURES = (
    Signature(
        "the concierge's agent list {agents}",
        "GET",
        "/api/v1/list",
        lambda status, body: status == 200 and has(body, agents=list),
    ),
    Signature(
        f"{WELL_KNOWN_AGENT}'s connectivity {{connectivity_info}}",
        "GET",
        f"/api/v1/{WELL_KNOWN_AGENT}/connectivity",
        lambda status, body: status == 200 and has(body, connectivity_info=list),
    ),
    Signature(
        "an unknown agent's error Status {code, message}",
        "GET",
        "/api/v1/{unknown}/function",
        lambda status, body: status >= 400 and has(body, code=int, message=str),
    ),
)
"""What only a NeuroSan server answers (the preflight's recognition): the document has no
parameterless operation, so its concierge list, the well-known agent, or the documented Status of
an agent it does not host."""
UNKNOWN_AGENT = "conformance_no_such_agent_7f3a9c"
MAX_LISTED_CANDIDATES = 5
STREAM_MEDIA_TYPES = ("application/json", "application/json-lines")
"""The document declares application/json; the upstream server labels the stream json-lines. Both
are the documented stream, here (NS-STREAM-003) and in the schema phase (NS-SCHEMA-003)."""
ANSWER = "AGENT_FRAMEWORK"


# --- the agent to test with ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _NoAgent:
    reason: str


def agent(ctx: Context) -> str:
    """The agent the checks talk to, discovered once per run; not verified when there is none."""
    found = ctx.memo("neuro-san:agent", lambda: _discover(ctx))
    if isinstance(found, _NoAgent):
        ctx.not_verified(found.reason)
    return found


def known_path_values(ctx: Context) -> dict[str, tuple[str, ...]]:
    """The discovered agent, for the property-based phase (its random names reach only 404s)."""
    try:
        return {"agent_name": (agent(ctx),)}
    except (NotVerified, CheckFailed, TargetError):
        return {}


def _discover(ctx: Context) -> str | _NoAgent:
    listed, how = _listed_agents(ctx)
    candidates = list(dict.fromkeys([*listed[:MAX_LISTED_CANDIDATES], WELL_KNOWN_AGENT]))
    answers = []
    for name in candidates:
        status = ctx.client.get(f"/api/v1/{name}/connectivity").status
        if status == 200:
            return name
        answers.append(f"{shown(name)} -> HTTP {status}")
    return _NoAgent(
        f"no agent to test with: GET /api/v1/list {how}, and no candidate answered 200 on "
        f"GET /api/v1/{{agent_name}}/connectivity ({'; '.join(answers)})"
    )


def _listed_agents(ctx: Context) -> tuple[list[str], str]:
    """Agent names from the upstream concierge list, and a phrase saying how that went."""
    try:
        response = ctx.client.get("/api/v1/list")
    except TargetError as exc:
        return [], f"failed ({exc})"
    if response.status != 200:
        return [], f"answered HTTP {response.status}"
    try:
        agents = json.loads(response.body).get("agents")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return [], "answered something other than a JSON object"
    if not isinstance(agents, list):
        return [], "answered no `agents` list"
    names = [a["agent_name"] for a in agents if isinstance(a, dict) and isinstance(a.get("agent_name"), str)]
    return [n for n in names if n], f"named {len(names)} agent(s)"


# --- streaming chat ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Transcript:
    content_type: str
    messages: list[dict[str, Any]]
    """The ``response`` ChatMessage of each streamed ChatResponse, in arrival order."""

    @property
    def types(self) -> list[Any]:
        return [m.get("type") for m in self.messages]


def chat_request(text: str, chat_filter: str | None = None, context: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"user_message": {"type": "HUMAN", "text": text}}
    if chat_filter is not None:
        body["chat_filter"] = {"chat_filter_type": chat_filter}
    if context is not None:
        body["chat_context"] = context
    return body


STATUS_OWNER = "NS-STREAM-002"
"""A valid chat answered with a stream at all, with or without a filter: NS-STREAM-002's subject."""
FRAMING_OWNER = "NS-STREAM-001"
"""Whole JSON objects, one ChatResponse each, to the end of the stream: NS-STREAM-001's subject."""


def chat(
    ctx: Context,
    name: str,
    text: str,
    chat_filter: str | None = None,
    context: Any = None,
    validate: bool = False,
    status_owner: str | None = STATUS_OWNER,
    framing_owner: str | None = FRAMING_OWNER,
) -> Transcript:
    """One streaming_chat exchange read to its end, frame by frame; ``validate`` checks each frame
    against ChatResponse as it arrives (the framing requirement), the others only need messages.
    A check that is not the owner of the answer's status or framing is blocked, not failed, by
    them (``None``: the calling check owns it)."""
    transcript = _chat(ctx, name, text, chat_filter, context, validate, status_owner, framing_owner, False)
    assert transcript is not None  # only a chat that may be refused answers None
    return transcript


def _chat(
    ctx: Context,
    name: str,
    text: str,
    chat_filter: str | None,
    context: Any,
    validate: bool,
    status_owner: str | None,
    framing_owner: str | None,
    may_refuse: bool,
) -> Transcript | None:
    body = chat_request(text, chat_filter, context)
    with ctx.setup(status_owner), ctx.client.stream("POST", f"/api/v1/{name}/streaming_chat", json=body) as stream:
        if may_refuse and 400 <= stream.status < 500:
            stream.read()
            return None
        if stream.status != 200:
            ctx.fail(
                f"streaming_chat answered HTTP {stream.status}, expected 200: "
                f"{shown_body(stream.read(), stream.content_type, 300)}"
            )
        messages = []
        with ctx.setup(framing_owner):
            for frame in ctx.frames(stream, "ndjson"):
                problem = frame_problem(frame, ctx.schemas) if validate else ""
                message = frame.value.get("response") if isinstance(frame.value, dict) else None
                if problem or not isinstance(message, dict):
                    where = f"streamed object {frame.index + 1}"
                    ctx.fail(problem or f"{where} carries no `response` ChatMessage: {frame.raw[:200]}")
                messages.append(message)
        return Transcript(stream.content_type, messages)


def frame_problem(frame: Frame, schemas: SchemaSet) -> str:
    """Why a streamed object is no ChatResponse carrying a response message (NS-STREAM-001), empty
    when it is one: one rule for the scenario's reading of a stream and the proxy's."""
    found = schemas.violations({"$ref": "#/components/schemas/ChatResponse"}, frame.value, limit=3)
    value = frame.value
    if not found and isinstance(value, dict) and isinstance(value.get("response"), dict):
        return ""
    why = "; ".join(map(str, found)) or shown(frame.raw, 160)
    return f"streamed object {frame.index + 1} is not a ChatResponse carrying a response message: {why}"


def final_answer(
    ctx: Context, transcript: Transcript, what: str, owner: str | None = STATUS_OWNER, need_text: bool = True
) -> dict[str, Any]:
    """The stream's last message, which must be the AGENT_FRAMEWORK answer with non-empty text
    (NS-STREAM-002's subject: any other check is blocked by it)."""
    with ctx.setup(owner):
        if not transcript.messages:
            ctx.fail(f"{what}: the stream closed without any message")
        last = transcript.messages[-1]
        if last.get("type") != ANSWER:
            ctx.fail(
                f"{what}: the last streamed message is {shown(last.get('type'))}, not {ANSWER} (types: "
                f"{shown(transcript.types)})"
            )
        text = last.get("text")
        if need_text:  # an echo of an empty question may fairly be empty
            ctx.expect(isinstance(text, str) and text.strip(), f"{what}: the final {ANSWER} message has no answer text")
    return last


def history_texts(context: Any) -> list[str]:
    """The text of every message in every chat history of a ChatContext."""
    texts: list[str] = []
    if not isinstance(context, dict):
        return texts
    for history in context.get("chat_histories") or ():
        for message in (history.get("messages") or ()) if isinstance(history, dict) else ():
            if isinstance(message, dict) and isinstance(message.get("text"), str):
                texts.append(message["text"])
    return texts


def brief(message: Any) -> dict[str, Any]:
    """What a history message is, for comparing histories: its type, text and origin."""
    return {k: message.get(k) for k in ("type", "text", "origin")} if isinstance(message, dict) else {"?": message}


def histories(context: Any) -> dict[str, list[dict[str, Any]]]:
    """A chat_context's histories by origin (as JSON), each its messages."""
    out: dict[str, list[dict[str, Any]]] = {}
    for history in (context.get("chat_histories") or []) if isinstance(context, dict) else []:
        if isinstance(history, dict) and isinstance(history.get("messages"), list):
            out.setdefault(json.dumps(history.get("origin"), sort_keys=True), history["messages"])
    return out


def asked(messages: list[Any], text: str, start: int = 0) -> bool:
    return any(isinstance(m, dict) and m.get("type") == "HUMAN" and m.get("text") == text for m in messages[start:])


STATUS_BODY: dict[str, Any] = {"members": {"code": "integer", "message": "string"}}
"""A Status as every error here must carry, an integer code and a string message: the facts of the
judgment ``errors.shape``, which the checks and the proxy's judge share."""


def is_status(body: Any) -> bool:
    """A Status (``STATUS_BODY``)."""
    return errors.shaped(body, STATUS_BODY["members"])


def expect_status_body(ctx: Context, response: Response, operation_id: str, what: str) -> None:
    """A JSON Status: an integer code with a string message (its Content-Type is NS-SCHEMA-003's)."""
    ctx.conforms(response, operation_id, judge=False)
    ctx.judge(errors.SHAPE, response, f"{what}: HTTP {response.status} Status:", **STATUS_BODY)


# --- connectivity and function -------------------------------------------------------------------------


@registry.requirement(
    "NS-CONN-001",
    Level.MUST,
    "GET /api/v1/{agent_name}/connectivity answers 200 with a ConnectivityResponse whose entries name their origin",
    CONNECTIVITY,
    from_traffic=True,
)
def connectivity(ctx: Context) -> None:
    # The schema requires nothing; an entry without the node it describes ("origin") describes nothing.
    name = agent(ctx)
    body = ctx.conforms(ctx.client.get(f"/api/v1/{name}/connectivity"), "AgentService_Connectivity", 200)
    ctx.expect(isinstance(body, dict), f"connectivity answered {shown(body)}, not an object")
    entries = body.get("connectivity_info") or ()
    for n in nameless(body):
        with ctx.part():
            ctx.fail(f"connectivity_info[{n}] names no origin node: {shown(entries[n])}")


def nameless(body: dict[str, Any]) -> list[int]:
    """The connectivity entries that name no origin node (NS-CONN-001): one rule for the scenario
    and the proxy (a list that is none is the document's schema's finding)."""
    entries = body.get("connectivity_info")
    if not isinstance(entries, list):
        return []
    return [
        n
        for n, e in enumerate(entries)
        if not (isinstance(e, dict) and isinstance(e.get("origin"), str) and e["origin"])
    ]


@registry.requirement(
    "NS-FUNC-001",
    Level.MUST,
    "GET /api/v1/{agent_name}/function answers 200 with a FunctionResponse carrying a Function object",
    FUNCTION,
    from_traffic=True,
)
def function(ctx: Context) -> None:
    name = agent(ctx)
    body = ctx.conforms(ctx.client.get(f"/api/v1/{name}/function"), "AgentService_Function", 200)
    why = functionless(body)
    ctx.expect(why is None, why or "")


def functionless(body: Any) -> str | None:
    """How a FunctionResponse that holds its schema still fails NS-FUNC-001 (the document leaves
    ``function`` optional; the requirement asks for the object), or None: the run and the proxy's
    judge decide by it."""
    if isinstance(body, dict) and isinstance(body.get("function"), dict):
        return None
    return f"the FunctionResponse carries no `function` object: {shown(body)}"


@registry.requirement(
    "NS-HTTP-001",
    Level.SHOULD,
    "GET connectivity and function with a `{}` JSON body, as the official client sends them, answer as documented",
    f"{FACTS}: the official Python client calls connectivity and function as GET with a `{{}}` JSON body",
    authority=Authority.PRACTICE,
)
def get_with_empty_body(ctx: Context) -> None:
    name = agent(ctx)
    headers = {"Content-Type": "application/json"}
    for route, operation_id in (("connectivity", "AgentService_Connectivity"), ("function", "AgentService_Function")):
        with ctx.part(f"GET {route} with a {{}} body"):
            ctx.conforms(ctx.client.get(f"/api/v1/{name}/{route}", content=b"{}", headers=headers), operation_id, 200)


# --- errors ------------------------------------------------------------------------------------------------

UNKNOWN_AGENT_CALLS = (
    ("GET", "connectivity", "AgentService_Connectivity"),
    ("GET", "function", "AgentService_Function"),
    ("POST", "streaming_chat", "AgentService_StreamingChat"),
)


def _ask_unknown_agent(ctx: Context, method: str, route: str) -> Response:
    body = chat_request("hello") if method == "POST" else None
    return ctx.client.request(method, f"/api/v1/{UNKNOWN_AGENT}/{route}", json=body)


@registry.requirement(
    "NS-ERR-001",
    Level.MUST,
    "An agent the server does not host is answered with an error status (>= 400) on connectivity, function and "
    "streaming_chat",
    f"{DOC}#/tags/0/description",
)
def unknown_agent_is_an_error(ctx: Context) -> None:
    for method, route, _ in UNKNOWN_AGENT_CALLS:
        with ctx.part():
            response = _ask_unknown_agent(ctx, method, route)
            ctx.expect(
                response.status >= 400,
                f"{method} /api/v1/{UNKNOWN_AGENT}/{route} answered HTTP {response.status}; an unknown agent must be "
                f"an error: {response.shown(200)}",
            )


@registry.requirement(
    "NS-ERR-002",
    Level.MUST,
    "Error answers for an unknown agent carry a Status body (integer code, string message) on all three routes",
    f"{DOC}#/components/schemas/Status",
    from_traffic=True,
)
def unknown_agent_status_body(ctx: Context) -> None:
    checked = 0
    for method, route, operation_id in UNKNOWN_AGENT_CALLS:
        response = _ask_unknown_agent(ctx, method, route)
        if response.status < 400:
            continue  # NS-ERR-001 reports it; there is no error body to judge here
        checked += 1
        with ctx.part():
            expect_status_body(ctx, response, operation_id, f"{method} {route} for an unknown agent")
    if not checked:
        ctx.not_verified("no route answered an error for an unknown agent (see NS-ERR-001)")


INVALID_CHAT_BODIES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("malformed JSON", {"content": b'{"user_message": {"text": '}),
    ("a JSON array instead of a ChatRequest", {"json": ["not", "a", "ChatRequest"]}),
    ("user_message.text a number", {"json": {"user_message": {"type": "HUMAN", "text": 42}}}),
    ("an unknown chat_filter_type", {"json": chat_request("hi") | {"chat_filter": {"chat_filter_type": "EVERYTHING"}}}),
    ("sly_data a string", {"json": chat_request("hi") | {"sly_data": "not an object"}}),
)


@registry.requirement(
    "NS-ERR-003",
    Level.SHOULD,
    "A streaming_chat body that is not a valid ChatRequest (null, an array, a string or a number included) is "
    "rejected with a 4xx Status before any stream opens",
    f"{CHAT}/requestBody",
)
def invalid_chat_request(ctx: Context) -> None:
    # SHOULD: the document gives the body's schema but says nothing about rejecting others.
    name = agent(ctx)
    # a chat keeps nothing a client can read back: the refusal is the whole fact
    hostile.refuses_non_objects(
        ctx, [hostile.Write("AgentService_StreamingChat", "POST", f"/api/v1/{name}/streaming_chat", streamed=True)]
    )
    headers = {"Content-Type": "application/json"}
    for what, payload in INVALID_CHAT_BODIES:
        with ctx.part():
            response = ctx.client.post(f"/api/v1/{name}/streaming_chat", headers=headers, **payload)
            ctx.expect(
                400 <= response.status < 500,
                f"{what}: expected a 4xx rejection, got HTTP {response.status}: {response.shown(200)}",
            )
            expect_status_body(ctx, response, "AgentService_StreamingChat", what)


# --- streaming ---------------------------------------------------------------------------------------------


@registry.requirement(
    "NS-STREAM-001",
    Level.MUST,
    "streaming_chat streams whole JSON objects one line each (several per line tolerated), each a ChatResponse "
    "carrying a response message",
    f"{CHAT}/description",
    from_traffic=True,
)
def stream_framing(ctx: Context) -> None:
    # MAXIMAL, so that every kind of message the agent produces is framed and validated.
    transcript = chat(ctx, agent(ctx), "Hello! Please answer briefly.", "MAXIMAL", validate=True, framing_owner=None)
    ctx.expect(transcript.messages, "the stream closed without any ChatResponse")


@registry.requirement(
    "NS-STREAM-002",
    Level.MUST,
    "The stream ends with the answer: an AGENT_FRAMEWORK message with non-empty text, with or without MAXIMAL",
    f"{CHAT}/description",
    from_traffic=True,
)
def stream_ends_with_answer(ctx: Context) -> None:
    name = agent(ctx)
    for chat_filter, what in ((None, "without chat_filter"), ("MAXIMAL", "with MAXIMAL")):
        with ctx.part():
            transcript = chat(ctx, name, "Hello! Please answer briefly.", chat_filter, status_owner=None)
            final_answer(ctx, transcript, what, owner=None)


@registry.requirement(
    "NS-STREAM-003",
    Level.MUST,
    "The stream is labelled application/json, the document's media type for it (application/json-lines, the "
    "upstream server's label for the same stream, is accepted as well)",
    f"{CHAT}/responses/200/content",
    from_traffic=True,
)
def stream_content_type(ctx: Context) -> None:
    body = chat_request("Hello! Please answer briefly.")
    with ctx.client.stream("POST", f"/api/v1/{agent(ctx)}/streaming_chat", json=body) as stream:
        with ctx.setup(STATUS_OWNER):
            ctx.expect_status(stream, 200)
        ctx.expect(
            stream.content_type in STREAM_MEDIA_TYPES,
            f"the stream's Content-Type is {shown(stream.content_type) if stream.content_type else '(none)'}, not "
            f"one of {shown(list(STREAM_MEDIA_TYPES))}",
        )


# --- chat_context --------------------------------------------------------------------------------------------


@registry.requirement(
    "NS-CTX-001",
    Level.MUST,
    "The final AGENT_FRAMEWORK message carries a chat_context: a ChatContext with at least one chat history",
    f"{CHAT}/description",
    from_traffic=True,
)
def final_carries_context(ctx: Context) -> None:
    last = final_answer(ctx, chat(ctx, agent(ctx), "Hello! Please answer briefly."), "without chat_filter")
    context = last.get("chat_context")
    if not isinstance(context, dict):
        ctx.fail(f"the final {ANSWER} message has no chat_context: {json.dumps(last)[:300]}")
    ctx.validate_component("ChatContext", context, "chat_context")
    ctx.expect(context.get("chat_histories"), f"the chat_context holds no chat history: {shown(context)}")


@dataclass(frozen=True)
class Answered:
    """A chat asked among others: its status and its stream's last message, or what ended it early."""

    status: int
    last: dict[str, Any] | None
    problem: str = ""


def ask(path: str, body: dict[str, Any], client: Client) -> Answered:
    """One chat of several asked at once, read to its end (its form is the stream requirements' subject)."""
    status = 0
    try:
        with client.stream("POST", path, json=body) as stream:
            status = stream.status
            if stream.status != 200:
                return Answered(stream.status, None, shown_body(stream.read(), stream.content_type, 300))
            last = None
            for frame in ndjson_frames(stream.chunks(), client.limits.max_frames):
                message = frame.value.get("response")
                last = message if isinstance(message, dict) else last
            return Answered(200, last, "" if last else "the stream carried no response message")
    except (TargetError, FrameError) as exc:
        return Answered(status, None, str(exc))  # a 200 whose stream broke off or stalled: the stream's owner's


@registry.requirement(
    "NS-CTX-003",
    Level.MUST,
    f"Chats asked at the same moment ({AT_ONCE} streaming_chat on separate connections, each a question of its "
    "own) are each answered in their own conversation: each final chat_context holds its own question and no "
    "other's",
    f"{CHAT}/description",
)
def concurrent_conversations(ctx: Context) -> None:
    # the server is stateless: a conversation is the chat_context, and one chat's may not leak into another's
    name = agent(ctx)
    nonce = f"{ctx.draws('concurrent chats').getrandbits(32):08x}"
    questions = [f"Conformance chat {n} of several at once ({nonce}). Please answer briefly." for n in range(AT_ONCE)]
    path = f"/api/v1/{name}/streaming_chat"
    answered = at_once(ctx, [partial(ask, path, chat_request(q)) for q in questions])
    with ctx.setup(STATUS_OWNER):  # each chat answered 200 with a stream: NS-STREAM-002's
        for chat in answered:
            ctx.expect(chat.status == 200, f"a chat answered {chat.status or 'nothing'}: {chat.problem}")
    with ctx.setup("NS-STREAM-001"):  # each stream whole, ending in its answer: NS-STREAM-001's (a stall is its)
        for chat in answered:
            ctx.expect(chat.last, f"a chat's stream did not end in its answer: {chat.problem}")
    for question, chat in zip(questions, answered, strict=True):
        with ctx.part(f"chat {shown(question[:24])}"):
            assert chat.last is not None
            texts = history_texts(chat.last.get("chat_context"))
            with ctx.setup("NS-CTX-001"):
                ctx.expect(texts, "the answer carries no chat_context history")
            others = [q for q in questions if q != question and any(q in t for t in texts)]
            ctx.expect(
                any(question in t for t in texts) and not others,
                f"its chat_context holds {shown(texts[:4])}: "
                + (f"other chats' questions {shown(others)}" if others else "not its own question"),
            )


CONVERSATION = (
    "Conformance turn one: my favourite colour is teal. Please answer briefly.",
    "Conformance turn two: what is my favourite colour? Please answer briefly.",
    "Conformance turn three: thank you, goodbye. Please answer briefly.",
)


@registry.requirement(
    "NS-CTX-002",
    Level.MUST,
    "Sending the chat_context back continues the conversation: over three turns the returned history grows and "
    "holds the earlier exchanges; and over a conversation whose questions are the texts of the edge corpus "
    "(scripts, combining marks, astral characters, escapes, control characters, spaces at the ends; the empty, "
    "NUL and 64 Ki character ones unless refused with a 4xx) each answer's chat_context holds the question's "
    "text exactly, and every text of the context sent back",
    f"{CHAT}/description",
)
def context_continues(ctx: Context) -> None:
    name = agent(ctx)
    context: Any = None
    earlier: list[str] = []
    size = 0
    for turn, text in enumerate(CONVERSATION, 1):
        last = final_answer(ctx, chat(ctx, name, text, context=context), f"turn {turn}")
        context = last.get("chat_context")
        if not isinstance(context, dict):
            with ctx.setup("NS-CTX-001"):
                ctx.fail(f"turn {turn}: the answer carries no chat_context to send back")
        texts = history_texts(context)
        if turn > 1:
            ctx.expect(
                len(texts) > size,
                f"turn {turn}: the returned history has {len(texts)} messages, not more than the {size} sent back: "
                "the chat_context was not continued",
            )
            missing = [t for t in earlier if not any(t in held for held in texts)]
            ctx.expect(not missing, f"turn {turn}: the returned history lost the earlier exchange(s) {shown(missing)}")
        earlier += [text, last["text"]]
        size = len(texts)
    edge_conversation(ctx, name)


def edge_conversation(ctx: Context, name: str) -> None:
    """One conversation whose questions are the corpus's texts, the long one last (every later
    turn carries it back): each answer's context must hold its question's text exactly, and every
    text of the context sent back. Their order and roles are NS-MODEL-003's subject."""
    context: Any = None
    sent_back: list[str] = []
    for edge in sorted(edges.TEXTS, key=lambda e: len(e.value)):
        with ctx.part(edge.name):
            transcript = _chat(ctx, name, edge.value, None, context, False, STATUS_OWNER, FRAMING_OWNER, True)
            if transcript is None:
                ctx.expect(edge.refusable, "streaming_chat refused it with a 4xx, though the document accepts it")
                continue
            returned = final_answer(ctx, transcript, "the answer", need_text=bool(edge.value.strip())).get(
                "chat_context"
            )
            if not histories(returned):
                with ctx.setup("NS-CTX-001"):
                    ctx.fail("the answer carries no chat_context with a history")
            texts = history_texts(returned)
            lost = Counter(sent_back) - Counter(texts)
            ctx.expect(
                not lost,
                f"{sum(lost.values())} text(s) of the history sent back did not come back: "
                + "; ".join(_likeliest(t, texts) for t in list(lost)[:2]),
            )
            ctx.expect(edge.value in texts, "the history does not hold the question: " + _likeliest(edge.value, texts))
            context, sent_back = returned, texts


def _likeliest(sent: str, texts: list[str]) -> str:
    """How the text of the history most like ``sent`` differs from it."""
    if not texts:
        return "the history holds no text"

    def kept(text: str) -> int:
        return next((i for i, (x, y) in enumerate(zip(text, sent, strict=False)) if x != y), min(len(text), len(sent)))

    near = max(texts, key=lambda t: (t.strip() == sent.strip(), kept(t)))
    return f"its likeliest text {edges.difference(near, sent)}"


# --- chat_filter ---------------------------------------------------------------------------------------------


@registry.requirement(
    "NS-FILTER-001",
    Level.SHOULD,
    "With chat_filter MINIMAL the stream carries only the final AGENT_FRAMEWORK answer",
    f"{FACTS}: MINIMAL sends only the final one (the document's ChatFilter names MINIMAL, not what it keeps)",
    authority=Authority.PRACTICE,
    from_traffic=True,
)
def minimal_filter(ctx: Context) -> None:
    transcript = chat(ctx, agent(ctx), "Hello! Please answer briefly.", "MINIMAL")
    final_answer(ctx, transcript, "with MINIMAL")
    extra = intermediate(transcript.messages)
    ctx.expect(not extra, f"with MINIMAL the stream also carried intermediate messages {extra}")


def intermediate(messages: list[dict[str, Any]]) -> list[Any]:
    """The types of the messages a stream carried before its final answer (what the answer itself
    holds, its chat_context included, is NS-CTX-001's subject, not the filter's)."""
    return [m.get("type") for m in messages[:-1]]


@registry.requirement(
    "NS-FILTER-002",
    Level.SHOULD,
    "With chat_filter MAXIMAL the stream carries intermediate messages before the final answer",
    f"{FACTS}: With chat_filter MAXIMAL the stream also carries intermediate messages (the document's ChatFilter "
    "names MAXIMAL, not what it adds)",
    authority=Authority.PRACTICE,
    from_traffic=True,
)
def maximal_filter(ctx: Context) -> None:
    # Practice: the document names MAXIMAL but defines no messages; upstream streams the agents' work.
    transcript = chat(ctx, agent(ctx), "Hello! Please answer briefly.", "MAXIMAL")
    final_answer(ctx, transcript, "with MAXIMAL")
    ctx.expect(
        len(transcript.messages) > 1,
        f"with MAXIMAL the stream carried only the answer ({shown(transcript.types)}), no intermediate message",
    )


# --- the concierge list (upstream profile) ---------------------------------------------------------------------


@cache
def _upstream_schemas() -> SchemaSet:
    return SchemaSet(load("neuro-san", "upstream").raw)


@registry.requirement(
    "NS-LIST-001",
    Level.MAY,
    "GET /api/v1/list (upstream profile) answers 200 with {agents: [{agent_name, ...}]}",
    f"{EXTRAS}#/paths/~1api~1v1~1list/get",
)
def concierge_list(ctx: Context) -> None:
    response = ctx.client.get("/api/v1/list")
    ctx.expect_status(response, 200)
    ctx.expect(
        response.content_type == "application/json",
        f"Content-Type {shown(response.content_type) if response.content_type else '(none)'}, expected "
        "'application/json'",
    )
    body = response.json()
    problems = _upstream_schemas().violations({"$ref": "#/components/schemas/ConciergeResponse"}, body)
    ctx.expect(not problems, "the list is not a ConciergeResponse: " + "; ".join(map(str, problems)))
    agents = body.get("agents") or []
    ctx.expect(agents, "the list names no agent")
    unnamed = [a for a in agents if not a.get("agent_name")]
    ctx.expect(not unnamed, f"listed agents without an agent_name: {unnamed[:3]}")
