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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientConnectionResetError, web

from ..api import Call, ProtocolApi, Reply
from ..errors import ApiError
from ..faults import Fault
from ..streaming import NdjsonStream

FAULTS: tuple[Fault, ...] = ()

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
    return Turn({"running_cost": cost - QUESTION_COST}, f'{{"running_cost": {cost}}}', answer,
                {"running_cost": cost})


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
            "hello_world", "I can help you make a terse announcement.", ("example", "basic"),
            "announcer", "You are an announcer: greet the world and repeat what you were told.",
            "synonymizer", "llm_agent", _inquiry("The text to announce."),
            ("Announce that the mock is up",), _hello,
        ),
        Network(
            "math_guy", "I can do simple arithmetic on two numbers.", ("example", "coded_tool"),
            "MathGuy", "You answer arithmetic questions by calling the calculator.",
            "calculator", "coded_tool", _inquiry("An arithmetic question such as 'what is 6 * 7'."),
            ("What is 6 * 7?",), _math,
        ),
        Network(
            "music_nerd_pro", "I answer questions about music, for a fee per question.",
            ("example", "sly_data"),
            "MusicNerdPro", "You are a music nerd; every answer is billed through the Accountant.",
            "Accountant", "coded_tool", _inquiry("A question about music."),
            ("Which album should I play first?",), _music,
        ),
    )
}


def _network(call: Call) -> Network:
    name = call.path["agent_name"]
    network = NETWORKS.get(name)
    if network is None:
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


def _frames(network: Network, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ChatResponse of one exchange, in order, already filtered."""
    text = _user_text(body)
    history = _history(body, network.front)
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
    messages = [final]
    chat_filter = (body.get("chat_filter") or {}).get("chat_filter_type", "MINIMAL")
    if chat_filter == "MAXIMAL":
        messages[:0] = _intermediate(network, result)
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


def mount(api: ProtocolApi) -> None:
    @api.operation("AgentService_Connectivity")
    async def connectivity(call: Call) -> Reply:
        # The official client sends GET with a `{}` JSON body; the document has no body, so it is ignored.
        return Reply(_network(call).connectivity())

    @api.operation("AgentService_Function")
    async def function(call: Call) -> Reply:
        return Reply(_network(call).function())

    @api.operation("AgentService_StreamingChat")
    async def streaming_chat(call: Call) -> web.StreamResponse:
        # Headers user_id and request_id are client metadata upstream only logs: accepted, ignored.
        network = _network(call)
        if not isinstance(call.body, dict):  # only reachable when a fault skips validation
            raise ApiError(400, "Invalid request: the body must be a ChatRequest object")
        frames = _frames(network, call.body)  # every error is raised before the stream opens
        with api.gate:
            stream = NdjsonStream(call.request, STREAM_CONTENT_TYPE, delay=api.config.stream_delay)
            response = await stream.open()
            try:
                for frame in frames:
                    await stream.send(frame)
                return await stream.close()
            except (ConnectionResetError, ClientConnectionResetError):
                return response

    async def concierge_list(request: web.Request) -> web.Response:
        return web.json_response({"agents": [n.info() for n in NETWORKS.values()]})

    # GET /api/v1/list (ConciergeService_List) is in the upstream overlay, not in the published
    # document that `api.spec` holds, so `api.operation` cannot bind it: it is a plain route,
    # served as upstream serves it (the official client's concierge list calls it).
    api.routes.append(web.get("/api/v1/list", concierge_list))
