"""NeuroSan agent service: built-in agent networks, connectivity, function and streaming chat.

The server is stateless, as upstream: a conversation lives in the ``chat_context`` the client
sends back, so there is no store to bound (the request size limit bounds a context). Each
network answers deterministically from the user's text and the number of earlier turns.

Settled where the document is silent (recorded here because the mock is its reference):
- streaming_chat is labelled ``application/json`` as the document declares (upstream sends
  ``application/json-lines``); the body is one ChatResponse object per line either way.
- No ``chat_filter`` (or UNKNOWN) means MINIMAL, as upstream's MessageFilterFactory does.
- A ``user_message`` without non-blank ``text``, or whose ``type`` is neither HUMAN nor UNKNOWN,
  is a 400 Status with code 3 (INVALID_ARGUMENT).
- Histories in a received ``chat_context`` that belong to another network's front man are ignored.
- Upstream echoes the request in every MAXIMAL frame; the mock sends only ``response``.

FAULTS below break it one way each, for the conformance suite's requirements NS-*.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientConnectionResetError, web

from ...api import Call, ProtocolApi, Reply
from ...errors import ApiError
from ...faults import Fault, fault_maker
from ...streaming import NdjsonStream, stall

# The media type of streaming_chat frames; see the module docstring.
STREAM_CONTENT_TYPE = "application/json"
CONVERSATION_TYPES = ("HUMAN", "AI")


@dataclass(frozen=True, slots=True)
class Turn:
    """What one network does for one user message."""

    tool_args: dict[str, Any]
    tool_result: str
    answer: str
    sly_data: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Network:
    name: str
    description: str
    tags: tuple[str, ...]
    front: str
    instructions: str
    tool: str
    tool_display_as: str
    parameters: dict[str, Any]
    sample_queries: tuple[str, ...]
    respond: Callable[[str, int], Turn]

    def connectivity(self) -> dict[str, Any]:
        return {
            "connectivity_info": [
                {"origin": self.front, "tools": [self.tool], "display_as": "llm_agent"},
                {"origin": self.tool, "tools": [], "display_as": self.tool_display_as},
            ],
            "metadata": {
                "description": self.description,
                "tags": list(self.tags),
                "sample_queries": list(self.sample_queries),
            },
        }

    def function(self) -> dict[str, Any]:
        return {"function": {"description": self.description, "parameters": self.parameters}}

    def info(self) -> dict[str, Any]:
        return {"agent_name": self.name, "description": self.description, "tags": list(self.tags)}


def _hello(text: str, turn: int) -> Turn:
    return Turn(
        tool_args={"inquiry": text},
        tool_result=f"Synonyms considered for: {text}",
        answer=f"Hello, world! You said: {text}. (turn {turn})",
    )


# Operands are bounded (15 digits) so that no input can make the arithmetic or its formatting costly.
_ARITHMETIC = re.compile(r"(-?\d{1,15}(?:\.\d{1,15})?)\s*([-+*/x])\s*(-?\d{1,15}(?:\.\d{1,15})?)")


def _number(raw: str) -> int | float:
    return float(raw) if "." in raw else int(raw)


def _calculate(found: re.Match[str]) -> str:
    a, op, b = _number(found.group(1)), found.group(2), _number(found.group(3))
    if op == "/":
        return "undefined (division by zero)" if b == 0 else format(a / b, ".12g")
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return format(value, ".12g") if isinstance(value, float) else str(value)


def _math(text: str, turn: int) -> Turn:
    found = _ARITHMETIC.search(text)
    if found is None:
        answer = f"I could not find an arithmetic expression like '2 + 3' in: {text}. (turn {turn})"
        return Turn({"expression": text}, "no expression found", answer)
    result = _calculate(found)
    return Turn({"expression": found.group(0)}, result, f"{found.group(0)} = {result}. (turn {turn})")


QUESTION_COST = 3.0


def _music(text: str, turn: int) -> Turn:
    # The accountant charges per question; the running cost follows from the turn number alone.
    cost = QUESTION_COST * turn
    answer = (
        f"On '{text}': put the record on and listen twice. That question cost ${QUESTION_COST:.2f}; "
        f"running cost ${cost:.2f}. (turn {turn})"
    )
    return Turn({"running_cost": cost - QUESTION_COST}, f'{{"running_cost": {cost}}}', answer, {"running_cost": cost})


def _inquiry(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"inquiry": {"type": "string", "description": description}},
        "required": ["inquiry"],
    }


NETWORKS: dict[str, Network] = {
    n.name: n
    for n in (
        Network(
            "hello_world",
            "I can help you make a terse announcement.",
            ("example", "basic"),
            "announcer",
            "You are an announcer: greet the world and repeat what you were told.",
            "synonymizer",
            "llm_agent",
            _inquiry("The text to announce."),
            ("Announce that the mock is up",),
            _hello,
        ),
        Network(
            "math_guy",
            "I can do simple arithmetic on two numbers.",
            ("example", "coded_tool"),
            "MathGuy",
            "You answer arithmetic questions by calling the calculator.",
            "calculator",
            "coded_tool",
            _inquiry("An arithmetic question such as 'what is 6 * 7'."),
            ("What is 6 * 7?",),
            _math,
        ),
        Network(
            "music_nerd_pro",
            "I answer questions about music, for a fee per question.",
            ("example", "sly_data"),
            "MusicNerdPro",
            "You are a music nerd; every answer is billed through the Accountant.",
            "Accountant",
            "coded_tool",
            _inquiry("A question about music."),
            ("Which album should I play first?",),
            _music,
        ),
    )
}


def _network(call: Call) -> Network:
    name = call.path["agent_name"]
    if call.fault("ns-unknown-agent-crashes"):
        return NETWORKS[name]  # the fault: an unknown name escapes as KeyError, rendered as 500
    network = NETWORKS.get(name)
    if network is None:
        if call.fault("ns-unknown-agent-ok"):
            return NETWORKS["hello_world"]  # a server that routes every name to a default agent
        raise ApiError(404, f"Agent {name!r} not found on this server")
    return network


def _user_text(body: dict[str, Any]) -> str:
    message = body.get("user_message")
    if not isinstance(message, dict):
        raise ApiError(400, "Invalid request: user_message is required")
    if message.get("type", "HUMAN") not in ("HUMAN", "UNKNOWN"):
        raise ApiError(400, f"Invalid request: user_message.type must be HUMAN, not {message['type']}")
    text = message.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "Invalid request: user_message.text must be a non-empty string")
    return text


def _history(body: dict[str, Any], front: str) -> list[dict[str, Any]]:
    """The HUMAN and AI messages of this network's front man in the received context."""
    context = body.get("chat_context") or {}
    messages: list[dict[str, Any]] = []
    for history in context.get("chat_histories") or []:
        origin = history.get("origin") or []
        if not origin or origin[0].get("tool") != front:
            continue
        for message in history.get("messages") or []:
            kind = message.get("type")
            if kind in CONVERSATION_TYPES:
                messages.append(_conversation(kind, str(message.get("text", "")), front))
    return messages


