"""The SGR Agent Core mock over HTTP: every operation, its errors, SSE framing, clarification, deletion."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from conformance.contrib.httpx import validate_exchange
from mockserver import MockLimits
from mockserver.embedded import EmbeddedServer
from specs.documents import load
from specs.schemas import SchemaSet
from tests.timing import Clock

SPEC = load("sgr-agent-core")
CHUNK = SchemaSet(SPEC.raw).component("ChatCompletionChunk")
MODELS = ["sgr_agent", "sgr_tool_calling_agent", "tool_calling_agent"]
UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
NAIVE_SECONDS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")

TASK = "Research BMW X6 2025 prices in Russia"
SEARCHES = "Searching the web for 'BMW'\nSearching the web for '2025'\nSearching the web for 'prices'\n"
REPORT = (
    "## Research report\n"
    f"Task: {TASK}\n"
    "- BMW: 2 sources reviewed\n- 2025: 2 sources reviewed\n- prices: 2 sources reviewed\n"
    "Conclusion: research on BMW, 2025, prices is complete.\n"
)
ASKING = "Compare EV batteries, clarify the scope first"
QUESTIONS = (
    "I need a clarification before researching:\n"
    f"1. What exactly should the research on '{ASKING}' focus on?\n"
    "2. Which region and time period matter?\n"
)
ANSWER = "Focus on luxury models only"
CLARIFIED = (
    f"Clarification received: {ANSWER}\n"
    "Searching the web for 'Compare'\nSearching the web for 'batteries'\nSearching the web for 'scope'\n"
    "## Research report\n"
    f"Task: {ASKING}\n"
    f"Clarification: {ANSWER}\n"
    "- Compare: 2 sources reviewed\n- batteries: 2 sources reviewed\n- scope: 2 sources reviewed\n"
    "Conclusion: research on Compare, batteries, scope is complete.\n"
)

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]


@dataclass
class Streamed:
    headers: httpx.Headers
    chunks: list[dict[str, Any]]

    @property
    def agent_id(self) -> str:
        return self.headers["X-Agent-ID"]

    @property
    def content(self) -> str:
        return "".join(c["choices"][0]["delta"].get("content") or "" for c in self.chunks)


def read_sse(lines: Iterator[str]) -> list[dict[str, Any]]:
    """Reads events as they arrive: one ``data:`` line and a blank line each, JSON chunks that
    match ChatCompletionChunk, then ``[DONE]`` and nothing after it."""
    chunks: list[dict[str, Any]] = []
    pending: str | None = None
    done = False
    for line in lines:
        assert not done, f"data after [DONE]: {line!r}"
        if pending is None:
            assert line.startswith("data: "), f"not a data line: {line!r}"
            pending = line.removeprefix("data: ")
            continue
        assert line == "", f"an event is a single data line, got {line!r}"
        if pending == "[DONE]":
            done = True
        else:
            chunk = json.loads(pending)
            problems = [e.message for e in CHUNK.iter_errors(chunk)]
            assert not problems, problems
            chunks.append(chunk)
        pending = None
    assert done, "the stream did not end with data: [DONE]"
    return chunks


def check_chunks(stream: Streamed) -> None:
    chunks = stream.chunks
    assert len(chunks) >= 2
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}
    assert {c["model"] for c in chunks} == {stream.agent_id}
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * (len(chunks) - 1) + ["stop"]
    assert chunks[-1]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]


def post_stream(http: httpx.Client, url: str, body: dict[str, Any]) -> Streamed:
    with http.stream("POST", url, json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["Content-Type"] == "text/event-stream"
        assert response.headers["Cache-Control"] == "no-cache"
        stream = Streamed(response.headers, read_sse(response.iter_lines()))
    check_chunks(stream)
    return stream


def chat(http: httpx.Client, text: str, model: str = "sgr_agent") -> Streamed:
    return post_stream(http, "/v1/chat/completions", {"model": model, "messages": [user(text)], "stream": True})


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def state(http: httpx.Client, agent_id: str) -> dict[str, Any]:
    response = http.get(f"/agents/{agent_id}/state")
    assert response.status_code == 200, response.text
    return dict(response.json())


def listed(http: httpx.Client) -> dict[str, dict[str, Any]]:
    return {a["agent_id"]: a for a in http.get("/agents").json()["agents"]}


def assert_detail(response: httpx.Response, status: int, detail: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": detail}


# --- service and models -----------------------------------------------------------------------


def test_health(http: httpx.Client) -> None:
    response = http.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "healthy", "service": "SGR Agent Core API"}


def test_models_lists_the_three_agent_definitions(http: httpx.Client) -> None:
    body = http.get("/v1/models").json()
    assert body["object"] == "list"
    assert body["data"] == [
        {"id": m, "object": "model", "created": 1234567890, "owned_by": "sgr-agent-core"} for m in MODELS
    ]


# --- chat completions -------------------------------------------------------------------------


def test_chat_streams_a_research_and_completes_the_agent(http: httpx.Client) -> None:
    stream = chat(http, TASK)
    agent_id = stream.agent_id
    assert re.fullmatch(f"sgr_agent_{UUID4}", agent_id)
    assert stream.headers["X-Agent-Model"] == "sgr_agent"
    assert stream.content == f"Agent {agent_id} started\n{SEARCHES}{REPORT}"
    assert len(stream.chunks) == 1 + 3 + 6 + 1  # opening, searches, report lines, final
    assert state(http, agent_id) == {
        "agent_id": agent_id,
        "task_messages": [user(TASK)],
        "state": "completed",
        "iteration": 4,
        "searches_used": 3,
        "clarifications_used": 0,
        "sources_count": 6,
        "current_step_reasoning": {"action": "final_answer", "reason": "Enough data collected"},
        "execution_result": REPORT,
    }
    item = listed(http)[agent_id]
    assert item["task_messages"] == [user(TASK)] and item["state"] == "completed"
    assert NAIVE_SECONDS.match(item["creation_time"]), item["creation_time"]


def test_list_agents_counts_them(http: httpx.Client) -> None:
    first, second = chat(http, "alpha beta"), chat(http, "gamma delta", model="tool_calling_agent")
    body = http.get("/agents").json()
    assert body["total"] == len(body["agents"]) >= 2
    ids = [a["agent_id"] for a in body["agents"]]
    assert ids.index(first.agent_id) < ids.index(second.agent_id)  # creation order
    assert second.agent_id.startswith("tool_calling_agent_")


def test_model_defaults_to_sgr_tool_calling_agent(http: httpx.Client) -> None:
    stream = post_stream(http, "/v1/chat/completions", {"messages": [user("solar panels")]})
    assert stream.headers["X-Agent-Model"] == "sgr_tool_calling_agent"
    assert re.fullmatch(f"sgr_tool_calling_agent_{UUID4}", stream.agent_id)


def test_multimodal_task_echoes_long_data_urls_truncated(http: httpx.Client) -> None:
    data_url = "data:image/jpeg;base64," + "A" * 300
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Analyze this chart"},
            {"type": "image_url", "image_url": {"url": data_url}},
            {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}},
        ],
    }
    stream = post_stream(http, "/v1/chat/completions", {"model": "sgr_agent", "messages": [message]})
    assert "Task: Analyze this chart\n" in stream.content
    parts = state(http, stream.agent_id)["task_messages"][0]["content"]
    assert parts[1]["image_url"]["url"] == data_url[:200] + "...[truncated]"
    assert parts[2]["image_url"]["url"] == "https://example.com/chart.png"


def test_unknown_model_is_400(http: httpx.Client) -> None:
    response = http.post("/v1/chat/completions", json={"model": "invalid_model", "messages": [user("x")]})
    assert_detail(response, 400, f"Invalid model 'invalid_model'. Available models: {MODELS}")


def test_stream_false_is_501_even_for_an_unknown_model(http: httpx.Client) -> None:
    expected = "Only streaming responses are supported. Set 'stream=true'"
    for model in ("sgr_agent", "invalid_model"):
        response = http.post("/v1/chat/completions", json={"model": model, "messages": [user("x")], "stream": False})
        assert_detail(response, 501, expected)


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"model": "sgr_agent"}, ["body"]),
        ({"messages": []}, ["body", "messages"]),
        ({"messages": [{"role": "robot", "content": "x"}]}, ["body", "messages", 0, "role"]),
        ({"messages": [user("x")], "temperature": 2}, ["body", "temperature"]),
    ],
)
def test_invalid_chat_body_is_422(http: httpx.Client, body: dict[str, Any], loc: list[Any]) -> None:
    before = len(listed(http))
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, list) and detail
    assert all(set(d) == {"type", "loc", "msg", "input"} for d in detail)
    assert loc in [d["loc"] for d in detail]
    assert len(listed(http)) == before


# --- clarification ----------------------------------------------------------------------------


def ask(http: httpx.Client) -> str:
    stream = chat(http, ASKING)
    assert stream.content == f"Agent {stream.agent_id} started\n{QUESTIONS}"
    current = state(http, stream.agent_id)
    assert current["state"] == "waiting_for_clarification"
    assert (current["clarifications_used"], current["iteration"], current["searches_used"]) == (1, 1, 0)
    assert current["execution_result"] is None
    assert current["current_step_reasoning"]["action"] == "clarification"
    return stream.agent_id


def assert_clarified(http: httpx.Client, stream: Streamed, agent_id: str) -> None:
    assert stream.agent_id == agent_id
    assert "X-Agent-Model" not in stream.headers
    assert stream.content == CLARIFIED
    final = state(http, agent_id)
    assert final["state"] == "completed"
    assert (final["clarifications_used"], final["iteration"], final["searches_used"]) == (1, 5, 3)
    assert final["execution_result"] == CLARIFIED.split("'scope'\n", 1)[1]
    assert final["task_messages"] == [user(ASKING)]


def test_clarification_through_provide_clarification(http: httpx.Client) -> None:
    agent_id = ask(http)
    stream = post_stream(http, f"/agents/{agent_id}/provide_clarification", {"messages": [user(ANSWER)]})
    assert_clarified(http, stream, agent_id)


def test_clarification_through_chat_with_the_agent_id_as_model(http: httpx.Client) -> None:
    agent_id = ask(http)
    before = set(listed(http))
    stream = chat(http, ANSWER, model=agent_id)
    assert_clarified(http, stream, agent_id)
    assert set(listed(http)) == before  # no new agent


def test_clarification_through_chat_naming_the_agent_in_the_history(http: httpx.Client) -> None:
    agent_id = ask(http)
    history = [user(ASKING), {"role": "assistant", "content": f"Agent {agent_id} started\n"}, user(ANSWER)]
    stream = post_stream(http, "/v1/chat/completions", {"model": "sgr_agent", "messages": history})
    assert_clarified(http, stream, agent_id)


def test_a_clarification_may_ask_again(http: httpx.Client) -> None:
    agent_id = ask(http)
    again = post_stream(http, f"/agents/{agent_id}/provide_clarification", {"messages": [user("Please clarify")]})
    assert again.content.startswith("Clarification received: Please clarify\nI need a clarification")
    assert state(http, agent_id)["state"] == "waiting_for_clarification"
    assert state(http, agent_id)["clarifications_used"] == 2


def test_clarifying_an_agent_that_is_not_waiting(http: httpx.Client) -> None:
    agent_id = chat(http, TASK).agent_id
    stream = post_stream(http, f"/agents/{agent_id}/provide_clarification", {"messages": [user(ANSWER)]})
    assert stream.agent_id == agent_id
    assert stream.content == f"Agent {agent_id} is not waiting for clarification (state: completed)\n"
    response = http.post("/v1/chat/completions", json={"model": agent_id, "messages": [user(ANSWER)]})
    assert_detail(response, 400, f"Invalid model '{agent_id}'. Available models: {MODELS}")
    assert state(http, agent_id)["state"] == "completed"


def test_clarifying_an_unknown_agent_is_404(http: httpx.Client) -> None:
    response = http.post(
        "/agents/sgr_agent_12345-67890-abcdef/provide_clarification", json={"messages": [user(ANSWER)]}
    )
    assert_detail(response, 404, "Agent not found")


def test_invalid_clarification_body_is_422(http: httpx.Client) -> None:
    agent_id = ask(http)
    response = http.post(f"/agents/{agent_id}/provide_clarification", json={"messages": []})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "messages"]
    assert state(http, agent_id)["state"] == "waiting_for_clarification"


# --- state and deletion -----------------------------------------------------------------------


def test_state_of_an_unknown_agent_is_404(http: httpx.Client) -> None:
    assert_detail(http.get("/agents/nope/state"), 404, "Agent not found")


def test_delete_removes_a_finished_agent(http: httpx.Client) -> None:
    agent_id = chat(http, TASK).agent_id
    response = http.delete(f"/agents/{agent_id}")
    assert response.status_code == 200
    assert response.json() == {"agent_id": agent_id, "deleted": True, "final_state": "completed"}
    assert_detail(http.get(f"/agents/{agent_id}/state"), 404, "Agent not found")
    assert agent_id not in listed(http)
    assert_detail(http.delete(f"/agents/{agent_id}"), 404, "Agent not found")


def test_delete_cancels_a_waiting_agent(http: httpx.Client) -> None:
    agent_id = ask(http)
    assert http.delete(f"/agents/{agent_id}").json()["final_state"] == "cancelled"
    response = http.post(f"/agents/{agent_id}/provide_clarification", json={"messages": [user(ANSWER)]})
    assert_detail(response, 404, "Agent not found")


def test_delete_during_a_running_stream_stops_it(serve: Serve) -> None:
    with (
        serve(protocols=("sgr-agent-core",), stream_delay=0.05) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        body = {"model": "sgr_agent", "messages": [user(TASK)]}
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            agent_id = response.headers["X-Agent-ID"]
            lines = response.iter_lines()
            assert next(lines).startswith("data: ") and next(lines) == ""
            assert state(client, agent_id)["state"] == "researching"
            deleted = client.delete(f"/agents/{agent_id}").json()
            clock = Clock()
            rest = read_sse(lines)
            clock.assert_within(0.5, "the rest of the stream")
        assert deleted == {"agent_id": agent_id, "deleted": True, "final_state": "cancelled"}
        assert len(rest) <= 3  # at most one more content chunk, then the final one
        assert rest[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop"}
        assert client.get(f"/agents/{agent_id}/state").status_code == 404
        assert client.get("/agents").json() == {"agents": [], "total": 0}


def test_a_client_leaving_mid_stream_cancels_the_agent_and_frees_the_stream(serve: Serve) -> None:
    limits = MockLimits(max_open_streams=1)
    with (
        serve(protocols=("sgr-agent-core",), stream_delay=0.05, limits=limits) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        body = {"model": "sgr_agent", "messages": [user(TASK)]}
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            agent_id = response.headers["X-Agent-ID"]
            assert next(response.iter_lines()).startswith("data: ")
            busy = client.post("/v1/chat/completions", json=body)  # the one stream slot is taken
            assert_detail(busy, 503, "Too many open streams (limit 1); retry shortly")
            assert busy.headers["Retry-After"] == "1"
        for _ in range(100):
            if state(client, agent_id)["state"] != "researching":
                break
            time.sleep(0.02)
        assert state(client, agent_id)["state"] == "cancelled"
        assert chat(client, "next task").content.endswith("Conclusion: research on next, task is complete.\n")
        assert client.get("/agents").json()["total"] == 2  # the rejected request created no agent


def test_storage_is_bounded(serve: Serve) -> None:
    with (
        serve(protocols=("sgr-agent-core",), limits=MockLimits(max_stored_objects=1)) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        first = chat(client, TASK).agent_id
        response = client.post("/v1/chat/completions", json={"messages": [user(TASK)]})
        assert_detail(response, 507, "Agent storage is full (1 agents); delete some")
        client.delete(f"/agents/{first}")
        chat(client, TASK)


def test_concurrent_streams_are_independent(serve: Serve) -> None:
    with serve(protocols=("sgr-agent-core",), stream_delay=0.01) as server:
        results: dict[str, str] = {}

        def run(word: str) -> None:
            with httpx.Client(base_url=server.url, timeout=10) as client:
                results[word] = chat(client, word).content

        threads = [threading.Thread(target=run, args=(w,)) for w in ("apples", "oranges", "pears")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert {w: f"Searching the web for '{w}'\n" in text for w, text in results.items()} == {
            "apples": True,
            "oranges": True,
            "pears": True,
        }


# --- conformance with the document ------------------------------------------------------------


def validate(response: httpx.Response) -> None:
    """Request and response against the document with openapi-core (headers included; the
    event-stream body is checked frame by frame by read_sse). A 422 answers a body sent
    malformed on purpose, so only its answer is checked. The adapter presents the exchange
    under the document's server, http://localhost:8010, as openapi-core needs."""
    validate_exchange(SPEC, response, check_request=response.status_code != 422)


