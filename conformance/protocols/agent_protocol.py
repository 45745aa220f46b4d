"""Agent Protocol v1: requirements the schema cannot say (workflows, round trips, pagination)."""

from __future__ import annotations

from ..context import Context
from ..requirements import Level, Registry

registry = Registry("agent-protocol")
DOC = "agent-protocol/openapi.json"
TASKS = "/ap/v1/agent/tasks"


@registry.requirement("AP-TASK-001", Level.MUST, "POST /ap/v1/agent/tasks creates a task and returns it with a task_id",
                      f"{DOC}#/paths/~1ap~1v1~1agent~1tasks/post")
def create_task(ctx: Context) -> None:
    body = ctx.conforms(ctx.client.post(TASKS, json={"input": "write hello"}), "createAgentTask", 200)
    ctx.expect(isinstance(body.get("task_id"), str) and body["task_id"], "task_id missing or empty")
