"""Agent Protocol v1: tasks, steps run one at a time from an input-driven plan, and artifacts.

A task's plan depends only on its input (2 to 4 steps), so the same input always yields the same
steps and outputs; the final step writes an agent-created ``output.txt``. Artifact bytes live in
memory keyed by artifact id: nothing here touches the filesystem, so names are checked only so
that no client could read them as a path leaving the task's workspace.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

from aiohttp import web

from ..api import Call, ProtocolApi, Reply
from ..config import Limits
from ..errors import ApiError
from ..faults import Fault
from ..validation import UploadedFile

FAULTS: tuple[Fault, ...] = ()

OUTPUT_FILE = "output.txt"
MAX_FILE_NAME = 255
"""Characters; a longer name is no file name on common filesystems."""
MAX_RELATIVE_PATH = 1024

T = TypeVar("T")


@dataclass(slots=True)
class Artifact:
    artifact_id: str
    file_name: str
    relative_path: str | None
    agent_created: bool
    data: bytes = field(repr=False)

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

    def view(self) -> dict[str, Any]:
        """A fresh dict per answer, so a fault editing a reply never edits the store."""
        return {
            "task_id": self.task_id,
            "step_id": self.step_id,
            "name": self.name,
            "status": "completed",
            "input": self.input,
            "additional_input": self.additional_input,
            "output": self.output,
            "additional_output": {"step_number": self.number, "total_steps": self.total},
            "artifacts": [a.view() for a in self.artifacts],
            "is_last": self.number == self.total,
        }


@dataclass(slots=True)
class Task:
    task_id: str
    input: str | None
    additional_input: Any
    plan: tuple[str, ...]
    steps: list[Step] = field(default_factory=list)
    steps_by_id: dict[str, Step] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    artifacts_by_id: dict[str, Artifact] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "input": self.input,
            "additional_input": self.additional_input,
            "artifacts": [a.view() for a in self.artifacts],
        }


def plan_for(task_input: str | None) -> tuple[str, ...]:
    """Step names: 2 + (word count mod 3) steps, so the same input always gets the same plan."""
    count = 2 + len((task_input or "").split()) % 3
    return ("Read the task", *(f"Work on part {i}" for i in range(1, count - 1)), f"Write {OUTPUT_FILE}")


def step_output(task: Task, index: int, step_input: str | None) -> str:
    words = (task.input or "").split()
    total = len(task.plan)
    if index == 0:
        text = f"Read the task: {len(words)} word(s), {total} step(s) planned."
    elif index < total - 1:
        text = f"Part {index}: {' '.join(words[index - 1 :: total - 2])}"  # middle steps share the words
    else:
        text = f"Result: {' '.join(words)}"
    return f"{text} (step input: {step_input})" if step_input else text


class Store:
    """One app's tasks; every step and artifact counts against the object and byte limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.tasks: dict[str, Task] = {}
        self.order: list[Task] = []
        self.objects = 0
        self.bytes = 0

    def task(self, task_id: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            raise ApiError(404, f"Task {task_id!r} not found")
        return task

    def reserve(self, objects: int, size: int = 0) -> None:
        """Check and claim room before any mutation, so a refusal leaves no partial state."""
        if self.objects + objects > self.limits.max_stored_objects:
            raise ApiError(507, f"Store is full (limit {self.limits.max_stored_objects} objects)")
        if self.bytes + size > self.limits.max_stored_bytes:
            raise ApiError(507, f"Artifact storage is full (limit {self.limits.max_stored_bytes} bytes)")
        self.objects += objects
        self.bytes += size

    def create_task(self, task_input: str | None, additional_input: Any) -> Task:
        self.reserve(1)
        task = Task(str(uuid.uuid4()), task_input, additional_input, plan_for(task_input))
        self.tasks[task.task_id] = task
        self.order.append(task)
        return task

    def add_artifact(
        self, task: Task, file_name: str, relative_path: str | None, data: bytes, agent_created: bool
    ) -> Artifact:
        artifact = Artifact(str(uuid.uuid4()), file_name, relative_path, agent_created, data)
        task.artifacts.append(artifact)
        task.artifacts_by_id[artifact.artifact_id] = artifact
        return artifact

    def execute_step(self, task: Task, body: dict[str, Any]) -> Step:
        index = len(task.steps)
        if index >= len(task.plan):
            # The document names 200/404/422 only; a finished task is an unprocessable request.
            raise ApiError(422, "Task is already complete")
        is_last = index == len(task.plan) - 1
        step_input = body.get("input")
        output = step_output(task, index, step_input)
        data = output.encode()
        self.reserve(2 if is_last else 1, len(data) if is_last else 0)
        created = [self.add_artifact(task, OUTPUT_FILE, None, data, True)] if is_last else []
        step = Step(str(uuid.uuid4()), task.task_id, task.plan[index], step_input,
                    body.get("additional_input", {}), output, index + 1, len(task.plan), created)
        task.steps.append(step)
        task.steps_by_id[step.step_id] = step
        return step


def paginate(items: Sequence[T], query: dict[str, Any]) -> tuple[Sequence[T], dict[str, int]]:
    current = int(query.get("current_page", 1))
    size = int(query.get("page_size", 10))
    total = len(items)
    start = (current - 1) * size
    pagination = {
        "total_items": total,
        "total_pages": -(-total // size),
        "current_page": current,
        "page_size": size,
    }
    return items[start : start + size], pagination


def _unsafe(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def check_file_name(name: str) -> str:
    if not name or name in (".", ".."):
        raise ApiError(422, "The uploaded file needs a file name")
    if "/" in name or "\\" in name or _unsafe(name) or len(name) > MAX_FILE_NAME:
        raise ApiError(422, "The file name must be one path component without control characters")
    return name


def check_relative_path(path: str) -> str:
    """Reject anything a filesystem could read as leaving the task's workspace."""
    absolute = path.startswith("/") or (len(path) >= 2 and path[1] == ":")  # POSIX root or a drive
    if absolute or "\\" in path or _unsafe(path) or len(path) > MAX_RELATIVE_PATH:
        raise ApiError(422, "relative_path must be a relative POSIX path without control characters")
    if ".." in path.split("/"):
        raise ApiError(422, "relative_path must not contain '..' components")
    return path


def content_disposition(name: str) -> str:
    """An ASCII ``filename`` that cannot break the header, plus RFC 6266 ``filename*`` when needed."""
    fallback = "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else "_" for c in name) or "download"
    header = f'attachment; filename="{fallback}"'
    if fallback != name:
        header += "; filename*=UTF-8''" + quote(name, safe="")
    return header


def _form(body: Any) -> tuple[UploadedFile, str | None]:
    form = body if isinstance(body, dict) else {}
    upload = form.get("file")
    if not isinstance(upload, UploadedFile):
        raise ApiError(422, "The multipart part 'file' with a filename is required")
    relative_path = form.get("relative_path")
    if relative_path is not None and not isinstance(relative_path, str):
        raise ApiError(422, "relative_path must be a text field, not a file")
    return upload, relative_path


def mount(api: ProtocolApi) -> None:
    store = Store(api.config.limits)

    @api.operation("createAgentTask")
    async def create_task(call: Call) -> Reply:
        body = call.body or {}
        task = store.create_task(body.get("input"), body.get("additional_input", {}))
        return Reply(task.view())

    @api.operation("listAgentTasks")
    async def list_tasks(call: Call) -> Reply:
        tasks, pagination = paginate(store.order, call.query)
        return Reply({"tasks": [t.view() for t in tasks], "pagination": pagination})

    @api.operation("getAgentTask")
    async def get_task(call: Call) -> Reply:
        return Reply(store.task(call.path["task_id"]).view())

    @api.operation("listAgentTaskSteps")
    async def list_steps(call: Call) -> Reply:
        steps, pagination = paginate(store.task(call.path["task_id"]).steps, call.query)
        return Reply({"steps": [s.view() for s in steps], "pagination": pagination})

    @api.operation("executeAgentTaskStep")
    async def execute_step(call: Call) -> Reply:
        task = store.task(call.path["task_id"])
        return Reply(store.execute_step(task, call.body or {}).view())

    @api.operation("getAgentTaskStep")
    async def get_step(call: Call) -> Reply:
        step = store.task(call.path["task_id"]).steps_by_id.get(call.path["step_id"])
        if step is None:
            raise ApiError(404, f"Step {call.path['step_id']!r} not found in this task")
        return Reply(step.view())

    @api.operation("listAgentTaskArtifacts")
    async def list_artifacts(call: Call) -> Reply:
        artifacts, pagination = paginate(store.task(call.path["task_id"]).artifacts, call.query)
        return Reply({"artifacts": [a.view() for a in artifacts], "pagination": pagination})

    @api.operation("uploadAgentTaskArtifacts")
    async def upload_artifact(call: Call) -> Reply:
        task = store.task(call.path["task_id"])
        upload, relative_path = _form(call.body)
        name = check_file_name(upload.filename)
        path = check_relative_path(relative_path) if relative_path is not None else None
        store.reserve(1, len(upload.data))
        return Reply(store.add_artifact(task, name, path, upload.data, False).view())

    @api.operation("downloadAgentTaskArtifact")
    async def download_artifact(call: Call) -> web.StreamResponse:
        task = store.task(call.path["task_id"])
        artifact = task.artifacts_by_id.get(call.path["artifact_id"])
        if artifact is None:
            raise ApiError(404, f"Artifact {call.path['artifact_id']!r} not found in this task")
        # Octet-stream whatever the Accept header says: the official client asks for JSON here.
        return web.Response(
            body=artifact.data,
            content_type="application/octet-stream",
            headers={"Content-Disposition": content_disposition(artifact.file_name)},
        )
