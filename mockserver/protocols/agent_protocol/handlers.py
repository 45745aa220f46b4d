"""Agent Protocol v1: tasks, steps run one at a time from an input-driven plan, and artifacts.

A task's plan depends only on its input (2 to 4 steps), so the same input always yields the same
steps and outputs; the final step writes an agent-created ``output.txt``. Artifact bytes live in
memory keyed by artifact id and nothing here touches a filesystem: ``file_name`` and
``relative_path`` are stored and echoed verbatim (the document allows any string) and are never
resolved as a path, so ``../other-task/x`` names an artifact of this task and nothing else. Only the
download's Content-Disposition is sanitized, so no client is handed a path to write to.

Once the plan is done the task stays open: each further POST .../steps executes an empty step
that does nothing and reports ``is_last: true`` again. The document gives a finished task no
status of its own (200/404/422 only, 422 meaning a malformed request), so a well-formed POST is
answered as the document says, with an executed step.
"""

from __future__ import annotations

import asyncio
import posixpath
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

from aiohttp import web

from ...api import Call, ProtocolApi, Reply
from ...config import Limits
from ...errors import ApiError
from ...faults import Fault, fault_maker
from ...validation import UploadedFile

PROTOCOL = "agent-protocol"
OUTPUT_FILE = "output.txt"
DONE_STEP = "Nothing left to do"
"""Name of the empty steps executed after the plan is done."""
INT32_MAX = 2**31 - 1
"""The paging parameters are ``format: int32``; the document's bound, which JSON Schema leaves out."""

T = TypeVar("T")


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

    def view(self, call: Call | None = None) -> dict[str, Any]:
        """A fresh dict per answer, so a fault editing a reply never edits the store."""
        artifacts = [a.view() for a in self.artifacts]
        if call is not None and call.fault("ap-step-artifact-path-empty"):
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
    steps: list[Step] = field(default_factory=list)
    steps_by_id: dict[str, Step] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    artifacts_by_id: dict[str, Artifact] = field(default_factory=dict)
    created_view: dict[str, Any] = field(default_factory=dict)
    """The task as it was created: what the listing cache of ap-task-list-cached-at-create serves."""

    def view(self, agent_artifacts_only: bool = False) -> dict[str, Any]:
        artifacts = [a for a in self.artifacts if a.agent_created or not agent_artifacts_only]
        return {
            "task_id": self.task_id,
            "input": self.input,
            "additional_input": self.additional_input,
            "artifacts": [a.view() for a in artifacts],
        }


def words(task_input: Any) -> list[str]:
    """The input's words; a non-text input (stored only under ap-create-accepts-invalid) has none."""
    return task_input.split() if isinstance(task_input, str) else []


def plan_for(task_input: str | None) -> tuple[str, ...]:
    """Step names: 2 + (word count mod 3) steps, so the same input always gets the same plan."""
    count = 2 + len(words(task_input)) % 3
    return ("Read the task", *(f"Work on part {i}" for i in range(1, count - 1)), f"Write {OUTPUT_FILE}")


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
        artifact = Artifact(str(uuid.uuid4()), file_name, relative_path, agent_created, data,
                            workspace_path(task.task_id, relative_path, file_name))
        task.artifacts.append(artifact)
        task.artifacts_by_id[artifact.artifact_id] = artifact
        return artifact

    def write_through(self, path: str, data: bytes) -> None:
        """The traversal fault: a shared filesystem, where equal paths are one file."""
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
        output = step_output(task, index, step_input)
        data = output.encode()
        self.reserve(2 if writes_output else 1, len(data) if writes_output else 0)
        created = [self.add_artifact(task, OUTPUT_FILE, None, data, True)] if writes_output else []
        step = Step(str(uuid.uuid4()), task.task_id, task.plan[index] if planned else DONE_STEP, step_input,
                    body.get("additional_input", {}), output, index + 1, len(task.plan), created,
                    is_last=not never_last and index >= len(task.plan) - 1)
        task.steps.append(step)
        task.steps_by_id[step.step_id] = step
        return step


@dataclass(frozen=True, slots=True)
class Page:
    current: int
    size: int


