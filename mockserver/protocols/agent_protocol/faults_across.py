"""Agent Protocol's faults of facts across calls (issue 34, class 7): what one page of a list says
of the others."""

from __future__ import annotations

from ...faults import Fault, fault_maker

_fault = fault_maker("agent-protocol")

ACROSS: tuple[Fault, ...] = (
    _fault(
        "ap-task-list-newest-first",
        (),
        "control: GET /ap/v1/agent/tasks pages through the tasks newest first (the document fixes no order): "
        "a run's tasks are on the first pages, not the last",
        control=True,
        operation="listAgentTasks",
    ),
    _fault(
        "ap-artifacts-list-newest-first",
        (),
        "control: GET /ap/v1/agent/tasks/{task_id}/artifacts pages through a task's artifacts newest first (the "
        "document fixes no order)",
        control=True,
        operation="listAgentTaskArtifacts",
    ),
    _fault(
        "ap-step-list-newest-first",
        (),
        "control: GET /ap/v1/agent/tasks/{task_id}/steps pages through a task's steps newest first (the "
        "document fixes no order)",
        control=True,
        operation="listAgentTaskSteps",
    ),
)
