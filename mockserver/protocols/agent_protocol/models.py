"""Agent Protocol's domain: tasks, their input-driven plans, steps and artifacts (see handlers.py)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from ...jsonio import fragment

OUTPUT_FILE = "output.txt"
DONE_STEP = "Nothing left to do"
"""Name of the empty steps executed after the plan is done."""


@dataclass(slots=True)
class Artifact:
    artifact_id: str
    file_name: str
    relative_path: str | None
    agent_created: bool
    data: bytes = field(repr=False)
    workspace_path: str = ""
    """Where a filesystem-backed agent would keep it: task id / relative path / file name."""

    def view(self) -> dict[str, Any]:
        return {
            "artifact_id": self.artifact_id,
            "agent_created": self.agent_created,
            "file_name": self.file_name,
            "relative_path": self.relative_path,
        }


@dataclass(slots=True)
class Step:
    step_id: str
    task_id: str
    name: str
    input: str | None
    additional_input: Any
    output: str
    number: int
    total: int
    artifacts: list[Artifact]
    is_last: bool

    def view(self, empty_paths: bool = False) -> dict[str, Any]:
        """A fresh dict per answer, so a fault editing a reply never edits the store; ``empty_paths``
        is the ap-step-artifact-path-empty fault."""
        artifacts = [a.view() for a in self.artifacts]
        if empty_paths:
            for artifact in artifacts:  # the step serializer writes a missing path as ""
                artifact["relative_path"] = artifact["relative_path"] or ""
        return {
            "task_id": self.task_id,
            "step_id": self.step_id,
            "name": self.name,
            "status": "completed",
            "input": self.input,
            "additional_input": self.additional_input,
            "output": self.output,
            "additional_output": {"step_number": self.number, "total_steps": self.total},
            "artifacts": artifacts,
            "is_last": self.is_last,
        }


@dataclass(slots=True)
class Task:
    task_id: str
    input: str | None
    additional_input: Any
    plan: tuple[str, ...]
    # The lists, the indexes by id and the creation view are made on first use: most stored tasks
    # never get a step or an artifact, and an empty list is 56 bytes (an empty dict 64) of each
    # task's share of memory (bench/memory.py); the shared empty tuple costs nothing.
    steps: list[Step] | tuple[()] = ()
    artifacts: list[Artifact] | tuple[()] = ()
    steps_by_id: dict[str, Step] | None = None
    artifacts_by_id: dict[str, Artifact] | None = None
    outputs: tuple[str, ...] | None = None
    """Each planned step's output, where a data stub gave the plan (stubs.py); else computed."""
    created_view: dict[str, Any] | None = None
    """The task as it was created: what the listing cache of ap-task-list-cached-at-create serves."""
    encoded: tuple[tuple[str, int], Any] | None = None
    """The view as JSON, with the id and artifact count it was made for (see ``listed``)."""

    def add_step(self, step: Step) -> None:
        if isinstance(self.steps, list):
            self.steps.append(step)
        else:
            self.steps = [step]
        if self.steps_by_id is None:
            self.steps_by_id = {}
        self.steps_by_id[step.step_id] = step

    def step(self, step_id: str) -> Step | None:
        return self.steps_by_id.get(step_id) if self.steps_by_id is not None else None

    def add_artifact(self, artifact: Artifact) -> None:
        if isinstance(self.artifacts, list):
            self.artifacts.append(artifact)
        else:
            self.artifacts = [artifact]
        if self.artifacts_by_id is None:
            self.artifacts_by_id = {}
        self.artifacts_by_id[artifact.artifact_id] = artifact

    def artifact(self, artifact_id: str) -> Artifact | None:
        return self.artifacts_by_id.get(artifact_id) if self.artifacts_by_id is not None else None

    def listed(self) -> Any:
        """The view encoded once per state of the task, for listings: a listed task changes only
        by gaining artifacts (or by a fixture's new id), so that pair tells a stale encoding."""
        state = (self.task_id, len(self.artifacts))
        encoded = self.encoded
        if encoded is None or encoded[0] != state:
            encoded = self.encoded = (state, fragment(self.view()))
        return encoded[1]

    def view(self, agent_artifacts_only: bool = False) -> dict[str, Any]:
        """A fresh dict per answer, so that a fault editing a reply never edits the store."""
        return {
            "task_id": self.task_id,
            "input": self.input,
            "additional_input": self.additional_input,
            "artifacts": [a.view() for a in self.artifacts if a.agent_created or not agent_artifacts_only]
            if self.artifacts
            else [],
        }


def words(task_input: Any) -> list[str]:
    """The input's words; a non-text input (stored only under ap-create-accepts-invalid) has none."""
    return task_input.split() if isinstance(task_input, str) else []


def plan_for(task_input: str | None) -> tuple[str, ...]:
    """Step names: 2 + (word count mod 3) steps, so the same input always gets the same plan."""
    return _PLANS[len(words(task_input)) % 3]


_PLANS = tuple(
    ("Read the task", *(f"Work on part {i}" for i in range(1, count - 1)), f"Write {OUTPUT_FILE}")
    for count in (2, 3, 4)
)
"""The three plans there are, shared by every task (immutable): a task stores a reference, not a copy."""


def step_output(task: Task, index: int, step_input: str | None) -> str:
    said = words(task.input)
    total = len(task.plan)
    if index == 0:
        text = f"Read the task: {len(said)} word(s), {total} step(s) planned."
    elif index < total - 1:
        text = f"Part {index}: {' '.join(said[index - 1 :: total - 2])}"  # middle steps share the words
    elif index == total - 1:
        text = f"Result: {' '.join(said)}"
    else:
        text = "The task is complete; this step did nothing."
    return f"{text} (step input: {step_input})" if step_input else text


def workspace_path(task_id: str, relative_path: str | None, file_name: str) -> str:
    return posixpath.normpath(posixpath.join(task_id, relative_path or "", file_name))
