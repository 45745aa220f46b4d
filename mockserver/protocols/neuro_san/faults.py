"""NeuroSan's named faults: each breaks the named NS-* requirements of
conformance/protocols/neuro_san/requirements.py in one realistic way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from ...faults import TEXT_COLUMN_BYTES, Fault, fault_maker, wire_controls
from ...faults import Switches as _Switches
from ...reply import Reply
from .faults_across import ACROSS


@dataclass(frozen=True, slots=True)
class Switches(_Switches):
    """The behaviour faults the handlers switch on (the rest edit answers: ``mutate``)."""

    prefix: ClassVar[str] = "ns"
    chat_race: bool = False
    chat_filter_required: bool = False
    connectivity_grows: bool = False
    context_ignored: bool = False
    get_body_rejected: bool = False
    history_newest_first: bool = False
    history_roles_lost: bool = False
    list_names_only: bool = False
    maximal_ignored: bool = False
    maximal_no_context: bool = False
    message_type_enum: bool = False
    minimal_verbose: bool = False
    no_concierge_list: bool = False
    stream_content_type: bool = False
    stream_multiline: bool = False
    stream_no_answer: bool = False
    stream_no_context: bool = False
    stream_stall: bool = False
    unknown_agent_crashes: bool = False
    unknown_agent_ok: bool = False
    chat_context_unvalidated: bool = False
    history_text_nfc: bool = False
    history_text_trimmed: bool = False
    history_text_column: bool = False
    history_text_json_escaped: bool = False
    # facts across calls (faults_across.py)
    new_conversation_joins_latest: bool = False
    continued_history_doubled: bool = False
    history_system_first: bool = False


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


def _code_as_http_status(reply: Reply) -> None:
    if reply.status >= 400 and isinstance(reply.body, dict):
        reply.body["code"] = reply.status  # a gateway that copies the HTTP status into the Status


def _error_text_plain(reply: Reply) -> None:
    if reply.status >= 400:
        reply.content_type = "text/plain"


def _error_in_stream(reply: Reply) -> None:
    if reply.status >= 400:
        # grpc-gateway's in-stream error frame: the HTTP status is 200, the error is in the body
        reply.status = 200
        reply.body = {"error": reply.body}


def _connectivity_as_object(reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict):
        # the entries keyed by origin: an object where the document has an array
        info = reply.body.get("connectivity_info") or []
        reply.body["connectivity_info"] = {str(e.get("origin")): e for e in info if isinstance(e, dict)}


_fault = fault_maker("neuro-san")
AGENT_LOOKUP = ("AgentService_Connectivity", "AgentService_Function", "AgentService_StreamingChat")
"""The operations that look an agent up by name (a fault of the lookup changes each one's answers)."""


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
        # the property-based phase's cases name the discovered agent too, so they meet it as well
        ("NS-FUNC-001", "NS-SCHEMA-005"),
        "function.parameters is sent as a JSON-encoded string instead of an object",
        advises=("NS-HTTP-001",),
        operation="AgentService_Function",
        mutate=_parameters_as_string,
    ),
    _fault(
        "ns-get-body-rejected",
        (),
        "GET connectivity/function with a `{}` JSON body (the official client's habit) is answered 400: HTTP "
        "gives a GET body no meaning, so the document allows it (a control; advice only)",
        control=True,
        advises=("NS-HTTP-001",),
    ),
    _fault(
        "ns-unknown-agent-ok",
        ("NS-ERR-001",),
        "every unknown agent name is served by hello_world with 200 instead of an error",
        touches=AGENT_LOOKUP,
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
        ("NS-ERR-003", "NS-SCHEMA-001", "NS-SCHEMA-006"),
        "streaming_chat bodies are not validated: unknown enum names and mistyped fields are streamed an answer, "
        "and a user_message that is no object crashes the handler (500)",
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
        ("NS-STREAM-001", "NS-MODEL-002"),
        'the intermediate AI message is typed "ASSISTANT", which is not a ChatMessage type',
    ),
    _fault(
        "ns-stream-no-answer",
        # the final answer is NS-STREAM-002's subject; the checks that read it are blocked by it
        ("NS-STREAM-002", "NS-MODEL-002"),
        "the stream ends on the AI message: the final AGENT_FRAMEWORK answer is never sent",
    ),
    _fault(
        "ns-stream-content-type",
        # a stream's label is NS-STREAM-003's fact alone (the generic content-type check leaves it)
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
        ("NS-CTX-001", "NS-MODEL-002"),
        "the final AGENT_FRAMEWORK message carries no chat_context",
    ),
    _fault(
        "ns-context-ignored",
        ("NS-CTX-002", "NS-MODEL-003"),
        "a chat_context sent back is ignored: every answer starts a new conversation",
    ),
    _fault(
        "ns-minimal-verbose",
        (),
        "chat_filter MINIMAL is treated as MAXIMAL: intermediate messages are streamed too (the document gives "
        "MINIMAL no meaning: a control; advice only)",
        control=True,
        advises=("NS-FILTER-001",),
    ),
    _fault(
        "ns-maximal-ignored",
        (),
        "chat_filter MAXIMAL is ignored: only the final answer is streamed (the document gives MAXIMAL no "
        "meaning: a control; advice only)",
        control=True,
        advises=("NS-FILTER-002",),
    ),
    _fault(
        "ns-unknown-agent-crashes",
        ("NS-SCHEMA-001",),
        "an agent name the server does not host escapes the registry lookup as an exception: 500, not 404",
        touches=AGENT_LOOKUP,
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
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-list-names-only",
        ("NS-LIST-001",),
        "GET /api/v1/list answers a list of bare names instead of AgentInfo objects",
    ),
    # recognised without the concierge: the preflight still knows a NeuroSan server by its
    # well-known agent or an unknown agent's Status (tests/conformance/phases/test_preflight.py)
    _fault(
        "ns-no-concierge-list",
        ("NS-LIST-001",),
        "GET /api/v1/list (the upstream concierge, not in the published document) answers 404",
    ),
    # the model-based phase's facts (conformance/protocols/neuro_san/model.py)
    _fault(
        "ns-error-code-http-status",
        ("NS-MODEL-001",),
        "connectivity's error Status carries the HTTP status (404) as its code instead of a google.rpc.Code (5)",
        operation="AgentService_Connectivity",
        mutate=_code_as_http_status,
    ),
    _fault(
        "ns-maximal-no-context",
        ("NS-MODEL-002",),
        "with chat_filter MAXIMAL the final AGENT_FRAMEWORK message carries no chat_context",
    ),
    _fault(
        "ns-history-newest-first",
        ("NS-MODEL-003",),
        "the chat_context's history lists its messages newest first",
    ),
    _fault(
        "ns-history-roles-lost",
        ("NS-MODEL-003",),
        "the chat_context's history records every message, the user's questions included, as AI",
    ),
    _fault(
        "ns-connectivity-grows",
        ("NS-MODEL-004",),
        "every chat registers the agent's tool node again: connectivity lists it once more after each chat",
        operation="AgentService_Connectivity",
    ),
    # found only where the draws happen to build it; a targeted case of the schema phase finds it every run
    _fault(
        "ns-chat-context-unvalidated",
        ("NS-SCHEMA-006",),
        "streaming_chat validates every member of a ChatRequest but chat_context, passed through as an opaque "
        "blob: a chat_histories item of the wrong type is answered 200 (as the real server does)",
        operation="AgentService_StreamingChat",
        skip_validation=True,
    ),
    # the edge corpus (conformance/check/edges.py), a conversation of its texts each run
    _fault(
        "ns-history-text-nfc",
        ("NS-CTX-002",),
        "the question enters the chat_context's history normalised to NFC: combining marks are composed",
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-history-text-trimmed",
        ("NS-CTX-002",),
        "the question enters the chat_context's history with the whitespace at its ends trimmed",
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-history-text-column",
        ("NS-CTX-002",),
        f"the question enters the chat_context's history cut to {TEXT_COLUMN_BYTES} bytes of UTF-8 (a TEXT column)",
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-history-text-json-escaped",
        ("NS-CTX-002",),
        "the question enters the history JSON-encoded once too often: quotes, backslashes, control characters and "
        "everything beyond ASCII come back as escape sequences",
        operation="AgentService_StreamingChat",
    ),
    _fault(
        "ns-connectivity-as-object",
        # a server's shape: read as the document has it, the answer fails its check, never as a suite error
        ("NS-CONN-001", "NS-SCHEMA-005"),
        "connectivity_info is an object keyed by origin, not the document's array of entries",
        advises=("NS-HTTP-001",),
        operation="AgentService_Connectivity",
        mutate=_connectivity_as_object,
    ),
    # requests at the same moment (conformance/check/concurrent.py)
    _fault(
        "ns-chat-race",
        ("NS-CTX-003",),
        "the chat under way is kept in one attribute of the server across an await (a request-scoped value held "
        "globally): chats asked at the same moment are all answered in the conversation of the latest",
        operation="AgentService_StreamingChat",
    ),
    # the latitude of HTTP, JSON (mockserver/wire.py): passing controls
    *wire_controls(_fault, "ns", None),
    *ACROSS,
)
