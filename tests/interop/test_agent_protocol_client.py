"""The official Agent Protocol client (agent-protocol-client 1.1.0) against a real mock.

The client is async (aiohttp); each test drives it with ``asyncio.run``. Quirks it has: it sends
``Accept: application/json`` and ``Content-Type: application/json`` everywhere (downloads and
empty POSTs included), and its upload takes a *file path* and reads the file from disk: bytes
given as ``file`` are opened as a path.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from mockserver.embedded import EmbeddedServer

with warnings.catch_warnings():
    # Built for pydantic 1; under pydantic 2 it imports with config-key and deprecation warnings.
    warnings.simplefilter("ignore")
    apc = pytest.importorskip(
        "agent_protocol_client",
        reason="agent-protocol-client is not installed (pip install agent-protocol-client==1.1.0)",
    )

pytestmark = [
    pytest.mark.interop,
    # Its pydantic-1 calls (parse_obj, validate_arguments) warn on every response under pydantic 2.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:agent_protocol_client.*"),
]

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
Scenario = Callable[[Any], Awaitable[None]]


def run(serve: Serve, scenario: Scenario) -> None:
    """Run one scenario with a fresh AgentApi against a fresh agent-protocol mock."""

    async def main(url: str) -> None:
        async with apc.ApiClient(apc.Configuration(host=url)) as client:
            await asyncio.wait_for(scenario(apc.AgentApi(client)), timeout=30)

    with serve(protocols=("agent-protocol",)) as server:
        asyncio.run(main(server.url))


async def run_steps(api: Any, task_id: str, bound: int = 10) -> list[Any]:
    steps = []
    for _ in range(bound):
        steps.append(await api.execute_agent_task_step(task_id=task_id))  # an empty POST
        if steps[-1].is_last:
            return steps
    raise AssertionError(f"no last step within {bound} steps")


def test_client_runs_a_task_to_its_last_step(serve: Serve) -> None:
    async def scenario(api: Any) -> None:
        body = apc.TaskRequestBody(input="write hello", additional_input={"mode": "test"})
        task = await api.create_agent_task(task_request_body=body)
        assert task.input == "write hello" and task.additional_input == {"mode": "test"}
        first = await api.execute_agent_task_step(
            task_id=task.task_id,
            step_request_body=apc.StepRequestBody(input="start", additional_input={"n": 1}),
        )
        assert (first.input, first.additional_input, first.is_last) == ("start", {"n": 1}, False)
        steps = [first, *await run_steps(api, task.task_id)]
        assert [s.name for s in steps] == ["Read the task", "Work on part 1", "Work on part 2", "Write output.txt"]
        assert [s.is_last for s in steps] == [False, False, False, True]
        assert all(s.status == "completed" for s in steps)
        fetched = await api.get_agent_task_step(task_id=task.task_id, step_id=steps[2].step_id)
        assert fetched == steps[2]
        page = await api.list_agent_task_steps(task_id=task.task_id, current_page=2, page_size=3)
        assert [s.step_id for s in page.steps] == [steps[3].step_id]
        assert (page.pagination.total_items, page.pagination.total_pages) == (4, 2)
        [output] = steps[-1].artifacts
        assert output.agent_created and output.file_name == "output.txt"
        data = await api.download_agent_task_artifact(task_id=task.task_id, artifact_id=output.artifact_id)
        assert bytes(data) == steps[-1].output.encode() == b"Result: write hello"
        # a finished task answers further steps with an empty step that is_last again
        after = await api.execute_agent_task_step(task_id=task.task_id)
        assert (after.name, after.is_last, after.artifacts) == ("Nothing left to do", True, [])

    run(serve, scenario)


def test_client_uploads_and_downloads_bytes(serve: Serve, tmp_path: Path) -> None:
    payload = bytes(range(256)) * 64 + b"\r\n--not-a-boundary--\r\n"
    source = tmp_path / "payload.bin"
    source.write_bytes(payload)

    async def scenario(api: Any) -> None:
        task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input="upload"))
        # relative_path goes first in the client's multipart body, then the file part.
        artifact = await api.upload_agent_task_artifacts(
            task_id=task.task_id, file=str(source), relative_path="inputs/raw"
        )
        assert (artifact.agent_created, artifact.file_name, artifact.relative_path) == (
            False,
            "payload.bin",
            "inputs/raw",
        )
        data = await api.download_agent_task_artifact(task_id=task.task_id, artifact_id=artifact.artifact_id)
        assert bytes(data) == payload
        listed = await api.list_agent_task_artifacts(task_id=task.task_id, current_page=1, page_size=5)
        assert [a.artifact_id for a in listed.artifacts] == [artifact.artifact_id]
        assert listed.pagination.total_items == 1 and listed.pagination.page_size == 5
        again = await api.get_agent_task(task_id=task.task_id)
        assert [a.artifact_id for a in again.artifacts] == [artifact.artifact_id]

    run(serve, scenario)


def test_client_lists_tasks_page_by_page(serve: Serve) -> None:
    async def scenario(api: Any) -> None:
        ids = []
        for i in range(5):
            task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input=f"task {i}"))
            ids.append(task.task_id)
        seen = []
        for number in (1, 2, 3):
            page = await api.list_agent_tasks(current_page=number, page_size=2)
            assert (page.pagination.total_items, page.pagination.total_pages) == (5, 3)
            assert page.pagination.current_page == number
            seen += [t.task_id for t in page.tasks]
        assert seen == ids
        past = await api.list_agent_tasks(current_page=4, page_size=2)
        assert past.tasks == [] and past.pagination.total_items == 5

    run(serve, scenario)


def test_client_gets_404_for_unknown_ids(serve: Serve) -> None:
    async def scenario(api: Any) -> None:
        with pytest.raises(apc.ApiException) as missing:
            await api.get_agent_task(task_id="no-such-task")
        assert missing.value.status == 404 and '"message"' in missing.value.body
        task = await api.create_agent_task()
        with pytest.raises(apc.ApiException) as no_artifact:
            await api.download_agent_task_artifact(task_id=task.task_id, artifact_id="nope")
        assert no_artifact.value.status == 404

    run(serve, scenario)
