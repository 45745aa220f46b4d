"""Drives the official Agent Protocol client (agent-protocol-client 1.1.0) against a server.

Run with the peer venv's interpreter, not the project's (the client pins pydantic<2 and urllib3<2,
which the project's environment cannot hold): ``python agent_protocol_client_driver.py SCENARIO URL
[ARG]``. Each scenario makes the calls an application would and prints what every call returned
(the client's own models, as its ``to_dict()`` gives them, or the error it raised) as one JSON
object, for the test in the project's venv to judge. Only the client package is imported.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import agent_protocol_client as apc

Scenario = Callable[[Any, str], Awaitable[dict[str, Any]]]


def d(model: Any) -> Any:
    return [d(m) for m in model] if isinstance(model, list) else model.to_dict()


async def refusal(call: Awaitable[Any]) -> dict[str, Any]:
    """What the client raised for a call expected to be refused (``status``, ``body``)."""
    try:
        got = await call
    except apc.ApiException as exc:
        return {"status": exc.status, "body": exc.body}
    return {"status": None, "returned": d(got)}


async def run_steps(api: Any, task_id: str, bound: int = 10) -> list[Any]:
    steps = []
    for _ in range(bound):
        steps.append(await api.execute_agent_task_step(task_id=task_id))  # an empty POST
        if steps[-1].is_last:
            return steps
    raise AssertionError(f"no last step within {bound} steps")


async def lifecycle(api: Any, _: str) -> dict[str, Any]:
    body = apc.TaskRequestBody(input="write hello", additional_input={"mode": "test"})
    task = await api.create_agent_task(task_request_body=body)
    first = await api.execute_agent_task_step(
        task_id=task.task_id, step_request_body=apc.StepRequestBody(input="start", additional_input={"n": 1})
    )
    steps = [first, *await run_steps(api, task.task_id)]
    fetched = await api.get_agent_task_step(task_id=task.task_id, step_id=steps[2].step_id)
    page = await api.list_agent_task_steps(task_id=task.task_id, current_page=2, page_size=3)
    output = steps[-1].artifacts[0]
    data = await api.download_agent_task_artifact(task_id=task.task_id, artifact_id=output.artifact_id)
    after = await api.execute_agent_task_step(task_id=task.task_id)  # the task is finished
    return {
        "task": d(task),
        "steps": d(steps),
        "fetched": d(fetched),
        "page": d(page),
        "download": bytes(data).decode("latin-1"),
        "after": d(after),
    }


async def upload(api: Any, path: str) -> dict[str, Any]:
    task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input="upload"))
    # the client takes a file path and reads the file; relative_path goes first in its multipart body
    artifact = await api.upload_agent_task_artifacts(task_id=task.task_id, file=path, relative_path="inputs/raw")
    data = await api.download_agent_task_artifact(task_id=task.task_id, artifact_id=artifact.artifact_id)
    listed = await api.list_agent_task_artifacts(task_id=task.task_id, current_page=1, page_size=5)
    again = await api.get_agent_task(task_id=task.task_id)
    return {"artifact": d(artifact), "download": bytes(data).decode("latin-1"), "listed": d(listed), "again": d(again)}


async def pages(api: Any, _: str) -> dict[str, Any]:
    created = [await api.create_agent_task(task_request_body=apc.TaskRequestBody(input=f"task {i}")) for i in range(5)]
    listed = [await api.list_agent_tasks(current_page=n, page_size=2) for n in (1, 2, 3, 4)]
    return {"created": [t.task_id for t in created], "pages": d(listed)}


async def missing(api: Any, _: str) -> dict[str, Any]:
    task = await api.create_agent_task()
    return {
        "task": await refusal(api.get_agent_task(task_id="no-such-task")),
        "artifact": await refusal(api.download_agent_task_artifact(task_id=task.task_id, artifact_id="nope")),
    }


async def latency(api: Any, delay: str) -> dict[str, Any]:
    """A patient call waits for a slow answer; an impatient one's own timeout fires."""
    task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input="slow work"))
    started = time.monotonic()
    step = await api.execute_agent_task_step(task_id=task.task_id)
    patient_s = time.monotonic() - started
    try:
        await api.execute_agent_task_step(task_id=task.task_id, _request_timeout=float(delay) / 4)
        impatient = "answered"
    except Exception as exc:
        impatient = type(exc).__name__
    steps = await api.list_agent_task_steps(task_id=task.task_id)
    return {"step": d(step), "patient_s": patient_s, "impatient": impatient, "listed": d(steps)}


async def stubbed(api: Any, task_input: str) -> dict[str, Any]:
    """A task run to its last step (a plan a data stub gives), and a task only a stub knows."""
    task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input=task_input))
    steps = await run_steps(api, task.task_id)
    known = await api.get_agent_task(task_id="stubbed-task")
    return {"steps": d(steps), "known": d(known), "missing": await refusal(api.get_agent_task(task_id="other"))}


async def session(api: Any, _: str) -> dict[str, Any]:
    """An application's calls on any server: a task run to its last step, read back whole."""
    task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input="write hello"))
    steps = await run_steps(api, task.task_id)
    listed = await api.list_agent_task_steps(task_id=task.task_id)
    again = await api.get_agent_task(task_id=task.task_id)  # its artifacts (the SDK's list is a bare array)
    downloads = [
        bytes(await api.download_agent_task_artifact(task_id=task.task_id, artifact_id=a.artifact_id)).decode("latin-1")
        for a in again.artifacts
    ]
    return {
        "task": d(task),
        "steps": d(steps),
        "listed": d(listed),
        "downloads": downloads,
        "again": d(again),
        "missing": await refusal(api.get_agent_task(task_id="no-such-task")),
    }


async def sdk_traffic(api: Any, _: str) -> dict[str, Any]:
    """Ordinary application traffic; the errors the client itself met, by type."""
    body = apc.TaskRequestBody(input="write hello", additional_input={"mode": "test"})
    task = await api.create_agent_task(task_request_body=body)
    await api.execute_agent_task_step(
        task_id=task.task_id, step_request_body=apc.StepRequestBody(input="start", additional_input={"n": 1})
    )
    await api.get_agent_task(task_id=task.task_id)
    await api.list_agent_task_steps(task_id=task.task_id, current_page=1, page_size=3)
    errors = []
    try:
        await api.list_agent_task_artifacts(task_id=task.task_id)
    except Exception as exc:  # the client cannot parse the SDK's bare array
        errors.append(type(exc).__name__)
    return {"errors": errors}


SCENARIOS: dict[str, Scenario] = {
    "lifecycle": lifecycle,
    "upload": upload,
    "pages": pages,
    "missing": missing,
    "latency": latency,
    "sdk-traffic": sdk_traffic,
    "stubbed": stubbed,
    "session": session,
}


async def main(scenario: str, url: str, arg: str) -> dict[str, Any]:
    async with apc.ApiClient(apc.Configuration(host=url)) as client:
        return await asyncio.wait_for(SCENARIOS[scenario](apc.AgentApi(client), arg), timeout=60)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""))))
