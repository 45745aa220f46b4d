"""Fixtures: loaded at start or through the admin API, behaving as if clients had created them;
a bad document is refused whole, with the reason."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
import yaml

from mockserver import EmbeddedServer
from mockserver.fixtures import MAX_OBJECTS

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
AUTH = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
TASK_ID = "11111111-1111-4111-8111-111111111111"
DOCUMENT: dict[str, Any] = {
    "agent-protocol": {
        "tasks": [
            {
                "task_id": TASK_ID,
                "input": "write a haiku",
                "steps": 1,
                "artifacts": [
                    {"file_name": "notes.txt", "relative_path": "docs", "content": "hello"},
                    {"file_name": "blob.bin", "content_base64": base64.b64encode(b"\x00\xff").decode()},
                ],
            }
        ]
    },
    "sgr-agent-core": {
        "agents": [
            {
                "agent_id": "sgr_agent_fixture",
                "model": "sgr_agent",
                "state": "completed",
                "messages": [{"role": "user", "content": "research owls"}],
                "execution_result": "Owls are birds.",
            }
        ]
    },
    "synapse-agent": {
        "sessions": [
            {
                "sessionId": "fixture-session",
                "owner": "alice",
                "agentAccessLevel": "READ_YOUR_PRIVATE_DATA",
                "history": [{"requestText": "hi"}, {"requestText": "bye", "responseText": "ciao"}],
            }
        ]
    },
}


def _check_loaded(c: httpx.Client) -> None:
    task = c.get(f"/ap/v1/agent/tasks/{TASK_ID}").json()
    assert task["input"] == "write a haiku"
    assert {a["file_name"] for a in task["artifacts"]} == {"notes.txt", "blob.bin"}
    steps = c.get(f"/ap/v1/agent/tasks/{TASK_ID}/steps").json()["steps"]
    assert len(steps) == 1 and steps[0]["name"] == "Read the task"
    blob = next(a for a in task["artifacts"] if a["file_name"] == "blob.bin")
    assert c.get(f"/ap/v1/agent/tasks/{TASK_ID}/artifacts/{blob['artifact_id']}").content == b"\x00\xff"
    # the task goes on from where the fixture left it: the next step is its plan's second
    assert c.post(f"/ap/v1/agent/tasks/{TASK_ID}/steps", json={}).json()["additional_output"]["step_number"] == 2

    agent = c.get("/agents/sgr_agent_fixture/state").json()
    assert agent["state"] == "completed" and agent["execution_result"] == "Owls are birds."

    session = c.get("/repo/v1/agent/session/fixture-session", headers=AUTH).json()
    assert session["agentAccessLevel"] == "READ_YOUR_PRIVATE_DATA"
    assert c.get("/repo/v1/agent/session/fixture-session", headers=BOB).status_code == 403  # owned by alice
    history = c.post("/repo/v1/agent/session/history/fixture-session", json={}, headers=AUTH).json()["page"]
    assert [i["requestText"] for i in history] == ["bye", "hi"]  # newest first
    assert history[0]["responseText"] == "ciao" and "hi" in history[1]["responseText"]


def test_fixtures_through_the_admin_api_in_yaml(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        answer = c.post(
            "/__mock/fixtures", content=yaml.safe_dump(DOCUMENT).encode(), headers={"Content-Type": "application/yaml"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["loaded"] == {
            "agent-protocol": {"tasks": [TASK_ID]},
            "sgr-agent-core": {"agents": ["sgr_agent_fixture"]},
            "synapse-agent": {"sessions": ["fixture-session"]},
        }
        _check_loaded(c)


def test_fixtures_at_start_and_reset_empties_them(serve: Serve) -> None:
    with serve(fixtures=DOCUMENT) as server, httpx.Client(base_url=server.url) as c:
        _check_loaded(c)
        c.post("/__mock/reset")
        assert c.get(f"/ap/v1/agent/tasks/{TASK_ID}").status_code == 404


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "maps protocol ids"),
        ({"nope": {}}, "not served"),
        ({"neuro-san": {}}, "keeps no state"),
        ({"agent-protocol": {"tasks": [{"artifacts": [{"file_name": "x"}]}]}}, "exactly one of content"),
        ({"agent-protocol": {"tasks": [{"colour": "red"}]}}, r"tasks\[0\]: unknown field"),
        ({"agent-protocol": {"tasks": [{"task_id": "a"}, {"task_id": "a"}]}}, "already in use"),
        ({"sgr-agent-core": {"agents": [{"messages": [], "state": "dreaming"}]}}, "state: one of"),
        ({"synapse-agent": {"sessions": [{"owner": "mallory"}]}}, "configured users"),
        ({"synapse-agent": {"sessions": [{"owner": "alice", "agentAccessLevel": "ROOT"}]}}, "agentAccessLevel"),
        ({"sgr-agent-core": {"agents": [{"messages": []}] * (MAX_OBJECTS + 1)}}, f"at most {MAX_OBJECTS}"),
    ],
)
def test_a_bad_document_is_refused_whole(serve: Serve, document: Any, message: str) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        good = {"agent-protocol": {"tasks": [{"input": "kept?"}]}}
        combined = {**good, **document} if isinstance(document, dict) and "agent-protocol" not in document else document
        answer = c.post("/__mock/fixtures", json=combined)
        assert answer.status_code == 400
        assert re.search(message, answer.json()["error"]), answer.json()
        assert c.get("/ap/v1/agent/tasks").json()["pagination"]["total_items"] == 0  # nothing was stored