def _origin(*tools: str) -> list[dict[str, Any]]:
    return [{"tool": tool, "instantiation_index": 0} for tool in tools]


def _conversation(kind: str, text: str, front: str) -> dict[str, Any]:
    message: dict[str, Any] = {"type": kind, "text": text}
    if kind == "AI":
        message["origin"] = _origin(front)
    return message


def _frames(network: Network, body: dict[str, Any], call: Call) -> list[dict[str, Any]]:
    """Every ChatResponse of one exchange, in order, already filtered."""
    text = _user_text(body)
    history = [] if call.fault("ns-context-ignored") else _history(body, network.front)
    turn = 1 + sum(1 for m in history if m["type"] == "HUMAN")
    result = network.respond(text, turn)
    history.append(_conversation("HUMAN", text, network.front))
    history.append(_conversation("AI", result.answer, network.front))
    final: dict[str, Any] = {
        "type": "AGENT_FRAMEWORK",
        "text": result.answer,
        "origin": _origin(network.front),
        "chat_context": {"chat_histories": [{"origin": _origin(network.front), "messages": history}]},
    }
    if result.sly_data is not None:
        final["sly_data"] = result.sly_data
    if call.fault("ns-stream-no-context"):
        del final["chat_context"]
    chat_filter = (body.get("chat_filter") or {}).get("chat_filter_type", "MINIMAL")
    maximal = chat_filter == "MAXIMAL"
    if call.fault("ns-minimal-verbose"):
        maximal = True
    if call.fault("ns-maximal-ignored"):
        maximal = False
    intermediate = _intermediate(network, result)
    if call.fault("ns-message-type-enum"):
        intermediate[-1]["type"] = "ASSISTANT"  # an OpenAI role name where the enum says AI
    messages = [*intermediate, final] if maximal else [final]
    if call.fault("ns-stream-no-answer"):
        messages = intermediate if maximal else intermediate[-1:]  # ends on the AI message
    return [{"response": m} for m in messages]


