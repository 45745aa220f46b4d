"""Agent Protocol's store: one app's tasks, every step and artifact counted against its capacity."""

from __future__ import annotations

from typing import Any

from ...config import MockLimits
from ...errors import ApiError
from ...store import Capacity, new_id
from .models import DONE_STEP, OUTPUT_FILE, Artifact, Step, Task, plan_for, step_output, workspace_path

NULL_DEVICE = "/dev/null"


class Store:
    """One app's tasks; every step and artifact counts against the object and byte limits."""

    def __init__(self, limits: MockLimits) -> None:
        self.capacity = Capacity(limits, "Store")
        self.tasks: dict[str, Task] = {}
        self.order: list[Task] = []
        self.outside: dict[str, bytes] = {}
        """What the traversal faults wrote outside the workspace folder (a path that starts with
        ``..`` or ``/``): what a client's uploads would have left on a real server's disk."""

    def task(self, task_id: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            raise ApiError(404, f"Task {task_id!r} not found")
        return task

    def reserve(self, objects: int, size: int = 0) -> None:
        """Check and claim room before any mutation, so a refusal leaves no partial state."""
        self.capacity.reserve(objects, size)

    def create_task(
        self,
        task_input: str | None,
        additional_input: Any,
        plan: tuple[str, ...] | None = None,
        outputs: tuple[str, ...] | None = None,
        task_id: str | None = None,
    ) -> Task:
        """A task with the plan its input gets, or the one a data stub gives (names and outputs);
        ``task_id`` given (ap-create-race), a task that had it is replaced."""
        self.reserve(1)
        task = Task(task_id or new_id(), task_input, additional_input, plan or plan_for(task_input), outputs=outputs)
        replaced = self.tasks.get(task.task_id)
        if replaced is not None:  # one row a task_id: the list shows the replacement alone
            self.order.remove(replaced)
            self.capacity.release(1)
        self.tasks[task.task_id] = task
        self.order.append(task)
        return task

    def add_artifact(
        self, task: Task, file_name: str, relative_path: str | None, data: bytes, agent_created: bool
    ) -> Artifact:
        artifact = Artifact(
            new_id(),
            file_name,
            relative_path,
            agent_created,
            data,
            workspace_path(task.task_id, relative_path, file_name),
        )
        task.add_artifact(artifact)
        return artifact

    def write_through(self, path: str, data: bytes) -> None:
        """The traversal faults: a shared filesystem, where equal paths are one file, the null
        device keeps nothing, and a path out of the workspace folder lands outside it."""
        if path == NULL_DEVICE:
            data = b""
        elif path == ".." or path.startswith(("../", "/")):
            self.outside[path] = data
        for task in self.order:
            for artifact in task.artifacts:
                if artifact.workspace_path == path:
                    artifact.data = data

    def execute_step(self, task: Task, body: dict[str, Any], never_last: bool = False) -> Step:
        """The next planned step, or an empty one once the plan is done (see the module docstring)."""
        index = len(task.steps)
        planned = index < len(task.plan)
        writes_output = index == len(task.plan) - 1
        step_input = body.get("input")
        stubbed = task.outputs
        output = stubbed[index] if stubbed is not None and planned else step_output(task, index, step_input)
        data = output.encode()
        self.reserve(2 if writes_output else 1, len(data) if writes_output else 0)
        created = [self.add_artifact(task, OUTPUT_FILE, None, data, True)] if writes_output else []
        step = Step(
            new_id(),
            task.task_id,
            task.plan[index] if planned else DONE_STEP,
            step_input,
            body.get("additional_input", {}),
            output,
            index + 1,
            len(task.plan),
            created,
            is_last=not never_last and index >= len(task.plan) - 1,
        )
        task.add_step(step)
        return step
