"""Stubs (mockserver/stubs.py): matched in order after validation, answered as a body, a stream or
the protocol's own error, counted, validated against the document with the path named, and
managed from a file or the admin API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.stubs import StubError, check_schema, schema
from specs.documents import PROTOCOLS

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "stubs.yaml"
AUTH = {"Authorization": "Bearer alice-token"}
TASK = {"task_id": "t-9", "input": "stubbed", "additional_input": {}, "artifacts": []}


def stub(operation: str, response: dict[str, Any], protocol: str = "agent-protocol", **request: Any) -> dict[str, Any]:
    return {"request": {"protocol": protocol, "operation": operation, **request}, "response": response}


def chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "sgr_agent_1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@pytest.fixture
def stubbed(serve: Serve) -> Callable[..., AbstractContextManager[EmbeddedServer]]:
    def start(*stubs: dict[str, Any], **settings: Any) -> AbstractContextManager[EmbeddedServer]:
        return serve(stubs={"stubs": list(stubs)}, **settings)

    return start


def test_a_body_stub_answers_its_call_and_only_it(stubbed: Any) -> None:
    with (
        stubbed(stub("getAgentTask", {"body": TASK}, path={"task_id": "t-9"})) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        assert c.get("/ap/v1/agent/tasks/t-9").json() == TASK
        other = c.get("/ap/v1/agent/tasks/t-8")
        assert other.status_code == 404 and "message" in other.json()  # the handler's answer


def test_a_stubbed_call_changes_no_state(stubbed: Any) -> None:
    with stubbed(stub("createAgentTask", {"body": TASK})) as server, httpx.Client(base_url=server.url) as c:
        assert c.post("/ap/v1/agent/tasks", json={"input": "x"}).json() == TASK
        assert c.get("/ap/v1/agent/tasks").json()["pagination"]["total_items"] == 0


def test_times_then_the_next_stub_then_the_handler(stubbed: Any) -> None:
    first = {**stub("createAgentTask", {"body": {**TASK, "task_id": "first"}}), "times": 2}
    second = {**stub("createAgentTask", {"body": {**TASK, "task_id": "second"}}), "times": 1}
    with stubbed(first, second) as server, httpx.Client(base_url=server.url) as c:
        ids = [c.post("/ap/v1/agent/tasks", json={"input": "x"}).json()["task_id"] for _ in range(4)]
        assert ids[:3] == ["first", "first", "second"] and ids[3] not in ("first", "second")
        hits = {s["response"]["body"]["task_id"]: s["hits"] for s in c.get("/__mock/stubs").json()["stubs"]}
        assert hits == {"first": 2, "second": 1}
        c.post("/__mock/reset/agent-protocol")  # a reset starts the counts again
        assert c.post("/ap/v1/agent/tasks", json={"input": "x"}).json()["task_id"] == "first"


def test_body_header_query_and_identity_predicates(stubbed: Any) -> None:
    stubs = [
        stub("createAgentTask", {"body": {**TASK, "task_id": "owls"}}, body=[{"pointer": "/input", "contains": "owl"}]),
        stub("createAgentTask", {"body": {**TASK, "task_id": "traced"}}, headers={"X-Trace": {"present": True}}),
        stub("listAgentTasks", {"body": {"tasks": [], "pagination": {"total_items": 99, "total_pages": 1,
             "current_page": 2, "page_size": 10}}}, query={"current_page": 2}),
        stub("getMyOwnUserProfile", {"body": {"ownerId": "1", "userName": "bob?", "displayName": "B", "emails": []}},
             protocol="synapse-agent", identity="bob"),
    ]  # fmt: skip
    with stubbed(*stubs) as server, httpx.Client(base_url=server.url) as c:
        assert c.post("/ap/v1/agent/tasks", json={"input": "an owl"}).json()["task_id"] == "owls"
        assert c.post("/ap/v1/agent/tasks", json={"input": "x"}, headers={"X-Trace": "1"}).json()["task_id"] == "traced"
        assert c.post("/ap/v1/agent/tasks", json={"input": "x"}).json()["task_id"] not in ("owls", "traced")
        assert c.get("/ap/v1/agent/tasks?current_page=2").json()["pagination"]["total_items"] == 99
        assert c.get("/ap/v1/agent/tasks").json()["pagination"]["total_items"] == 1
        assert c.get("/repo/v1/userProfile", headers={"Authorization": "Bearer bob-token"}).json()["userName"] == "bob?"
        assert c.get("/repo/v1/userProfile", headers=AUTH).json()["userName"] == "alice"


def test_stubs_match_after_auth_and_validation(stubbed: Any) -> None:
    profile = {"ownerId": "1", "userName": "u", "displayName": "U", "emails": []}
    always = stub("getMyOwnUserProfile", {"body": profile}, protocol="synapse-agent")
    with stubbed(always, stub("createAgentTask", {"body": TASK})) as server, httpx.Client(base_url=server.url) as c:
        assert c.get("/repo/v1/userProfile").status_code == 401
        assert c.post("/ap/v1/agent/tasks", json={"input": 5}).status_code == 422


def test_an_sse_stream_with_per_frame_delays(stubbed: Any) -> None:
    frames = [{"data": chunk("Owls ")}, {"data": chunk("hoot."), "delay": 0.2}, {"data": chunk(None, "stop")}]
    answer = {"headers": {"X-Agent-ID": "sgr_agent_1"}, "stream": {"frames": frames}}
    with (
        stubbed(stub("createChatCompletion", answer, protocol="sgr-agent-core")) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        started = time.monotonic()
        with c.stream(
            "POST", "/v1/chat/completions", json={"model": "sgr_agent", "messages": [{"role": "user", "content": "x"}]}
        ) as r:
            text = r.read().decode()
        assert time.monotonic() - started >= 0.2  # the delay is a lower bound, whatever the machine
        assert r.headers["Content-Type"].startswith("text/event-stream") and r.headers["X-Agent-ID"] == "sgr_agent_1"
        events = [block.removeprefix("data: ") for block in text.strip().split("\n\n")]
        assert [json.loads(e) for e in events[:-1]] == [f["data"] for f in frames] and events[-1] == "[DONE]"


def test_an_sse_frame_with_an_event_type_is_a_named_event_whose_data_is_not_the_documents(stubbed: Any) -> None:
    """``event: NAME`` (the client scenario unknown-event): data no chunk schema allows is still sent,
    as the document describes only the message events' data; the frames around it are checked."""
    frames = [
        {"data": chunk("Owls ")},
        {"data": {"progress": 0.5}, "event": "x-progress"},
        {"data": chunk(None, "stop")},
    ]
    with (
        stubbed(stub("createChatCompletion", {"stream": {"frames": frames}}, protocol="sgr-agent-core")) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        body = {"model": "sgr_agent", "messages": [{"role": "user", "content": "x"}]}
        blocks = c.post("/v1/chat/completions", json=body).text.strip().split("\n\n")
    named, data = blocks[1].split("\n")
    assert named == "event: x-progress" and json.loads(data.removeprefix("data: ")) == {"progress": 0.5}
    assert blocks[0].startswith("data: ") and blocks[-1] == "data: [DONE]"
    unnamed = stub("createChatCompletion", {"stream": {"frames": [frames[1]]}}, protocol="sgr-agent-core")
    del unnamed["response"]["stream"]["frames"][0]["event"]
    with pytest.raises(StubError, match=r"frames\[0\]\.data"):  # a message event's data is the document's
        create_app(MockConfig(stubs={"stubs": [unnamed]}))


def test_an_ndjson_stream(stubbed: Any) -> None:
    frames = [{"data": {"response": {"type": "AI", "text": t}}} for t in ("one", "two")]
    answer = {"stream": {"frames": frames}}
    with (
        stubbed(stub("AgentService_StreamingChat", answer, protocol="neuro-san")) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        r = c.post("/api/v1/hello_world/streaming_chat", json={"user_message": {"text": "hi"}})
        assert [json.loads(line) for line in r.text.splitlines()] == [f["data"] for f in frames]
        assert r.headers["Content-Type"] == "application/json"  # the document's media type


@pytest.mark.parametrize(
    ("protocol", "operation", "path", "status", "check"),
    [
        ("agent-protocol", "getAgentTask", "/ap/v1/agent/tasks/x", 404, lambda b: b == {"message": "gone"}),
        ("neuro-san", "AgentService_Function", "/api/v1/hello_world/function", 404, lambda b: b["message"] == "gone"
         and b["code"] == 5),
        ("sgr-agent-core", "getAgentState", "/agents/x/state", 404, lambda b: b == {"detail": "gone"}),
        ("synapse-agent", "getAgentSession", "/repo/v1/agent/session/x", 403, lambda b: b["reason"] == "gone"),
    ],
)  # fmt: skip
def test_an_error_in_the_protocols_own_shape(
    stubbed: Any, protocol: str, operation: str, path: str, status: int, check: Callable[[Any], bool]
) -> None:
    answer = {"error": {"status": status, "message": "gone"}}
    with stubbed(stub(operation, answer, protocol=protocol)) as server, httpx.Client(base_url=server.url) as c:
        got = c.get(path, headers=AUTH)
        assert got.status_code == status and check(got.json()), got.text


PROFILE = "getMyOwnUserProfile"
CHAT = "createChatCompletion"
REFUSED = [
    (stub("createAgentTask", {"body": {**TASK, "task_id": 7}}), "stubs[0].response.body/task_id: 7 is not of type"),
    (stub("createAgentTask", {"status": 201, "body": TASK}), "stubs[0].response: createAgentTask's 201 answer has no"),
    (
        stub(PROFILE, {"error": {"status": 403}}, protocol="synapse-agent"),
        f"stubs[0].response.error.status: {PROFILE} documents no 403 answer (it documents 200, 401)",
    ),
    (stub(PROFILE, {"status": 202, "body": {}}, protocol="synapse-agent"), "stubs[0].response.status: "),
    (
        stub("health", {"body": {"status": 1, "service": "x"}}, protocol="sgr-agent-core"),
        "stubs[0].response.body/status",
    ),
    (
        stub(CHAT, {"stream": {"frames": [{"data": {"object": "chat.completion.chunk"}}]}}, protocol="sgr-agent-core"),
        "stubs[0].response.stream.frames[0].data: ",
    ),
    (stub("createAgentTask", {"body": TASK, "content_type": "text/plain"}), "stubs[0].response.content_type: "),
    (stub("nope", {"body": {}}), "stubs[0].request.operation: agent-protocol has no operation 'nope'"),
    (stub("getAgentTask", {"body": TASK}, path={"id": "x"}), "stubs[0].request.path.id: getAgentTask has no"),
    (stub("getAgentTask", {"body": TASK}, protocol="toy"), "stubs[0].request.protocol: 'toy' is not served"),
    ({**stub("createAgentTask", {"body": TASK}), "times": 0}, "stubs[0].times: 0 is less than the minimum"),
    ({"request": {"operation": "createAgentTask"}, "response": {}}, 'stubs[0].request: "protocol" is a required'),
    (
        stub("createAgentTask", {"body": TASK, "error": {"status": 422}}),
        "stubs[0].response: give one of body, body_base64, stream, error, not body and error",
    ),
    (stub("createAgentTask", {"body": TASK}, body=[{"pointer": "/a", "matches": "("}]), "stubs[0].request.body[0]"),
]


@pytest.mark.parametrize(("bad", "message"), REFUSED)
def test_a_stub_that_violates_the_document_is_refused_with_the_path(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(StubError, match="^" + re.escape(message)):
        create_app(MockConfig(stubs={"stubs": [bad]}))


def test_invalid_true_serves_what_the_document_forbids(stubbed: Any) -> None:
    off = stub("createAgentTask", {"status": 201, "body": {"task_id": 7}, "invalid": True})
    with stubbed(off) as server, httpx.Client(base_url=server.url) as c:
        got = c.post("/ap/v1/agent/tasks", json={})
        assert got.status_code == 201 and got.json() == {"task_id": 7}


def test_a_gzip_stub_encodes_only_for_a_client_that_accepts_gzip(stubbed: Any) -> None:
    coded = stub("getAgentTask", {"body": TASK, "encoding": "gzip"}, path={"task_id": "t-9"})
    with stubbed(coded) as server, httpx.Client(base_url=server.url) as c:
        for accept in ("gzip", "br, gzip;q=0.5", "*", "x-gzip"):
            got = c.get("/ap/v1/agent/tasks/t-9", headers={"Accept-Encoding": accept})
            assert got.headers["Content-Encoding"] == "gzip", accept
            assert got.json() == TASK and got.headers["Vary"] == "Accept-Encoding"  # httpx undid the coding
        # RFC 9110 §12.5.3: none named, identity only, or gzip refused (q=0): the body as it is
        for accept in (None, "identity", "gzip;q=0", "br", "*;q=0"):
            headers = {"Accept-Encoding": accept} if accept is not None else {}
            # a bare Request carries no client defaults: no Accept-Encoding unless given
            got = c.send(httpx.Request("GET", f"{server.url}/ap/v1/agent/tasks/t-9", headers=headers))
            assert "Content-Encoding" not in got.headers, accept
            assert json.loads(got.content) == TASK


def test_an_encoding_without_a_body_is_refused() -> None:
    bad = stub("getAgentTask", {"status": 404, "invalid": True, "encoding": "gzip"})
    with pytest.raises(StubError, match=re.escape("stubs[0].response.encoding: only a body")):
        create_app(MockConfig(stubs={"stubs": [bad]}))


def test_an_answer_without_a_body_has_no_type_unless_the_stub_gives_one(stubbed: Any) -> None:
    bare = stub("getAgentTask", {"status": 200, "invalid": True}, path={"task_id": "bare"})
    typed = stub("getAgentTask", {"status": 200, "invalid": True, "content_type": "text/plain"}, path={"task_id": "t"})
    with stubbed(bare, typed) as server, httpx.Client(base_url=server.url) as c:
        empty = c.get("/ap/v1/agent/tasks/bare")
        assert (empty.status_code, empty.content, empty.headers.get("Content-Type")) == (200, b"", None)
        assert c.get("/ap/v1/agent/tasks/t").headers["Content-Type"].startswith("text/plain")


def test_the_journal_names_the_stub_that_answered(stubbed: Any) -> None:
    named = {**stub("getAgentTask", {"body": TASK}), "id": "the-task"}
    with stubbed(named, journal=10) as server, httpx.Client(base_url=server.url) as c:
        c.get("/ap/v1/agent/tasks/t-9")
        c.get("/ap/v1/agent/tasks")
        entries = c.get("/__mock/journal").json()["entries"]
        assert [(e["operation"], e["stub"]) for e in entries] == [
            ("listAgentTasks", None),
            ("getAgentTask", "the-task"),
        ]
        assert entries[1]["request"]["path_params"] == {"task_id": "t-9"}


def test_the_admin_api_lists_adds_replaces_and_deletes(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        assert c.get("/__mock/stubs").json() == {"stubs": [], "data": {}}
        added = c.post("/__mock/stubs", json={**stub("getAgentTask", {"body": TASK}), "id": "one"})
        assert added.status_code == 201 and added.json()["id"] == "one" and added.json()["hits"] == 0
        assert c.get("/ap/v1/agent/tasks/t-9").json() == TASK
        assert c.get("/__mock/stubs/one").json()["hits"] == 1
        assert c.post("/__mock/stubs", json={**stub("getAgentTask", {"body": TASK}), "id": "one"}).status_code == 400
        other = {**TASK, "input": "replaced"}
        assert c.put("/__mock/stubs/one", json=stub("getAgentTask", {"body": other})).json()["id"] == "one"
        assert c.get("/ap/v1/agent/tasks/t-9").json()["input"] == "replaced"
        refused = c.put("/__mock/stubs/one", json=stub("getAgentTask", {"body": {**TASK, "task_id": 1}}))
        assert refused.status_code == 400 and refused.json()["error"].startswith("stub.response.body/task_id")
        assert c.get("/ap/v1/agent/tasks/t-9").json()["input"] == "replaced"  # a refusal changes nothing
        assert c.delete("/__mock/stubs/one").json() == {"deleted": "one"}
        assert c.get("/ap/v1/agent/tasks/t-9").status_code == 404
        assert c.get("/__mock/stubs/one").status_code == 404
        document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
        put = c.put("/__mock/stubs", content=EXAMPLE.read_bytes(), headers={"Content-Type": "application/yaml"})
        assert put.status_code == 200 and len(put.json()["stubs"]) == len(document["stubs"])
        assert put.json()["data"] == document["data"]
        bad = c.put("/__mock/stubs", json={"stubs": [stub("getAgentTask", {"status": 299, "body": TASK})]})
        assert bad.status_code == 400 and "stubs[0].response: getAgentTask's 299 answer" in bad.json()["error"]
        assert len(c.get("/__mock/stubs").json()["stubs"]) == len(document["stubs"])
        assert c.delete("/__mock/stubs").json() == {"stubs": [], "data": {}}
        assert c.get("/__mock/stubs/schema").json() == schema()


def test_the_published_schema_holds_the_example_and_names_paths() -> None:
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    check_schema("doc", document)
    create_app(MockConfig(stubs=document))  # and the mock takes it whole
    with pytest.raises(StubError, match=r"^doc\.stubs\[1\]\.response\.stream\.frames\[0\]\.delay: 61"):
        broken = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
        broken["stubs"][1]["response"] = {"stream": {"frames": [{"data": {}, "delay": 61}]}}
        check_schema("doc", broken)


def test_data_stubs_of_a_protocol_not_served_or_that_takes_none_are_refused() -> None:
    with pytest.raises(StubError, match=r"^data\.neuro-san: not served here"):
        create_app(MockConfig(protocols=("agent-protocol",), stubs={"data": {"neuro-san": {}}}))
    with pytest.raises(StubError, match=r"^data\.agent-protocol: unknown field\(s\) tasks"):
        create_app(MockConfig(stubs={"data": {"agent-protocol": {"tasks": []}}}))


def test_the_cli_takes_a_stubs_file_and_refuses_a_bad_one(tmp_path: Path) -> None:
    bad = tmp_path / "stubs.yaml"
    bad.write_text(yaml.safe_dump({"stubs": [stub("getAgentTask", {"body": {**TASK, "task_id": 1}})]}))
    done = subprocess.run(
        [sys.executable, "-m", "mockserver", "--port", "0", "--stubs", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"error: stubs ({bad}): stubs[0].response.body/task_id: 1 is not of type" in done.stderr


@pytest.fixture(scope="module")
def every_protocol() -> Iterator[list[str]]:
    yield [pid for pid, info in PROTOCOLS.items() if info.mock]


def test_no_protocol_is_left_without_data_stubs(every_protocol: list[str]) -> None:
    """Every protocol of the kit reads data stubs (an empty part is fine)."""
    create_app(MockConfig(stubs={"data": {pid: {} for pid in every_protocol}}))
