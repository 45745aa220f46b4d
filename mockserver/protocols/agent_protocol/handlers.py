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

import math
import posixpath
import struct
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar
from urllib.parse import quote, unquote

from aiohttp import web

from ... import cors
from ...api import Call, Handlers, ProtocolApi, operation
from ...errors import ApiError
from ...faults import TextEdits
from ...hostile import Surrogates
from ...reply import Reply
from ...store import RacyIds
from ...streaming import stall
from ...validation import UploadedFile
from .faults import (
    CHUNK_BYTES,
    LISTED_PAGES,
    NAME_LIMIT,
    NEWEST_ARTIFACTS,
    RECENT_INDEX,
    SUMMARY_CHARS,
    Switches,
)
from .models import Artifact, Step, Task, workspace_path
from .store import Store
from .stubs import Data

INT32_MAX = 2**31 - 1
"""The paging parameters are ``format: int32``; the document's bound, which JSON Schema leaves out."""

T = TypeVar("T")


class Page(NamedTuple):
    current: int
    size: int


def paging(call: Call, on: Switches) -> Page:
    """The paging parameters, checked before any lookup: invalid input is a 422 whatever the task."""
    current = int(call.query.get("current_page", 1))
    size = int(call.query.get("page_size", 10))
    if on.page_default_size_20 and "page_size" not in call.request.query:
        size = 20
    if on.page_huge_size_crashes and size > 1000:
        raise RuntimeError("page buffer allocation failed")  # the fault: a crash, rendered as 500
    if current > INT32_MAX or size > INT32_MAX:
        too_big = [
            (name, value) for name, value in (("current_page", current), ("page_size", size)) if value > INT32_MAX
        ]
        message = "; ".join(f"query.{name}: must be at most {INT32_MAX} (int32)" for name, _ in too_big)
        details = [
            {
                "type": "value_error",
                "loc": ["query", name],
                "msg": f"must be at most {INT32_MAX} (int32)",
                "input": value,
            }
            for name, value in too_big
        ]
        raise ApiError(422, f"Invalid request: {message}", details)
    if on.page_params_ignored:  # read under other names: the documented ones change nothing
        return Page(1, 10)
    return Page(current, size)


def paginate(items: Sequence[T], page: Page, on: Switches) -> tuple[Sequence[T], dict[str, int]]:
    total = len(items)
    pages = total // page.size if on.page_floor_total_pages else -(-total // page.size)
    if on.page_beyond_end_404 and page.current > max(pages, 1):
        raise ApiError(404, f"Page {page.current} not found")
    current = 1 if on.page_ignores_current_page else page.current
    start = (current - 1) * page.size
    pagination = {
        "total_items": total,
        "total_pages": pages,
        "current_page": page.current,
        "page_size": page.size,
    }
    if on.page_empty_past_3 and current > LISTED_PAGES:
        return [], pagination
    return items[start : start + page.size], pagination


LONG_INPUT = 60000
"""Characters of input the control ap-long-input-refused accepts."""


