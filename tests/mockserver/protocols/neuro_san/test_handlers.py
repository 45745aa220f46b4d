"""The NeuroSan mock over HTTP: networks, connectivity, function, streaming chat and its context."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from conformance.check.http import tls_context
from conformance.contrib.httpx import validate_exchange
from mockserver import MockConfig, MockLimits
from mockserver.embedded import EmbeddedServer
from specs.documents import load
from specs.schemas import SchemaSet

NETWORKS = ("hello_world", "math_guy", "music_nerd_pro")
SPEC = load("neuro-san")
UPSTREAM = load("neuro-san", "upstream")
SCHEMAS = SchemaSet(SPEC.raw)
INTERMEDIATE = ["SYSTEM", "AGENT", "AGENT_TOOL_RESULT", "AI"]

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]


@pytest.fixture(scope="module")
def ns_url() -> Iterator[str]:
    with EmbeddedServer(MockConfig(protocols=("neuro-san",))) as server:
        yield server.url


@pytest.fixture
def client(ns_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=ns_url, timeout=10, verify=tls_context()) as http:
        yield http


def chat(client: httpx.Client, agent: str, text: str, **extra: Any) -> httpx.Response:
    body = {"user_message": {"type": "HUMAN", "text": text}, **extra}
    return client.post(f"/api/v1/{agent}/streaming_chat", json=body)


def frames(response: httpx.Response) -> list[dict[str, Any]]:
    """Each line parsed on its own; the body must end with a newline."""
    assert response.status_code == 200, response.text
    assert response.text.endswith("\n")
    return [json.loads(line) for line in response.text.split("\n")[:-1]]


def answer(response: httpx.Response) -> dict[str, Any]:
    message: dict[str, Any] = frames(response)[-1]["response"]
    assert message["type"] == "AGENT_FRAMEWORK"
    return message


def violations(name: str, instance: Any) -> list[str]:
    return [str(v) for v in SCHEMAS.violations({"$ref": f"#/components/schemas/{name}"}, instance)]


def assert_status(response: httpx.Response, status: int, code: int, fragment: str = "") -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert isinstance(body["message"], str) and fragment in body["message"]
    assert violations("Status", body) == []
    return body


# --- the concierge list (upstream overlay) ---------------------------------------------------------


def test_list_names_every_builtin_network(client: httpx.Client) -> None:
    headers = {"Content-Type": "application/json"}
    response = client.request("GET", "/api/v1/list", headers=headers, content=b"{}")
    assert response.status_code == 200
    agents = response.json()["agents"]
    assert [a["agent_name"] for a in agents] == list(NETWORKS)
    for agent in agents:
        assert agent["description"] and all(isinstance(tag, str) for tag in agent["tags"])
    concierge = {"$ref": "#/components/schemas/ConciergeResponse"}
    assert SchemaSet(UPSTREAM.raw).violations(concierge, response.json()) == []


# --- connectivity and function ---------------------------------------------------------------------


@pytest.mark.parametrize("agent", NETWORKS)
def test_connectivity_describes_the_graph(client: httpx.Client, agent: str) -> None:
    response = client.get(f"/api/v1/{agent}/connectivity")
    assert response.status_code == 200
    body = response.json()
    assert violations("ConnectivityResponse", body) == []
    front, tool = body["connectivity_info"]
    assert front["tools"] == [tool["origin"]] and front["display_as"] == "llm_agent"
    assert tool["tools"] == [] and tool["display_as"] in ("llm_agent", "coded_tool")
    assert body["metadata"]["sample_queries"]


@pytest.mark.parametrize("agent", NETWORKS)
def test_function_describes_parameters(client: httpx.Client, agent: str) -> None:
    response = client.get(f"/api/v1/{agent}/function")
    assert response.status_code == 200
    function = response.json()["function"]
    assert violations("FunctionResponse", response.json()) == []
    assert function["description"]
    assert function["parameters"]["type"] == "object" and function["parameters"]["required"] == ["inquiry"]


@pytest.mark.parametrize("method", ["connectivity", "function"])
def test_get_with_an_empty_json_body_as_the_official_client_sends(client: httpx.Client, method: str) -> None:
    response = client.request(
        "GET",
        f"/api/v1/math_guy/{method}",
        content=b"{}",
        headers={"Content-Type": "application/json", "user_id": "u1", "request_id": "r1"},
    )
    assert response.status_code == 200
    assert response.json() == client.get(f"/api/v1/math_guy/{method}").json()


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "connectivity"), ("GET", "function"), ("POST", "streaming_chat")],
)
def test_unknown_agent_is_a_404_status(client: httpx.Client, method: str, path: str) -> None:
    body = {"user_message": {"text": "hi"}} if method == "POST" else None
    response = client.request(method, f"/api/v1/no_such_agent/{path}", json=body)
    assert_status(response, 404, 5, "no_such_agent")


def test_wrong_method_is_a_405_status(client: httpx.Client) -> None:
    assert_status(client.post("/api/v1/hello_world/connectivity", json={}), 405, 12)


# --- streaming chat --------------------------------------------------------------------------------


def test_every_line_is_a_valid_chat_response(client: httpx.Client) -> None:
    response = chat(client, "hello_world", "hi", chat_filter={"chat_filter_type": "MAXIMAL"})
    assert response.headers["content-type"] == "application/json"
    lines = response.text.split("\n")
    assert lines[-1] == "" and len(lines) == 6
    for line in lines[:-1]:
        frame = json.loads(line)
        assert violations("ChatResponse", frame) == [] and set(frame) == {"response"}


@pytest.mark.parametrize("chat_filter", [None, {}, {"chat_filter_type": "MINIMAL"}, {"chat_filter_type": "UNKNOWN"}])
def test_minimal_sends_only_the_answer(client: httpx.Client, chat_filter: dict[str, str] | None) -> None:
    extra = {} if chat_filter is None else {"chat_filter": chat_filter}
    response = chat(client, "hello_world", "good morning", **extra)
    [frame] = frames(response)
    message = frame["response"]
    assert message["type"] == "AGENT_FRAMEWORK"
    assert message["text"] == "Hello, world! You said: good morning. (turn 1)"
    assert message["origin"] == [{"tool": "announcer", "instantiation_index": 0}]
    [history] = message["chat_context"]["chat_histories"]
    assert history["origin"] == [{"tool": "announcer", "instantiation_index": 0}]
    assert [(m["type"], m["text"]) for m in history["messages"]] == [
        ("HUMAN", "good morning"),
        ("AI", "Hello, world! You said: good morning. (turn 1)"),
    ]


def test_maximal_sends_intermediate_messages_first(client: httpx.Client) -> None:
    response = chat(client, "math_guy", "what is 6 * 7?", chat_filter={"chat_filter_type": "MAXIMAL"})
    messages = [f["response"] for f in frames(response)]
    assert [m["type"] for m in messages] == [*INTERMEDIATE, "AGENT_FRAMEWORK"]
    for message in messages:
        assert message["origin"][0] == {"tool": "MathGuy", "instantiation_index": 0}
    assert messages[1]["origin"][1] == {"tool": "calculator", "instantiation_index": 0}
    assert messages[1]["text"] == "Received arguments expression='6 * 7'"
    assert messages[2]["text"] == "42" and messages[2]["tool_result_origin"][1]["tool"] == "calculator"
    assert messages[3]["text"] == messages[4]["text"] == "6 * 7 = 42. (turn 1)"
    assert "chat_context" in messages[4] and all("chat_context" not in m for m in messages[:4])


def test_continuation_grows_the_history_over_three_turns(client: httpx.Client) -> None:
    context: dict[str, Any] | None = None
    said = ["one", "two", "three"]
    for turn, text in enumerate(said, start=1):
        extra = {"chat_context": context} if context else {}
        message = answer(chat(client, "hello_world", text, **extra))
        assert message["text"] == f"Hello, world! You said: {text}. (turn {turn})"
        context = message["chat_context"]
        assert context is not None
        history = context["chat_histories"][0]["messages"]
        assert [m["type"] for m in history] == ["HUMAN", "AI"] * turn
        assert [m["text"] for m in history[::2]] == said[:turn]
        assert history[-1]["text"] == message["text"]


def test_music_nerd_pro_bills_each_turn_in_sly_data(client: httpx.Client) -> None:
    first = answer(chat(client, "music_nerd_pro", "best jazz album?"))
    assert first["sly_data"] == {"running_cost": 3.0}
    second = answer(chat(client, "music_nerd_pro", "and rock?", chat_context=first["chat_context"]))
    assert second["sly_data"] == {"running_cost": 6.0}
    assert "running cost $6.00. (turn 2)" in second["text"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 + 3", "2 + 3 = 5. (turn 1)"),
        ("10 / 4", "10 / 4 = 2.5. (turn 1)"),
        ("1/0", "1/0 = undefined (division by zero). (turn 1)"),
    ],
)
def test_math_guy_calculates(client: httpx.Client, text: str, expected: str) -> None:
    assert answer(chat(client, "math_guy", text))["text"] == expected


def test_another_networks_context_starts_a_new_conversation(client: httpx.Client) -> None:
    context = answer(chat(client, "hello_world", "hi"))["chat_context"]
    message = answer(chat(client, "math_guy", "1 + 1", chat_context=context))
    assert message["text"] == "1 + 1 = 2. (turn 1)"
    assert len(message["chat_context"]["chat_histories"][0]["messages"]) == 2


def test_metadata_headers_are_accepted(client: httpx.Client) -> None:
    response = client.post(
        "/api/v1/hello_world/streaming_chat",
        json={"user_message": {"text": "hey"}},
        headers={"user_id": "someone", "request_id": "abc-123"},
    )
    assert answer(response)["text"] == "Hello, world! You said: hey. (turn 1)"


# --- invalid input -----------------------------------------------------------------------------------


def test_malformed_json_is_a_400_status(client: httpx.Client) -> None:
    response = client.post(
        "/api/v1/hello_world/streaming_chat",
        content=b'{"user_message": ',
        headers={"Content-Type": "application/json"},
    )
    assert_status(response, 400, 3, "JSON")


@pytest.mark.parametrize(
    "body",
    [
        {"user_message": {"text": 5}},
        {"user_message": "hello"},
        {"user_message": {"type": "SHOUT", "text": "hi"}},
        {"user_message": {"text": "hi"}, "chat_filter": {"chat_filter_type": "EVERYTHING"}},
        {"user_message": {"text": "hi"}, "chat_context": {"chat_histories": {"messages": []}}},
        {"user_message": {"text": "hi"}, "chat_context": {"chat_histories": [{"messages": [{"type": 3}]}]}},
        ["not", "an", "object"],
    ],
)
def test_wrong_types_are_a_400_status_with_details(client: httpx.Client, body: Any) -> None:
    status = assert_status(client.post("/api/v1/hello_world/streaming_chat", json=body), 400, 3)
    assert status["details"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"user_message": {"type": "HUMAN"}},
        {"user_message": {"text": "   "}},
        {"user_message": {"type": "AI", "text": "hi"}},
    ],
)
def test_every_request_the_schema_allows_is_answered(client: httpx.Client, body: Any) -> None:
    # the document makes user_message, its text and its type optional: a 400 would reject valid data
    response = client.post("/api/v1/hello_world/streaming_chat", json=body)
    assert response.status_code == 200, response.text
    final = answer(response)
    assert final["type"] == "AGENT_FRAMEWORK" and final["text"], final
    assert not violations("ChatResponse", frames(response)[-1])


def test_missing_body_and_wrong_media_type_are_rejected(client: httpx.Client) -> None:
    assert_status(client.post("/api/v1/hello_world/streaming_chat"), 400, 3)
    plain = {"Content-Type": "text/plain"}
    response = client.post("/api/v1/hello_world/streaming_chat", content=b"hi", headers=plain)
    assert_status(response, 415, 3)


# --- streaming behaviour under configuration -------------------------------------------------------------


def test_frames_are_sent_as_produced(serve: Serve) -> None:
    with (
        serve(protocols=("neuro-san",), stream_delay=0.15) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        body = {"user_message": {"text": "hi"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}
        with http.stream("POST", "/api/v1/hello_world/streaming_chat", json=body) as response:
            arrivals = [(time.monotonic(), json.loads(line)) for line in response.iter_lines() if line]
    assert [f["response"]["type"] for _, f in arrivals] == [*INTERMEDIATE, "AGENT_FRAMEWORK"]
    assert arrivals[-1][0] - arrivals[0][0] >= 0.5  # four pauses between five frames


def test_stream_limit_is_a_503_status(serve: Serve) -> None:
    with serve(protocols=("neuro-san",), limits=MockLimits(max_open_streams=0)) as server:
        url = f"{server.url}/api/v1/hello_world/streaming_chat"
        response = httpx.post(url, json={"user_message": {"text": "x"}})
    assert_status(response, 503, 14)
    assert response.headers["Retry-After"] == "1"


def test_a_client_leaving_mid_stream_frees_its_slot(serve: Serve) -> None:
    body = {"user_message": {"text": "hi"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}
    settings: dict[str, Any] = {"protocols": ("neuro-san",), "stream_delay": 0.1}
    with (
        serve(**settings, limits=MockLimits(max_open_streams=1)) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        path = "/api/v1/hello_world/streaming_chat"
        with http.stream("POST", path, json=body) as response:
            first = next(response.iter_lines())
        assert json.loads(first)["response"]["type"] == "SYSTEM"
        for _ in range(50):  # the server notices on its next write, one delay later
            again = http.post(path, json={"user_message": {"text": "again"}})
            if again.status_code != 503:
                break
            time.sleep(0.05)
    assert answer(again)["text"] == "Hello, world! You said: again. (turn 1)"


def test_the_stall_fault_holds_the_stream_until_the_client_leaves(serve: Serve) -> None:
    """One frame then silence; the stalled handler ends with its connection, freeing its slot."""
    settings: dict[str, Any] = {"protocols": ("neuro-san",), "faults": ("ns-stream-stall",)}
    with (
        serve(**settings, limits=MockLimits(max_open_streams=1)) as server,
        httpx.Client(base_url=server.url, timeout=httpx.Timeout(5, read=0.5)) as http,
    ):
        path = "/api/v1/hello_world/streaming_chat"
        body = {"user_message": {"text": "hi"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}
        for _ in range(2):  # the second stream gets the only slot: the first handler has ended
            with http.stream("POST", path, json=body) as response:
                assert response.status_code == 200
                lines = response.iter_lines()
                assert json.loads(next(lines))["response"]["type"] == "SYSTEM"
                with pytest.raises(httpx.ReadTimeout):
                    next(lines)
            time.sleep(0.3)  # the handler polls its connection every 0.1 s


# --- the document, checked by openapi-core -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/v1/hello_world/connectivity", None),
        ("GET", "/api/v1/nobody/connectivity", None),
        ("GET", "/api/v1/music_nerd_pro/function", None),
        ("GET", "/api/v1/nobody/function", None),
        ("POST", "/api/v1/nobody/streaming_chat", {"user_message": {"text": "hi"}}),
        ("POST", "/api/v1/math_guy/streaming_chat", {"user_message": {"text": 1}}),
    ],
)
def test_json_answers_match_the_document(client: httpx.Client, method: str, path: str, body: Any) -> None:
    response = client.request(method, path, json=body)
    validate_exchange(SPEC, response, check_request=response.status_code != 400)  # 400: a malformed body


def test_list_matches_the_upstream_profile(client: httpx.Client) -> None:
    validate_exchange(UPSTREAM, client.get("/api/v1/list"))


def test_streaming_chat_request_and_frames_match_the_document(client: httpx.Client) -> None:
    first = answer(chat(client, "music_nerd_pro", "why vinyl?"))
    body = {
        "user_message": {"type": "HUMAN", "text": "and tape?"},
        "chat_context": first["chat_context"],
        "chat_filter": {"chat_filter_type": "MAXIMAL"},
        "sly_data": first["sly_data"],
    }
    response = client.post("/api/v1/music_nerd_pro/streaming_chat", json=body)
    # the continuation request the mock itself asks for; the stream is checked frame by frame below
    validate_exchange(SPEC, response, check_response=False)
    for frame in frames(response):
        assert violations("ChatResponse", frame) == []
