"""The verify API (POST /__mock/requests/count and /find, the stub matcher's predicates over the
journal), the journal's identity and stub, its HAR 1.2 export, and counts that match the journal
under 200 concurrent clients."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import aiohttp
import httpx
import pytest

from mockserver import EmbeddedServer
from tests.har import har_problems

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
TASK = {"task_id": "t-1", "input": "stubbed", "additional_input": {}, "artifacts": []}
STUB = {
    "id": "the-task",
    "request": {"protocol": "agent-protocol", "operation": "getAgentTask", "path": {"task_id": "t-1"}},
    "response": {"body": TASK},
}


@pytest.fixture
def c(serve: Serve) -> Iterator[httpx.Client]:
    with serve(journal=500, stubs={"stubs": [STUB]}) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def count(c: httpx.Client, **request: Any) -> int:
    answer = c.post("/__mock/requests/count", json=request)
    assert answer.status_code == 200, answer.text
    found: int = answer.json()["count"]
    return found


def test_count_and_find_with_the_stub_matchers_predicates(c: httpx.Client) -> None:
    for text in ("owls one", "owls two", "cats"):
        c.post("/ap/v1/agent/tasks", json={"input": text, "additional_input": {"n": len(text)}})
    c.get("/ap/v1/agent/tasks?page_size=5")
    c.get("/ap/v1/agent/tasks/t-1")
    c.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=ALICE)
    c.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=BOB)
    assert count(c, operation="createAgentTask") == 3
    assert count(c, operation="createAgentTask", body=[{"pointer": "/input", "contains": "owls"}]) == 2
    assert count(c, body=[{"pointer": "/additional_input/n", "equals": 4}]) == 1
    assert count(c, operation="listAgentTasks", query={"page_size": 5}) == 1
    assert count(c, protocol="agent-protocol", path={"task_id": "t-1"}) == 1
    assert count(c, protocol="synapse-agent", identity="alice") == 1
    assert count(c, headers={"Authorization": {"matches": "^Bearer "}}) == 2  # seen redacted: the scheme stays
    assert count(c) == 7  # every journalled request
    found = c.post(
        "/__mock/requests/find",
        json={"operation": "createAgentTask", "body": [{"pointer": "/input", "matches": "^owls"}]},
    )
    assert [json.loads(r["request"]["body"]["text"])["input"] for r in found.json()["requests"]] == [
        "owls two",
        "owls one",
    ]


def test_the_journal_names_the_identity_and_the_stub(c: httpx.Client) -> None:
    c.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=ALICE)
    c.get("/repo/v1/userProfile", headers={"Authorization": "Bearer nobody"})
    c.get("/ap/v1/agent/tasks/t-1")
    entries = c.get("/__mock/journal").json()["entries"]
    assert [(e["operation"], e["identity"], e["stub"]) for e in entries] == [
        ("getAgentTask", None, "the-task"),
        ("getMyOwnUserProfile", None, None),  # a token nobody holds names nobody
        ("createAgentSession", "alice", None),  # the user, never the token
    ]
    assert "alice-token" not in json.dumps(entries)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"operation": "nope"}, "request.operation: no served protocol has an operation 'nope'"),
        ({"verb": "GET"}, "request: "),
        ({"body": [{"pointer": "x", "equals": 1}]}, "request.body[0].pointer: "),
    ],
)
def test_bad_predicates_are_a_clear_400(c: httpx.Client, request_: Any, message: str) -> None:
    answer = c.post("/__mock/requests/count", json=request_)
    assert answer.status_code == 400 and answer.json()["error"].startswith(message), answer.text


def test_verify_wants_the_journal(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        for path in ("/__mock/requests/count", "/__mock/requests/find"):
            answer = c.post(path, json={})
            assert answer.status_code == 409 and "--journal" in answer.json()["error"]
        assert c.get("/__mock/journal.har").status_code == 409


def test_the_journal_exports_as_har_1_2(c: httpx.Client) -> None:
    c.post("/ap/v1/agent/tasks", json={"input": "hello"}, headers={"Authorization": "Bearer secret"})
    c.get("/ap/v1/agent/tasks/t-1")
    with c.stream(
        "POST", "/v1/chat/completions", json={"model": "sgr_agent", "messages": [{"role": "user", "content": "owls"}]}
    ) as r:
        r.read()
    c.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=ALICE)
    document = c.get("/__mock/journal.har").json()
    assert har_problems(document) == []
    entries = document["log"]["entries"]
    assert [e["_operation"] for e in entries] == [
        "createAgentTask",
        "getAgentTask",
        "createChatCompletion",
        "createAgentSession",
    ]  # oldest first
    first = entries[0]
    assert first["request"]["url"].endswith("/ap/v1/agent/tasks") and first["response"]["status"] == 200
    assert json.loads(first["request"]["postData"]["text"]) == {"input": "hello"}
    assert entries[1]["_stub"] == "the-task" and entries[3]["_identity"] == "alice"
    assert entries[2]["_frames"] > 1 and "data: [DONE]" in entries[2]["response"]["content"]["text"]
    text = json.dumps(document)
    assert "secret" not in text and "alice-token" not in text


def test_counts_match_the_journal_under_200_concurrent_clients(serve: Serve) -> None:
    clients, each = 200, 5

    async def client(url: str, number: int, session: aiohttp.ClientSession) -> None:
        for turn in range(each):
            body = {"input": f"client-{number} turn-{turn}"}
            async with session.post(url + "/ap/v1/agent/tasks", json=body) as answer:
                assert answer.status == 200

    async def run(url: str) -> None:
        connector = aiohttp.TCPConnector(limit=clients)
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as session:
            await asyncio.gather(*(client(url, n, session) for n in range(clients)))

    with (
        serve(protocols=("agent-protocol",), journal=2000) as server,
        httpx.Client(base_url=server.url, timeout=30) as c,
    ):
        asyncio.run(run(server.url))
        journal = c.get("/__mock/journal", params={"limit": 2000}).json()
        assert journal["total"] == clients * each  # every exchange journalled
        assert count(c, operation="createAgentTask") == clients * each
        for number in (0, 17, 199):
            pointer = [{"pointer": "/input", "matches": f"^client-{number} "}]
            assert count(c, body=pointer) == each
            inputs = [json.loads(e["request"]["body"]["text"])["input"] for e in journal["entries"]]
            assert sum(i.startswith(f"client-{number} ") for i in inputs) == each
        assert c.get("/ap/v1/agent/tasks").json()["pagination"]["total_items"] == clients * each
