"""The official Agent Protocol client (agent-protocol-client 1.1.0) against a real mock.

The client pins pydantic<2 and urllib3<2, which the project's environment cannot hold (``pip
check`` must pass there), so it runs from its own venv (peers.py) with exactly what it declares,
through agent_protocol_client_driver.py in a subprocess; what each call returned comes back as JSON
and is judged here. Quirks it has: it sends ``Accept: application/json`` and ``Content-Type:
application/json`` everywhere (downloads and empty POSTs included), and its upload takes a *file
path* and reads the file from disk.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from .peers import PeerUnavailable, peer_python, skip_reason

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]  # a first run builds the peer venv

CLIENT = "agent-protocol-client==1.1.0"
DRIVER = Path(__file__).with_name("agent_protocol_client_driver.py")

Serve = Callable[..., AbstractContextManager[Any]]
"""``serve(**mock_settings)``: a context giving an object whose ``url`` the client is pointed at."""


def drive(scenario: str, url: str, arg: str = "") -> dict[str, Any]:
    """One driver scenario against ``url``, with the client's own venv (skips if it cannot be built)."""
    try:
        python = peer_python(CLIENT)
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))
    done = subprocess.run(
        [str(python), str(DRIVER), scenario, url, arg], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_client_runs_a_task_to_its_last_step(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server:
        got = drive("lifecycle", server.url)
    task, steps = got["task"], got["steps"]
    assert task["input"] == "write hello" and task["additional_input"] == {"mode": "test"}
    first = steps[0]
    assert (first["input"], first["additional_input"], first["is_last"]) == ("start", {"n": 1}, False)
    assert [s["name"] for s in steps] == ["Read the task", "Work on part 1", "Work on part 2", "Write output.txt"]
    assert [s["is_last"] for s in steps] == [False, False, False, True]
    assert all(s["status"] == "completed" for s in steps)
    assert got["fetched"] == steps[2]
    assert [s["step_id"] for s in got["page"]["steps"]] == [steps[3]["step_id"]]
    assert (got["page"]["pagination"]["total_items"], got["page"]["pagination"]["total_pages"]) == (4, 2)
    [output] = steps[-1]["artifacts"]
    assert output["agent_created"] and output["file_name"] == "output.txt"
    assert got["download"] == steps[-1]["output"] == "Result: write hello"
    # a finished task answers further steps with an empty step that is_last again
    after = got["after"]
    assert (after["name"], after["is_last"], after["artifacts"]) == ("Nothing left to do", True, [])


def test_client_uploads_and_downloads_bytes(serve: Serve, tmp_path: Path) -> None:
    payload = bytes(range(256)) * 64 + b"\r\n--not-a-boundary--\r\n"
    source = tmp_path / "payload.bin"
    source.write_bytes(payload)
    with serve(protocols=("agent-protocol",)) as server:
        got = drive("upload", server.url, str(source))
    artifact = got["artifact"]
    assert (artifact["agent_created"], artifact["file_name"], artifact["relative_path"]) == (
        False,
        "payload.bin",
        "inputs/raw",
    )
    assert got["download"].encode("latin-1") == payload
    assert [a["artifact_id"] for a in got["listed"]["artifacts"]] == [artifact["artifact_id"]]
    assert got["listed"]["pagination"]["total_items"] == 1 and got["listed"]["pagination"]["page_size"] == 5
    assert [a["artifact_id"] for a in got["again"]["artifacts"]] == [artifact["artifact_id"]]


def test_client_lists_tasks_page_by_page(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server:
        got = drive("pages", server.url)
    *pages, past = got["pages"]
    for number, page in enumerate(pages, 1):
        assert (page["pagination"]["total_items"], page["pagination"]["total_pages"]) == (5, 3)
        assert page["pagination"]["current_page"] == number
    assert [t["task_id"] for page in pages for t in page["tasks"]] == got["created"]
    assert past["tasks"] == [] and past["pagination"]["total_items"] == 5


def test_client_gets_404_for_unknown_ids(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server:
        got = drive("missing", server.url)
    assert got["task"]["status"] == 404 and '"message"' in got["task"]["body"]
    assert got["artifact"]["status"] == 404


STUBS = {
    "stubs": [
        {
            "request": {"protocol": "agent-protocol", "operation": "getAgentTask", "path": {"task_id": "stubbed-task"}},
            "response": {
                "body": {"task_id": "stubbed-task", "input": "known", "additional_input": {}, "artifacts": []}
            },
        }
    ],
    "data": {
        "agent-protocol": {
            "plans": [
                {
                    "input": {"contains": "five"},
                    "steps": [{"name": f"Part {n}", "output": f"out {n}"} for n in range(5)],
                }
            ]
        }
    },
}


def test_the_client_sees_exactly_what_stubs_say(serve: Serve) -> None:
    """A data stub's step plan and an operation stub (docs/mock.md, stubs), through the official client."""
    with serve(protocols=("agent-protocol",), stubs=STUBS) as server:
        got = drive("stubbed", server.url, "in five steps")
    assert [(s["name"], s["output"], s["is_last"]) for s in got["steps"]] == [
        (f"Part {n}", f"out {n}", n == 4) for n in range(5)
    ]
    assert got["known"] == STUBS["stubs"][0]["response"]["body"]
    assert got["missing"]["status"] == 404
