"""The scenarios the mock plays for a client: what the mock is set to do (its stubs, fixtures and
chaos, through its admin API), what the client is asked to do, and which client requirements the
play decides. Every scenario decides CLIENT-001 (each request the client sends is judged).

A scenario is data; the same seed gives the same play (stubs answer by count, chaos draws from its
seeded generators).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from specs.documents import PROTOCOLS

SUCCEED, GIVE_UP = "succeed", "give up"

_AP_TASK = {
    "task_id": "5f3b1c2a-0d4e-4f6a-8b9c-1d2e3f4a5b6c",
    "input": "hello",
    "additional_input": {},
    "artifacts": [],
    "x_conformance_unknown": {"added_by": "a newer server", "items": [1, 2]},
}
_SYN_SESSION = {
    "sessionId": "0b7c9b64-1f6e-4a3c-9d5e-2a41f3c8e901",
    "agentAccessLevel": "PUBLICLY_ACCESSIBLE",
    "startedOn": "2025-01-14T18:29:11.123Z",
    "startedBy": 3350396,
    "modifiedOn": "2025-01-14T18:29:11.123Z",
    "etag": "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f",
    "xConformanceUnknown": {"addedBy": "a newer server", "items": [1, 2]},
}


def _busy(protocol: str, operation: str, status: int, times: int | None) -> dict[str, Any]:
    # invalid: a document that lists no 429/503 still meets them from any server or proxy on a bad
    # day (RFC 9110 lets every request get one); the stub says so rather than being refused
    response = {"error": {"status": status, "message": "busy, try later"}, "headers": {"Retry-After": "1"}}
    stub: dict[str, Any] = {
        "id": f"busy-{status}",
        "request": {"protocol": protocol, "operation": operation},
        "response": {**response, "invalid": True},
    }
    if times is not None:
        stub["times"] = times
    return {"stubs": [stub]}


def _answer(protocol: str, operation: str, body: Any, status: int = 200) -> dict[str, Any]:
    return {
        "stubs": [
            {
                "id": "unknown-field",
                "request": {"protocol": protocol, "operation": operation},
                "response": {"status": status, "body": body},
            }
        ]
    }


def _redirect(protocol: str, operation: str, location: str, status: int = 307) -> dict[str, Any]:
    # invalid: no document lists a 307/308, yet any server or proxy in front of one may send it
    # (RFC 9110 §15.4); once, so that the Location, the same operation, is answered as usual
    stub = {
        "id": f"redirect-{status}",
        "request": {"protocol": protocol, "operation": operation},
        "times": 1,
        "response": {"status": status, "headers": {"Location": location}, "invalid": True},
    }
    return {"stubs": [stub]}


def _gzip(protocol: str, operation: str, body: Any) -> dict[str, Any]:
    """The operation's answer in gzip to a client whose Accept-Encoding accepts it, as it is otherwise."""
    stub = {
        "id": "gzip",
        "request": {"protocol": protocol, "operation": operation},
        "response": {"status": 200, "body": body, "encoding": "gzip"},
    }
    return {"stubs": [stub]}


_AP_LIST = {
    "tasks": [{k: v for k, v in _AP_TASK.items() if not k.startswith("x_")}],
    "pagination": {"total_items": 1, "total_pages": 1, "current_page": 1, "page_size": 10},
}
_SYN_PROFILE = {"ownerId": "3350396", "userName": "alice", "displayName": "Alice", "emails": ["alice@example.org"]}
_SGR_MODELS = {
    "object": "list",
    "data": [{"id": "sgr_agent", "object": "model", "created": 1737979200, "owned_by": "sgr-agent-core"}],
}
_NS_FUNCTION = {"function": {"description": "I greet whoever says hello."}}
_REDIRECT_TASK = " (the mock answers it 307 first: follow the Location, or give up and exit non-zero)"
_GZIP_MOCK = "answers it gzip-encoded (Content-Encoding: gzip) when the request's Accept-Encoding accepts gzip"


def _chunk(content: str | None, **extra: Any) -> dict[str, Any]:
    """One chat.completion.chunk of SGR's stream: content, or None for the closing one."""
    delta = {"role": "assistant", "content": content} if content is not None else {}
    return {
        "id": "chatcmpl-conformance",
        "object": "chat.completion.chunk",
        "created": 1737979200,
        "model": "sgr_agent_3f2b8c1e-5d4a-4e7b-9c2d-1a2b3c4d5e6f",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None if content is not None else "stop"}],
        **extra,
    }