def paging(call: Call) -> Page:
    """The paging parameters, checked before any lookup: invalid input is a 422 whatever the task."""
    current = int(call.query.get("current_page", 1))
    size = int(call.query.get("page_size", 10))
    if call.fault("ap-page-default-size-20") and "page_size" not in call.request.query:
        size = 20
    if call.fault("ap-page-huge-size-crashes") and size > 1000:
        raise RuntimeError("page buffer allocation failed")  # the fault: a crash, rendered as 500
    too_big = [(name, value) for name, value in (("current_page", current), ("page_size", size)) if value > INT32_MAX]
    if too_big:
        message = "; ".join(f"query.{name}: must be at most {INT32_MAX} (int32)" for name, _ in too_big)
        details = [{"type": "value_error", "loc": ["query", name], "msg": f"must be at most {INT32_MAX} (int32)",
                    "input": value} for name, value in too_big]
        raise ApiError(422, f"Invalid request: {message}", details)
    return Page(current, size)


def paginate(items: Sequence[T], page: Page, call: Call) -> tuple[Sequence[T], dict[str, int]]:
    total = len(items)
    pages = total // page.size if call.fault("ap-page-floor-total-pages") else -(-total // page.size)
    if call.fault("ap-page-beyond-end-404") and page.current > max(pages, 1):
        raise ApiError(404, f"Page {page.current} not found")
    current = 1 if call.fault("ap-page-ignores-current-page") else page.current
    start = (current - 1) * page.size
    pagination = {
        "total_items": total,
        "total_pages": pages,
        "current_page": page.current,
        "page_size": page.size,
    }
    return items[start : start + page.size], pagination


def check_file_name(name: str) -> str:
    """Any text: it is a label, never a path. Bytes that were not UTF-8 reach us as lone surrogates."""
    if not name:
        raise ApiError(422, "The uploaded file needs a file name")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise ApiError(422, "The file name is not valid UTF-8")
    return name


MAX_HEADER_NAME = 200
"""Characters of a file name carried in Content-Disposition: the stored name is kept whole, the
header stays far below common 8 KiB header limits so the artifact always downloads."""


def _header_name(name: str) -> str:
    """One path segment, no control characters, bounded: what a client may safely write to disk."""
    safe = "".join("_" if c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)
    if len(safe) > MAX_HEADER_NAME:
        _, dot, ext = safe.rpartition(".")
        keep = ext if dot and 0 < len(ext) <= 16 else ""
        safe = safe[: MAX_HEADER_NAME - len(keep) - 1].rstrip(".") + ("." + keep if keep else "")
    return safe if safe.strip(".") else "download"  # "", "." and ".." name directories, not files


