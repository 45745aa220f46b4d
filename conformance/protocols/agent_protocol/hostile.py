"""Agent Protocol's part of the hostile inputs (``check/hostile.py``): hostile text in a task's
input and additional_input and a step's input, then every list and read read back. The bodies that
are not objects are AP-ERR-004's, the crafted names of uploads AP-ARTIFACT-006's."""

from __future__ import annotations

from collections.abc import Callable

from ...check import hostile
from ...check.context import Context
from ...check.http import Response
from ...verdicts.requirements import Level
from .requirements import DOC, TASKS, new_task, registry, task_path


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

    attacked: list[str] = []
    reads = [
        hostile.Read("the task list (every page)", lambda: _every_page(ctx)),
        hostile.Read("another task", get(task_path(victim))),
        hostile.Read("another task's steps", get(task_path(victim, "steps"))),
        hostile.Read("each task given a hostile step", lambda: _each(ctx, attacked or [attacker], "")),
        hostile.Read("the hostile steps", lambda: _each(ctx, attacked or [attacker], "steps")),
    ]

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
        ],
    )
