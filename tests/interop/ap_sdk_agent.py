"""A minimal agent on the Agent Protocol Python SDK (agent-protocol 1.0.2), for the interop test.

Run with the SDK's own venv (see peers.py), never the project's: ``python ap_sdk_agent.py PORT``.

The agent follows the SDK's README: the task handler creates the task's steps in the SDK's
database, the step handler does one step per call. Every task has two steps; the second, the
last, writes ``output.txt`` into the task's workspace and records it as an agent-created
artifact of the task and of that step. Artifacts land under ``$AGENT_WORKSPACE/<task_id>/``.

The SDK's ``Agent.start`` binds ``localhost:PORT`` (which may resolve to ::1 as well); this script
serves the SDK's own app and router the same way but binds 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import os
import sys

from agent_protocol import Agent, Step, Task
from agent_protocol.agent import base_router
from agent_protocol.server import app
from hypercorn.asyncio import serve
from hypercorn.config import Config

OUTPUT = "output.txt"


async def task_handler(task: Task) -> None:
    await Agent.db.create_step(task.task_id, name="plan", input=task.input)
    await Agent.db.create_step(task.task_id, name="write output", is_last=True)


async def step_handler(step: Step) -> Step:
    if not step.is_last:
        step.output = f"planning: {step.input or ''}"
        return step
    folder = Agent.get_workspace(step.task_id)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, OUTPUT), "w", encoding="utf-8") as handle:
        handle.write("Washington")
    # create_artifact(..., step_id=...) would look the step up with the SDK's get_step, which
    # matches on task_id only and so attaches the artifact to the task's first step: record the
    # artifact on the task through the SDK, and on this step directly.
    artifact = await Agent.db.create_artifact(task_id=step.task_id, file_name=OUTPUT, agent_created=True)
    step.artifacts.append(artifact)
    step.output = f"wrote {OUTPUT}"
    return step


def main() -> None:
    port = int(sys.argv[1])
    Agent.setup_agent(task_handler, step_handler)
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]  # loopback only, IPv4 only
    config.accesslog = None
    app.include_router(base_router)
    asyncio.run(serve(app, config))


if __name__ == "__main__":
    main()
