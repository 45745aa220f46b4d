"""Agent Protocol's part of the hostile inputs (``check/hostile.py``): hostile text in a task's
input and additional_input, a step's input, an upload's file name (its Content-Disposition
``filename``) and relative_path, then every list and read read back, downloads included. The bodies
that are not objects are AP-ERR-004's, the names that climb out of a task AP-ARTIFACT-006's."""

from __future__ import annotations

from collections.abc import Callable

from ...check import hostile
from ...check.context import Context
from ...check.http import Response
from ...verdicts.requirements import Level
from .requirements import DOC, TASKS, new_task, registry, task_path, upload


def _every_page(ctx: Context) -> Response:
    """The task list, page by page (100 a page, at most 25): the first answer that is no 2xx, else the last."""
    response = ctx.client.get(TASKS, params={"current_page": 1, "page_size": 100})
    body = response.json_value() if 200 <= response.status < 300 else None
    pages = body.get("pagination", {}).get("total_pages") if isinstance(body, dict) else None
    for number in range(2, min(pages, 25) + 1 if isinstance(pages, int) else 2):
        response = ctx.client.get(TASKS, params={"current_page": number, "page_size": 100})
        if not 200 <= response.status < 300:
            break
    return response


def _each(ctx: Context, tasks: list[str], *rest: str) -> Response:
    """Each task's read (or its list ``rest``): the first answer that is no 2xx, else the last."""
    for task_id in tasks:
        response = ctx.client.get(task_path(task_id, *(r for r in rest if r)))
        if not 200 <= response.status < 300:
            break
    return response


def _downloads(ctx: Context, artifacts: list[tuple[str, str]]) -> Response:
    """Each artifact's download ((task, artifact) pairs): the first answer that is no 2xx, else the last."""
    for task_id, artifact_id in artifacts:
        response = ctx.client.get(task_path(task_id, "artifacts", artifact_id))
        if not 200 <= response.status < 300:
            break
    return response


def _artifact_id(response: Response) -> str | None:
    body = response.json_value() if 200 <= response.status < 300 else None
    artifact_id = body.get("artifact_id") if isinstance(body, dict) else None
    return artifact_id if isinstance(artifact_id, str) and artifact_id else None


@registry.requirement(
    "AP-HOSTILE-001",
    Level.MUST,
    hostile.TEXT_STATEMENT.format(owners=""),
    hostile.TEXT_REF.format(lists=f"{DOC}#/paths/~1ap~1v1~1agent~1tasks/get/responses/200"),
    hostile.TEXT_DEPENDS,
)
def hostile_text(ctx: Context) -> None:
    victim = new_task(ctx, {"input": "victim"})["task_id"]
    attacker = new_task(ctx, {"input": "attacker"})["task_id"]  # read before the tasks given hostile steps exist

    def get(path: str) -> Callable[[], Response]:
        return lambda: ctx.client.get(path)

    # an upload's names: one task holds the hostile file names, another the hostile folders (a name
    # and a folder alike collide, AP-ARTIFACT-001's subject), the victim an artifact of its own (an
    # upload that fails is AP-ARTIFACT-001's subject too: its reads then did not answer before)
    files = new_task(ctx, {"input": "a task for hostile file names"})["task_id"]
    folders = new_task(ctx, {"input": "a task for hostile relative_paths"})["task_id"]
    kept = _artifact_id(upload(ctx, victim, "victim.txt", b"victim bytes", None))
    victims = [(victim, kept)] if kept else []
    # the uploads accepted under a name or folder holding a lone surrogate, downloaded after: the
    # download of other names (UTF-8, NFD, long) is AP-ARTIFACT-002's subject, one owner a fact
    named: list[tuple[str, str]] = []

    attacked: list[str] = []
    reads = [
        hostile.Read("the task list (every page)", lambda: _every_page(ctx)),
        hostile.Read("another task", get(task_path(victim))),
        hostile.Read("another task's steps", get(task_path(victim, "steps"))),
        hostile.Read("each task given a hostile step", lambda: _each(ctx, attacked or [attacker], "")),
        hostile.Read("the hostile steps", lambda: _each(ctx, attacked or [attacker], "steps")),
        hostile.Read("another task's artifacts", get(task_path(victim, "artifacts"))),
        *(
            [
                hostile.Read("another task's artifact, downloaded", lambda: _downloads(ctx, victims)),
                hostile.Read(
                    "each artifact named with a lone surrogate, downloaded", lambda: _downloads(ctx, named or victims)
                ),
            ]
            if victims
            else []
        ),
        *(
            read
            for task_id, what in ((files, "file names"), (folders, "relative_paths"))
            for read in (
                hostile.Read(f"the task given hostile {what}", get(task_path(task_id))),
                hostile.Read(f"the artifacts given hostile {what}", get(task_path(task_id, "artifacts"))),
            )
        ),
    ]

    def send_upload(task_id: str, file_name: str, relative_path: str | None) -> Response:
        parts = [("relative_path", None, hostile.form_text(relative_path))] if relative_path is not None else []
        body, content_type = hostile.multipart([*parts, ("file", file_name, b"hostile name\n")])
        response = ctx.client.post(
            task_path(task_id, "artifacts"), content=body, headers={"Content-Type": content_type}
        )
        artifact_id = _artifact_id(response)
        if artifact_id and hostile.lone_surrogate(file_name + (relative_path or "")):
            named.append((task_id, artifact_id))
        return response

    def post(path: str, body: Callable[[str], object]) -> Callable[[str], Response]:
        return lambda text: hostile.send_json(ctx, "POST", path, hostile.json_bytes(body(text)))

    def step(text: str) -> Response:
        # the first step of a task of its own: a step past a task's last is AP-STEP-004's subject
        task_id = new_task(ctx, {"input": "a task for one hostile step"})["task_id"]
        attacked.append(task_id)
        return post(task_path(task_id, "steps"), lambda t: {"input": t})(text)

    hostile.survives_hostile_text(
        ctx,
        reads,
        [
            ("createAgentTask input", post(TASKS, lambda t: {"input": t, "additional_input": {}})),
            ("createAgentTask additional_input", post(TASKS, lambda t: {"input": "x", "additional_input": {t: t}})),
            ("executeAgentTaskStep input", step),
            (
                "uploadAgentTaskArtifacts file name (Content-Disposition filename)",
                lambda t: send_upload(files, t, None),
            ),
            ("uploadAgentTaskArtifacts relative_path", lambda t: send_upload(folders, "in-a-hostile-folder.txt", t)),
        ],
    )