def _as_doubles(value: Any, single: bool = False) -> Any:
    """Numbers as a store of doubles keeps them (``single``: of 32-bit floats, a REAL column)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if single and math.isfinite(value) and abs(value) < 3e38:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        return float(value) if abs(value) > 2**53 else value
    if isinstance(value, dict):
        return {k: _as_doubles(v, single) for k, v in value.items()}
    return [_as_doubles(v, single) for v in value] if isinstance(value, list) else value


def stored_input(body: dict[str, Any], on: Switches, step: bool = False) -> dict[str, Any]:
    """The request body as the edge faults store it (the unfaulted mock stores it verbatim)."""
    text, extra = body.get("input"), body.get("additional_input", {})
    if on.long_input_refused and isinstance(text, str) and len(text) > LONG_INPUT:
        raise ApiError(422, f"Invalid request: body.input: at most {LONG_INPUT} characters")  # a fair limit
    if isinstance(text, str) and not step:
        edits = TextEdits(nfc=on.task_input_nfc, trimmed=on.task_input_trimmed, column=on.task_input_text_column)
        text = edits.apply(text)
        if on.task_astral_replaced:
            text, extra = TextEdits(astral=True).apply(text), TextEdits(astral=True).apply_all(extra)
    if isinstance(text, str) and step:
        text = TextEdits(controls=on.step_input_controls_stripped).apply(text)
    if on.big_integers_as_floats or on.numbers_as_float32:
        extra = _as_doubles(extra, single=on.numbers_as_float32)
    return {**body, "input": text, "additional_input": extra}


def check_upload(task: Task, name: str, relative_path: str | None, data: bytes, on: Switches) -> bytes:
    """The edge faults' and controls' view of an upload: the bytes they store, or a refusal."""
    if on.upload_long_name_refused and len(name.encode()) > NAME_LIMIT:
        raise ApiError(422, f"The file name is longer than {NAME_LIMIT} bytes")  # a fair limit
    if on.upload_empty_refused and not data:
        raise ApiError(422, "The uploaded file is empty")
    path = workspace_path(task.task_id, relative_path, name)
    if on.upload_folder_collision_500 or on.upload_folder_collision_409:
        for other in task.artifacts:
            if other.workspace_path.startswith(path + "/") or path.startswith(other.workspace_path + "/"):
                if on.upload_folder_collision_409:
                    raise ApiError(409, f"{path!r} collides with the stored {other.workspace_path!r}")
                raise IsADirectoryError(path)  # the fault: rendered as 500
    if on.upload_same_name_conflict and any(a.workspace_path == path and not a.agent_created for a in task.artifacts):
        raise ApiError(409, f"An artifact {path!r} exists already")
    return data[:CHUNK_BYTES] if on.upload_reads_one_chunk else data


def check_file_name(name: str, not_utf8_kept: bool = False) -> str:
    """Any text: it is a label, never a path. Bytes that were not UTF-8 reach us as lone surrogates,
    refused unless a hostile fault keeps them (``not_utf8_kept``)."""
    if not name:
        raise ApiError(422, "The uploaded file needs a file name")
    if not not_utf8_kept and any(0xD800 <= ord(c) <= 0xDFFF for c in name):
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


def disk_path(task_id: str, relative_path: str | None, file_name: str, on: Switches) -> str:
    """Where the traversal faults put an upload: its names joined under the task's folder and
    normalised, as ``os.path.join`` and ``normpath`` would (an absolute name replaces the folder),
    after each fault's own idea of a safe name."""
    names = [relative_path or "", file_name]
    if on.upload_traversal_percent_decoded or on.upload_traversal_backslashed:
        forbidden = ".." if on.upload_traversal_percent_decoded else "../"
        if any(forbidden in n for n in names):  # the check, made before the names are decoded
            raise ApiError(422, "'..' is not allowed in a file name or relative_path")
        names = [unquote(n) if on.upload_traversal_percent_decoded else n.replace("\\", "/") for n in names]
    if on.upload_traversal_absolute:
        names = [n.replace("../", "") for n in names]
    if on.artifacts_by_file_name_traversal:  # relative_path checked, then ignored; the file name trusted
        if ".." in (relative_path or ""):
            raise ApiError(422, "'..' is not allowed in relative_path")
        names = [file_name.lstrip("/")]
    return posixpath.normpath(posixpath.join(task_id, *names))


def _form(body: Any) -> tuple[UploadedFile, str | None]:
    form = body if isinstance(body, dict) else {}
    upload = form.get("file")
    if not isinstance(upload, UploadedFile):
        raise ApiError(422, "The multipart part 'file' with a filename is required")
    relative_path = form.get("relative_path")
    if relative_path is not None and not isinstance(relative_path, str):
        raise ApiError(422, "relative_path must be a text field, not a file")
    return upload, relative_path


