"""NeuroSan agent service: built-in agent networks, connectivity, function and streaming chat.

The server is stateless, as upstream: a conversation lives in the ``chat_context`` the client
sends back, so there is no store to bound (the request size limit bounds a context). Each
network answers deterministically from the user's text and the number of earlier turns.

Settled where the document is silent (recorded here because the mock is its reference):
- streaming_chat is labelled ``application/json`` as the document declares (upstream sends
  ``application/json-lines``); the body is one ChatResponse object per line either way.
- No ``chat_filter`` (or UNKNOWN) means MINIMAL, as upstream's MessageFilterFactory does.
- Every ChatRequest the schema allows is answered, as upstream answers it (the document makes
  ``user_message``, its ``text`` and its ``type`` optional): the user's turn is the message's
  text, whatever its type, and an absent message or text is an empty turn.
- Histories in a received ``chat_context`` that belong to another network's front man are ignored.
- Upstream echoes the request in every MAXIMAL frame; the mock sends only ``response``.

faults.py breaks it one way per fault, for the conformance suite's requirements NS-*.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from aiohttp import ClientConnectionResetError, web

from ...api import Call, Handlers, ProtocolApi, operation, route
from ...errors import ApiError
from ...faults import TextEdits
from ...reply import Reply
from ...store import RACE_SECONDS
from ...streaming import NdjsonStream, stall
from .faults import Switches
from .models import NETWORKS, Network, Turn
from .stubs import Data

# The media type of streaming_chat frames; see the module docstring.
STREAM_CONTENT_TYPE = "application/json"
CONVERSATION_TYPES = ("HUMAN", "AI")


def _network(call: Call, on: Switches, data: Data) -> Network:
    name = call.path["agent_name"]
    stubbed = data.networks.get(name) if data.networks else None
    if stubbed is not None:
        return stubbed
    if on.unknown_agent_crashes:
        return NETWORKS[name]  # the fault: an unknown name escapes as KeyError, rendered as 500
    network = NETWORKS.get(name)
    if network is None:
        if on.unknown_agent_ok:
            return NETWORKS["hello_world"]  # a server that routes every name to a default agent
        raise ApiError(404, f"Agent {name!r} not found on this server")
    return network


def _user_text(body: dict[str, Any]) -> str:
    # the schema (checked before) makes user_message and its text optional: their absence is an empty turn
    message = body.get("user_message") or {}
    return str(message.get("text") or "")


def _history(body: dict[str, Any], front: str, kept: tuple[str, ...] = CONVERSATION_TYPES) -> list[dict[str, Any]]:
    """The messages of this network's front man in the received context (of the ``kept`` types)."""
    context = body.get("chat_context") or {}
    messages: list[dict[str, Any]] = []
    for history in context.get("chat_histories") or [] if isinstance(context, dict) else []:
        origin = history.get("origin") or [] if isinstance(history, dict) else []
        if (
            not isinstance(origin, list)
            or not origin
            or not isinstance(origin[0], dict)
            or origin[0].get("tool") != front
        ):
            continue  # another network's history, or (under a fault that skips validation) none at all
        for message in history.get("messages") or [] if isinstance(history.get("messages"), list) else []:
            kind = message.get("type") if isinstance(message, dict) else None
            if kind in kept:
                messages.append(_conversation(kind, str(message.get("text", "")), front))
    return messages


@functools.lru_cache(maxsize=64)
def _origin(*tools: str) -> list[dict[str, Any]]:
    """An origin list, made once per tool chain and shared by every frame that names it: frames are
    serialized as built, and nothing edits an origin in place (a fault replaces one whole)."""
    return [{"tool": tool, "instantiation_index": 0} for tool in tools]


def _conversation(kind: str, text: str, front: str) -> dict[str, Any]:
    message: dict[str, Any] = {"type": kind, "text": text}
    if kind == "AI":
        message["origin"] = _origin(front)
    return message


def _stored(text: str, on: Switches) -> str:
    """The question as the edge faults store it in the history (the unfaulted mock keeps it verbatim)."""
    return TextEdits(
        nfc=on.history_text_nfc,
        trimmed=on.history_text_trimmed,
        column=on.history_text_column,
        json_escaped=on.history_text_json_escaped,
    ).apply(text)


