"""Agent Protocol's part of a fixtures document: tasks, their steps and artifacts (mockserver/fixtures.py)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from ...api import ProtocolApi
from ...errors import ApiError
from ...fixtures import Allowance, FixtureError, checked, items_of, new_id, rekey, text_of
from . import handlers as ap_handlers
from . import store as ap


def plan(api: ProtocolApi, data: Any, budget: Allowance) -> Callable[[], dict[str, Any]]:
    data = checked("agent-protocol", data, {"tasks"})
    store = api.store(ap.Store)
    seen: set[str] = set()
    tasks = []
    for i, item in enumerate(items_of("agent-protocol.tasks", data.get("tasks"))):
        where = f"agent-protocol.tasks[{i}]"
        item = checked(where, item, {"task_id", "input", "additional_input", "steps", "artifacts"})
        task_id = new_id(f"{where}.task_id", item.get("task_id"), store.tasks, seen)
        task_input = text_of(f"{where}.input", item.get("input"), optional=True)
        additional = item.get("additional_input", {})
        if not isinstance(additional, dict):
            raise FixtureError(f"{where}.additional_input: expected a mapping")
        steps = item.get("steps", 0)
        if isinstance(steps, int) and not isinstance(steps, bool):
            if not 0 <= steps <= 1000:
                raise FixtureError(f"{where}.steps: between 0 and 1000")
            step_bodies: list[dict[str, Any]] = [{} for _ in range(steps)]
        else:
            step_bodies = [
                dict(checked(f"{where}.steps[{j}]", s, {"input", "additional_input"}))
                for j, s in enumerate(items_of(f"{where}.steps", steps))
            ]
        artifacts = []
        for j, art in enumerate(items_of(f"{where}.artifacts", item.get("artifacts"))):
            aw = f"{where}.artifacts[{j}]"
            art = checked(
                aw, art, {"file_name", "relative_path", "content", "content_base64", "agent_created"}, {"file_name"}
            )
            if ("content" in art) == ("content_base64" in art):
                raise FixtureError(f"{aw}: give exactly one of content, content_base64")
            if "content" in art:
                blob = text_of(f"{aw}.content", art["content"]).encode()
            else:
                try:
                    blob = base64.b64decode(text_of(f"{aw}.content_base64", art["content_base64"]), validate=True)
                except binascii.Error:
                    raise FixtureError(f"{aw}.content_base64: not base64") from None
            try:
                name = ap_handlers.check_file_name(text_of(f"{aw}.file_name", art["file_name"]))
            except ApiError as exc:
                raise FixtureError(f"{aw}.file_name: {exc.message}") from None
            artifacts.append(
                (
                    name,
                    text_of(f"{aw}.relative_path", art.get("relative_path"), optional=True),
                    blob,
                    bool(art.get("agent_created", False)),
                )
            )
        budget.spend(where, 1 + 2 * len(step_bodies) + len(artifacts))
        tasks.append((task_id, task_input, additional, step_bodies, artifacts))

    def apply() -> dict[str, Any]:
        created = []
        for task_id, task_input, additional, step_bodies, artifacts in tasks:
            task = store.create_task(task_input, additional)
            rekey(store.tasks, task, "task_id", task_id)
            for body in step_bodies:
                store.execute_step(task, body)
            for name, relative_path, blob, agent_created in artifacts:
                store.reserve(1, len(blob))
                store.add_artifact(task, name, relative_path, blob, agent_created)
            created.append(task.task_id)
        return {"tasks": created}

    return apply


# -- SGR Agent Core ------------------------------------------------------------------------------