class AgentProtocol(Handlers):
    """The operations on one store of tasks; ``on`` holds the behaviour faults of this run."""

    protocol = "agent-protocol"
    data: Data

    def __init__(self, api: ProtocolApi) -> None:
        super().__init__(api)
        self.store = api.stateful(lambda: Store(api.config.limits))
        self.on = Switches.of(api.faults)
        self.data = Data()
        self.racy_ids = RacyIds()
        """ap-create-race's task ids: creates at the same moment take one."""
        self.unprojected: dict[str, set[str]] = {}
        """Per task, the ids its latest write created, which reads cannot see under ap-reads-lag-one-write."""
        self.verbatim_listing = api.faults.mutation("listAgentTasks") is None and not (
            self.on.task_list_input_truncated or self.on.task_list_cached_at_create
        )
        """No fault edits a listed task: each is sent as encoded when it last changed."""

    def written(self, task: Task, *ids: str) -> None:
        if self.on.reads_lag_one_write:
            self.unprojected[task.task_id] = set(ids)

    def visible(self, task: Task, object_id: str, what: str) -> None:
        if self.on.reads_lag_one_write and object_id in self.unprojected.get(task.task_id, ()):
            raise ApiError(404, f"{what} {object_id!r} not found")

    def task_of(self, call: Call) -> Task:
        """The task, as reads see it; writes (steps, uploads) use ``store.task``."""
        task = self.store.task(call.path["task_id"])
        self.visible(task, task.task_id, "Task")
        return task

    @operation("createAgentTask")
    async def create_task(self, call: Call) -> Reply:
        on = self.on
        body = call.body if isinstance(call.body, dict) else {}  # not a dict only under ap-create-accepts-invalid
        if on.create_requires_input and body.get("input") is None:
            raise ApiError(422, "Invalid request: body.input: field required")  # the fault: stricter than the document
        body = stored_input(body, on)
        additional_input = body.get("additional_input", {})
        if on.task_flattens_additional_input and isinstance(additional_input, dict):
            additional_input = {k: v for k, v in additional_input.items() if not isinstance(v, dict | list)}
        stubbed = self.data.plan_for(body.get("input")) if self.data.plans else None
        task_id = await self.racy_ids.take() if on.create_race else None
        if stubbed is not None:
            task = self.store.create_task(
                body.get("input"), additional_input, stubbed.names, stubbed.outputs, task_id=task_id
            )
        else:
            task = self.store.create_task(body.get("input"), additional_input, task_id=task_id)
        if on.task_list_cached_at_create:
            task.created_view = task.view()
        self.written(task, task.task_id)
        return Reply(task.view())

    @operation("listAgentTasks")
    async def list_tasks(self, call: Call) -> Reply:
        on = self.on
        order: Sequence[Task] = self.store.order
        if on.task_list_recent_16:
            order = order[-RECENT_INDEX:]
        if on.task_list_newest_first:
            order = order[::-1]
        tasks, pagination = paginate(order, paging(call, on), on)
        if self.verbatim_listing:
            return Reply({"tasks": [t.listed() for t in tasks], "pagination": pagination})
        # a copy of the cached view, so that the truncation fault never edits the cache
        views = [t.view() if t.created_view is None else dict(t.created_view) for t in tasks]
        if on.task_list_input_truncated:
            for view in views:
                if isinstance(view.get("input"), str):
                    view["input"] = view["input"][:SUMMARY_CHARS]
        return Reply({"tasks": views, "pagination": pagination})

    @operation("getAgentTask")
    async def get_task(self, call: Call) -> Reply:
        task = self.task_of(call)
        return Reply(task.view(agent_artifacts_only=self.on.task_artifacts_stale))

    @operation("listAgentTaskSteps")
    async def list_steps(self, call: Call) -> Reply:
        on = self.on
        page = paging(call, on)
        steps: Sequence[Step] = self.task_of(call).steps
        if on.step_list_omits_latest:
            steps = steps[:-1]
        if on.step_list_newest_first:
            steps = steps[::-1]
        listed, pagination = paginate(steps, page, on)
        views = [s.view(on.step_artifact_path_empty) for s in listed]
        if on.step_list_summary:
            for view in views:
                view.update(output=None, additional_output=None)  # a summary projection of the rows
        if on.step_list_latest_running and listed and listed[-1] is steps[-1]:
            views[-1]["status"] = "running"  # the index is updated when a step starts, not when it ends
        return Reply({"steps": views, "pagination": pagination})

    @operation("executeAgentTaskStep")
    async def execute_step(self, call: Call) -> Reply:
        on = self.on
        task = self.store.task(call.path["task_id"])
        body = stored_input(call.body or {}, on, step=True)
        if on.step_drops_additional_input:
            # the answer echoes the request, the store keeps nothing of it
            step = self.store.execute_step(task, {**body, "additional_input": {}})
            answer = step.view(on.step_artifact_path_empty)
            return Reply({**answer, "additional_input": body.get("additional_input", {})})
        step = self.store.execute_step(task, body, never_last=on.step_never_last)
        self.written(task, step.step_id, *(a.artifact_id for a in step.artifacts))
        return Reply(step.view(on.step_artifact_path_empty))

    @operation("getAgentTaskStep")
    async def get_step(self, call: Call) -> Reply:
        task = self.task_of(call)
        step = task.step(call.path["step_id"])
        if self.on.step_get_returns_latest and task.steps:
            step = task.steps[-1]
        if step is None:
            raise ApiError(404, f"Step {call.path['step_id']!r} not found in this task")
        self.visible(task, step.step_id, "Step")
        return Reply(step.view(self.on.step_artifact_path_empty))

    @operation("listAgentTaskArtifacts")
    async def list_artifacts(self, call: Call) -> Reply:
        on = self.on
        page = paging(call, on)
        artifacts: Sequence[Artifact] = self.task_of(call).artifacts
        if on.artifacts_list_agent_only:
            artifacts = [a for a in artifacts if a.agent_created]
        if on.artifacts_list_newest_8:
            artifacts = artifacts[-NEWEST_ARTIFACTS:]
        if on.artifacts_list_newest_first:
            artifacts = artifacts[::-1]
        listed, pagination = paginate(artifacts, page, on)
        if on.artifacts_total_uploads_only:
            pagination["total_items"] = sum(not a.agent_created for a in artifacts)  # the count query's filter
        return Reply({"artifacts": [a.view() for a in listed], "pagination": pagination})

    @operation("uploadAgentTaskArtifacts")
    async def upload_artifact(self, call: Call) -> Reply | web.StreamResponse:
        store = self.store
        task = store.task(call.path["task_id"])
        if call.body is None:
            if self.on.upload_bodiless_415:  # a fair refusal: the schema requires the file part
                raise ApiError(415, "An upload is multipart/form-data with a 'file' part")
            # The document does not make this body required, so a request without one is valid;
            # it carries no file, so nothing is stored, and 204 says exactly that.
            return web.Response(status=204)
        if self.on.upload_undeclared_part_400 and isinstance(call.body, dict):
            odd = sorted(name for name in call.body if name not in ("file", "relative_path"))
            if odd:  # a fair refusal: parts the document does not declare
                raise ApiError(400, f"Unexpected multipart part(s): {odd[:3]}")
        upload, relative_path = _form(call.body)
        on = self.on
        # kept by the hostile faults: stored as its answers then show it (mockserver/hostile.py), or
        # answered with JSON escapes and then unwritable in a download's Content-Disposition
        kept = on.file_name_not_utf8_kept or call.faults.hostile(call.operation_id).surrogates is Surrogates.KEPT
        name = check_file_name(upload.filename, kept)
        if on.upload_name_nfc:
            name = TextEdits(nfc=True).apply(name)
        if (on.upload_relative_path_dropped or on.upload_traversal_by_name) and relative_path is not None:
            relative_path = ""  # files kept by name alone
        data = check_upload(task, name, relative_path, upload.data, on)
        if on.upload_same_name_replaces:
            same = next(
                (
                    a
                    for a in task.artifacts
                    if a.workspace_path == workspace_path(task.task_id, relative_path, name) and not a.agent_created
                ),
                None,
            )
            if same is not None:  # an upsert keyed by the path
                same.data = data
                return Reply(same.view())
        path = disk_path(task.task_id, relative_path, name, on) if on.names_are_paths else None
        store.reserve(1, len(data))
        artifact = store.add_artifact(task, name, relative_path, data, False)
        if path is not None:
            artifact.workspace_path = path
            store.write_through(path, data)  # the names became a path
        self.written(task, artifact.artifact_id)
        return Reply(artifact.view())

    @operation("downloadAgentTaskArtifact")
    async def download_artifact(self, call: Call) -> web.StreamResponse:
        on = self.on
        task = self.task_of(call)
        artifact = task.artifact(call.path["artifact_id"])
        if artifact is None:
            if on.artifact_unknown_200:
                return web.Response(body=b"", content_type="application/octet-stream")
            raise ApiError(404, f"Artifact {call.path['artifact_id']!r} not found in this task")
        self.visible(task, artifact.artifact_id, "Artifact")
        if on.upload_dotfiles_unservable and artifact.file_name.replace("\\", "/").rpartition("/")[2].startswith("."):
            raise ApiError(404, f"Artifact {call.path['artifact_id']!r} not found")
        if on.file_name_not_utf8_kept and not _utf8(artifact.file_name):
            raise ApiError(500, "'utf-8' codec can't encode the file name: surrogates not allowed")  # the fault
        if on.download_non_latin1_500 and not _latin1(artifact.file_name):
            raise ApiError(500, "'latin-1' codec can't encode the file name")  # the fault
        if on.upload_traversal_unreadable and not artifact.workspace_path.startswith(task.task_id + "/"):
            raise ApiError(500, "refusing to read a path outside the task's folder")  # the fault
        data = artifact.data
        if on.artifacts_keyed_by_file_name:  # bytes stored under the workspace path, not the id
            data = next(a.data for a in reversed(task.artifacts) if a.workspace_path == artifact.workspace_path)
        if on.download_text_mode:
            data = data.decode("utf-8", "replace").encode()
        headers = {} if on.download_no_disposition else {"Content-Disposition": content_disposition(artifact.file_name)}
        if on.download_disposition_ascii:
            headers["Content-Disposition"] = headers["Content-Disposition"].split("; filename*=")[0]
        # Octet-stream whatever the Accept header says: the official client asks for JSON here.
        content_type = "application/json" if on.download_json_content_type else "application/octet-stream"
        if on.download_stalls:
            return await _stall(call.request, data, content_type, headers)
        return web.Response(body=data, content_type=content_type, headers=headers)


def _utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogate: what a Content-Disposition needs)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


async def _stall(request: web.Request, data: bytes, content_type: str, headers: dict[str, str]) -> web.StreamResponse:
    """The stall fault: headers and half the bytes, then nothing until the client gives up."""
    response = web.StreamResponse(headers={"Content-Type": content_type, **headers})
    response.content_length = len(data)
    cors.opening(request, response)
    await response.prepare(request)
    await response.write(data[: len(data) // 2])
    await stall(STALL_SECONDS, request)
    return response


STALL_SECONDS = 30.0
"""Bounded, so a forgotten client never pins the server; far beyond any sane client timeout."""