def _frames(
    network: Network, body: dict[str, Any], on: Switches, latest: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Every ChatResponse of one exchange, in order, already filtered. ``latest``: the history of
    the most recent conversation per network (kept only under ns-new-conversation-joins-latest)."""
    text = _user_text(body)
    kept = (*CONVERSATION_TYPES, "SYSTEM") if on.history_system_first else CONVERSATION_TYPES
    history = [] if on.context_ignored else _history(body, network.front, kept)
    if on.continued_history_doubled:
        history += [dict(m) for m in history]  # the context merged into a copy of itself
    if on.new_conversation_joins_latest and not body.get("chat_context"):
        history = [dict(m) for m in latest.get(network.name, [])]
    if on.history_system_first and not history:
        history.append(_conversation("SYSTEM", network.instructions, network.front))
    turn = 1 + sum(1 for m in history if m["type"] == "HUMAN")
    result = network.respond(text, turn)
    history.append(_conversation("HUMAN", _stored(text, on), network.front))
    history.append(_conversation("AI", result.answer, network.front))
    if on.new_conversation_joins_latest:
        latest[network.name] = [dict(m) for m in history]
    final: dict[str, Any] = {
        "type": "AGENT_FRAMEWORK",
        "text": result.answer,
        "origin": _origin(network.front),
        "chat_context": {"chat_histories": [{"origin": _origin(network.front), "messages": history}]},
    }
    if result.sly_data is not None:
        final["sly_data"] = result.sly_data
    if on.history_newest_first:
        history.reverse()  # the conversation store's query orders by time, descending
    if on.history_roles_lost:
        for message in history:
            message["type"] = "AI"  # one column for every message: the roles are lost
            message["origin"] = _origin(network.front)
    if on.stream_no_context:
        del final["chat_context"]
    chat_filter = (body.get("chat_filter") or {}).get("chat_filter_type", "MINIMAL")
    maximal = chat_filter == "MAXIMAL"
    if maximal and on.maximal_no_context:
        del final["chat_context"]  # the verbose path builds its own final message, without the context
    if on.minimal_verbose:
        maximal = True
    if on.maximal_ignored:
        maximal = False
    intermediate = _intermediate(network, result)
    if on.message_type_enum:
        intermediate[-1]["type"] = "ASSISTANT"  # an OpenAI role name where the enum says AI
    messages = [*intermediate, final] if maximal else [final]
    if on.stream_no_answer:
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


class NeuroSan(Handlers):
    """The built-in networks; ``on`` holds the behaviour faults of this run."""

    protocol = "neuro-san"
    data: Data

    def __init__(self, api: ProtocolApi) -> None:
        super().__init__(api)
        self.on = Switches.of(api.faults)
        self.data = Data()
        self.chats: dict[str, int] = {}
        """Chats per network, for the fault that registers a tool node again on every chat."""
        self.latest: dict[str, list[dict[str, Any]]] = {}
        """The most recent conversation's history per network, for ns-new-conversation-joins-latest."""
        self.under_way: Any = None
        """ns-chat-race's chat under way, one for the whole server."""

    def refuse_get_body(self, call: Call) -> None:
        if self.on.get_body_rejected and call.request.body_exists:
            raise ApiError(400, "Invalid request: a GET request must not carry a body")

    @operation("AgentService_Connectivity")
    async def connectivity(self, call: Call) -> Reply:
        # The official client sends GET with a `{}` JSON body; the document has no body, so it is ignored.
        self.refuse_get_body(call)
        network = _network(call, self.on, self.data)
        body = network.connectivity()
        if self.on.connectivity_grows:
            tool = body["connectivity_info"][-1]
            body["connectivity_info"] += [dict(tool) for _ in range(self.chats.get(network.name, 0))]
        return Reply(body)

    @operation("AgentService_Function")
    async def function(self, call: Call) -> Reply:
        self.refuse_get_body(call)
        return Reply(_network(call, self.on, self.data).function())

    @operation("AgentService_StreamingChat")
    async def streaming_chat(self, call: Call) -> web.StreamResponse:
        # Headers user_id and request_id are client metadata upstream only logs: accepted, ignored.
        on = self.on
        if on.chat_filter_required and isinstance(call.body, dict) and "chat_filter" not in call.body:
            # the fault: a stricter request check, run before routing, with no default filter
            raise ApiError(400, "Invalid request: chat_filter is required")
        network = _network(call, on, self.data)
        if not isinstance(call.body, dict):  # only reachable when a fault skips validation
            raise ApiError(400, "Invalid request: the body must be a ChatRequest object")
        if on.chat_context_unvalidated:  # the fault's own check: everything but the context
            shown = {k: v for k, v in call.body.items() if k != "chat_context"}
            problems = self.api.schemas.violations({"$ref": "#/components/schemas/ChatRequest"}, shown)
            if problems:
                raise ApiError(400, f"Invalid request: {problems[0]}")
        body = call.body
        if on.chat_race:  # the request under way kept in one place across an await: the latest one wins
            self.under_way = body
            await asyncio.sleep(RACE_SECONDS)
            body = self.under_way
        frames = _frames(network, body, on, self.latest)  # every error is raised before the stream opens
        self.chats[network.name] = self.chats.get(network.name, 0) + 1
        media = "text/plain; charset=utf-8" if on.stream_content_type else STREAM_CONTENT_TYPE
        api = self.api
        with api.gate:
            stream = NdjsonStream(call.request, media, delay=api.config.stream_delay, pretty=on.stream_multiline)
            response = await stream.open()
            try:
                for frame in frames:
                    await stream.send(frame)
                    if on.stream_stall:
                        await stall(request=call.request)  # one frame, then silence until the client gives up
                        return response
                return await stream.close()
            except (ConnectionResetError, ClientConnectionResetError):
                return response

    # GET /api/v1/list (ConciergeService_List) is in the upstream overlay, not in the published
    # document that `api.spec` holds, so it cannot be an operation: it is a plain route, served as
    # upstream serves it (the official client's concierge list calls it).
    @route("GET", "/api/v1/list")
    async def concierge_list(self, request: web.Request) -> web.Response:
        if self.on.no_concierge_list:  # a server of the published document alone: no concierge
            return self.api.errors.response(ApiError(404, "Not Found"))
        networks = {**NETWORKS, **self.data.networks}
        if self.on.list_names_only:
            return web.json_response({"agents": list(networks)})
        return web.json_response({"agents": [n.info() for n in networks.values()]})
