"""SGR Agent Core's named faults: each breaks the named SGR-* requirements in one realistic way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...faults import TEXT_COLUMN_BYTES, Fault, fault_maker, wire_controls
from ...faults import Switches as _Switches
from ...reply import Reply
from .faults_across import ACROSS

PROTOCOL = "sgr-agent-core"


LONG_MESSAGE = 60000
"""Characters of a message the control sgr-long-message-refused accepts."""


@dataclass(frozen=True, slots=True)
class Switches(_Switches):
    """The behaviour faults the handlers switch on (the rest edit answers: ``mutate``)."""

    prefix: ClassVar[str] = "sgr"
    chat_ignores_waiting_agent: bool = False
    chunk_model_llm: bool = False
    chunk_model_name: bool = False
    clarification_ignored: bool = False
    clarifications_counted_twice: bool = False
    content_parts_rejected: bool = False
    created_milliseconds: bool = False
    deleted_agent_listed: bool = False
    deleted_agent_served: bool = False
    json_content_type: bool = False
    list_drops_finished: bool = False
    list_newest_3: bool = False
    list_newest_10: bool = False
    list_state_at_creation: bool = False
    missing_agent_id: bool = False
    missing_done: bool = False
    create_race: bool = False
    missing_model_header: bool = False
    no_finish_stop: bool = False
    non_json_event: bool = False
    notice_stream_no_done: bool = False
    result_while_waiting: bool = False
    stall_mid_stream: bool = False
    state_stuck: bool = False
    stream_false_accepted: bool = False
    stream_false_crashes: bool = False
    task_messages_replaced: bool = False
    total_counts_deleted: bool = False
    unknown_model_404: bool = False
    wrong_chunk_object: bool = False
    # the edge corpus (conformance/check/edges.py), a chat of its texts each run
    task_messages_nfc: bool = False
    task_messages_trimmed: bool = False
    task_messages_column: bool = False
    task_messages_astral_replaced: bool = False
    sse_event_field: bool = False
    sse_multiline_data: bool = False
    # a passing control: what the document lets a server do with those edges
    long_message_refused: bool = False
    # facts across calls (faults_across.py)
    content_parts_flattened: bool = False


def _task_renamed(reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict):
        for agent in reply.body.get("agents") or ():
            agent["task"] = agent.pop("task_messages", None)  # an older release's name


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


def _invalid_as_400(reply: Reply) -> None:
    if reply.status == 422:
        reply.status = 400
        reply.body = {"detail": "; ".join(str(e.get("msg")) for e in reply.body.get("detail") or [])}


def _loc_without_body(reply: Reply) -> None:
    if reply.status == 422:
        for error in reply.body.get("detail") or []:
            loc = error.get("loc") or []
            error["loc"] = loc[1:] if loc[:1] == ["body"] else loc


def _text_plain(reply: Reply) -> None:
    reply.content_type = "text/plain"


FAULTS: tuple[Fault, ...] = (
    # wrong facts behind the right shapes (the model-based phase, conformance/protocols/sgr_agent_core/model.py)
    _fault(
        "sgr-list-state-at-creation",
        ("SGR-FACT-001",),
        "GET /agents shows every agent as inited, the state of the row written when it was created",
    ),
    # SGR-AGENT-001 says it too: "total counts the list"
    _fault(
        "sgr-total-counts-deleted",
        ("SGR-FACT-001", "SGR-AGENT-001"),
        "GET /agents' total counts every agent ever created, deleted ones included",
    ),
    _fault(
        "sgr-list-newest-3",
        ("SGR-AGENT-001", "SGR-FACT-002"),
        "GET /agents lists only the 3 newest agents (and counts them)",
    ),
    _fault(
        "sgr-list-newest-10",
        ("SGR-FACT-002",),
        "GET /agents lists only the 10 newest agents, a default page size (and counts them): a run that "
        "creates few agents never sees the oldest dropped",
    ),
    _fault(
        "sgr-created-milliseconds",
        ("SGR-FACT-003",),
        "a chunk's created is milliseconds since the epoch where the document says seconds",
    ),
    _fault(
        "sgr-clarifications-counted-twice",
        ("SGR-FACT-004",),
        "clarifications_used goes up by two for each request for a clarification",
    ),
    _fault(
        "sgr-result-while-waiting",
        ("SGR-FACT-004",),
        "an agent waiting for a clarification already has an execution_result",
    ),
    _fault(
        "sgr-task-messages-replaced",
        ("SGR-FACT-005",),
        "a clarification replaces the agent's task_messages with the clarification's messages",
    ),
    _fault(
        "sgr-notice-stream-no-done",
        ("SGR-FACT-006",),
        "a clarification for an agent that is not waiting answers a stream that ends without data: [DONE]",
    ),
    # wrong enum values, a missing required field
    _fault(
        "sgr-health-not-healthy",
        ("SGR-SVC-001", "SGR-SCHEMA-005"),
        'GET /health answers {"status": "ok"} instead of "healthy"',
        operation="health",
        mutate=_not_healthy,
    ),
    _fault(
        "sgr-model-wrong-object",
        ("SGR-MODEL-001", "SGR-SCHEMA-005"),
        'GET /v1/models lists its models with object "agent" instead of "model"',
        operation="listModels",
        mutate=_models_as_agents,
    ),
    _fault(
        "sgr-state-missing-field",
        ("SGR-AGENT-002", "SGR-SCHEMA-005"),
        "GET /agents/{id}/state leaves out the required sources_count",
        operation="getAgentState",
        mutate=_drop_sources_count,
    ),
    # wrong content type, missing headers
    _fault(
        "sgr-json-content-type",
        # the chat stream's label is SGR-STREAM-001's fact, every other stream's SGR-FACT-006's
        ("SGR-STREAM-001", "SGR-FACT-006"),
        "chat and clarification streams are labelled application/json instead of text/event-stream",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-missing-agent-id",
        ("SGR-STREAM-002", "SGR-SCHEMA-004"),
        "a new chat's stream carries no X-Agent-ID header",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-missing-model-header",
        ("SGR-STREAM-003",),
        "a new chat's stream carries no X-Agent-Model header",
        operation="createChatCompletion",
    ),
    # broken stream framing and chunks
    _fault(
        "sgr-non-json-event",
        ("SGR-STREAM-004", "SGR-SCHEMA-005"),
        "after the first chunk the stream sends a plain-text data: event",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-wrong-chunk-object",
        ("SGR-STREAM-004", "SGR-SCHEMA-005"),
        'chunks say object "chat.completion" instead of "chat.completion.chunk"',
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-chunk-model-name",
        (),
        "chunks carry the model name (sgr_agent) as model, as seed 001's example shows, instead of the agent id "
        "upstream sends (a control; advice only)",
        operation="createChatCompletion",
        control=True,
        advises=("SGR-STREAM-008",),
    ),
    _fault(
        "sgr-chunk-model-llm",
        ("SGR-STREAM-005", "SGR-FACT-006"),
        "chunks carry the name of the LLM behind the agent (gpt-4o-mini) as model: they name no agent",
        operation="createChatCompletion",
        advises=("SGR-STREAM-008",),
    ),
    _fault(
        "sgr-no-finish-stop",
        ("SGR-STREAM-006",),
        'the last chunk has finish_reason null instead of "stop"',
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-missing-done",
        ("SGR-STREAM-007", "SGR-FACT-006"),
        "streams end after the final chunk without data: [DONE]",
        operation="createChatCompletion",
    ),
    # a stream that never ends is SGR-STREAM-007's subject; the events that did arrive are valid
    _fault(
        "sgr-stall-mid-stream",
        ("SGR-STREAM-007", "SGR-FACT-006"),
        "streams stall after two chunks and never finish",
        operation="createChatCompletion",
        hangs=True,
    ),
    # losing data, a never-finishing agent
    _fault(
        "sgr-list-drops-finished",
        ("SGR-AGENT-001", "SGR-FACT-002"),
        "GET /agents lists only running agents: finished ones vanish from the list",
        operation="listAgents",
    ),
    _fault(
        "sgr-state-stuck",
        ("SGR-AGENT-003",),
        "a research never completes: the agent stays researching with no execution_result",
        operation="createChatCompletion",
        hangs=True,
    ),
    _fault(
        "sgr-deleted-agent-listed",
        ("SGR-AGENT-004", "SGR-FACT-002"),
        "a deleted agent is still listed by GET /agents",
        operation="deleteAgent",
    ),
    _fault(
        "sgr-deleted-agent-served",
        ("SGR-AGENT-004", "SGR-SCHEMA-009", "SGR-FACT-002"),
        "DELETE /agents/{id} answers deleted: true but keeps the agent: its state is still served (and listed)",
        operation="deleteAgent",
    ),
    # wrong statuses, error bodies of the wrong shape, accepting invalid input
    _fault(
        "sgr-unknown-model-404",
        ("SGR-ERR-001", "SGR-SCHEMA-002"),
        "an unknown model is answered 404 instead of 400",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-stream-false-accepted",
        ("SGR-ERR-002",),
        "stream=false is answered 200 with a stream instead of 501",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-stream-false-crashes",
        ("SGR-ERR-002", "SGR-SCHEMA-001"),
        "stream=false crashes with 500 instead of the documented 501 (only 501 is exempt from SCHEMA-001)",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-not-found-wrong-shape",
        ("SGR-ERR-003", "SGR-SCHEMA-005"),
        'GET /agents/{id}/state for an unknown agent answers {"error": ...} instead of {"detail": ...}',
        operation="getAgentState",
        mutate=_not_found_as_error,
    ),
    _fault(
        "sgr-422-string-detail",
        ("SGR-ERR-004", "SGR-SCHEMA-005"),
        "an invalid chat body gets 422 with a string detail instead of a list of errors",
        operation="createChatCompletion",
        mutate=_string_422,
    ),
    _fault(
        "sgr-invalid-body-400",
        (),
        'an invalid chat body is refused 400 {"detail": string}, the status the document also gives an invalid '
        "request (a fair refusal: a control)",
        operation="createChatCompletion",
        mutate=_invalid_as_400,
        control=True,
    ),
    _fault(
        "sgr-422-loc-without-body",
        (),
        'an invalid chat body\'s 422 errors name the field without the leading "body" FastAPI puts in loc (the '
        "document's loc is any path: a control; advice only)",
        operation="createChatCompletion",
        mutate=_loc_without_body,
        control=True,
        advises=("SGR-ERR-005",),
    ),
    # the agents it starts then hold what it accepted: answers off their schema
    _fault(
        "sgr-accepts-invalid-body",
        ("SGR-ERR-004", "SGR-SCHEMA-006", "SGR-SCHEMA-005"),
        "chat completions do not validate their body: a missing or malformed messages starts an agent",
        operation="createChatCompletion",
        skip_validation=True,
        touches=("listAgents", "getAgentState"),  # where the agent's off-schema task_messages show
    ),
    # its refusal's detail is a string where the document's 422 carries a list
    _fault(
        "sgr-content-parts-rejected",
        ("SGR-SCHEMA-007", "SGR-SCHEMA-005"),
        "chat completions refuse messages whose content is a list of content parts (422), which the document allows",
        operation="createChatCompletion",
    ),
    # the clarification flow
    _fault(
        "sgr-clarification-ignored",
        ("SGR-CLAR-001", "SGR-FACT-004"),
        "provide_clarification streams an acknowledgement but the agent stays waiting, unchanged",
        operation="provideClarification",
    ),
    _fault(
        "sgr-chat-ignores-waiting-agent",
        ("SGR-CLAR-002",),
        "chat completions with a waiting agent's id as model answer 400 instead of resuming it",
        operation="createChatCompletion",
    ),
    # the edge corpus (conformance/check/edges.py), sent as a chat's messages each run
    _fault(
        "sgr-task-messages-nfc",
        ("SGR-AGENT-001", "SGR-AGENT-002"),
        "an agent's task_messages are stored normalised to NFC: combining marks are composed",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-task-messages-trimmed",
        ("SGR-AGENT-001", "SGR-AGENT-002"),
        "an agent's task_messages are stored with the whitespace at the ends of each content trimmed",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-task-messages-column",
        ("SGR-AGENT-001", "SGR-AGENT-002"),
        f"each task message's content is stored cut to {TEXT_COLUMN_BYTES} bytes of UTF-8 (a TEXT column), silently",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-task-messages-astral-replaced",
        ("SGR-AGENT-001", "SGR-AGENT-002"),
        "characters beyond U+FFFF (emoji) in task messages become '?' (a 3-byte utf8 store)",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-long-message-refused",
        (),
        f"control: a chat whose message content exceeds {LONG_MESSAGE} characters is refused with 422 and a detail",
        operation="createChatCompletion",
        control=True,
    ),
    # stream framing the document fixes, read strictly where it fixes it
    _fault(
        "sgr-sse-event-field",
        ("SGR-STREAM-004",),
        "each chat event carries an event: line before its data: line (browsers read it; the document rules it out)",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-sse-multiline-data",
        ("SGR-STREAM-004",),
        "each chunk is pretty-printed over several data: lines (a reader joins them; the document fixes one line)",
        operation="createChatCompletion",
    ),
    _fault(
        "sgr-agents-task-renamed",
        # a server's shape: the check that reads the list fails on it with the answer as evidence,
        # never as a suite error (a KeyError once ended SGR-AGENT-001 as "error")
        ("SGR-AGENT-001", "SGR-FACT-001", "SGR-FACT-005", "SGR-SCHEMA-005"),
        "GET /agents lists each agent's task messages as `task`, not the document's `task_messages`",
        operation="listAgents",
        mutate=_task_renamed,
    ),
    # requests at the same moment (conformance/check/concurrent.py)
    _fault(
        "sgr-create-race",
        ("SGR-AGENT-005",),
        "agent ids come from a value read before the store's write and replaced after it: chats started at the "
        "same moment are one agent (one X-Agent-ID), holding the last one's messages",
        operation="createChatCompletion",
    ),
    # the latitude of HTTP, JSON and SSE (mockserver/wire.py): passing controls
    # one fact, one owner: a label is the content-type requirement's, the body is still read for the rest
    _fault(
        "sgr-agent-state-text-plain",
        ("SGR-SCHEMA-003",),
        "getAgentState labels its JSON text/plain: the state read back still holds the agent's facts",
        operation="getAgentState",
        mutate=_text_plain,
    ),
    *wire_controls(_fault, "sgr", "sse"),
    *ACROSS,
)
