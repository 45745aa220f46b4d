"""A minimal agent on AutoGPT Forge (autogpt-forge 0.1.4), for the interop test.

Run with Forge's own venv (see peers.py), never the project's:
``python forge_agent.py PORT DIR`` keeps its SQLite database and workspace under DIR.

Forge's base ``Agent.execute_step`` raises NotImplementedError; this subclass writes the steps with
Forge's own database and workspace: a task's first step plans, the second and every later one is
the last and writes ``output.txt`` ("Washington") as an agent-created artifact of the task and the
step. ``Agent.start`` binds localhost with uvicorn's reloader; this script serves Forge's own app
(``get_agent_app``) with uvicorn on 127.0.0.1 only. No model is called.
"""

from __future__ import annotations

import os
import sys

# Importing forge.sdk imports litellm: no fetch of its model cost map, no telemetry.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import uvicorn
from forge.sdk import Agent, AgentDB, LocalWorkspace, Step, StepRequestBody

OUTPUT = "output.txt"


class TinyAgent(Agent):
    async def execute_step(self, task_id: str, step_request: StepRequestBody) -> Step:
        await self.db.get_task(task_id)  # an unknown task raises Forge's NotFoundError: its 404
        _, pages = await self.db.list_steps(task_id, 1, 1)
        is_last = pages.total_items >= 1
        step = await self.db.create_step(
            task_id, step_request, is_last=is_last, additional_input=step_request.additional_input or {}
        )
        if not is_last:
            return await self.db.update_step(
                task_id, step.step_id, "completed", output=f"planning: {step_request.input}"
            )
        self.workspace.write(task_id, OUTPUT, b"Washington")
        await self.db.create_artifact(
            task_id=task_id, file_name=OUTPUT, relative_path="", agent_created=True, step_id=step.step_id
        )
        return await self.db.update_step(task_id, step.step_id, "completed", output=f"wrote {OUTPUT}")


def main() -> None:
    port, home = int(sys.argv[1]), sys.argv[2]
    os.makedirs(os.path.join(home, "workspace"), exist_ok=True)
    agent = TinyAgent(AgentDB(f"sqlite:///{home}/agent.db"), LocalWorkspace(os.path.join(home, "workspace")))
    uvicorn.run(agent.get_agent_app(), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
