"""Ordinary client traffic per protocol, sent through the proxy: each exercises every requirement
the proxy can judge for its protocol, and ends with one deliberately invalid request (which the
server must refuse: the client's own violation shows as <PREFIX>-CLIENT-001)."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from conformance.check import edges

TIMEOUT = httpx.Timeout(10.0)


def _quiet(call: Callable[[], httpx.Response]) -> httpx.Response | None:
    """A broken server may cut or stall an exchange; the traffic goes on regardless."""
    try:
        return call()
    except httpx.HTTPError:
        return None


def agent_protocol(base: str) -> None:
    tasks = "/ap/v1/agent/tasks"
    with httpx.Client(base_url=base, timeout=TIMEOUT) as c:
        created = c.post(tasks, json={"input": "write hello", "additional_input": {"nested": {"a": [1, None]}}})
        task_id = str(created.json().get("task_id", "missing")) if created.status_code == 200 else "missing"
        c.get(f"{tasks}/{task_id}")
        steps = []
        for n in range(20):  # an agent must report is_last within 20 steps (AP-STEP-001)
            answer = c.post(f"{tasks}/{task_id}/steps", json={"input": f"step {n}", "additional_input": {"n": n}})
            body = answer.json() if answer.status_code == 200 else {}
            steps.append(body)
            if body.get("is_last"):
                break
        for step in steps:
            if isinstance(step.get("step_id"), str):
                c.get(f"{tasks}/{task_id}/steps/{step['step_id']}")
        c.get(f"{tasks}/{task_id}/steps")
        c.get(f"{tasks}/{task_id}/steps", params={"page_size": 3})
        c.get(f"{tasks}/{task_id}/steps", params={"page_size": 3, "current_page": 2})
        c.get(f"{tasks}/{task_id}/steps", params={"page_size": 3, "current_page": 9})
        up = c.post(
            f"{tasks}/{task_id}/artifacts",
            data={"relative_path": "in"},
            files={"file": ("data.bin", bytes(range(256)) + b"\r\n\x00\xff", "application/octet-stream")},
        )
        artifact_id = str(up.json().get("artifact_id", "")) if up.status_code == 200 else ""
        if artifact_id:
            _quiet(lambda: c.get(f"{tasks}/{task_id}/artifacts/{artifact_id}", timeout=3))
        c.get(f"{tasks}/{task_id}/artifacts")
        c.get(f"{tasks}/{task_id}")
        edge_traffic(c, tasks)
        for n in range(3):
            c.post(tasks, json={"input": f"page {n}"})
        c.post(tasks, json={"additional_input": {}})  # input may be left out
        c.get(tasks)
        c.get(tasks, params={"page_size": 1001})
        c.get(tasks, params={"page_size": 2, "current_page": 2})
        c.get(tasks, params={"page_size": 1, "current_page": 4})  # a page past the third
        c.get(f"{tasks}/no-such-task")
        c.get(f"{tasks}/{task_id}/steps/no-such-step")
        c.get(f"{tasks}/{task_id}/artifacts/no-such-artifact")
        c.post(tasks, content=b'{"input": 5}', headers={"Content-Type": "application/json"})  # invalid on purpose


def edge_traffic(c: httpx.Client, tasks: str) -> None:
    """The edge corpus as a client may send it: each text as a task's input and as a step's, its
    JSON values as an additional_input, each of its files uploaded to one task and those a server
    may not refuse downloaded after all of them (what the proxy judges of a round trip, it judges of
    these too)."""
    task_id, finished = "", True
    for edge in edges.TEXTS:
        created = c.post(tasks, json={"input": edge.value, "additional_input": edges.json_values()})
        if created.status_code == 200:
            c.get(f"{tasks}/{created.json().get('task_id', 'missing')}")
        if finished:
            task_id = str(c.post(tasks, json={"input": "edge steps"}).json().get("task_id", "missing"))
        step = c.post(f"{tasks}/{task_id}/steps", json={"input": edge.value, "additional_input": {}})
        finished = step.status_code != 200 or step.json().get("is_last") is True
        if step.status_code == 200:
            c.get(f"{tasks}/{task_id}/steps/{step.json().get('step_id', 'missing')}")
    files = str(c.post(tasks, json={"input": "edge files"}).json().get("task_id", "missing"))
    stored = []
    for upload in edges.uploads(0):
        fields = {"relative_path": upload.relative_path} if upload.relative_path is not None else {}
        answer = c.post(
            f"{tasks}/{files}/artifacts",
            data=fields,
            files={"file": (upload.file_name, upload.data, "application/octet-stream")},
        )
        if answer.status_code == 200 and not upload.refusable:  # a long name's header may be shortened
            stored.append(str(answer.json().get("artifact_id")))
    for artifact_id in stored:
        _quiet(lambda artifact_id=artifact_id: c.get(f"{tasks}/{files}/artifacts/{artifact_id}", timeout=3))  # type: ignore[misc]
    c.get(f"{tasks}/{files}/artifacts", params={"page_size": 100})


TRAFFIC: dict[str, Callable[[str], None]] = {"agent-protocol": agent_protocol}


def _sse(c: httpx.Client, path: str, body: dict[str, object]) -> str | None:
    """Reads a chat stream to its end; returns its X-Agent-ID."""
    try:
        with c.stream("POST", path, json=body, timeout=3) as answer:
            for _ in answer.iter_raw():
                pass
            return answer.headers.get("x-agent-id")
    except httpx.HTTPError:
        return None


def sgr_agent_core(base: str) -> None:
    messages = [{"role": "user", "content": "Research the history of Rust"}]
    with httpx.Client(base_url=base, timeout=TIMEOUT) as c:
        c.get("/health")
        c.get("/v1/models")
        agent_id = _sse(c, "/v1/chat/completions", {"model": "sgr_agent", "messages": messages, "stream": True})
        if agent_id:
            for _ in range(3):
                c.get(f"/agents/{agent_id}/state")
            c.get("/agents")
        asking = [{"role": "user", "content": "Compare EV batteries, clarify the scope first"}]
        waiting = _sse(c, "/v1/chat/completions", {"model": "sgr_agent", "messages": asking, "stream": True})
        if waiting:
            c.get(f"/agents/{waiting}/state")
            _sse(
                c,
                f"/agents/{waiting}/provide_clarification",
                {"messages": [{"role": "user", "content": "luxury models"}]},
            )
            c.delete(f"/agents/{waiting}")
            c.get(f"/agents/{waiting}/state")
            c.get("/agents")
        for group in ([e for e in edges.TEXTS if not e.refusable], *([e] for e in edges.TEXTS if e.refusable)):
            edge_chat = [{"role": "user", "content": e.value} for e in group]  # the edge corpus's texts
            edge_agent = _sse(c, "/v1/chat/completions", {"model": "sgr_agent", "messages": edge_chat, "stream": True})
            if edge_agent:
                c.get(f"/agents/{edge_agent}/state")
        c.get("/agents")
        parts = [{"role": "user", "content": [{"type": "text", "text": "Research Rust"}]}]  # content parts
        _sse(c, "/v1/chat/completions", {"model": "sgr_agent", "messages": parts, "stream": True})
        c.post("/v1/chat/completions", json={"model": "no_such_model", "messages": messages, "stream": True})
        c.post("/v1/chat/completions", json={"model": "sgr_agent", "messages": messages, "stream": False})
        c.get("/agents/sgr_agent_00000000-0000-0000-0000-000000000000/state")
        if agent_id:  # the mock's stuck-research fault needs its settle time to pass
            time.sleep(1.2)
            c.get(f"/agents/{agent_id}/state")
        c.post("/v1/chat/completions", json={"model": "sgr_agent", "messages": "not a list", "stream": True})


TRAFFIC["sgr-agent-core"] = sgr_agent_core


def synapse_agent(base: str) -> None:
    alice, bob = ({"Authorization": f"Bearer {t}"} for t in ("alice-token", "bob-token"))
    with httpx.Client(base_url=base, timeout=TIMEOUT) as c:
        made = c.post("/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=alice)
        session = str(made.json().get("sessionId", "none")) if made.status_code == 201 else "none"
        c.get(f"/agent/session/{session}", headers=alice)
        c.put(
            f"/agent/session/{session}",
            json={"sessionId": session, "agentAccessLevel": "READ_YOUR_PRIVATE_DATA"},
            headers=alice,
        )
        c.get(f"/agent/session/{session}", headers=alice)
        c.post("/agent/sessions/list", json={}, headers=alice)
        started = c.post("/agent/chat/async/start", json={"sessionId": session, "chatText": "hello"}, headers=alice)
        job = str(started.json().get("token", "none")) if started.status_code == 201 else "none"
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            if c.get(f"/agent/chat/async/get/{job}", headers=alice).status_code != 202:
                break
            time.sleep(0.1)
        c.get(f"/agent/chat/async/get/{job}", headers=alice)
        c.get(f"/agent/session/{session}", headers=bob)
        c.get(f"/agent/chat/async/get/{job}", headers=bob)
        c.post(f"/agent/session/history/{session}", json={}, headers=alice)
        c.post("/agent/sessions/list", json={}, headers=bob)
        c.post("/agent/sessions/list", json={"nextPageToken": "a-token-of-my-own"}, headers=alice)
        c.post("/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"})
        c.get(f"/agent/session/{session}")
        c.get(f"/agent/session/{session}", headers={"Authorization": "Bearer not-a-token"})
        c.get("/agent/session/no-such-session", headers=alice)
        c.post("/agent/session", json={"agentAccessLevel": "ALL_OF_IT"}, headers=alice)  # invalid on purpose


TRAFFIC["synapse-agent"] = synapse_agent
TOKENS = {"synapse-agent": ("alice-token", "bob-token")}
"""Tokens the proxy is told are valid (``--token``), so that any other one must be refused."""


def _ndjson(c: httpx.Client, path: str, body: dict[str, object]) -> None:
    try:
        with c.stream("POST", path, json=body, timeout=3) as answer:
            for _ in answer.iter_raw():
                pass
    except httpx.HTTPError:
        pass


def neuro_san(base: str) -> None:
    def chat(chat_filter: str | None) -> dict[str, object]:
        body: dict[str, object] = {"user_message": {"type": "HUMAN", "text": "Hello, briefly please"}}
        if chat_filter:
            body["chat_filter"] = {"chat_filter_type": chat_filter}
        return body

    with httpx.Client(base_url=base, timeout=TIMEOUT) as c:
        c.get("/api/v1/hello_world/connectivity")
        c.request("GET", "/api/v1/hello_world/function", json={})  # the official client's GET with a body
        for chat_filter in (None, "MINIMAL", "MAXIMAL"):
            _ndjson(c, "/api/v1/hello_world/streaming_chat", chat(chat_filter))
        c.get("/api/v1/conformance_no_such_agent/connectivity")
        # invalid on purpose, deep down: a chat_histories item of the wrong type
        c.post("/api/v1/hello_world/streaming_chat", json={"chat_context": {"chat_histories": [7]}})


TRAFFIC["neuro-san"] = neuro_san
