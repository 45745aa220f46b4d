"""Ordinary client traffic per protocol, sent through the proxy: each exercises every requirement
the proxy can judge for its protocol, and ends with one deliberately invalid request (which the
server must refuse: the client's own violation shows as <PREFIX>-CLIENT-001)."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

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
        up = c.post(f"{tasks}/{task_id}/artifacts", data={"relative_path": "in"},
                    files={"file": ("data.bin", bytes(range(256)) + b"\r\n\x00\xff", "application/octet-stream")})
        artifact_id = str(up.json().get("artifact_id", "")) if up.status_code == 200 else ""
        if artifact_id:
            _quiet(lambda: c.get(f"{tasks}/{task_id}/artifacts/{artifact_id}", timeout=3))
        c.get(f"{tasks}/{task_id}/artifacts")
        c.get(f"{tasks}/{task_id}")
        for n in range(3):
            c.post(tasks, json={"input": f"page {n}"})
        c.post(tasks, json={"additional_input": {}})  # input may be left out
        c.get(tasks)
        c.get(tasks, params={"page_size": 1001})
        c.get(tasks, params={"page_size": 2, "current_page": 2})
        c.get(f"{tasks}/no-such-task")
        c.get(f"{tasks}/{task_id}/steps/no-such-step")
        c.get(f"{tasks}/{task_id}/artifacts/no-such-artifact")
        c.post(tasks, content=b'{"input": 5}', headers={"Content-Type": "application/json"})  # invalid on purpose


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
            _sse(c, f"/agents/{waiting}/provide_clarification",
                 {"messages": [{"role": "user", "content": "luxury models"}]})
            c.delete(f"/agents/{waiting}")
            c.get(f"/agents/{waiting}/state")
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