def content_disposition(name: str) -> str:
    """An ASCII ``filename`` that cannot break the header, plus RFC 6266 ``filename*`` with the
    name in UTF-8 when it is not plain ASCII. Both name a single bounded path segment: a client that
    prefers ``filename*`` and does not strip path information is still never handed a path."""
    segment = _header_name(name)
    fallback = "".join(c if 0x20 <= ord(c) < 0x7F and c != '"' else "_" for c in segment)
    header = f'attachment; filename="{fallback}"'
    if fallback != segment:
        header += "; filename*=UTF-8''" + quote(segment, safe="")
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
    store = api.stateful(lambda: Store(api.config.limits))

    # per task, the ids its latest write created, which reads cannot see under ap-reads-lag-one-write
    unprojected: dict[str, set[str]] = {}

    def written(call: Call, task: Task, *ids: str) -> None:
        if call.fault(LAGGING_READS):
            unprojected[task.task_id] = set(ids)

    def visible(call: Call, task: Task, object_id: str, what: str) -> None:
        if call.fault(LAGGING_READS) and object_id in unprojected.get(task.task_id, ()):
            raise ApiError(404, f"{what} {object_id!r} not found")

    def task_of(call: Call) -> Task:
        """The task, as reads see it; writes (steps, uploads) use ``store.task``."""
        task = store.task(call.path["task_id"])
        visible(call, task, task.task_id, "Task")
        return task

    @api.operation("createAgentTask")
    async def create_task(call: Call) -> Reply:
        body = call.body if isinstance(call.body, dict) else {}  # not a dict only under ap-create-accepts-invalid
        if call.fault("ap-create-requires-input") and body.get("input") is None:
            raise ApiError(422, "Invalid request: body.input: field required")  # the fault: stricter than the document
        additional_input = body.get("additional_input", {})
        if call.fault("ap-task-flattens-additional-input") and isinstance(additional_input, dict):
            additional_input = {k: v for k, v in additional_input.items() if not isinstance(v, dict | list)}
        task = store.create_task(body.get("input"), additional_input)
        if call.fault("ap-task-list-cached-at-create"):
            task.created_view = task.view()
        written(call, task, task.task_id)
        return Reply(task.view())

    @api.operation("listAgentTasks")
    async def list_tasks(call: Call) -> Reply:
        order: Sequence[Task] = store.order
        if call.fault("ap-task-list-recent-16"):
            order = order[-RECENT_INDEX:]
        tasks, pagination = paginate(order, paging(call), call)
        views = [dict(t.created_view or t.view()) for t in tasks]
        if call.fault("ap-task-list-input-truncated"):
            for view in views:
                if isinstance(view.get("input"), str):
                    view["input"] = view["input"][:SUMMARY_CHARS]
        return Reply({"tasks": views, "pagination": pagination})

    @api.operation("getAgentTask")
    async def get_task(call: Call) -> Reply:
        task = task_of(call)
        return Reply(task.view(agent_artifacts_only=call.fault("ap-task-artifacts-stale")))

    @api.operation("listAgentTaskSteps")
    async def list_steps(call: Call) -> Reply:
        page = paging(call)
        steps: Sequence[Step] = task_of(call).steps
        if call.fault("ap-step-list-omits-latest"):
            steps = steps[:-1]
        listed, pagination = paginate(steps, page, call)
        views = [s.view(call) for s in listed]
        if call.fault("ap-step-list-summary"):
            for view in views:
                view.update(output=None, additional_output=None)  # a summary projection of the rows
        if call.fault("ap-step-list-latest-running") and listed and listed[-1] is steps[-1]:
            views[-1]["status"] = "running"  # the index is updated when a step starts, not when it ends
        return Reply({"steps": views, "pagination": pagination})

    @api.operation("executeAgentTaskStep")
    async def execute_step(call: Call) -> Reply:
        task = store.task(call.path["task_id"])
        body = call.body or {}
        if call.fault("ap-step-drops-additional-input"):
            # the answer echoes the request, the store keeps nothing of it
            step = store.execute_step(task, {**body, "additional_input": {}})
            return Reply({**step.view(call), "additional_input": body.get("additional_input", {})})
        step = store.execute_step(task, body, never_last=call.fault("ap-step-never-last"))
        written(call, task, step.step_id, *(a.artifact_id for a in step.artifacts))
        return Reply(step.view(call))

    @api.operation("getAgentTaskStep")
    async def get_step(call: Call) -> Reply:
        task = task_of(call)
        step = task.steps_by_id.get(call.path["step_id"])
        if call.fault("ap-step-get-returns-latest") and task.steps:
            step = task.steps[-1]
        if step is None:
            raise ApiError(404, f"Step {call.path['step_id']!r} not found in this task")
        visible(call, task, step.step_id, "Step")
        return Reply(step.view(call))

    @api.operation("listAgentTaskArtifacts")
    async def list_artifacts(call: Call) -> Reply:
        page = paging(call)
        artifacts: Sequence[Artifact] = task_of(call).artifacts
        if call.fault("ap-artifacts-list-agent-only"):
            artifacts = [a for a in artifacts if a.agent_created]
        listed, pagination = paginate(artifacts, page, call)
        if call.fault("ap-artifacts-total-uploads-only"):
            pagination["total_items"] = sum(not a.agent_created for a in artifacts)  # the count query's filter
        return Reply({"artifacts": [a.view() for a in listed], "pagination": pagination})

    @api.operation("uploadAgentTaskArtifacts")
    async def upload_artifact(call: Call) -> Reply | web.StreamResponse:
        task = store.task(call.path["task_id"])
        if call.body is None:
            # The document does not make this body required, so a request without one is valid;
            # it carries no file, so nothing is stored, and 204 says exactly that.
            return web.Response(status=204)
        upload, relative_path = _form(call.body)
        name = check_file_name(upload.filename)
        store.reserve(1, len(upload.data))
        artifact = store.add_artifact(task, name, relative_path, upload.data, False)
        if call.fault("ap-upload-path-traversal"):
            store.write_through(artifact.workspace_path, upload.data)  # the names became a path
        written(call, task, artifact.artifact_id)
        return Reply(artifact.view())

    @api.operation("downloadAgentTaskArtifact")
    async def download_artifact(call: Call) -> web.StreamResponse:
        task = task_of(call)
        artifact = task.artifacts_by_id.get(call.path["artifact_id"])
        if artifact is None:
            if call.fault("ap-artifact-unknown-200"):
                return web.Response(body=b"", content_type="application/octet-stream")
            raise ApiError(404, f"Artifact {call.path['artifact_id']!r} not found in this task")
        visible(call, task, artifact.artifact_id, "Artifact")
        data = artifact.data
        if call.fault("ap-artifacts-keyed-by-file-name"):  # bytes stored under the workspace path, not the id
            data = next(a.data for a in reversed(task.artifacts) if a.workspace_path == artifact.workspace_path)
        if call.fault("ap-download-text-mode"):
            data = data.decode("utf-8", "replace").encode()
        headers = {} if call.fault("ap-download-no-disposition") else {
            "Content-Disposition": content_disposition(artifact.file_name)}
        # Octet-stream whatever the Accept header says: the official client asks for JSON here.
        content_type = "application/json" if call.fault("ap-download-json-content-type") else "application/octet-stream"
        if call.fault("ap-download-stalls"):
            return await _stall(call.request, data, content_type, headers)
        return web.Response(body=data, content_type=content_type, headers=headers)