def _sgr_stream(frames: list[dict[str, Any]], done: bool, events: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The frames as SSE events; ``events`` names the type of some (by index), the rest are messages."""
    named = events or {}
    stream = {
        "format": "sse",
        "done": done,
        "frames": [{"data": f, **({"event": named[i]} if i in named else {})} for i, f in enumerate(frames)],
    }
    return {
        "stubs": [
            {
                "id": "stream",
                "request": {"protocol": "sgr-agent-core", "operation": "createChatCompletion"},
                "response": {"status": 200, "stream": stream},
            }
        ]
    }


def _ns_stream(frames: list[dict[str, Any]]) -> dict[str, Any]:
    stream = {"format": "ndjson", "frames": [{"data": {"response": f}} for f in frames]}
    stub = {
        "id": "stream",
        "request": {"protocol": "neuro-san", "operation": "AgentService_StreamingChat"},
        "response": {"status": 200, "stream": stream},
    }
    return {"stubs": [stub]}


_NS_CONTEXT = {"chat_histories": [{"messages": [{"type": "HUMAN", "text": "hello"}, {"type": "AI", "text": "Hello."}]}]}
_SGR_UNKNOWN = {"x_conformance_unknown": {"added_by": "a newer server"}}


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    protocol: str
    mock: str
    """What the mock does."""
    task: str
    """What the client is asked to do (its exit status says whether it did)."""
    decides: tuple[str, ...]
    """Client requirement numbers (``002``) besides 001, which every scenario decides."""
    outcome: str = SUCCEED
    """``succeed``: the server lets the task succeed (exit 0 expected); ``give up``: it never can."""
    stubs: Mapping[str, Any] | None = None
    fixtures: Mapping[str, Any] | None = None
    chaos: Mapping[str, Any] | None = None
    """A chaos document; its ``seed`` is added to the run's ``--seed`` (the draws are the seed's)."""
    token: str | None = None
    """CONFORMANCE_TOKEN instead of the first user's (synapse-agent: a token the mock refuses)."""
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def requirement_ids(self) -> tuple[str, ...]:
        prefix = PROTOCOLS[self.protocol].prefix
        return tuple(f"{prefix}-CLIENT-{n}" for n in ("001", *self.decides))


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "list-pages",
        "agent-protocol",
        "holds 23 tasks, listed 10 a page by default",
        "list every task (GET /ap/v1/agent/tasks, every page) and exit 0",
        ("010",),
        fixtures={"agent-protocol": {"tasks": [{"input": f"task {n}"} for n in range(23)]}},
    ),
    Scenario(
        "flaky-pages",
        "agent-protocol",
        "holds 23 tasks; a seeded chaos rule answers half the list requests 503 with Retry-After: 1",
        "list every task (GET /ap/v1/agent/tasks, every page) and exit 0",
        ("002", "010"),
        fixtures={"agent-protocol": {"tasks": [{"input": f"task {n}"} for n in range(23)]}},
        # seed 1 (plus --seed): the second and third list requests meet a 503
        chaos={
            "seed": 1,
            "rules": [{"protocol": "agent-protocol", "operation": "listAgentTasks", "error": 503, "rate": 0.5}],
        },
    ),
    Scenario(
        "retry-after",
        "agent-protocol",
        "answers the first POST /ap/v1/agent/tasks 429 with Retry-After: 1, then as usual",
        'create a task with input "hello" and exit 0',
        ("002",),
        stubs=_busy("agent-protocol", "createAgentTask", 429, 1),
    ),
    Scenario(
        "busy",
        "agent-protocol",
        "answers every POST /ap/v1/agent/tasks 503 with Retry-After: 1",
        'create a task with input "hello"; it never can: give up and exit non-zero',
        ("002", "003"),
        GIVE_UP,
        stubs=_busy("agent-protocol", "createAgentTask", 503, None),
    ),
    Scenario(
        "unknown-fields",
        "agent-protocol",
        "answers POST /ap/v1/agent/tasks with a task carrying a field no document names",
        'create a task with input "hello", print its task_id and exit 0',
        ("004",),
        stubs=_answer("agent-protocol", "createAgentTask", _AP_TASK),
    ),
    Scenario(
        "redirect",
        "agent-protocol",
        "answers the first GET /ap/v1/agent/tasks 307 with Location: /ap/v1/agent/tasks?current_page=1&page_size=10, "
        "then as usual",
        "list every task (GET /ap/v1/agent/tasks, every page) and exit 0" + _REDIRECT_TASK,
        ("008",),
        stubs=_redirect("agent-protocol", "listAgentTasks", "/ap/v1/agent/tasks?current_page=1&page_size=10"),
    ),
    Scenario(
        "gzip",
        "agent-protocol",
        "holds one task; GET /ap/v1/agent/tasks " + _GZIP_MOCK,
        "list every task (GET /ap/v1/agent/tasks, every page) and exit 0",
        ("009",),
        stubs=_gzip("agent-protocol", "listAgentTasks", _AP_LIST),
    ),
    Scenario(
        "list-pages",
        "synapse-agent",
        "holds 23 sessions of the first user, listed 10 a page with a nextPageToken",
        "list every session of CONFORMANCE_TOKEN's user (POST /agent/sessions/list, every page) and exit 0",
        ("010",),
        fixtures={"synapse-agent": {"sessions": [{"owner": "alice"} for _ in range(23)]}},
    ),
    Scenario(
        "job-poll",
        "synapse-agent",
        "keeps every chat job PROCESSING (202) for 1.5 s, then answers it",
        'create a session, start a chat saying "hello", poll the job until it is done, print its '
        "responseText and exit 0",
        ("011", "012"),
        stubs={
            "data": {"synapse-agent": {"jobs": [{"chatText": "hello", "seconds": 1.5, "responseText": "Hello there."}]}}
        },
    ),
    Scenario(
        "retry-after",
        "synapse-agent",
        "answers the first POST /agent/session 503 with Retry-After: 1, then as usual",
        "create a session (PUBLICLY_ACCESSIBLE) and exit 0",
        ("002",),
        stubs=_busy("synapse-agent", "createAgentSession", 503, 1),
    ),
    Scenario(
        "busy",
        "synapse-agent",
        "answers every POST /agent/session 503 with Retry-After: 1",
        "create a session; it never can: give up and exit non-zero",
        ("002", "003"),
        GIVE_UP,
        stubs=_busy("synapse-agent", "createAgentSession", 503, None),
    ),
    Scenario(
        "revoked-token",
        "synapse-agent",
        "refuses CONFORMANCE_TOKEN, which no user holds, 401 on every call",
        "create a session; it never can: give up and exit non-zero",
        ("005",),
        GIVE_UP,
        token="revoked-token",
    ),
    Scenario(
        "unknown-fields",
        "synapse-agent",
        "answers POST /agent/session with a session carrying a field no document names",
        "create a session (PUBLICLY_ACCESSIBLE), print its sessionId and exit 0",
        ("004",),
        stubs=_answer("synapse-agent", "createAgentSession", _SYN_SESSION, 201),
    ),
    Scenario(
        "redirect",
        "synapse-agent",
        "answers the first GET /userProfile 307 with Location: /repo/v1/userProfile, then as usual",
        "read CONFORMANCE_TOKEN's user profile (GET /userProfile), print its userName and exit 0" + _REDIRECT_TASK,
        ("008",),
        stubs=_redirect("synapse-agent", "getMyOwnUserProfile", "/repo/v1/userProfile"),
    ),
    Scenario(
        "gzip",
        "synapse-agent",
        "GET /userProfile " + _GZIP_MOCK,
        "read CONFORMANCE_TOKEN's user profile (GET /userProfile), print its userName and exit 0",
        ("009",),
        stubs=_gzip("synapse-agent", "getMyOwnUserProfile", _SYN_PROFILE),
    ),
    Scenario(
        "clarification",
        "sgr-agent-core",
        "serves a model owl_expert whose agent first asks a question (Which owls?) and waits for the answer",
        'ask model owl_expert "tell me about owls"; answer its question with "barn owls" on the documented '
        "route (POST /agents/{agent_id}/provide_clarification, or the agent's id as model), print the final "
        "answer and exit 0",
        ("010",),
        stubs={
            "data": {
                "sgr-agent-core": {
                    "models": [{"name": "owl_expert", "reply": "Owls hoot.\n", "clarify": ["Which owls?"]}]
                }
            }
        },
    ),
    Scenario(
        "cut-stream",
        "sgr-agent-core",
        "streams one content chunk of POST /v1/chat/completions, then ends the stream without finish_reason or "
        "data: [DONE]",
        'ask model sgr_agent "hello" and print the answer; the answer never completes: exit non-zero',
        ("006",),
        GIVE_UP,
        stubs=_sgr_stream([_chunk("Researching ")], done=False),
    ),
    Scenario(
        "retry-after",
        "sgr-agent-core",
        "answers the first POST /v1/chat/completions 429 with Retry-After: 1, then as usual",
        'ask model sgr_agent "hello", print the answer and exit 0',
        ("002",),
        stubs=_busy("sgr-agent-core", "createChatCompletion", 429, 1),
    ),
    Scenario(
        "busy",
        "sgr-agent-core",
        "answers every POST /v1/chat/completions 429 with Retry-After: 1",
        'ask model sgr_agent "hello"; it never can: give up and exit non-zero',
        ("002", "003"),
        GIVE_UP,
        stubs=_busy("sgr-agent-core", "createChatCompletion", 429, None),
    ),
    Scenario(
        "unknown-fields",
        "sgr-agent-core",
        "streams chunks that carry a field no document names, to data: [DONE]",
        'ask model sgr_agent "hello", print the answer and exit 0',
        ("004",),
        stubs=_sgr_stream([_chunk("Hello.", **_SGR_UNKNOWN), _chunk(None, **_SGR_UNKNOWN)], done=True),
    ),
    Scenario(
        "unknown-event",
        "sgr-agent-core",
        "streams, between two content chunks, an event of a type no document names (event: x-conformance-progress, "
        "its data not a chunk), to data: [DONE]",
        'ask model sgr_agent "hello", print the answer and exit 0',
        ("007",),
        stubs=_sgr_stream(
            [_chunk("Hello"), {"progress": 0.5, "note": "not a chunk"}, _chunk(" there."), _chunk(None)],
            done=True,
            events={1: "x-conformance-progress"},
        ),
    ),
    Scenario(
        "redirect",
        "sgr-agent-core",
        "answers the first GET /v1/models 307 with Location: /v1/models, then as usual",
        "list the models (GET /v1/models), print their ids and exit 0" + _REDIRECT_TASK,
        ("008",),
        stubs=_redirect("sgr-agent-core", "listModels", "/v1/models"),
    ),
    Scenario(
        "gzip",
        "sgr-agent-core",
        "GET /v1/models " + _GZIP_MOCK,
        "list the models (GET /v1/models), print their ids and exit 0",
        ("009",),
        stubs=_gzip("sgr-agent-core", "listModels", _SGR_MODELS),
    ),
    Scenario(
        "redirect-post",
        "sgr-agent-core",
        "answers the first POST /v1/chat/completions 308 with Location: /v1/chat/completions, then as usual",
        'ask model sgr_agent "hello", print the answer and exit 0 (the mock answers the POST 308 first: send it '
        "again, the same method and body, to the Location, or give up and exit non-zero)",
        ("008",),
        stubs=_redirect("sgr-agent-core", "createChatCompletion", "/v1/chat/completions", 308),
    ),
    Scenario(
        "continue-conversation",
        "neuro-san",
        "serves hello_world, whose last AGENT_FRAMEWORK message carries the chat_context of the conversation",
        'say "hi, I am Ann" to hello_world, then continue the same conversation with "what is my name?" (its '
        "chat_context sent back whole), print the answer and exit 0",
        ("010",),
    ),
    Scenario(
        "cut-stream",
        "neuro-san",
        "streams one AGENT message of POST /api/v1/hello_world/streaming_chat, then ends the stream before any "
        "AGENT_FRAMEWORK answer",
        'say "hello" to hello_world and print the answer; the answer never comes: exit non-zero',
        ("006",),
        GIVE_UP,
        stubs=_ns_stream([{"type": "AGENT", "text": "Thinking..."}]),
    ),
    Scenario(
        "retry-after",
        "neuro-san",
        "answers the first POST /api/v1/hello_world/streaming_chat 503 with Retry-After: 1, then as usual",
        'say "hello" to hello_world, print the answer and exit 0',
        ("002",),
        stubs=_busy("neuro-san", "AgentService_StreamingChat", 503, 1),
    ),
    Scenario(
        "busy",
        "neuro-san",
        "answers every POST /api/v1/hello_world/streaming_chat 503 with Retry-After: 1",
        'say "hello" to hello_world; it never can: give up and exit non-zero',
        ("002", "003"),
        GIVE_UP,
        stubs=_busy("neuro-san", "AgentService_StreamingChat", 503, None),
    ),
    Scenario(
        "unknown-fields",
        "neuro-san",
        "streams an answer whose messages carry a field no document names",
        'say "hello" to hello_world, print the answer and exit 0',
        ("004",),
        stubs=_ns_stream(
            [
                {"type": "AGENT", "text": "Thinking...", "x_conformance_unknown": 1},
                {"type": "AGENT_FRAMEWORK", "text": "Hello.", "chat_context": _NS_CONTEXT, "x_conformance_unknown": 2},
            ]
        ),
    ),
    Scenario(
        "redirect",
        "neuro-san",
        "answers the first GET /api/v1/hello_world/function 307 with Location: /api/v1/hello_world/function, then "
        "as usual",
        "read hello_world's function (GET /api/v1/hello_world/function), print its description and exit 0"
        + _REDIRECT_TASK,
        ("008",),
        stubs=_redirect("neuro-san", "AgentService_Function", "/api/v1/hello_world/function"),
    ),
    Scenario(
        "gzip",
        "neuro-san",
        "GET /api/v1/hello_world/function " + _GZIP_MOCK,
        "read hello_world's function (GET /api/v1/hello_world/function), print its description and exit 0",
        ("009",),
        stubs=_gzip("neuro-san", "AgentService_Function", _NS_FUNCTION),
    ),
)


def scenarios(protocol: str) -> list[Scenario]:
    return [s for s in SCENARIOS if s.protocol == protocol]
