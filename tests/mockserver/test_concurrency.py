"""Many concurrent clients against one mock: nothing lost, duplicated or cross-wired.

Each of CLIENTS clients (asyncio, one aiohttp session and connection pool each) runs rounds of
work on all four protocols at once, interleaved with the others:

- Agent Protocol: a task with its own input and additional_input, its steps until ``is_last``, an
  uploaded artifact with its own bytes; then everything read back by id, by list and by download.
- SGR: a research stream whose every chunk must carry its own agent id and whose report must quote
  its own task; then the agent's state.
- NeuroSan: a MAXIMAL hello_world stream that must echo its own text, and a math_guy stream that
  must compute its own sum.
- Synapse: a session (alice and bob alternate) and a traced chat job polled to its end; the
  answer, history, trace and session must all be this client's own.

Afterwards the lists are audited: ids unique, totals equal to what was created, pages disjoint and
complete, and each Synapse user's list holding exactly that user's sessions.

The CI profile is 200 clients for about 5 s. The recorded larger run (docs/reliability.md) is:
``MOCK_LOAD_CLIENTS=500 MOCK_LOAD_SECONDS=60 pytest tests/mockserver/test_concurrency.py -s``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.synapse_agent.models import answer_for

pytestmark = pytest.mark.slow

CLIENTS = int(os.environ.get("MOCK_LOAD_CLIENTS", "200"))
SECONDS = float(os.environ.get("MOCK_LOAD_SECONDS", "5"))
"""Each client starts rounds until this many seconds have passed (0: one round each)."""
HARD_LIMIT_S = max(60.0, 3 * SECONDS)
"""Bound on the whole load phase, whatever happens."""
STREAM_DELAY = 0.002
"""Frames 2 ms apart, so concurrent streams are open at the same time and interleave."""
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
USER_IDS = {"alice": 1000, "bob": 1001}


@dataclass
class Ledger:
    """What the clients created (by the server's ids) and what the load looked like."""

    tasks: dict[str, int] = field(default_factory=dict)
    """task id -> number of steps executed."""
    steps: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    sessions: dict[str, list[str]] = field(default_factory=lambda: {"alice": [], "bob": []})
    jobs: list[str] = field(default_factory=list)
    streams: int = 0
    frames: int = 0
    refused: int = 0
    """Streams refused with 503 + Retry-After (the open-stream limit) and retried."""
    latencies: list[float] = field(default_factory=list)
    rounds: int = 0
    failures: list[str] = field(default_factory=list)

    def requests(self) -> int:
        return len(self.latencies)


class Client:
    def __init__(self, number: int, base: str, ledger: Ledger) -> None:
        self.number = number
        self.base = base
        self.ledger = ledger
        self.user = "alice" if number % 2 == 0 else "bob"
        self.auth = ALICE if self.user == "alice" else BOB
        self.http = aiohttp.ClientSession(base, timeout=aiohttp.ClientTimeout(total=30))

    async def call(self, method: str, path: str, expect: int | tuple[int, ...] = 200, **kwargs: Any) -> Any:
        """One request; a 503 stream refusal is retried after its Retry-After. Returns the body
        (JSON, or bytes) and the response."""
        expected = (expect,) if isinstance(expect, int) else expect
        for _ in range(50):
            started = time.monotonic()
            async with self.http.request(method, path, **kwargs) as response:
                raw = await response.read()
                self.ledger.latencies.append(time.monotonic() - started)
                if response.status == 503 and "Retry-After" in response.headers and 503 not in expected:
                    self.ledger.refused += 1
                    await asyncio.sleep(min(float(response.headers["Retry-After"]), 1.0) * 0.2)
                    continue
                assert response.status in expected, f"{method} {path}: {response.status} {raw[:300]!r}"
                return raw, response
        raise AssertionError(f"{method} {path}: refused 50 times")

    async def json(self, method: str, path: str, expect: int | tuple[int, ...] = 200, **kwargs: Any) -> Any:
        raw, _ = await self.call(method, path, expect, **kwargs)
        return json.loads(raw)

    # -- Agent Protocol ---------------------------------------------------------------------------
    async def agent_protocol(self, tag: str) -> None:
        root = "/ap/v1/agent/tasks"
        words = " gamma" * (self.number % 3)  # 2, 3 or 4 planned steps
        sent = {"input": f"{tag} alpha beta{words}", "additional_input": {"client": self.number, "tag": tag}}
        task = await self.json("POST", root, json=sent)
        task_id = task["task_id"]
        assert (task["input"], task["additional_input"]) == (sent["input"], sent["additional_input"])
        steps: list[dict[str, Any]] = []
        for n in range(6):
            step = await self.json("POST", f"{root}/{task_id}/steps", json={"input": f"{tag} step {n}"})
            assert step["task_id"] == task_id and step["input"] == f"{tag} step {n}", step
            steps.append(step)
            if step["is_last"]:
                break
        assert steps[-1]["is_last"], steps
        data = f"{tag} bytes {uuid.uuid4()}".encode()
        form = aiohttp.FormData()
        form.add_field("file", data, filename=f"{tag}.bin", content_type="application/octet-stream")
        form.add_field("relative_path", f"client{self.number}")
        upload = await self.json("POST", f"{root}/{task_id}/artifacts", data=form)
        assert upload["file_name"] == f"{tag}.bin" and upload["relative_path"] == f"client{self.number}"
        outputs = [a["artifact_id"] for s in steps for a in s["artifacts"]]

        read = await self.json("GET", f"{root}/{task_id}")
        assert (read["input"], read["additional_input"]) == (sent["input"], sent["additional_input"])
        assert {a["artifact_id"] for a in read["artifacts"]} == {*outputs, upload["artifact_id"]}
        listed = await self.json("GET", f"{root}/{task_id}/steps", params={"page_size": "100"})
        assert [s["step_id"] for s in listed["steps"]] == [s["step_id"] for s in steps]
        assert listed["pagination"]["total_items"] == len(steps)
        for step in steps:
            assert await self.json("GET", f"{root}/{task_id}/steps/{step['step_id']}") == step
        artifacts = await self.json("GET", f"{root}/{task_id}/artifacts", params={"page_size": "100"})
        assert artifacts["pagination"]["total_items"] == len(outputs) + 1
        downloaded, _ = await self.call("GET", f"{root}/{task_id}/artifacts/{upload['artifact_id']}")
        assert downloaded == data
        output, _ = await self.call("GET", f"{root}/{task_id}/artifacts/{outputs[-1]}")
        assert output.decode() == steps[-1]["output"] and tag in output.decode()
        self.ledger.tasks[task_id] = len(steps)
        self.ledger.steps += [s["step_id"] for s in steps]
        self.ledger.artifacts += [*outputs, upload["artifact_id"]]

    # -- SGR Agent Core -----------------------------------------------------------------------------
    async def sgr(self, tag: str) -> None:
        text = f"research {tag.replace('-', ' ')} markets"
        body = {"model": "sgr_agent", "messages": [{"role": "user", "content": text}], "stream": True}
        raw, response = await self.call("POST", "/v1/chat/completions", json=body)
        agent_id = response.headers["X-Agent-ID"]
        events = [block.removeprefix("data: ") for block in raw.decode().split("\n\n") if block]
        assert events[-1] == "[DONE]", events[-3:]
        chunks = [json.loads(e) for e in events[:-1]]
        assert {c["model"] for c in chunks} == {agent_id}, "a chunk of another agent's stream"
        content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        assert f"Agent {agent_id} started" in content and f"Task: {text}" in content, content
        self.ledger.streams += 1
        self.ledger.frames += len(events)
        state = await self.json("GET", f"/agents/{agent_id}/state")
        assert state["state"] == "completed" and f"Task: {text}" in state["execution_result"], state
        assert state["task_messages"] == body["messages"]
        self.ledger.agents.append(agent_id)

    # -- NeuroSan -------------------------------------------------------------------------------------
    async def neuro_san(self, tag: str) -> None:
        text = f"{tag} says hi"
        body = {"user_message": {"type": "HUMAN", "text": text}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}
        raw, _ = await self.call("POST", "/api/v1/hello_world/streaming_chat", json=body)
        frames = [json.loads(line)["response"] for line in raw.decode().splitlines() if line]
        assert frames[-1]["text"] == f"Hello, world! You said: {text}. (turn 1)", frames[-1]
        assert f"inquiry={text!r}" in frames[1]["text"], frames[1]
        a, b = self.number, len(tag)
        math = {"user_message": {"type": "HUMAN", "text": f"what is {a} + {b}"}}
        raw2, _ = await self.call("POST", "/api/v1/math_guy/streaming_chat", json=math)
        final = json.loads(raw2.decode().splitlines()[-1])["response"]
        assert final["text"] == f"{a} + {b} = {a + b}. (turn 1)", final
        self.ledger.streams += 2
        self.ledger.frames += len(frames) + 1

    # -- Synapse ----------------------------------------------------------------------------------------
    async def synapse(self, tag: str) -> None:
        root = "/repo/v1"
        session = await self.json(
            "POST", f"{root}/agent/session", 201, headers=self.auth, json={"agentAccessLevel": "READ_YOUR_PRIVATE_DATA"}
        )
        session_id = session["sessionId"]
        assert session["startedBy"] == USER_IDS[self.user]
        text = f"{tag} asks {uuid.uuid4()}"
        start = {"sessionId": session_id, "chatText": text, "enableTrace": True}
        started = await self.json("POST", f"{root}/agent/chat/async/start", 201, headers=self.auth, json=start)
        job_id = started["token"]
        for _ in range(200):
            raw, response = await self.call(
                "GET", f"{root}/agent/chat/async/get/{job_id}", (200, 202), headers=self.auth
            )
            if response.status == 200:
                break
            status = json.loads(raw)
            assert status["jobId"] == job_id and status["requestBody"]["chatText"] == text, status
            await asyncio.sleep(0.02)
        result = json.loads(raw)
        assert result == {
            "concreteType": "org.sagebionetworks.repo.model.agent.AgentChatResponse",
            "sessionId": session_id,
            "responseText": answer_for(text),
        }, result
        history = await self.json("POST", f"{root}/agent/session/history/{session_id}", headers=self.auth, json={})
        assert history["sessionId"] == session_id
        assert [(i["requestText"], i["responseText"]) for i in history["page"]] == [(text, answer_for(text))]
        trace = await self.json("POST", f"{root}/agent/chat/trace/{job_id}", headers=self.auth, json={})
        assert trace["jobId"] == job_id and any(text[:200] in e["message"] for e in trace["page"]), trace
        read = await self.json("GET", f"{root}/agent/session/{session_id}", headers=self.auth)
        assert read == session
        self.ledger.sessions[self.user].append(session_id)
        self.ledger.jobs.append(job_id)

    async def run(self, deadline: float) -> None:
        round_number = 0
        try:
            while True:
                tag = f"c{self.number}-r{round_number}"
                await asyncio.gather(self.agent_protocol(tag), self.sgr(tag), self.neuro_san(tag), self.synapse(tag))
                self.ledger.rounds += 1
                round_number += 1
                if time.monotonic() >= deadline:
                    break
        except Exception as exc:  # recorded, so one failure does not hide the others
            self.ledger.failures.append(f"client {self.number}: {type(exc).__name__}: {exc}")
        finally:
            await self.http.close()


async def paged(fetch: Callable[[str | None], Awaitable[tuple[list[str], str | None]]]) -> list[str]:
    """Every id of a token-paged list, in order (bounded)."""
    ids: list[str] = []
    token: str | None = None
    for _ in range(10_000):
        page, token = await fetch(token)
        ids += page
        if token is None:
            return ids
    raise AssertionError("the list never ended")


async def audit(base: str, ledger: Ledger) -> None:
    async with aiohttp.ClientSession(base) as http:

        async def get(path: str, **kwargs: Any) -> Any:
            async with http.get(path, **kwargs) as response:
                assert response.status == 200, await response.text()
                return await response.json()

        # Agent Protocol: the task list pages through every task exactly once
        size = 7
        first = await get("/ap/v1/agent/tasks", params={"page_size": str(size)})
        total = first["pagination"]["total_items"]
        assert total == len(ledger.tasks)
        assert first["pagination"]["total_pages"] == -(-total // size)
        listed: list[str] = []
        for page in range(1, first["pagination"]["total_pages"] + 2):  # one page past the end: empty
            body = await get("/ap/v1/agent/tasks", params={"page_size": str(size), "current_page": str(page)})
            assert body["pagination"]["total_items"] == total
            listed += [t["task_id"] for t in body["tasks"]]
        assert len(listed) == len(set(listed)) == total and set(listed) == set(ledger.tasks)
        for ids in (ledger.steps, ledger.artifacts, ledger.agents, ledger.jobs):
            assert len(ids) == len(set(ids)), "an id was handed out twice"

        # SGR: every agent listed once
        agents = await get("/agents")
        assert agents["total"] == len(agents["agents"]) == len(ledger.agents)
        assert {a["agent_id"] for a in agents["agents"]} == set(ledger.agents)

        # Synapse: each user's list is exactly that user's sessions, newest first, pages disjoint
        started: dict[str, str] = {}
        for user, auth in (("alice", ALICE), ("bob", BOB)):

            async def fetch(
                token: str | None, auth: dict[str, str] = auth, user: str = user
            ) -> tuple[list[str], str | None]:
                body = {"nextPageToken": token} if token else {}
                async with http.post("/repo/v1/agent/sessions/list", json=body, headers=auth) as response:
                    assert response.status == 200
                    data = await response.json()
                assert all(s["startedBy"] == USER_IDS[user] for s in data["page"]), data
                started.update((s["sessionId"], s["startedOn"]) for s in data["page"])
                return [s["sessionId"] for s in data["page"]], data.get("nextPageToken")

            sessions = await paged(fetch)
            assert len(sessions) == len(set(sessions)), f"{user}: a session listed twice"
            assert set(sessions) == set(ledger.sessions[user]), f"{user}: lost or foreign sessions"
            # session ids are opaque (UUIDs, as upstream): newest first is read off startedOn
            assert [started[s] for s in sessions] == sorted((started[s] for s in sessions), reverse=True)
        all_sessions = ledger.sessions["alice"] + ledger.sessions["bob"]
        assert len(all_sessions) == len(set(all_sessions))


def run_load(clients: int, seconds: float) -> tuple[Ledger, float]:
    config = MockConfig(job_seconds=0.05, stream_delay=STREAM_DELAY)
    ledger = Ledger()
    with EmbeddedServer(config) as server:

        async def main() -> float:
            started = time.monotonic()
            deadline = started + seconds
            workers = [Client(n, server.url, ledger) for n in range(clients)]
            await asyncio.wait_for(asyncio.gather(*(w.run(deadline) for w in workers)), HARD_LIMIT_S)
            elapsed = time.monotonic() - started
            if not ledger.failures:
                await audit(server.url, ledger)
            return elapsed

        elapsed = asyncio.run(main())
    return ledger, elapsed


def test_concurrent_clients_lose_duplicate_and_cross_wire_nothing() -> None:
    ledger, elapsed = run_load(CLIENTS, SECONDS)
    assert not ledger.failures, f"{len(ledger.failures)} client(s) failed; first: {ledger.failures[:3]}"
    assert ledger.rounds >= CLIENTS
    latencies = sorted(ledger.latencies)
    steps = Counter(ledger.tasks.values())
    print(
        f"\n{CLIENTS} clients, {ledger.rounds} rounds in {elapsed:.1f} s: {ledger.requests()} requests "
        f"({ledger.requests() / elapsed:.0f}/s), {ledger.streams} streams, {ledger.frames} frames, "
        f"{ledger.refused} stream refusals (503, retried); created {len(ledger.tasks)} tasks "
        f"(steps per task {dict(sorted(steps.items()))}), {len(ledger.steps)} steps, {len(ledger.artifacts)} "
        f"artifacts, {len(ledger.agents)} agents, {len(ledger.sessions['alice'])}+{len(ledger.sessions['bob'])} "
        f"sessions (alice+bob), {len(ledger.jobs)} jobs; latency p50 {statistics.median(latencies) * 1000:.0f} ms, "
        f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