def test_every_operation_answers_as_documented(http: httpx.Client) -> None:
    chat_body = {"model": "sgr_agent", "messages": [user(TASK)], "stream": True}
    created = http.post("/v1/chat/completions", json=chat_body)
    read_sse(iter(created.text.split("\n")[:-1]))
    waiting = http.post("/v1/chat/completions", json={"model": "sgr_agent", "messages": [user(ASKING)]})
    clarify = f"/agents/{waiting.headers['X-Agent-ID']}/provide_clarification"
    done_id = created.headers["X-Agent-ID"]
    responses = [
        http.get("/health"),
        http.get("/v1/models"),
        created,
        waiting,
        http.get("/agents"),
        http.get(f"/agents/{done_id}/state"),
        http.get("/agents/nope/state"),
        http.post(clarify, json={"messages": []}),
        http.post(clarify, json={"messages": [user(ANSWER)]}),
        http.post(clarify, json={"messages": [user(ANSWER)]}),
        http.post("/agents/nope/provide_clarification", json={"messages": [user(ANSWER)]}),
        http.post("/v1/chat/completions", json={**chat_body, "model": "invalid_model"}),
        http.post("/v1/chat/completions", json={**chat_body, "stream": False}),
        http.post("/v1/chat/completions", json={"messages": "no"}),
        http.delete(f"/agents/{done_id}"),
        http.delete(f"/agents/{done_id}"),
    ]
    statuses = [r.status_code for r in responses]
    assert statuses == [200, 200, 200, 200, 200, 200, 404, 422, 200, 200, 404, 400, 501, 422, 200, 404]
    for response in responses:
        validate(response)


def test_the_validation_catches_a_missing_agent_header(http: httpx.Client) -> None:
    response = http.post("/v1/chat/completions", json={"model": "sgr_agent", "messages": [user(TASK)]})
    del response.headers["X-Agent-ID"]
    with pytest.raises(Exception, match="X-Agent-ID"):
        validate(response)