async def _stall(request: web.Request, data: bytes, content_type: str, headers: dict[str, str]) -> web.StreamResponse:
    """The stall fault: headers and half the bytes, then nothing until the client gives up."""
    response = web.StreamResponse(headers={"Content-Type": content_type, **headers})
    response.content_length = len(data)
    await response.prepare(request)
    await response.write(data[: len(data) // 2])
    for _ in range(int(STALL_SECONDS / STALL_POLL)):  # until the client gives up, within a bound
        if request.transport is None or request.transport.is_closing():
            break
        await asyncio.sleep(STALL_POLL)
    return response


RECENT_INDEX = 16
"""Tasks in the listing index of ap-task-list-recent-16."""
SUMMARY_CHARS = 40
"""Characters of input kept in the list rows of ap-task-list-input-truncated."""
LAGGING_READS = "ap-reads-lag-one-write"
"""The fault whose reads see each task as it was before its latest write."""
STALL_SECONDS = 30.0
"""Bounded, so a forgotten client never pins the server; far beyond any sane client timeout."""
STALL_POLL = 0.1


def _drop_task_id(reply: Any) -> None:
    if reply.status == 200:
        reply.body.pop("task_id", None)


def _created_201(reply: Any) -> None:
    if reply.status == 200:
        reply.status = 201


def _detail_404(reply: Any) -> None:
    if reply.status == 404:
        reply.body = {"detail": reply.body.get("message")}


def _list_422(reply: Any) -> None:
    if reply.status == 422:
        reply.body = reply.body.get("errors") or [reply.body.get("message")]


def _text_plain(reply: Any) -> None:
    reply.content_type = "text/plain"


def _status_done(reply: Any) -> None:
    if reply.status == 200:
        reply.body["status"] = "done"


def _agent_created(reply: Any) -> None:
    if reply.status == 200:
        reply.body["agent_created"] = True


_fault = fault_maker(PROTOCOL)


FAULTS: tuple[Fault, ...] = (
    # missing required field, wrong enum value, wrong status, wrong content type, error body shape
    _fault("ap-task-missing-id", ("AP-TASK-001", "AP-SCHEMA-005", "AP-MODEL-003"),
           "createAgentTask answers without the required task_id", operation="createAgentTask",
           mutate=_drop_task_id),
    # No AP-SCHEMA-002: every operation documents `default`, which admits any status (not registered).
    _fault("ap-task-created-201", ("AP-TASK-001",),
           "createAgentTask answers 201, a status the document does not list", operation="createAgentTask",
           mutate=_created_201),
    # A list's content type is its form, not its paging: AP-PAGE-001 reads it as JSON regardless.
    _fault("ap-list-text-plain", ("AP-SCHEMA-003",),
           "listAgentTasks labels its JSON text/plain", operation="listAgentTasks", mutate=_text_plain),
    _fault("ap-step-status-done", ("AP-STEP-001", "AP-SCHEMA-005"),
           "an executed step's status is \"done\", not one of created/running/completed",
           operation="executeAgentTaskStep", mutate=_status_done),
    _fault("ap-404-wrong-shape", ("AP-ERR-001", "AP-SCHEMA-005"),
           "getAgentTask's 404 body is {\"detail\"} instead of {\"message\"}", operation="getAgentTask",
           mutate=_detail_404),
    _fault("ap-422-wrong-shape", ("AP-ERR-004", "AP-SCHEMA-005"),
           "createAgentTask's 422 body is a JSON array, not an object", operation="createAgentTask",
           mutate=_list_422),
    _fault("ap-artifact-unknown-200", ("AP-ERR-003",),
           "downloading an unknown artifact answers 200 with no bytes instead of 404",
           operation="downloadAgentTaskArtifact"),
    _fault("ap-step-get-returns-latest", ("AP-STEP-004", "AP-STEP-002", "AP-ERR-002"),
           "GET .../steps/{step_id} answers the task's latest step whatever the id",
           operation="getAgentTaskStep"),
    # accepting invalid input, a crash
    # what it accepted it echoes back: answers off the Task schema (AP-SCHEMA-005's subject too)
    _fault("ap-create-accepts-invalid", ("AP-ERR-004", "AP-SCHEMA-006", "AP-SCHEMA-005"),
           "createAgentTask does not validate its body: wrong types and non-objects get 200",
           operation="createAgentTask", skip_validation=True),
    _fault("ap-page-huge-size-crashes", ("AP-SCHEMA-001",),
           "a page_size above 1000 crashes the list operations (500)", operation="listAgentTasks"),
    # rejecting valid input, a created task that cannot be read back
    _fault("ap-create-requires-input", ("AP-SCHEMA-007",),
           "createAgentTask answers 422 when input is missing or null, which the document allows",
           operation="createAgentTask"),
    # every requirement that reads back what it just wrote
    _fault(LAGGING_READS, ("AP-SCHEMA-008", "AP-TASK-002", "AP-STEP-002", "AP-STEP-004", "AP-ARTIFACT-002"),
           "reads see each task as it was before its latest write (an off-by-one projection): a task just "
           "created, its newest step and its newest artifact answer 404 until the task is written again"),
    # losing data
    _fault("ap-task-flattens-additional-input", ("AP-TASK-002",),
           "createAgentTask keeps only the scalar values of additional_input (nested ones are lost)",
           operation="createAgentTask"),
    _fault("ap-step-drops-additional-input", ("AP-STEP-002", "AP-STEP-003", "AP-STEP-004"),
           "a step's answer echoes additional_input but the stored step has {}",
           operation="executeAgentTaskStep"),
    _fault("ap-step-list-omits-latest", ("AP-STEP-003", "AP-PAGE-002"),
           "listing a task's steps leaves out the latest executed step", operation="listAgentTaskSteps"),
    _fault("ap-upload-marks-agent-created", ("AP-ARTIFACT-001", "AP-ARTIFACT-004", "AP-ARTIFACT-005"),
           "an uploaded artifact is reported agent_created: true", operation="uploadAgentTaskArtifacts",
           mutate=_agent_created),
    _fault("ap-download-text-mode", ("AP-ARTIFACT-002", "AP-ARTIFACT-006"),
           "downloads pass the bytes through a UTF-8 text round trip (invalid bytes become U+FFFD)",
           operation="downloadAgentTaskArtifact"),
    _fault("ap-download-json-content-type", ("AP-ARTIFACT-002", "AP-SCHEMA-003"),
           "downloads are labelled application/json instead of application/octet-stream",
           operation="downloadAgentTaskArtifact"),
    _fault("ap-download-no-disposition", ("AP-ARTIFACT-003",),
           "downloads carry no Content-Disposition header", operation="downloadAgentTaskArtifact"),
    _fault("ap-artifacts-list-agent-only", ("AP-ARTIFACT-004", "AP-ARTIFACT-006", "AP-PAGE-003"),
           "the artifact list shows only agent-created artifacts, not uploads",
           operation="listAgentTaskArtifacts"),
    _fault("ap-task-artifacts-stale", ("AP-ARTIFACT-005",),
           "a task's artifacts list only agent-created artifacts, not uploads", operation="getAgentTask"),
    _fault("ap-upload-path-traversal", ("AP-ARTIFACT-006",),
           "uploads write task/relative_path/file_name to one shared store without checking for '..', "
           "so a crafted path overwrites another task's artifact", operation="uploadAgentTaskArtifacts"),
    # broken pagination
    _fault("ap-page-floor-total-pages", ("AP-PAGE-001", "AP-PAGE-002", "AP-PAGE-003"),
           "total_pages is total_items // page_size (rounded down)", operation="listAgentTasks"),
    _fault("ap-page-ignores-current-page", ("AP-PAGE-001", "AP-PAGE-002", "AP-PAGE-003", "AP-PAGE-004"),
           "every list answers its first page whatever current_page asks", operation="listAgentTasks"),
    _fault("ap-page-default-size-20", ("AP-PAGE-001",),
           "without page_size the lists use 20 items per page instead of the documented 10",
           operation="listAgentTasks"),
    _fault("ap-page-beyond-end-404", ("AP-PAGE-004",),
           "a current_page beyond the last page answers 404 instead of an empty page",
           operation="listAgentTasks"),
    # a job that never finishes, a stall
    _fault("ap-step-never-last", ("AP-STEP-001",),
           "steps never report is_last: the task never finishes", operation="executeAgentTaskStep"),
    # wrong facts behind the right shapes (the model-based phase, conformance/protocols/agent_protocol/model.py)
    _fault("ap-task-list-cached-at-create", ("AP-MODEL-001",),
           "the task list serves each task as it was created: the artifacts its steps produced never show there",
           operation="listAgentTasks"),
    _fault("ap-task-list-input-truncated", ("AP-MODEL-001",),
           f"the task list's items carry input cut to {SUMMARY_CHARS} characters (a summary column)",
           operation="listAgentTasks"),
    _fault("ap-step-list-summary", ("AP-MODEL-002",),
           "the step list's items have output and additional_output null (a summary projection)",
           operation="listAgentTaskSteps"),
    _fault("ap-step-list-latest-running", ("AP-MODEL-005",),
           "the step list shows a task's latest step as running after its POST answered completed",
           operation="listAgentTaskSteps"),
    _fault("ap-task-list-recent-16", ("AP-MODEL-003",),
           f"the task list comes from an index of the {RECENT_INDEX} newest tasks: older ones drop off it, and "
           "total_items counts the index", operation="listAgentTasks"),
    _fault("ap-artifacts-total-uploads-only", ("AP-MODEL-003",),
           "the artifact list's total_items counts only uploads, not the artifacts steps produced",
           operation="listAgentTaskArtifacts"),
    _fault("ap-step-artifact-path-empty", ("AP-MODEL-004",),
           "a step shows the artifacts it produced with relative_path \"\" where the task and its list say null",
           operation="executeAgentTaskStep"),
    _fault("ap-artifacts-keyed-by-file-name", ("AP-MODEL-004",),
           "artifact bytes are stored by task, relative_path and file name: downloading an upload gives the bytes "
           "of the latest upload of the same name", operation="downloadAgentTaskArtifact"),
    _fault("ap-download-stalls", ("AP-ARTIFACT-002",),
           "a download sends its headers and half its bytes, then stalls", operation="downloadAgentTaskArtifact",
           hangs=True),
)