def _intermediate(network: Network, result: Turn) -> list[dict[str, Any]]:
    args = ", ".join(f"{k}={v!r}" for k, v in result.tool_args.items())
    return [
        {"type": "SYSTEM", "text": network.instructions, "origin": _origin(network.front)},
        {
            "type": "AGENT",
            "text": f"Received arguments {args}",
            "origin": _origin(network.front, network.tool),
        },
        {
            "type": "AGENT_TOOL_RESULT",
            "text": result.tool_result,
            "origin": _origin(network.front),
            "tool_result_origin": _origin(network.front, network.tool),
        },
        {"type": "AI", "text": result.answer, "origin": _origin(network.front)},
    ]


async def _stall_until_the_client_leaves(request: web.Request, limit_s: float = 3600.0) -> None:
    """One frame, then silence with the connection held open; the handler ends when the client
    gives up, so that no stalled handler outlives its connection (or the server)."""
    step = 0.1
    for _ in range(int(limit_s / step)):
        if request.transport is None or request.transport.is_closing():
            return
        await stall(step)


def mount(api: ProtocolApi) -> None:
    def refuse_get_body(call: Call) -> None:
        if call.fault("ns-get-body-rejected") and call.request.body_exists:
            raise ApiError(400, "Invalid request: a GET request must not carry a body")

    @api.operation("AgentService_Connectivity")
    async def connectivity(call: Call) -> Reply:
        # The official client sends GET with a `{}` JSON body; the document has no body, so it is ignored.
        refuse_get_body(call)
        return Reply(_network(call).connectivity())

    @api.operation("AgentService_Function")
    async def function(call: Call) -> Reply:
        refuse_get_body(call)
        return Reply(_network(call).function())

    @api.operation("AgentService_StreamingChat")
    async def streaming_chat(call: Call) -> web.StreamResponse:
        # Headers user_id and request_id are client metadata upstream only logs: accepted, ignored.
        if call.fault("ns-chat-filter-required") and isinstance(call.body, dict) and "chat_filter" not in call.body:
            # the fault: a stricter request check, run before routing, with no default filter
            raise ApiError(400, "Invalid request: chat_filter is required")
        network = _network(call)
        if not isinstance(call.body, dict):  # only reachable when a fault skips validation
            raise ApiError(400, "Invalid request: the body must be a ChatRequest object")
        frames = _frames(network, call.body, call)  # every error is raised before the stream opens
        media = "text/plain; charset=utf-8" if call.fault("ns-stream-content-type") else STREAM_CONTENT_TYPE
        with api.gate:
            stream = NdjsonStream(
                call.request, media, delay=api.config.stream_delay, pretty=call.fault("ns-stream-multiline")
            )
            response = await stream.open()
            try:
                for frame in frames:
                    await stream.send(frame)
                    if call.fault("ns-stream-stall"):
                        await _stall_until_the_client_leaves(call.request)
                        return response
                return await stream.close()
            except (ConnectionResetError, ClientConnectionResetError):
                return response

    async def concierge_list(request: web.Request) -> web.Response:
        if "ns-list-names-only" in api.faults:
            return web.json_response({"agents": list(NETWORKS)})
        return web.json_response({"agents": [n.info() for n in NETWORKS.values()]})

    # GET /api/v1/list (ConciergeService_List) is in the upstream overlay, not in the published
    # document that `api.spec` holds, so `api.operation` cannot bind it: it is a plain route,
    # served as upstream serves it (the official client's concierge list calls it).
    api.routes.append(web.get("/api/v1/list", concierge_list))


# --- faults: each breaks the named NS-* requirements of conformance/protocols/neuro_san/requirements.py ---------------


def _drop_origins(reply: Reply) -> None:
    if reply.status == 200:
        for entry in reply.body.get("connectivity_info", []):
            entry.pop("origin", None)


def _parameters_as_string(reply: Reply) -> None:
    if reply.status == 200:
        function = reply.body["function"]
        function["parameters"] = json.dumps(function["parameters"])  # a Struct serialized twice


def _code_as_name(reply: Reply) -> None:
    if reply.status == 404:
        reply.body = {"code": "NOT_FOUND", "message": reply.body["message"]}


def _error_text_plain(reply: Reply) -> None:
    if reply.status >= 400:
        reply.content_type = "text/plain"


def _error_in_stream(reply: Reply) -> None:
    if reply.status >= 400:
        # grpc-gateway's in-stream error frame: the HTTP status is 200, the error is in the body
        reply.status = 200
        reply.body = {"error": reply.body}


_fault = fault_maker("neuro-san")


