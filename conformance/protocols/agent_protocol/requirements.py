"""Agent Protocol v1: requirements the schema cannot say (workflows, round trips, pagination).

Every check creates what it reads, or shares a read-only fixture through ``ctx.memo``: a task run
to its last step, and an uploaded artifact. Ids from the target are quoted into paths, never
trusted as path syntax. Loops are bounded: at most ``STEP_BOUND`` step POSTs and ``MAX_PAGES``
pages per list.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from ...check import edges, hostile
from ...check.concurrent import AT_ONCE, at_once, expect_distinct, posts
from ...check.context import Blocked, Context
from ...check.edges import difference, same
from ...check.http import Response
from ...check.judgments import echoes, errors, lists
from ...check.judgments import pages as pages_judgment
from ...check.shown import shown
from ...check.signature import Signature, has
from ...verdicts.requirements import Authority, Level, Registry, operation_ref

registry = Registry("agent-protocol")
SCHEMA_EXPECTED_STATUSES: dict[str, dict[str, tuple[str, ...]]] = {}
"""None: the document names no status for a refused upload, and an upload with no body (its schema
requires the ``file`` part, the document leaves the body optional) or with parts it does not declare
is one it does not fix as valid, which the property-based phase judges for every protocol
(``phases/schema/engine.left_open``): any 4xx refuses it fairly."""

DOC = "agent-protocol/openapi.json"
SIGNATURES = (
    Signature(
        "a task list {tasks, pagination}",
        "GET",
        "/ap/v1/agent/tasks",
        lambda status, body: status == 200 and has(body, tasks=list, pagination=dict),
    ),
)
"""What only an Agent Protocol server answers (the preflight's recognition): its task list."""
TASKS = "/ap/v1/agent/tasks"
STEP_BOUND = 20
"""POSTs a task gets to report ``is_last``; an agent that needs more is not testable here."""
MAX_PAGES = 25
"""Most pages one list walk reads; page sizes are chosen so a walk stays within it."""
FEWEST_WALKED = 6
"""Fewest pages AP-PAGE-001's walk of the task list reads (it creates the tasks they need): a
server that serves nothing past its third page fails it beside any other state (composition)."""
JSON = {"Content-Type": "application/json"}


def _op(path: str, method: str) -> str:
    return operation_ref(DOC, path, method)


TASK_OPS = "/ap/v1/agent/tasks"
STEPS_OP = "/ap/v1/agent/tasks/{task_id}/steps"
STEP_OP = "/ap/v1/agent/tasks/{task_id}/steps/{step_id}"
ARTIFACTS_OP = "/ap/v1/agent/tasks/{task_id}/artifacts"
ARTIFACT_OP = "/ap/v1/agent/tasks/{task_id}/artifacts/{artifact_id}"
PAGINATION = f"{DOC}#/components/schemas/Pagination"
WHOLE_TASK_LIST = (
    "walks the whole task list, whose length is what the server held before the run plus what the run and "
    "other clients created: a total_pages rounded the wrong way shows only at some lengths"
)


def task_path(task_id: str, *rest: str) -> str:
    """A path under one task, each id quoted as one segment (ids are data, not path syntax)."""
    return "/".join([TASKS, quote(task_id, safe=""), *(quote(part, safe="") for part in rest)])


# --- comparisons and parsing (unit-tested) -------------------------------------------------------


_PARAM = re.compile(r';\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def disposable(name: Any, relative_path: Any) -> bool:
    """Whether a download's Content-Disposition may name the artifact otherwise than its file_name
    (AP-ARTIFACT-003, in the run and in the proxy alike): a name as long as a file system allows,
    which the header may carry shortened, or a path (RFC 6266 4.3: a recipient strips it), made safe."""
    if not isinstance(name, str):
        return False
    long = len(name.encode("utf-8", "surrogatepass")) >= edges.NAME_BYTES
    path = "/" in name or "\\" in name
    return long or path or climbs(name, relative_path if isinstance(relative_path, str) else None)


def climbs(name: str, relative_path: str | None) -> bool:
    """A name or folder that is absolute or climbs with '..' (plain, percent-encoded, backslashed):
    AP-ARTIFACT-006's subject, where a server may rewrite it, so not AP-ARTIFACT-001's echo."""
    for part in (name, relative_path or ""):
        plain = unquote(part).replace("\\", "/")
        if plain.startswith("/") or ".." in plain.split("/"):
            return True
    return False


def content_disposition(header: str) -> tuple[str, str | None]:
    """(disposition type, file name) of a Content-Disposition value; RFC 6266 ``filename*`` wins
    over ``filename``, as RFC 6266 section 4.3 tells recipients to prefer it."""
    kind = header.split(";", 1)[0].strip().lower()
    params: dict[str, str] = {}
    for name, raw in _PARAM.findall(header):
        value = raw.strip()
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params[name.lower()] = value
    extended = params.get("filename*")
    if extended is not None and extended.count("'") >= 2:
        charset, _, rest = extended.partition("'")
        _, _, encoded = rest.partition("'")
        try:
            return kind, unquote(encoded, encoding=charset or "utf-8", errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass
    return kind, params.get("filename")


def page_lengths(total: int, size: int) -> list[int]:
    """What each page of a list must hold: ``ceil(total / size)`` pages, all full but the last."""
    pages = math.ceil(total / size)
    return [size if page < pages else total - (pages - 1) * size for page in range(1, pages + 1)]


ERROR: dict[str, Any] = {"members": {"message": "string"}}
"""An error body as the document gives it (``errors.shape``'s facts): ``{"message": string}``."""
DEFAULT_PAGE: dict[str, Any] = {"items": "tasks", "defaults": {"current_page": 1, "page_size": 10}}
"""The task list's page as the document fixes it when no paging parameter is sent."""


def walk_size(total: int, max_pages: int = MAX_PAGES - 5) -> int:
    """A page size that reads ``total`` items in at most ``max_pages`` pages and, when it can,
    leaves the last page partly filled (so rounding down cannot pass for rounding up)."""
    size = max(2, math.ceil(total / max_pages))
    while total > size and total % size == 0:
        size += 1
    return size


# --- shared steps of the checks ------------------------------------------------------------------


def new_task(ctx: Context, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A task for a check to work on: any 2xx answer with a task_id will do (AP-TASK-001 judges
    the create itself). It always sends additional_input, so that a server that answers ``null``
    for an omitted one fails AP-TASK-001 (which omits it) and not every check."""
    sent = {"input": "conformance check", "additional_input": {}, **(body or {})}
    with ctx.setup("AP-TASK-001"):
        task = ctx.conforms(ctx.client.post(TASKS, json=sent), "createAgentTask", 200)
        ctx.expect(
            isinstance(task, dict) and isinstance(task.get("task_id"), str) and task["task_id"],
            f"createAgentTask: the answer has no task_id: {shown(task)}",
        )
    return dict(task)


def execute(ctx: Context, task_id: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], Response]:
    """One executed step and its answer; AP-STEP-001 judges the execution itself."""
    with ctx.setup("AP-STEP-001"):
        response = ctx.client.post(task_path(task_id, "steps"), json=dict(body))
        step = ctx.conforms(response, "executeAgentTaskStep", 200)
        ctx.expect(
            isinstance(step, dict) and isinstance(step.get("step_id"), str) and step["step_id"],
            f"executed step has no step_id: {shown(step)}",
        )
        ctx.expect_equal(step.get("task_id"), task_id, "the executed step's task_id")
    return dict(step), response


def upload(ctx: Context, task_id: str, name: str, data: bytes, relative_path: str | None) -> Response:
    """Multipart as the official client sends it: ``relative_path`` first, then ``file``."""
    fields = {"relative_path": relative_path} if relative_path is not None else {}
    files = {"file": (name, data, "application/octet-stream")}
    return ctx.client.post(task_path(task_id, "artifacts"), data=fields, files=files)


def artifact_fields(artifact: Mapping[str, Any]) -> dict[str, Any]:
    return {k: artifact.get(k) for k in ("artifact_id", "agent_created", "file_name", "relative_path")}


@dataclass(frozen=True, slots=True)
class RunTask:
    task: dict[str, Any]
    sent: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    finished: bool
    responses: list[Response]
    """The step POSTs' answers, judged strictly by AP-STEP-001 (the setup tolerated them)."""


def step_body(index: int) -> dict[str, Any]:
    return {
        "input": f"step {index + 1}: carry on",
        "additional_input": {
            "step": index + 1,
            "nested": {"list": [1, "two", None, {"x": 1.5}], "flag": False},
            "empty": {},
        },
    }


def run_task(ctx: Context) -> RunTask:
    """A task run until a step reports ``is_last`` (or STEP_BOUND POSTs), each step with its own input."""

    def make() -> RunTask:
        task = new_task(
            ctx,
            {
                "input": "Please write 'Washington' to output.txt",
                "additional_input": {"suite": "agent-api-conformance"},
            },
        )
        sent: list[dict[str, Any]] = []
        steps: list[dict[str, Any]] = []
        responses: list[Response] = []
        for index in range(STEP_BOUND):
            sent.append(step_body(index))
            step, response = execute(ctx, task["task_id"], sent[-1])
            steps.append(step)
            responses.append(response)
            if step.get("is_last") is True:
                return RunTask(task, sent, steps, True, responses)
        return RunTask(task, sent, steps, False, responses)

    return ctx.memo("ap-run-task", make)


def payload(seed: int, size: int = 4096) -> bytes:
    """Every byte value, NUL and 0xFF runs, a multipart-looking line, then seeded random bytes."""
    return edges.binary(seed, size)


@dataclass(frozen=True, slots=True)
class Uploaded:
    task_id: str
    artifact: dict[str, Any]
    name: str
    relative_path: str
    data: bytes
    response: Response
    """The upload's answer, judged strictly by AP-ARTIFACT-001 (the setup tolerated it)."""


def uploaded(ctx: Context) -> Uploaded:
    def make() -> Uploaded:
        task_id = new_task(ctx, {"input": "keep this file"})["task_id"]
        name, relative_path, data = "payload.bin", "inputs/raw", payload(ctx.options.seed)
        with ctx.setup("AP-ARTIFACT-001"):
            response = upload(ctx, task_id, name, data, relative_path)
            artifact = ctx.conforms(response, "uploadAgentTaskArtifacts", 200)
            ctx.expect(
                isinstance(artifact, dict) and isinstance(artifact.get("artifact_id"), str) and artifact["artifact_id"],
                f"uploaded artifact has no artifact_id: {shown(artifact)}",
            )
        return Uploaded(task_id, dict(artifact), name, relative_path, data, response)

    return ctx.memo("ap-uploaded", make)


def download(ctx: Context, task_id: str, artifact_id: str) -> Response:
    return ctx.client.get(task_path(task_id, "artifacts", artifact_id))


def fetched(ctx: Context, task_id: str, artifact_id: str) -> Response:
    """A download another check needs whole and answered 200 (AP-ARTIFACT-002 judges downloads)."""
    with ctx.setup("AP-ARTIFACT-002"):
        response = download(ctx, task_id, artifact_id)
        ctx.expect_status(response, 200)
    return response


@dataclass(frozen=True, slots=True)
class Sent:
    edge: edges.Upload
    response: Response


@dataclass(frozen=True, slots=True)
class EdgeUploads:
    """The corpus's files (``edges.uploads``), uploaded in order to one task: names, folders, sizes
    and collisions, judged by every artifact round trip each run."""

    task_id: str
    sent: tuple[Sent, ...]


def edge_uploads(ctx: Context) -> EdgeUploads:
    def make() -> EdgeUploads:
        task_id = new_task(ctx, {"input": "keep these files"})["task_id"]
        sent = tuple(
            Sent(edge, upload(ctx, task_id, edge.file_name, edge.data, edge.relative_path))
            for edge in edges.uploads(ctx.options.seed)
        )
        return EdgeUploads(task_id, sent)

    return ctx.memo("ap-edge-uploads", make)


def edge_artifact(ctx: Context, sent: Sent, earlier: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The artifact an edge upload stored, judged as AP-ARTIFACT-001 judges an upload (another check
    calls it inside that requirement's setup step); None when the server refused it fairly (a 4xx
    for a value the document lets it refuse). ``earlier``: artifact ids already answered, each to
    the edge that got it, so an upload answered with an earlier artifact's id (an overwrite) shows."""
    edge, response = sent.edge, sent.response
    ctx.cite(response.exchange)
    if edge.refusable and 400 <= response.status < 500:
        return None
    if 400 <= response.status < 500:
        ctx.fail(
            f"{shown(edge.file_name)} (relative_path {shown(edge.relative_path)}, {len(edge.data)} bytes) was "
            "refused with "
            f"{response.status}; the document sets no limit that excludes it: {response.shown(200)}",
            shown_by=response,
        )
    # the upload's answer, judged after the uploads (and reads) made since: each verdict names it
    artifact = ctx.conforms(response, "uploadAgentTaskArtifacts", 200)
    ctx.expect(
        isinstance(artifact, dict) and isinstance(artifact.get("artifact_id"), str) and artifact["artifact_id"],
        f"the upload of {shown(edge.file_name)} answered no artifact_id: {shown(artifact, 200)}",
        shown_by=response,
    )
    # the names echoed are this requirement's facts: another check's step needs only the artifact's
    # id, so a name the answer mangled blocks nothing (the artifact exists, and reads as it reads)
    for field, value in (("file_name", edge.file_name), ("relative_path", edge.relative_path)):
        ctx.expect(
            ctx.in_setup or same(artifact.get(field), value),
            f"{field} " + difference(artifact.get(field), value),
            shown_by=response,
        )
    if earlier is not None:
        first = earlier.setdefault(artifact["artifact_id"], edge.name)
        ctx.expect(
            first == edge.name,
            f"answered artifact_id {shown(artifact['artifact_id'])}, the id the upload {shown(first)} was given: "
            "an upload replaced an earlier artifact",
            shown_by=response,
        )
    return dict(artifact)


def accepted_edges(ctx: Context) -> tuple[EdgeUploads, list[tuple[Sent, dict[str, Any]]]]:
    """Every edge upload the server stored, with its artifact. One it did not store (not answered
    2xx: refused, or a 5xx) is no subject of a check judging what was stored: it is left out
    without a word (AP-ARTIFACT-001 reports it), so one name a server cannot store does not block
    what the others show. One answered 2xx that cannot be judged (no artifact_id, an earlier
    upload's id) blocks its part: the server says it stored something, and what is not known. A name
    the answer did not echo blocks nothing: the artifact is there to read (the echo is AP-ARTIFACT-001's)."""
    ups = edge_uploads(ctx)
    stored = []
    earlier: dict[str, str] = {}
    for sent in ups.sent:
        if not 200 <= sent.response.status < 300:
            continue
        with ctx.part(sent.edge.name), ctx.setup("AP-ARTIFACT-001"):
            artifact = edge_artifact(ctx, sent, earlier)
            if artifact is not None:
                stored.append((sent, artifact))
    return ups, stored


def expect_bytes(ctx: Context, got: bytes, want: bytes, what: str) -> None:
    if got != want:
        at = next((i for i, (x, y) in enumerate(zip(got, want, strict=False)) if x != y), min(len(got), len(want)))
        ctx.fail(f"{what}: {len(got)} bytes came back for {len(want)} sent; first difference at byte {at}")


def list_page(
    ctx: Context, path: str, operation: str, key: str, judge: bool = True, **params: int
) -> tuple[list[Any], dict[str, Any]]:
    """One page: its items and its pagination (``judge=False``: the form is another's subject)."""
    items, pagination, _ = read_page(ctx, path, operation, key, judge, **params)
    return items, pagination


def read_page(
    ctx: Context, path: str, operation: str, key: str, judge: bool = True, **params: int
) -> tuple[list[Any], dict[str, Any], Response]:
    """``list_page``, and the answer (for a judgment of it)."""
    answer = ctx.client.get(path, params=params)
    body = ctx.conforms(answer, operation, 200, judge=judge)
    ctx.expect(
        isinstance(body, dict) and isinstance(body.get(key), list) and isinstance(body.get("pagination"), dict),
        f"{operation}: the answer has no {shown(key)} list and pagination object: {shown(body, 300)}",
    )
    return list(body[key]), body["pagination"], answer  # the answer as read: a missing field fails, never errs


def all_items(ctx: Context, path: str, operation: str, key: str) -> list[Any]:
    """Every item of a list, for a check whose subject is what is listed, not how it pages
    (AP-PAGE-001..003 judge the arithmetic): pages of 100 until total_items are read or a page
    comes back empty, at most MAX_PAGES. See ``listing`` for where a walk stops short."""
    return listing(ctx, path, operation, key).items


@dataclass(frozen=True)
class Listing:
    items: list[Any]
    complete: bool
    """False when a page did not answer the page asked (its current_page says another, or it
    repeats the first page): the server does not page by the documented parameters, so the items
    beyond what it answered were not observed (the paging requirements' subject), not left out."""


def listing(ctx: Context, path: str, operation: str, key: str) -> Listing:
    """``all_items``, saying whether the walk read the whole list."""
    items: list[Any] = []
    first: list[Any] = []
    for number in range(1, MAX_PAGES + 1):
        page, pagination = list_page(ctx, path, operation, key, False, current_page=number, page_size=100)
        answered = pagination.get("current_page")
        if number > 1 and page and ((isinstance(answered, int) and answered != number) or page == first):
            return Listing(items, complete=False)
        first = first or page
        items.extend(page)
        total = pagination.get("total_items")
        if not page or not isinstance(total, int) or len(items) >= total:
            break
    return Listing(items, complete=True)


def unobserved(walk: Listing, what: str, owner: str) -> None:
    """Block, by the paging requirement ``owner``, a part whose item a short walk did not reach."""
    if not walk.complete:
        answered = len(walk.items)
        raise Blocked(owner, f"{what} is not among the {answered} items of the pages the server answered as asked")


WALKS = 3
"""Walks of a list that others change while it is read (a later page's total_items differs from
the first page's, and so does the first page read again), before its paging is left not verified."""


def walk(ctx: Context, path: str, operation: str, key: str, size: int, at_least: int = 0) -> list[Any]:
    """Every page at ``page_size=size``, each checked against the arithmetic; the items in page order.
    The items' form is AP-SCHEMA-005's and the round-trip requirements' subject, not the paging's.
    A list someone else wrote to during the walk (another shard, another user of the server) is
    walked again: its pages were read from different lists. ``at_least``: the items the check made
    in it, which total_items may not fall short of."""
    for _ in range(WALKS):
        walked = _walk_once(ctx, path, operation, key, size, at_least)
        if walked is not None:
            return walked
    ctx.not_verified(f"{operation}: the list changed while each of {WALKS} walks read it (others write to the target)")


def _walk_once(ctx: Context, path: str, operation: str, key: str, size: int, at_least: int) -> list[Any] | None:
    """One walk; None when the list changed under it."""
    items, pagination, answer = read_page(ctx, path, operation, key, False, current_page=1, page_size=size)
    total = pagination["total_items"]
    ctx.expect(isinstance(total, int) and total >= 0, f"{operation}: total_items is {shown(total)}")
    lengths = page_lengths(total, size)
    ctx.expect(len(lengths) <= MAX_PAGES, f"{operation}: {len(lengths)} pages of {size}; too many to walk")
    pages = [items]
    for number in range(1, max(len(lengths), 1) + 1):
        if number > 1:
            items, pagination, answer = read_page(ctx, path, operation, key, False, current_page=number, page_size=size)
            pages.append(items)
            if pagination.get("total_items") != total:
                again = list_page(ctx, path, operation, key, False, current_page=1, page_size=size)[1]
                if again.get("total_items") != total:
                    return None  # the list grew or shrank meanwhile: not a page that miscounts it
        # the arithmetic of each page, judged from its answer alone (as the proxy and replay judge it)
        ctx.judge(pages_judgment.NUMBERS, answer, operation, items=key, **({"at_least": at_least} if at_least else {}))
    every = [item for page in pages for item in page]
    ids = [item.get(f"{key[:-1]}_id") for item in every]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    ctx.expect(not dupes, f"{operation}: items on more than one page: {dupes[:5]}")
    return every


# --- tasks ---------------------------------------------------------------------------------------


@registry.requirement(
    "AP-TASK-001",
    Level.MUST,
    "POST /ap/v1/agent/tasks creates a task and returns it with a task_id",
    _op(TASK_OPS, "post"),
    from_traffic=True,
)
def create_task(ctx: Context) -> None:
    body = ctx.conforms(ctx.client.post(TASKS, json={"input": "write hello"}), "createAgentTask", 200)
    ctx.expect(isinstance(body.get("task_id"), str) and body["task_id"], "task_id missing or empty")


ROUND_TRIP_INPUT = "Write 'Washington' to output.txt \u2014 \u00fcn\u00efc\u00f8d\u00e9 \u2713 \"quoted\"\nsecond line"
ROUND_TRIP_EXTRA: dict[str, Any] = {
    "debug": False,
    "mode": "benchmarks",
    "count": 3,
    "ratio": 0.25,
    "none": None,
    "nested": {"list": [1, "two", None, {"deep": [True, {"x": -1.5}]}], "empty_list": [], "empty": {}},
    "unicode": {"\u043a\u043b\u044e\u0447": "\u0437\u043d\u0430\u0447\u0435\u043d\u0438\u0435", "emoji": "\U0001f680"},
}


@registry.requirement(
    "AP-TASK-002",
    Level.MUST,
    "A task's input and additional_input come back exactly as sent, nested values included, "
    "in the create answer and from GET /ap/v1/agent/tasks/{task_id}: every text of the edge corpus "
    "as input (scripts, combining marks, astral characters, escapes, control characters, spaces at "
    "the ends; the empty, NUL and 64 Ki character ones unless refused with a 4xx), and an "
    "additional_input holding them all as values and keys with numbers that lose precision elsewhere",
    f"{DOC}#/components/schemas/TaskRequestBody",
    from_traffic=True,
)
def task_round_trip(ctx: Context) -> None:
    cases: list[tuple[str, Any, Any, bool]] = [
        ("unicode and quotes", ROUND_TRIP_INPUT, ROUND_TRIP_EXTRA, False),
        ("the edge corpus's JSON values", "edge values in additional_input", edges.json_values(), False),
        *((e.name, e.value, {}, e.refusable) for e in edges.TEXTS),
    ]
    for name, text, extra, refusable in cases:
        with ctx.part(name):
            sent = {"input": text, "additional_input": extra}
            response = ctx.client.post(TASKS, json=sent)
            if refused(ctx, response, refusable, "createAgentTask"):
                continue
            with ctx.setup("AP-TASK-001"):  # the create's status and form are AP-TASK-001's
                created = ctx.conforms(response, "createAgentTask", 200)
                ctx.expect(
                    isinstance(created, dict) and isinstance(created.get("task_id"), str),
                    f"the create answered no task_id: {shown(created, 200)}",
                )
            got = ctx.client.get(task_path(created["task_id"]))
            read = ctx.conforms(got, "getAgentTask", 200)
            ctx.expect_equal(read.get("task_id"), created["task_id"], "getAgentTask: task_id", shown_by=got)
            answers = (("createAgentTask answer", created, response), ("getAgentTask answer", read, got))
            for where, _, answer in answers:  # the create's echo is judged after the read: named by it
                ctx.judge(echoes.MEMBERS, answer, f"{where}:", sent=sent)


@registry.requirement(
    "AP-TASK-003",
    Level.MUST,
    f"Tasks created at the same moment ({AT_ONCE} POST /ap/v1/agent/tasks on separate connections) are distinct: "
    "each answer has a task_id of its own, and each task reads back by it with the input it was created with",
    _op(TASK_OPS, "post"),
)
def concurrent_creates(ctx: Context) -> None:
    # what the document says of a created task holds whatever else is being created at the time
    nonce = f"{ctx.draws('concurrent tasks').getrandbits(32):08x}"
    inputs = [f"concurrent task {n} {nonce}" for n in range(AT_ONCE)]
    answers = at_once(ctx, posts(TASKS, [{"input": text} for text in inputs]))
    ids: list[str] = []
    with ctx.setup("AP-TASK-001"):  # each create's status and form are AP-TASK-001's
        for answer in answers:
            created = ctx.conforms(answer, "createAgentTask", 200)
            ctx.expect(
                isinstance(created, dict) and isinstance(created.get("task_id"), str),
                f"the create answered no task_id: {shown(created, 200)}",
            )
            ids.append(created["task_id"])
    with ctx.part("task ids"):
        expect_distinct(ctx, ids, "tasks", "task_id")
    for task_id, text in zip(ids, inputs, strict=True):
        with ctx.part(f"task {shown(text)}"):
            # the read's form is the schema requirements' (one bug, one failure): its status and input here
            read = ctx.client.get(task_path(task_id))
            ctx.conforms(read, "getAgentTask", 200, judge=False)
            ctx.judge(echoes.MEMBERS, read, f"getAgentTask {task_id}:", sent={"input": text})


# --- errors --------------------------------------------------------------------------------------


@registry.requirement(
    "AP-ERR-001",
    Level.MUST,
    'Every task-scoped operation answers an unknown task_id with 404 and a {"message": string} body',
    f"{DOC}#/components/responses/NotFound",
    from_traffic=True,
)
def unknown_task(ctx: Context) -> None:
    missing = ctx.drawn_id("unknown task")
    calls: tuple[tuple[str, Callable[[], Response]], ...] = (
        ("getAgentTask", lambda: ctx.client.get(task_path(missing))),
        ("listAgentTaskSteps", lambda: ctx.client.get(task_path(missing, "steps"))),
        ("executeAgentTaskStep", lambda: ctx.client.post(task_path(missing, "steps"), json={})),
        ("listAgentTaskArtifacts", lambda: ctx.client.get(task_path(missing, "artifacts"))),
        ("uploadAgentTaskArtifacts", lambda: upload(ctx, missing, "a.txt", b"a", None)),
    )
    for operation, call in calls:
        with ctx.part(operation):
            answer = call()
            ctx.conforms(answer, operation, 404)
            ctx.judge(errors.SHAPE, answer, f"{operation} 404:", **ERROR)


@registry.requirement(
    "AP-ERR-002",
    Level.MUST,
    'GET .../steps/{step_id} answers 404 with a {"message"} body for an unknown step id, '
    "for another task's step and under an unknown task",
    f"{_op(STEP_OP, 'get')}/responses/404",
    from_traffic=True,
)
def unknown_step(ctx: Context) -> None:
    run = run_task(ctx)
    task_id, step_id = run.task["task_id"], run.steps[0]["step_id"]
    other = new_task(ctx)["task_id"]
    for what, path in (
        ("an unknown step id", task_path(task_id, "steps", ctx.drawn_id("unknown step"))),
        ("another task's step id", task_path(other, "steps", step_id)),
        ("an unknown task", task_path(ctx.drawn_id("unknown task of a step"), "steps", step_id)),
    ):
        with ctx.part(what):
            answer = ctx.client.get(path)
            ctx.conforms(answer, "getAgentTaskStep", 404)
            ctx.judge(errors.SHAPE, answer, f"getAgentTaskStep 404 for {what}:", **ERROR)


@registry.requirement(
    "AP-ERR-003",
    Level.MUST,
    'GET .../artifacts/{artifact_id} answers 404 with a {"message"} body for an unknown '
    "artifact id, for another task's artifact and under an unknown task",
    f"{_op(ARTIFACT_OP, 'get')}/responses/404",
    from_traffic=True,
)
def unknown_artifact(ctx: Context) -> None:
    up = uploaded(ctx)
    other = new_task(ctx)["task_id"]
    for what, task_id, artifact_id in (
        ("an unknown artifact id", up.task_id, ctx.drawn_id("unknown artifact")),
        ("another task's artifact id", other, up.artifact["artifact_id"]),
        ("an unknown task", ctx.drawn_id("unknown task of an artifact"), up.artifact["artifact_id"]),
    ):
        with ctx.part(what):
            answer = download(ctx, task_id, artifact_id)
            ctx.conforms(answer, "downloadAgentTaskArtifact", 404)
            ctx.judge(errors.SHAPE, answer, f"downloadAgentTaskArtifact 404 for {what}:", **ERROR)


INVALID_BODIES = (
    ("input as a number", b'{"input": 5}'),
    ("additional_input as a string", b'{"additional_input": "debug"}'),
    ("malformed JSON", b'{"input": "x"'),
)
"""Beside the bodies that are not objects (``hostile.NON_OBJECT_BODIES``: null, an array, a string, a number)."""


TASK_COUNT = ["pagination", "total_items"]
"""Where the task list counts its tasks (``lists.count_kept``'s ``count``)."""


def _task_count(ctx: Context) -> Response:
    """A page of one task, for its count (the page's form is AP-PAGE-001's subject)."""
    with ctx.setup("AP-PAGE-001"):
        return read_page(ctx, TASKS, "listAgentTasks", "tasks", False, current_page=1, page_size=1)[2]


@registry.requirement(
    "AP-ERR-004",
    Level.MUST,
    "POST tasks and POST steps answer 422 with a JSON object body to a body that is not an object (null, an "
    "array, a string, a number), has wrongly typed fields or is not JSON; a refused POST creates no task and "
    "executes no step",
    f"{DOC}#/components/responses/UnprocessableEntity",
    # not depends_on_state: a refused body's status does not depend on what the server holds, so a
    # fixed server's replay says "not reproduced"; the count of tasks read before and after the
    # refused creates does, and its own finding's replay says so (the listing shows others' tasks)
    from_traffic=True,
)
def invalid_bodies(ctx: Context) -> None:
    task_id = new_task(ctx)["task_id"]  # the steps' task, made before the count is read
    before = _task_count(ctx).json()["pagination"].get("total_items")
    for what, content in INVALID_BODIES:
        with ctx.part(f"createAgentTask with {what}"):
            body = ctx.conforms(ctx.client.post(TASKS, content=content, headers=JSON), "createAgentTask", 422)
            ctx.expect(isinstance(body, dict), f"createAgentTask 422 for {what}: body {shown(body)} is not an object")

    def steps() -> list[Any]:
        # A server may list planned steps (status "created") before any runs: compare, don't expect zero.
        with ctx.setup("AP-STEP-003"):
            return all_items(ctx, task_path(task_id, "steps"), "listAgentTaskSteps", "steps")

    hostile.refuses_non_objects(
        ctx,
        [
            hostile.Write("createAgentTask", "POST", TASKS, statuses=(422,)),  # its count: below
            hostile.Write(
                "executeAgentTaskStep", "POST", task_path(task_id, "steps"), "the task's steps", steps, (422,)
            ),
        ],
    )
    with ctx.part("the number of tasks after the refused createAgentTask bodies"):
        ctx.judge_by_state(  # a count read from the server: a replay on another state cannot reuse it
            lists.KEPT,
            _task_count(ctx),
            "listAgentTasks:",
            count=TASK_COUNT,
            before=before,
            refused="the refused bodies to createAgentTask",
        )
    before_steps = steps()
    for what, content in INVALID_BODIES:
        with ctx.part(f"executeAgentTaskStep with {what}"):
            response = ctx.client.post(task_path(task_id, "steps"), content=content, headers=JSON)
            body = ctx.conforms(response, "executeAgentTaskStep", 422)
            ctx.expect(
                isinstance(body, dict), f"executeAgentTaskStep 422 for {what}: body {shown(body)} is not an object"
            )
    after = steps()
    ctx.expect(
        after == before_steps,
        f"refused step POSTs changed the task's steps: {len(before_steps)} listed before, "
        f"{len(after)} after ({shown([s.get('status') for s in after])})",
    )


# --- steps ---------------------------------------------------------------------------------------


@registry.requirement(
    "AP-STEP-001",
    Level.MUST,
    f"Each POST .../steps executes a new step of the task (fresh step_id) and one reports "
    f"is_last: true within {STEP_BOUND} POSTs",
    f"{DOC}#/components/schemas/Step/allOf/1/properties/is_last",
    from_traffic=True,
)
def step_progression(ctx: Context) -> None:
    run = run_task(ctx)
    for response in run.responses:
        with ctx.part():
            ctx.conforms(response, "executeAgentTaskStep", 200)
    ids = [s["step_id"] for s in run.steps]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    ctx.expect(not repeated, f"step ids repeat across POSTs: {repeated[:5]}")
    ctx.expect(
        run.finished,
        f"no step reported is_last: true within {STEP_BOUND} POSTs "
        f"(is_last values: {shown([s.get('is_last') for s in run.steps])})",
    )


@registry.requirement(
    "AP-STEP-002",
    Level.MUST,
    "A step records the input and additional_input it was executed with, nested values included, "
    "in the POST answer and when read back by id: every text of the edge corpus as a step's input "
    "(the empty, NUL and 64 Ki character ones unless refused with a 4xx), and the corpus's JSON "
    "values as an additional_input",
    f"{DOC}#/components/schemas/StepRequestBody",
    from_traffic=True,
)
def step_round_trip(ctx: Context) -> None:
    run = run_task(ctx)
    for number, (sent, posted) in enumerate(zip(run.sent, run.responses, strict=True), 1):
        with ctx.part(f"step {number}"):
            step_echoes(ctx, run.task["task_id"], sent, posted, ctx.conforms)
    cases = [("the edge corpus's JSON values", "edge values", edges.json_values(), False)]
    cases += [(e.name, e.value, {}, e.refusable) for e in edges.TEXTS]
    task_id, finished = "", True
    for name, text, extra, refusable in cases:
        with ctx.part(name):
            if finished:  # past is_last the document says nothing of what a step does: a new task
                task_id = new_task(ctx, {"input": "steps with edge inputs"})["task_id"]
            sent = {"input": text, "additional_input": extra}
            response = ctx.client.post(task_path(task_id, "steps"), json=sent)
            finished = False
            if refused(ctx, response, refusable, "executeAgentTaskStep"):
                continue
            with ctx.setup("AP-STEP-001"):  # the step answer's status and form are AP-STEP-001's
                step = ctx.conforms(response, "executeAgentTaskStep", 200)
                ctx.expect(isinstance(step, dict), f"the step answer is not an object: {shown(step, 200)}")
            finished = step.get("is_last") is True
            step_echoes(ctx, task_id, sent, response, ctx.conforms)


def refused(ctx: Context, response: Response, refusable: bool, operation: str) -> bool:
    """Whether a write of an edge value was refused fairly (a 4xx where the document lets a server
    refuse it); a 4xx for a value it must accept is the echo's failure."""
    if not 400 <= response.status < 500:
        return False
    ctx.cite(response.exchange)
    ctx.expect(
        refusable,
        f"{operation} refused it with {response.status}, though the document accepts it: {response.shown(200)}",
        shown_by=response,
    )
    return True


def step_echoes(
    ctx: Context, task_id: str, sent: dict[str, Any], posted: Response, conforms: Callable[..., Any]
) -> None:
    """The step's POST answer and its read by id echo what was sent: ``echoes.members``, the
    judgment the proxy's judge and replay call too."""
    step = posted.json_value()
    read = ctx.client.get(task_path(task_id, "steps", str(step.get("step_id") if isinstance(step, dict) else None)))
    conforms(read, "getAgentTaskStep", 200)
    members = {field: sent[field] for field in ("input", "additional_input")}
    for where, answer in (("POST answer", posted), ("GET by id", read)):
        ctx.judge(echoes.MEMBERS, answer, f"{where}:", sent=members)


@registry.requirement(
    "AP-STEP-003",
    Level.MUST,
    "GET .../steps lists exactly the executed steps: every step_id once, none missing, none extra, "
    "with the same task_id, input, additional_input and is_last",
    _op(STEPS_OP, "get"),
    from_traffic=True,
)
def listed_steps(ctx: Context) -> None:
    run = run_task(ctx)
    listed = all_items(ctx, task_path(run.task["task_id"], "steps"), "listAgentTaskSteps", "steps")
    by_id = {s.get("step_id"): s for s in listed}
    executed = [s["step_id"] for s in run.steps]
    missing = [i for i in executed if i not in by_id]
    extra = [i for i in by_id if i not in executed]
    ctx.expect(
        not missing and not extra,
        f"listed steps differ from the executed ones: missing {missing[:5]}, not executed {extra[:5]}",
    )
    for number, step in enumerate(run.steps, 1):
        got = by_id[step["step_id"]]
        for field in ("task_id", "input", "additional_input", "is_last"):
            with ctx.part():
                ctx.expect(
                    same(got.get(field), step.get(field)),
                    f"listed step {number}: {field} is {shown(got.get(field))}, executed {shown(step.get(field))}",
                    shown_by=got,  # the page that listed it, not the last page read
                )


@registry.requirement(
    "AP-STEP-004",
    Level.MUST,
    "GET .../steps/{step_id} returns the step that was executed (all of it, once completed)",
    _op(STEP_OP, "get"),
    from_traffic=True,
)
def get_step(ctx: Context) -> None:
    run = run_task(ctx)
    for number, step in enumerate(run.steps, 1):
        read = ctx.conforms(
            ctx.client.get(task_path(run.task["task_id"], "steps", step["step_id"])), "getAgentTaskStep", 200
        )
        # a completed step is final; one still running may have gained output since
        fields = (
            list(step) if step.get("status") == "completed" else ["step_id", "task_id", "input", "additional_input"]
        )
        for field in fields:
            with ctx.part():
                ctx.expect(
                    same(read.get(field), step.get(field)),
                    f"step {number} read back by id: {field} is {shown(read.get(field))}, executed "
                    f"{shown(step.get(field))}",
                )


# --- artifacts -----------------------------------------------------------------------------------


@registry.requirement(
    "AP-ARTIFACT-001",
    Level.MUST,
    "Uploading a multipart file with a relative_path returns an Artifact with an artifact_id, "
    "the file's name, the relative_path sent and agent_created: false; for every file of the edge "
    "corpus (UTF-8, decomposed, dot-leading, quoted and 255-byte names, empty, binary and 1 MiB files, "
    "a name uploaded twice, a file and a folder of one name) too, each with an artifact_id of its own, "
    "or a 4xx where the document lets a server refuse it (a 255-byte name, a second upload of a name, "
    "a name that is also a folder)",
    _op(ARTIFACTS_OP, "post"),
    from_traffic=True,
)
def upload_answer(ctx: Context) -> None:
    up = uploaded(ctx)
    ctx.conforms(up.response, "uploadAgentTaskArtifacts", 200)
    ctx.expect_equal(up.artifact.get("file_name"), up.name, "uploaded artifact's file_name")
    ctx.expect_equal(up.artifact.get("relative_path"), up.relative_path, "uploaded artifact's relative_path")
    ctx.expect(
        up.artifact.get("agent_created") is False,
        f"an uploaded artifact must be agent_created: false, got {shown(up.artifact.get('agent_created'))}",
    )
    earlier: dict[str, str] = {}
    for sent in edge_uploads(ctx).sent:
        with ctx.part(sent.edge.name):
            edge_artifact(ctx, sent, earlier)


@registry.requirement(
    "AP-ARTIFACT-002",
    Level.MUST,
    "Downloading an uploaded artifact answers 200 with exactly the bytes "
    "uploaded (NUL, 0xFF and CRLF included), for every file of the edge corpus the server stored, "
    "after all of them were uploaded (an empty and a 1 MiB file, names a file system treats specially, "
    "two uploads of one name each keeping its own bytes)",
    f"{_op(ARTIFACT_OP, 'get')}/responses/200",
    from_traffic=True,
)
def download_bytes(ctx: Context) -> None:
    up = uploaded(ctx)
    with ctx.part():
        data = ctx.conforms(download(ctx, up.task_id, up.artifact["artifact_id"]), "downloadAgentTaskArtifact", 200)
        expect_bytes(ctx, data, up.data, "downloaded artifact")
    ups, stored = accepted_edges(ctx)  # downloaded after all of them: a later upload may not replace one
    for sent, artifact in stored:
        with ctx.part(sent.edge.name):
            got = ctx.conforms(download(ctx, ups.task_id, artifact["artifact_id"]), "downloadAgentTaskArtifact", 200)
            expect_bytes(ctx, got, sent.edge.data, f"the download of {shown(sent.edge.file_name)}")


@registry.requirement(
    "AP-ARTIFACT-003",
    Level.SHOULD,
    "A download carries Content-Disposition: attachment with the artifact's file name",
    "UPSTREAM-FACTS: Agent Protocol v1, 'download returns the stored bytes as "
    "application/octet-stream with a Content-Disposition attachment filename' (the document's 200 "
    "names no header)",
    authority=Authority.PRACTICE,
    from_traffic=True,
)
def download_disposition(ctx: Context) -> None:
    up = uploaded(ctx)
    response = fetched(ctx, up.task_id, up.artifact["artifact_id"])
    ctx.expect_status(response, 200)
    header = response.headers.get("content-disposition")
    ctx.expect(header, "the download has no Content-Disposition header")
    kind, name = content_disposition(header or "")
    ctx.expect_equal(kind, "attachment", f"Content-Disposition {shown(header)}: disposition type")
    # the artifact's name as its upload answered it: whether that is the name sent is AP-ARTIFACT-001's fact
    ctx.expect_equal(name, up.artifact.get("file_name"), f"Content-Disposition {shown(header)}: file name")
    ups, stored = accepted_edges(ctx)
    for sent, artifact in stored:
        if disposable(artifact.get("file_name"), artifact.get("relative_path")):
            continue  # a name as long as a disk allows: the header may carry it shortened
        with ctx.part(sent.edge.name):
            with ctx.setup("AP-ARTIFACT-002"):
                response = fetched(ctx, ups.task_id, artifact["artifact_id"])
            header = response.headers.get("content-disposition") or ""
            name = content_disposition(header)[1]
            ctx.expect(
                name == artifact.get("file_name"),
                f"Content-Disposition {shown(header)}: the file name {shown(name)} is not the artifact's, "
                f"{shown(artifact.get('file_name'))} (its upload's answer)",
            )


@registry.requirement(
    "AP-ARTIFACT-004",
    Level.MUST,
    "GET .../artifacts lists an uploaded artifact with the fields the upload answered, and every file "
    "of the edge corpus the server stored exactly once, the same way",
    _op(ARTIFACTS_OP, "get"),
    from_traffic=True,
)
def listed_artifact(ctx: Context) -> None:
    up = uploaded(ctx)
    walk = listing(ctx, task_path(up.task_id, "artifacts"), "listAgentTaskArtifacts", "artifacts")
    listed = walk.items
    found = [a for a in listed if a.get("artifact_id") == up.artifact["artifact_id"]]
    if not found:
        unobserved(walk, f"the uploaded artifact {shown(up.artifact['artifact_id'])}", "AP-PAGE-003")
    ctx.expect(
        found,
        f"the uploaded artifact {shown(up.artifact['artifact_id'])} is not listed ({len(listed)} artifacts listed)",
    )
    ctx.expect(
        same(artifact_fields(found[0]), artifact_fields(up.artifact)),
        f"listed artifact {shown(artifact_fields(found[0]))} differs from the upload's answer "
        f"{shown(artifact_fields(up.artifact))}",
    )
    ups, stored = accepted_edges(ctx)
    walk = listing(ctx, task_path(ups.task_id, "artifacts"), "listAgentTaskArtifacts", "artifacts")
    listed = walk.items
    for sent, artifact in stored:
        with ctx.part(sent.edge.name):
            found = [a for a in listed if isinstance(a, dict) and a.get("artifact_id") == artifact["artifact_id"]]
            if not found:
                unobserved(walk, f"{shown(sent.edge.file_name)} ({artifact['artifact_id']})", "AP-PAGE-003")
            ctx.expect(
                len(found) == 1,
                f"{shown(sent.edge.file_name)} ({artifact['artifact_id']}) is listed {len(found)} times "
                f"among the task's {len(listed)} artifacts",
            )
            ctx.expect(
                same(artifact_fields(found[0]), artifact_fields(artifact)),
                f"listed as {shown(artifact_fields(found[0]))}; the upload answered {shown(artifact_fields(artifact))}",
            )


@registry.requirement(
    "AP-ARTIFACT-005",
    Level.SHOULD,
    "GET /ap/v1/agent/tasks/{task_id} includes an uploaded artifact in the task's artifacts",
    "the Agent Protocol SDK (agent-protocol 1.0.2) lists uploads among a task's artifacts "
    '(docs/interop-agent-protocol-sdk.md); the document calls them "artifacts that the task has produced" '
    f"({DOC}#/components/schemas/Task/allOf/1/properties/artifacts)",
    authority=Authority.PRACTICE,
    from_traffic=True,
)
def task_lists_artifact(ctx: Context) -> None:
    # Practice: the document calls these "artifacts that the task has produced"; an upload was
    # given to the task, not produced by it, though the SDK lists both.
    up = uploaded(ctx)
    task = ctx.conforms(ctx.client.get(task_path(up.task_id)), "getAgentTask", 200)
    found = [a for a in task.get("artifacts") or [] if a.get("artifact_id") == up.artifact["artifact_id"]]
    ctx.expect(
        found,
        f"the task's artifacts do not include the uploaded {shown(up.artifact['artifact_id'])}: "
        f"{shown(task.get('artifacts'))}",
    )
    ctx.expect(
        same(artifact_fields(found[0]), artifact_fields(up.artifact)),
        f"the task's copy {shown(artifact_fields(found[0]))} differs from the upload's answer",
    )


VICTIM_LAYOUTS: tuple[tuple[str, str], ...] = (
    ("kept by relative_path and file name", "shared"),
    ("kept by file name alone (relative_path ignored)", ""),
)
"""Where a server may keep the other task's ``victim.txt``, uploaded with relative_path ``shared``
(the folder under the task): the document lets relative_path be stored or ignored, so every attack
is aimed at each place, and at any other the upload's answer names (``victim_folders``)."""


def traversal_attempts(victim: str, extra: Iterable[str] = ()) -> tuple[tuple[str, str, str | None], ...]:
    """(form, file name, relative_path) of each upload naming the other task's ``victim.txt``
    through '..', at each place a server may keep it (``VICTIM_LAYOUTS``, and the folders in
    ``extra``), in every form a name can carry a path: plain, in relative_path, in the file name and
    in both at once (a server that checks one of them only), percent-encoded (a server that decodes
    names after checking them), backslashed (one that turns backslashes into separators); and
    absolute paths, which name ``/dev/null``: a server that lets one replace its task folder writes
    to the null device, keeps nothing there, and serves the artifact back empty, which is how the
    check sees it.

    '..' climbs one level only: ``<workspace>/<task>/../<victim>`` is still inside the workspace,
    so a server that follows it writes into the other task's folder and nowhere else."""
    layouts = [*VICTIM_LAYOUTS, *((f"kept where the upload's answer says ({f})", f) for f in extra)]
    attempts: list[tuple[str, str, str | None]] = []
    for layout, folder in layouts:
        target = "/".join(p for p in (victim, folder) if p)
        back, coded = target.replace("/", "\\"), target.replace("/", "%2F")
        attempts += [
            (f"'..' in relative_path, at the victim {layout}", "victim.txt", f"../{target}"),
            (f"'..' in the file name, at the victim {layout}", f"../{target}/victim.txt", None),
            (f"'..' in both at once, at the victim {layout}", f"../{target}/victim.txt", f"../{victim}"),
            (f"percent-encoded '..' in relative_path, at the victim {layout}", "victim.txt", f"%2E%2E%2F{coded}"),
            (f"percent-encoded '..' in the file name, at the victim {layout}", f"%2E%2E%2F{coded}%2Fvictim.txt", None),
            (f"backslashed '..' in relative_path, at the victim {layout}", "victim.txt", f"..\\{back}"),
            (f"backslashed '..' in the file name, at the victim {layout}", f"..\\{back}\\victim.txt", None),
        ]
    return (
        *attempts,
        ("an absolute relative_path", "null", "/dev"),
        ("an absolute file name", "/dev/null", None),
    )


def victim_folders(kept: Any) -> list[str]:
    """A folder the victim's upload answer names beyond ``VICTIM_LAYOUTS`` (a server that keeps
    files under a folder of its own): aimed at too. One that climbs names no place to aim at."""
    answered = kept.get("relative_path") if isinstance(kept, dict) else None
    folder = answered.strip("/") if isinstance(answered, str) else ""
    known = {f for _, f in VICTIM_LAYOUTS}
    return [folder] if folder not in known and ".." not in folder else []


@registry.requirement(
    "AP-ARTIFACT-006",
    Level.SHOULD,
    "An upload whose relative_path or file name climbs out of its task with '..' (plain, percent-encoded, "
    "backslashed) or is absolute is refused with 4xx or kept as its own artifact: it downloads as uploaded, "
    "and another task's artifact still downloads as it was uploaded and is listed alone",
    f"{_op(ARTIFACT_OP, 'get')}/responses/200 (an artifact_id names one artifact of its task, downloaded as "
    f'uploaded); {DOC}#/components/schemas/ArtifactUpload/properties/relative_path ("Relative path of the '
    f"artifact in the agent's workspace\")",
)
def traversal(ctx: Context) -> None:
    # SHOULD, not MUST: the document names no rule for such names; what it does fix is that an
    # artifact_id names one artifact of its task, whose download is its bytes, and that is what a
    # crafted name must not change. Each attempt is judged on its own (ctx.part) and the other
    # task's artifact is read back after every one, so a harm seen is reported whatever goes wrong
    # after it. The protocol gives no way to remove an artifact, so nothing written can be cleaned
    # up: the attempts are built to write, at worst, into the victim's folder (see traversal_attempts).
    rnd = random.Random(ctx.options.seed + 6)
    victim = new_task(ctx, {"input": "victim"})["task_id"]
    original = b"victim bytes\x00\xff" + rnd.randbytes(64)
    with ctx.setup("AP-ARTIFACT-001"):
        kept = ctx.conforms(upload(ctx, victim, "victim.txt", original, "shared"), "uploadAgentTaskArtifacts", 200)
        ctx.expect(isinstance(kept, dict) and kept.get("artifact_id"), f"the upload answered {shown(kept, 200)}")
    with ctx.setup("AP-ARTIFACT-002"):  # readable before the attack, so a loss after it is the attack's
        before = download(ctx, victim, kept["artifact_id"])
        ctx.expect_status(before, 200)
        expect_bytes(ctx, before.body, original, "the other task's artifact before the crafted uploads")
    attacker = new_task(ctx, {"input": "attacker"})["task_id"]
    seen = original  # what the victim's download gave last, so each change is put on the upload that made it
    attempts = traversal_attempts(victim, victim_folders(kept))
    for number, (form, name, relative_path) in enumerate(dict.fromkeys(attempts), 1):
        hostile = f"attacker {number} ".encode() + rnd.randbytes(32)
        where = f"upload {number}, {form} (file name {shown(name)}, relative_path {shown(relative_path)})"
        with ctx.part(where):
            response = upload(ctx, attacker, name, hostile, relative_path)
            if 200 <= response.status < 300:  # any other answer stored nothing this check can read back
                stored = ctx.conforms(response, "uploadAgentTaskArtifacts", response.status, judge=False)
                artifact_id = stored.get("artifact_id") if isinstance(stored, dict) else None
                ctx.expect(artifact_id, f"accepted ({response.status}) without an artifact_id: {shown(stored, 200)}")
                back = download(ctx, attacker, str(artifact_id))
                ctx.expect(
                    back.status == 200 and back.body == hostile,
                    f"accepted, but its own download answers {back.status} with {len(back.body)} bytes "
                    f"({shown(back.body[:24])}...), not the {len(hostile)} uploaded: the name was taken as a path "
                    "(out of its task, or one the download refuses to serve)",
                )
        with ctx.part(f"the other task's artifact after {where}"):
            after = download(ctx, victim, kept["artifact_id"])
            if after.status != 200 or after.body != seen:
                now = after.body if after.status == 200 else None
                seen = after.body
                ctx.fail(
                    "the crafted upload overwrote it: it now downloads as that upload's bytes"
                    if now == hostile
                    else f"it changed: its download answers {after.status} with {shown(after.body[:24])}..., "
                    "not the bytes it was uploaded with"
                )
    with ctx.part("the other task's artifact list"):
        with ctx.setup("AP-ARTIFACT-004"):
            listed = all_items(ctx, task_path(victim, "artifacts"), "listAgentTaskArtifacts", "artifacts")
        # that its own upload is listed is AP-ARTIFACT-004's subject; that no crafted one joined it, this one's
        extra = [a.get("artifact_id") for a in listed if a.get("artifact_id") != kept["artifact_id"]]
        ctx.expect(not extra, f"it lists artifacts the crafted uploads made: {extra[:5]}")


# --- pagination ----------------------------------------------------------------------------------


@registry.requirement(
    "AP-PAGE-001",
    Level.MUST,
    "GET /ap/v1/agent/tasks pages by the documented defaults (current_page 1, page_size 10) and "
    "at any page_size: total_pages = ceil(total_items / page_size), full pages but the last, "
    "every task exactly once",
    _op(TASK_OPS, "get"),
    depends_on_state=WHOLE_TASK_LIST,
    from_traffic=True,
)
def task_pages(ctx: Context) -> None:
    # Walking all tasks assumes no one else creates tasks on the target meanwhile.
    created = [new_task(ctx, {"input": f"page {n}"})["task_id"] for n in range(3)]
    _, pagination, answer = read_page(ctx, TASKS, "listAgentTasks", "tasks", False)
    # the page asked for without paging parameters: the documented defaults, current_page 1 of 10,
    # counting at least the tasks just created (the proxy's judge counts those it saw created)
    what = "listAgentTasks without paging parameters:"
    ctx.judge(pages_judgment.NUMBERS, answer, what, **DEFAULT_PAGE, at_least=len(created))
    # enough tasks for the walk to pass page FEWEST_WALKED whatever else the server holds: a list
    # that stops serving past some page (an OFFSET cap) shows only on a walk that goes past it
    total = pagination["total_items"]
    more = max(0, 2 * FEWEST_WALKED - 1 - total) if isinstance(total, int) else 0
    created += [new_task(ctx, {"input": f"page {n}"})["task_id"] for n in range(len(created), len(created) + more)]
    listed = walk(ctx, TASKS, "listAgentTasks", "tasks", walk_size(total + more))
    ids = {t.get("task_id") for t in listed}
    ctx.expect(all(c in ids for c in created), "a task just created is on no page")


@registry.requirement(
    "AP-PAGE-002",
    Level.MUST,
    "GET .../steps pages by the same arithmetic: ceil(total_items / page_size) pages, full pages "
    "but the last, each executed step exactly once",
    _op(STEPS_OP, "get"),
    from_traffic=True,
)
def step_pages(ctx: Context) -> None:
    run = run_task(ctx)
    count = len(run.steps)
    size = count - 1 if count >= 3 else count + 1  # always a partly filled last page
    listed = walk(ctx, task_path(run.task["task_id"], "steps"), "listAgentTaskSteps", "steps", size)
    ctx.expect_equal(
        sorted(s.get("step_id") for s in listed),
        sorted(s["step_id"] for s in run.steps),
        f"step ids over all pages at page_size {size}",
    )


@registry.requirement(
    "AP-PAGE-003",
    Level.MUST,
    "GET .../artifacts pages by the same arithmetic: ceil(total_items / page_size) pages, full "
    "pages but the last, each artifact exactly once",
    _op(ARTIFACTS_OP, "get"),
    from_traffic=True,
)
def artifact_pages(ctx: Context) -> None:
    task = new_task(ctx, {"input": "five files"})
    before = len(task.get("artifacts") or [])
    ids = []
    for n in range(5):
        with ctx.setup("AP-ARTIFACT-001"):
            answer = ctx.conforms(
                upload(ctx, task["task_id"], f"page-{n}.txt", f"file {n}".encode(), None),
                "uploadAgentTaskArtifacts",
                200,
            )
            ctx.expect(isinstance(answer, dict) and answer.get("artifact_id"), f"upload answered {shown(answer, 200)}")
        ids.append(answer["artifact_id"])
    path = task_path(task["task_id"], "artifacts")
    listed = walk(ctx, path, "listAgentTaskArtifacts", "artifacts", 2, at_least=before + len(ids))
    ctx.expect_equal(len(listed), before + 5, "artifacts over all pages (total_items)")
    got = {a.get("artifact_id") for a in listed}
    missing = [i for i in ids if i not in got]
    ctx.expect(not missing, f"uploaded artifacts missing from the pages: {shown(missing)}")


@registry.requirement(
    "AP-PAGE-004",
    Level.SHOULD,
    "A current_page beyond the last page answers 200 with no items and the same total_items and total_pages",
    PAGINATION,
    depends_on_state=WHOLE_TASK_LIST,
    from_traffic=True,
)
def beyond_last_page(ctx: Context) -> None:
    # SHOULD: the document does not say what lies past the end; listAgentTasks documents no 404,
    # and an empty page is the only answer consistent with the totals.
    run = run_task(ctx)
    up = uploaded(ctx)
    for path, operation, key, owner in (
        (TASKS, "listAgentTasks", "tasks", "AP-PAGE-001"),
        (task_path(run.task["task_id"], "steps"), "listAgentTaskSteps", "steps", "AP-PAGE-002"),
        (task_path(up.task_id, "artifacts"), "listAgentTaskArtifacts", "artifacts", "AP-PAGE-003"),
    ):
        with ctx.part():
            with ctx.setup(owner):  # a list that does not page at all is its paging requirement's finding
                _, first, answer = read_page(ctx, path, operation, key, False, current_page=1, page_size=2)
                # which page lies past the last is known only from the count: without one the page
                # asked next is no known page (the proxy, judging the same answers, leaves it unjudged)
                total = first.get("total_items")
                ctx.expect(
                    isinstance(total, int) and not isinstance(total, bool) and total >= 0,
                    f"{operation} page 1: total_items is {shown(total)}: no page is known to lie past the last",
                    shown_by=answer,
                )
            assert isinstance(total, int)  # as expected above
            # Past the real last page, whatever total_pages claims (PAGE-001..003 judge that claim).
            beyond = max(math.ceil(total / 2), 1) + 1
            _, pagination, answer = read_page(ctx, path, operation, key, False, current_page=beyond, page_size=2)
            ctx.judge(pages_judgment.BEYOND, answer, operation, items=key)
            for field in ("total_items", "total_pages"):
                ctx.expect_equal(pagination.get(field), first.get(field), f"{operation} page {beyond}: {field}")
