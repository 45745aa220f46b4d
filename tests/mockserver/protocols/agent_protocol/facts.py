"""agent-protocol's facts for the generic tests (tests/facts.py)."""

from __future__ import annotations

import base64

import httpx

from tests.facts import Call, Facts, Fixtures

TASK_ID = "11111111-1111-4111-8111-111111111111"


def check_fixtures(c: httpx.Client) -> None:
    task = c.get(f"/ap/v1/agent/tasks/{TASK_ID}").json()
    assert task["input"] == "write a haiku"
    assert {a["file_name"] for a in task["artifacts"]} == {"notes.txt", "blob.bin"}
    steps = c.get(f"/ap/v1/agent/tasks/{TASK_ID}/steps").json()["steps"]
    assert len(steps) == 1 and steps[0]["name"] == "Read the task"
    blob = next(a for a in task["artifacts"] if a["file_name"] == "blob.bin")
    assert c.get(f"/ap/v1/agent/tasks/{TASK_ID}/artifacts/{blob['artifact_id']}").content == b"\x00\xff"
    # the task goes on from where the fixture left it: the next step is its plan's second
    assert c.post(f"/ap/v1/agent/tasks/{TASK_ID}/steps", json={}).json()["additional_output"]["step_number"] == 2


FACTS = Facts(
    "agent-protocol",
    # `default` documented on every operation, no response headers, a create read back under it
    schema_requirements=frozenset({"001", "003", "005", "006", "007", "008"}),
    served=Call("GET", "/ap/v1/agent/tasks"),
    json_post=Call("POST", "/ap/v1/agent/tasks"),
    fixtures=Fixtures(
        document={
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
        loaded={"tasks": [TASK_ID]},
        check=check_fixtures,
        gone=Call("GET", f"/ap/v1/agent/tasks/{TASK_ID}"),
    ),
)