FAULTS: tuple[Fault, ...] = (
    _fault(
        "ns-connectivity-no-origin",
        ("NS-CONN-001",),
        "connectivity entries lose their `origin`: the graph names no nodes",
        operation="AgentService_Connectivity",
        mutate=_drop_origins,
    ),
    _fault(
        "ns-function-parameters-string",
        ("NS-FUNC-001", "NS-HTTP-001"),
        "function.parameters is sent as a JSON-encoded string instead of an object",
        operation="AgentService_Function",
        mutate=_parameters_as_string,
    ),
    _fault(
        "ns-get-body-rejected",
        ("NS-HTTP-001",),
        "GET connectivity/function with a `{}` JSON body (the official client's habit) is answered 400",
    ),
    _fault(
        "ns-unknown-agent-ok",
        # the generated chats hello_world then refuses are no longer excused by a 404 for the name
        ("NS-ERR-001", "NS-SCHEMA-007"),
        "every unknown agent name is served by hello_world with 200 instead of an error",
    ),
    _fault(
        "ns-error-code-as-name",
        ("NS-ERR-002", "NS-SCHEMA-005"),
        'connectivity\'s 404 Status carries the code as its name ("NOT_FOUND") instead of an integer',
        operation="AgentService_Connectivity",
        mutate=_code_as_name,
    ),
    _fault(
        "ns-accepts-invalid-input",
        ("NS-ERR-003",),
        "streaming_chat bodies are not validated: unknown enum names and mistyped fields are streamed an answer",
        operation="AgentService_StreamingChat",
        skip_validation=True,
    ),
    _fault(
        "ns-stream-multiline",
        # the framing is NS-STREAM-001's subject; every other stream check is blocked by it
        ("NS-STREAM-001",),
        "streaming_chat pretty-prints each ChatResponse over several lines",
    ),
    _fault(
        "ns-message-type-enum",
        ("NS-STREAM-001",),
        'the intermediate AI message is typed "ASSISTANT", which is not a ChatMessage type',
    ),
    _fault(
        "ns-stream-no-answer",
        # the final answer is NS-STREAM-002's subject; the checks that read it are blocked by it
        ("NS-STREAM-002",),
        "the stream ends on the AI message: the final AGENT_FRAMEWORK answer is never sent",
    ),
    _fault(
        "ns-stream-content-type",
        ("NS-STREAM-003",),
        "streaming_chat is labelled text/plain",
    ),
    _fault(
        "ns-stream-stall",
        ("NS-STREAM-001",),
        "streaming_chat sends one frame, then holds the connection open sending nothing",
        hangs=True,
    ),
    _fault(
        "ns-stream-no-context",
        # NS-CTX-002 has no context to send back: blocked by NS-CTX-001
        ("NS-CTX-001", "NS-FILTER-001"),
        "the final AGENT_FRAMEWORK message carries no chat_context",
    ),
    _fault(
        "ns-context-ignored",
        ("NS-CTX-002",),
        "a chat_context sent back is ignored: every answer starts a new conversation",
    ),
    _fault(
        "ns-minimal-verbose",
        ("NS-FILTER-001",),
        "chat_filter MINIMAL is treated as MAXIMAL: intermediate messages are streamed too",
    ),
    _fault(
        "ns-maximal-ignored",
        ("NS-FILTER-002",),
        "chat_filter MAXIMAL is ignored: only the final answer is streamed",
    ),
    _fault(
        "ns-unknown-agent-crashes",
        ("NS-SCHEMA-001",),
        "an agent name the server does not host escapes the registry lookup as an exception: 500, not 404",
    ),
    _fault(
        "ns-error-text-plain",
        ("NS-SCHEMA-003",),
        "connectivity's error Status bodies are labelled text/plain instead of application/json",
        operation="AgentService_Connectivity",
        mutate=_error_text_plain,
    ),
    _fault(
        "ns-stream-errors-in-band",
        ("NS-ERR-001", "NS-ERR-003", "NS-SCHEMA-006"),
        "streaming_chat answers every error (invalid body, unknown agent) with HTTP 200 and an in-stream "
        '{"error": Status} frame, as a gRPC gateway does once a stream is open',
        operation="AgentService_StreamingChat",
        mutate=_error_in_stream,
    ),
    _fault(
        "ns-chat-filter-required",
        ("NS-STREAM-002", "NS-SCHEMA-007"),
        "streaming_chat refuses a request without chat_filter (400) instead of defaulting to MINIMAL; the check "
        "runs before the agent lookup",
    ),
    _fault(
        "ns-list-names-only",
        ("NS-LIST-001",),
        "GET /api/v1/list answers a list of bare names instead of AgentInfo objects",
    ),
)
