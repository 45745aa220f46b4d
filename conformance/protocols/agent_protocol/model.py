"""Agent Protocol v1's model: tasks, their steps and artifacts, as every route must show them.

The ledger holds every task of the run (and the ids the target held before it), each with the
steps executed on it and the artifacts uploaded to it or reported by its steps. The document fixes
few values (echoes, ``task_id`` of a step, pagination); the rest a server chooses, once: the first
answer that shows a resource is what every later route must show again. So after each write the
model reads the task by id, its item in the task list, its steps (by id and listed), its artifacts
(listed, downloaded) and compares each in full.

What other requirements own is tolerated here, never judged twice: a body that is not the
documented shape (AP-SCHEMA-005), an echo that differs from what was sent (AP-TASK-002,
AP-STEP-002), a read by id that answers another resource (AP-STEP-004), ``total_pages``
(AP-PAGE-*).
"""

from __future__ import annotations

import math
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize, rule

from ...check import edges
from ...check.edges import same
from ...check.http import Response
from ...check.judgments.echoes import unechoed
from ...check.judgments.lists import miscounted
from ...check.listing import Others, judge_listing, known
from ...check.model import SUPPORT, Model, ModelMachine, Session, Unshrunk, Violation
from ...check.shown import shown
from ...verdicts.requirements import Level, Requirement
from .requirements import TASKS, task_path

DOC = "agent-protocol/openapi.json"
PAGE = 100
"""Page size of the reads after each write; walks at other sizes are a rule of their own."""
MAX_PAGES = 30
MAX_ITEMS_PER_PAGE = 500
STEP_BOUND = 6
"""Steps the run_to_last_step rule executes at most."""
STATUS_ORDER = {"created": 0, "running": 1, "completed": 2}

SAME_TASK = "AP-MODEL-001"
SAME_STEP = "AP-MODEL-002"
LISTS = "AP-MODEL-003"
SAME_ARTIFACT = "AP-MODEL-004"
STEP_STATUS = "AP-MODEL-005"

TASK_LIST, STEP_LIST, ARTIFACT_LIST = "the task list", "a step list", "an artifact list"
"""AP-MODEL-003's facts: each list holds what the run made in it."""
WALKED = {"tasks": TASK_LIST, "steps": STEP_LIST, "artifacts": ARTIFACT_LIST}
"""The fact of AP-MODEL-003 a list walk (by its items' key) judges."""

REQUIREMENTS = (
    Requirement(
        SAME_TASK,
        Level.MUST,
        "Every route that shows a task (its create answer, GET by id, its item in the task list) shows the "
        "same task_id, input and additional_input after every write of the run, and GET by id and the list "
        "item agree in every field the document defines",
        f"{DOC}#/components/schemas/Task",
        "agent-protocol",
        "model",
    ),
    Requirement(
        SAME_STEP,
        Level.MUST,
        "Every route that shows a completed step (its POST answer, GET by id, its item in the step list) "
        "shows every field the document defines the same; one not yet completed keeps its step_id, "
        "task_id, input and additional_input",
        f"{DOC}#/components/schemas/Step",
        "agent-protocol",
        "model",
    ),
    Requirement(
        LISTS,
        Level.MUST,
        "Each list holds everything the run created in it, exactly once, with total_items counting it: "
        "the task list every task created (and those the target held before), a task's step list every "
        "step executed on it (steps not yet run, status created or running, may be listed too), its "
        "artifact list every upload and every artifact its steps reported",
        f"{DOC}#/components/schemas/Pagination",
        "agent-protocol",
        "model",
    ),
    Requirement(
        SAME_ARTIFACT,
        Level.MUST,
        "Every route that shows an artifact (the upload answer, the step that produced it, the task, the "
        "artifact list) shows the same fields; an artifact a step produced is among the task's artifacts; "
        "a download of an uploaded artifact is the bytes uploaded under that artifact_id",
        f"{DOC}#/components/schemas/Task/allOf/1/properties/artifacts",
        "agent-protocol",
        "model",
    ),
    Requirement(
        STEP_STATUS,
        Level.MUST,
        "A step's status only moves forward (created, running, completed) on every route and every read",
        f"{DOC}#/components/schemas/Step/allOf/1/properties/status",
        "agent-protocol",
        "model",
    ),
)


# --- the ledger ----------------------------------------------------------------------------------


@dataclass(slots=True)
class StepModel:
    step_id: str
    first: dict[str, Any]
    """The POST answer."""
    status: str
    completed: dict[str, Any] | None = None
    """The first view that said ``completed``: what every later route must show."""


@dataclass(slots=True)
class ArtifactModel:
    fields: dict[str, Any]
    data: bytes | None = None
    """Bytes uploaded; None for an artifact a step produced."""


@dataclass(slots=True)
class TaskModel:
    task_id: str
    first: dict[str, Any]
    steps: list[StepModel] = field(default_factory=list)
    artifacts: dict[str, ArtifactModel] = field(default_factory=dict)
    finished: bool = False


@dataclass(slots=True)
class Ledger:
    before: set[str]
    """Task ids the target held when the phase began."""
    tasks: dict[str, TaskModel] = field(default_factory=dict)
    others: Others = field(default_factory=Others)
    """What the run knows of tasks others created (check/listing.py): those held before it, and
    those read back by id since."""


def artifact_view(a: Any) -> dict[str, Any]:
    return (
        {k: a.get(k) for k in ("artifact_id", "agent_created", "file_name", "relative_path")}
        if isinstance(a, dict)
        else {}
    )


def by_id(items: Any, key: str) -> dict[str, Any]:
    return {str(i.get(key)): i for i in items if isinstance(i, dict)} if isinstance(items, list) else {}


TASK_FIELDS = ("task_id", "input", "additional_input", "artifacts")
STEP_FIELDS = (
    "task_id",
    "step_id",
    "name",
    "status",
    "input",
    "additional_input",
    "output",
    "additional_output",
    "artifacts",
    "is_last",
)
"""The properties the document gives Task and Step: a member it does not define (the SDK's Task
carries its ``steps`` on GET by id only) is the server's own business and never compared."""


def unordered(value: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The documented members of a view, its artifacts keyed by id (the document fixes no order)."""
    out = {k: v for k, v in value.items() if k in fields}
    if isinstance(out.get("artifacts"), list):
        out["artifacts"] = {str(a.get("artifact_id")) if isinstance(a, dict) else repr(a): a for a in out["artifacts"]}
    return out


def differences(a: dict[str, Any], b: dict[str, Any], fields: tuple[str, ...]) -> list[str]:
    x, y = unordered(a, fields), unordered(b, fields)
    return [k for k in sorted(set(x) | set(y)) if k not in x or k not in y or not same(x[k], y[k])]


# --- reading the target --------------------------------------------------------------------------


def written(response: Response) -> Any:
    """The JSON body of a write's answer: any 2xx will do (a create answering 201 with a task still
    made one: its status is AP-TASK-001's subject, and the model must know the task exists)."""
    return response.json_value() if 200 <= response.status < 300 else None


def read_json(session: Session, path: str, key: str | None = None, **params: Any) -> Any:
    """The JSON answer of a 200, or None when the answer is not the documented shape (another
    requirement's subject: the schema phase and the scenarios judge shapes and statuses)."""
    response: Response = session.request("GET", path, params=params or None)
    if response.status != 200:
        return None
    body = response.json_value()
    if key is not None and not (
        isinstance(body, dict) and isinstance(body.get(key), list) and isinstance(body.get("pagination"), dict)
    ):
        return None
    return body


def walk(session: Session, path: str, key: str, size: int, expected: int) -> tuple[list[Any], int] | None:
    """Every item of a list at ``page_size=size`` and its first page's total_items. Pages are read
    up to what total_items or the model's count needs, whichever is more: a wrong total_pages
    (AP-PAGE-*) cannot hide an item from the comparison."""
    size = max(size, math.ceil(expected / MAX_PAGES))  # a bigger run widens the pages, never cuts the walk
    first = read_json(session, path, key, current_page=1, page_size=size)
    if first is None:
        session.cannot_compare(LISTS, f"GET {path} does not answer the documented list shape", fact=WALKED[key])
        return None
    total = first["pagination"].get("total_items")
    count = max(total if isinstance(total, int) else 0, expected)
    if len(first[key]) < count and not _as_asked(first, 1, size):  # more to read, by pages it does not keep
        session.cannot_compare(
            LISTS, f"GET {path} answers another page than the current_page and page_size asked", fact=WALKED[key]
        )
        return None
    if math.ceil(count / size) > MAX_PAGES and count <= MAX_PAGES * MAX_ITEMS_PER_PAGE:
        return walk(session, path, key, math.ceil(count / MAX_PAGES), count)
    items = list(first[key])
    for number in range(2, min(math.ceil(count / size), MAX_PAGES) + 1):  # an absurd total_items stays bounded
        page = read_json(session, path, key, current_page=number, page_size=size)
        if page is None:
            return None
        if not _as_asked(page, number, size):
            session.cannot_compare(
                LISTS, f"GET {path} answers another page than the current_page and page_size asked", fact=WALKED[key]
            )
            return None
        items += page[key]
    return items, total if isinstance(total, int) else -1


def _as_asked(page: dict[str, Any], number: int, size: int) -> bool:
    """The page's pagination names the page asked (when it names one): a server that reads other
    parameters cannot be walked past its first page, and its paging is the paging requirements'
    subject (AP-PAGE-*). A list its first page holds whole is compared whatever the page says."""
    pagination = page["pagination"]
    current, per_page = pagination.get("current_page"), pagination.get("page_size")
    return not (isinstance(current, int) and current != number) and not (isinstance(per_page, int) and per_page != size)


def prepare(session: Session) -> Ledger:
    listed = walk(session, TASKS, "tasks", PAGE, 0)
    before = {t.get("task_id") for t in listed[0] if isinstance(t, dict)} if listed else set()
    ids = {str(i) for i in before}
    return Ledger(ids, others=known(ids))


# --- the state machine ---------------------------------------------------------------------------

WORDS = (
    "write",
    "Washington",
    "to",
    "output.txt",
    "\u00fcn\u00efc\u00f8d\u00e9",
    "plan",
    "then",
    "stop",
    "a",
    "very-long-word-of-the-input-" * 2,
)
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join)
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", "x", "\u2713"]))
extras = st.dictionaries(
    st.sampled_from(["mode", "debug", "n", "nested"]),
    st.recursive(
        json_leaf,
        lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
        max_leaves=4,
    ),
    max_size=3,
)
FILE_NAMES = ("notes.txt", "output.txt")
ACTIONS = ("step", "run to the last step", "upload", "reread a task of the run", "walk the task list")
"""Few names, so two uploads to one task often share one: the artifact_id must still tell them apart."""


class AgentProtocolModel(ModelMachine):
    tasks = Bundle("tasks")

    @property
    def ledger(self) -> Ledger:
        return self.session.ledger  # type: ignore[no-any-return]

    # writes --------------------------------------------------------------------------------------

    @initialize(target=tasks, text=st.one_of(st.none(), texts), extra=extras)
    def first_task(self, text: str | None, extra: dict[str, Any]) -> str:
        """Every sequence starts with a task of its own, so its steps and uploads have somewhere to go."""
        return self.new_task(text, extra)

    @rule(target=tasks, text=st.one_of(st.none(), texts), extra=extras)
    def create_task(self, text: str | None, extra: dict[str, Any]) -> str:
        return self.new_task(text, extra)

    def new_task(self, text: str | None, extra: dict[str, Any]) -> str:
        response = self.session.request("POST", TASKS, json={"input": text, "additional_input": extra})
        body = written(response)
        task_id = body.get("task_id") if isinstance(body, dict) else None
        if not isinstance(task_id, str) or not task_id:
            # every requirement of the model follows the run's tasks: without an id there is none
            why = "createAgentTask answers no task_id (AP-TASK-001)"
            self.session.cannot_compare((r.id for r in REQUIREMENTS), why, by="AP-TASK-001")
            return ""
        self.session.check(
            LISTS,
            task_id not in self.ledger.tasks and task_id not in self.ledger.before,
            f"createAgentTask answered task_id {shown(task_id)}, the id of a task that already exists",
            fact=SUPPORT,
        )
        self.ledger.tasks[task_id] = TaskModel(task_id, dict(body))  # type: ignore[arg-type]
        self.verify(task_id, "none")
        return task_id

    @rule(task_id=tasks, data=st.data())
    def act(self, task_id: str, data: st.DataObject) -> None:
        """One rule for every kind of call but creating a task: Hypothesis' swarm testing switches
        whole rules off per sequence, and a short sequence should still mix steps, uploads and reads."""
        kind = data.draw(st.sampled_from(ACTIONS), label="action")
        if kind == "step":
            self.execute_step(
                task_id,
                data.draw(st.one_of(st.none(), texts), label="input"),
                data.draw(extras, label="additional_input"),
            )
        elif kind == "run to the last step":
            for _ in range(STEP_BOUND):
                if self.ledger.tasks.get(task_id, TaskModel("", {}, finished=True)).finished:
                    break
                self.execute_step(task_id, None, {})
        elif kind == "upload":
            self.upload(
                task_id,
                data.draw(st.sampled_from(FILE_NAMES), label="file_name"),
                data.draw(st.sampled_from([None, "in"]), label="relative_path"),
                data.draw(st.binary(min_size=1, max_size=64), label="bytes"),
            )
        elif kind == "reread a task of the run" and self.ledger.tasks:
            # this sequence's or an earlier one's: nothing may drift
            self.verify(data.draw(st.sampled_from(sorted(self.ledger.tasks)), label="task_id"))
        else:
            self.check_task_list(data.draw(st.integers(1, 7), label="page_size"))

    def execute_step(self, task_id: str, text: str | None, extra: dict[str, Any]) -> None:
        task = self.ledger.tasks.get(task_id)
        if task is None:
            return
        if not task.finished:  # past is_last the document says nothing of what a step does
            response = self.session.request(
                "POST", task_path(task_id, "steps"), json={"input": text, "additional_input": extra}
            )
            step = written(response)
            step_id = step.get("step_id") if isinstance(step, dict) else None
            if isinstance(step, dict) and isinstance(step_id, str) and step_id:
                known = {s.step_id for s in task.steps}
                self.session.check(
                    LISTS,
                    step_id not in known,
                    f"executeAgentTaskStep answered step_id {shown(step_id)}, a step already executed",
                    fact=SUPPORT,
                )
                model = StepModel(step_id, dict(step), str(step.get("status")))
                self.see_status(task, model, step, "its POST answer")
                task.steps.append(model)
                task.finished = step.get("is_last") is True
                for artifact in step.get("artifacts") or []:
                    view = artifact_view(artifact)
                    if view.get("artifact_id") and view["artifact_id"] not in task.artifacts:
                        task.artifacts[view["artifact_id"]] = ArtifactModel(view)
        self.verify(task_id, "latest")

    def upload(self, task_id: str, name: str, relative_path: str | None, data: bytes) -> None:
        if task_id not in self.ledger.tasks:
            return
        fields = {"relative_path": relative_path} if relative_path is not None else {}
        response = self.session.request(
            "POST",
            task_path(task_id, "artifacts"),
            data=fields,
            files={"file": (name, data, "application/octet-stream")},
        )
        body = written(response)
        view = artifact_view(body)
        if view.get("artifact_id"):
            task = self.ledger.tasks[task_id]
            earlier = task.artifacts.get(view["artifact_id"])
            if earlier is not None and earlier.data is not None and earlier.data != data:
                # One answer breaks two requirements: the earlier upload's bytes are no longer served
                # under its id, and the list cannot hold both uploads. Both are recorded now, whichever
                # a later draw would have reached first (the machine stops at the raised one).
                with suppress(Violation, Unshrunk):
                    self.session.check(
                        SAME_ARTIFACT,
                        False,
                        f"task {task_id}: the upload of {shown(name)} answered artifact_id "
                        f"{shown(view['artifact_id'])}, the "
                        f"id of the earlier upload of {shown(earlier.fields.get('file_name'))} with other bytes: "
                        "the earlier artifact's bytes are replaced",
                    )
            self.session.check(
                LISTS,
                earlier is None,
                f"uploadAgentTaskArtifacts answered artifact_id {shown(view['artifact_id'])}, "
                "the id of an artifact the task already has",
                fact=SUPPORT,
            )
            # an id answered again keeps what it was first: the earlier upload's bytes are still its own
            task.artifacts.setdefault(view["artifact_id"], ArtifactModel(view, data))
        self.verify(task_id, "none")

    # the comparisons -----------------------------------------------------------------------------

    def verify(self, task_id: str, steps_by_id: str = "all") -> None:
        """Every route that shows this task, its steps and its artifacts, against the ledger.
        ``steps_by_id``: which steps are read by id, "all", the "latest" (after a step) or "none"
        (after an upload): a reread reads them all, so each write costs few calls."""
        task = self.ledger.tasks[task_id]
        got = read_json(self.session, task_path(task_id))
        by_id = self.session.calls[-1].exchange if self.session.calls else None
        if isinstance(got, dict) and got.get("task_id") == task_id:
            self.compare_task(task, got, "GET by id")
            self.compare_task_artifacts(task, got, "GET by id")
        listed = self.check_task_list(PAGE)
        item = listed.get(task_id) if listed is not None else None
        if isinstance(item, dict):
            self.compare_task(task, item, "its item in the task list")
            if isinstance(got, dict) and got.get("task_id") == task_id:
                diff = differences(got, item, TASK_FIELDS)
                self.session.check(
                    SAME_TASK,
                    not diff,
                    lambda: (
                        f"task {task_id}: GET by id and its item in the task list differ in {diff}: {shown(got)} vs "
                        f"{shown(item)}"
                    ),
                    also=[by_id],  # either answer may be the wrong one
                )
        self.check_steps(task, steps_by_id)
        self.check_artifacts(task)

    def compare_task(self, task: TaskModel, got: dict[str, Any], where: str) -> None:
        for key in ("task_id", "input", "additional_input"):
            if key in task.first or key in got:
                why = unechoed(got, {key: task.first.get(key)})  # a read-back of the create answer
                self.session.check(
                    SAME_TASK, why is None, f"task {task.task_id} ({where}): {why} (its create answer's)"
                )

    def compare_task_artifacts(self, task: TaskModel, got: dict[str, Any], where: str) -> None:
        listed = by_id(got.get("artifacts"), "artifact_id")
        for artifact_id, model in task.artifacts.items():
            if artifact_id in listed:
                self.same_artifact(task, model, listed[artifact_id], f"the task's artifacts ({where})")
            elif model.data is None:  # produced by a step: the task produced it
                self.session.check(
                    SAME_ARTIFACT,
                    False,
                    f"task {task.task_id} ({where}): artifact {artifact_id} that a step produced is "
                    f"not among the task's artifacts {shown(sorted(listed))}",
                )

    def same_artifact(self, task: TaskModel, model: ArtifactModel, got: Any, where: str) -> None:
        why = unechoed(artifact_view(got), model.fields)  # a read-back of its first view
        self.session.check(
            SAME_ARTIFACT,
            why is None,
            f"task {task.task_id}: artifact {model.fields['artifact_id']} in {where}: {why} (its first view's)",
        )

    def check_task_list(self, size: int) -> dict[str, Any] | None:
        others = self.ledger.others
        expected = len(others.held) + len(self.ledger.tasks)
        walked = walk(self.session, TASKS, "tasks", size, expected)
        if walked is None:
            return None
        items, total = walked
        page = self.session.calls[-1].exchange  # what is judged: the reads by id below only explain it
        ids = [str(t.get("task_id")) for t in items if isinstance(t, dict)]
        listing = judge_listing(
            ids,
            live=self.ledger.tasks,
            others=others,
            readable=lambda task_id: isinstance(read_json(self.session, task_path(task_id)), dict),
        )
        self.session.check(
            LISTS,
            listing.ok,
            lambda: f"the task list walked from page_size {size} ({len(ids)} items) " + listing.problems("task"),
            answer=page,
            fact=TASK_LIST,
            over=len(self.ledger.tasks),  # the tasks held before alone are not the run's to judge
        )
        # others' tasks that arrived during the walk may be listed on a later page than the total was read on
        self.session.check(
            LISTS,
            listing.expected - listing.arrivals <= total <= listing.expected,
            f"the task list's total_items is {total}; it should count {listing.expected} tasks: the "
            f"{len(self.ledger.tasks)} this run created and those of others it lists or still reads by id"
            + (f" (of which {listing.arrivals} first listed in this walk)" if listing.arrivals else ""),
            answer=page,
            fact=TASK_LIST,
            over=len(self.ledger.tasks),
        )
        return {str(t.get("task_id")): t for t in items if isinstance(t, dict)}

    def see_status(self, task: TaskModel, step: StepModel, got: dict[str, Any], where: str) -> None:
        status = got.get("status")
        if status not in STATUS_ORDER:
            return  # not in the enum: AP-SCHEMA-005's subject
        before = step.status if step.status in STATUS_ORDER else "created"
        self.session.check(
            STEP_STATUS,
            STATUS_ORDER[status] >= STATUS_ORDER[before],
            f"task {task.task_id}, step {step.step_id} ({where}): status {shown(status)} after it was {shown(before)}",
        )
        if STATUS_ORDER[status] > STATUS_ORDER[before]:
            step.status = status
        if status == "completed" and step.completed is None:
            step.completed = dict(got)

    def compare_step(self, task: TaskModel, step: StepModel, got: dict[str, Any], where: str) -> None:
        self.see_status(task, step, got, where)
        if step.completed is not None and got.get("status") == "completed":
            diff = differences(got, step.completed, STEP_FIELDS)
            self.session.check(
                SAME_STEP,
                not diff,
                lambda: (
                    f"task {task.task_id}, step {step.step_id} ({where}) differs in {diff} from "
                    f"its first completed view: {shown(got)} vs {shown(step.completed)}"
                ),
            )
        else:
            for key in ("step_id", "task_id", "input", "additional_input"):
                why = unechoed(got, {key: step.first.get(key)})  # a read-back of the POST answer
                self.session.check(
                    SAME_STEP,
                    why is None,
                    f"task {task.task_id}, step {step.step_id} ({where}): {why} (its POST answer's)",
                )
        for artifact in got.get("artifacts") or []:
            model = task.artifacts.get(artifact_view(artifact).get("artifact_id"))  # type: ignore[arg-type]
            if model is not None:
                self.same_artifact(task, model, artifact, f"step {step.step_id} ({where})")

    def check_steps(self, task: TaskModel, by_id_too: str) -> None:
        path = task_path(task.task_id, "steps")
        walked = walk(self.session, path, "steps", PAGE, len(task.steps))
        if walked is not None:
            items, total = walked
            ids = [s.get("step_id") for s in items if isinstance(s, dict)]
            executed = [s.step_id for s in task.steps]
            # A step may exist before it runs (status "created": a server that plans ahead lists
            # its planned steps); a completed one the run never executed may not.
            strange = [
                s.get("step_id")
                for s in items
                if isinstance(s, dict) and s.get("step_id") not in executed and s.get("status") == "completed"
            ]
            miscount = miscounted("total_items", total, len(ids), "steps")
            ok = all(i in ids for i in executed) and len(set(ids)) == len(ids) and not miscount and not strange
            self.session.check(
                LISTS,
                ok,
                ""
                if ok
                else f"task {task.task_id}: the step list holds {shown(ids)} (total_items {total}); the run "
                f"executed {shown(executed)}" + (f", not the completed {shown(strange)}" if strange else ""),
                fact=STEP_LIST,
                over=len(executed),
            )
            listed = by_id(items, "step_id")
            for step in task.steps:
                if step.step_id in listed:
                    self.compare_step(task, step, listed[step.step_id], "its item in the step list")
        for step in {"all": task.steps, "latest": task.steps[-1:], "none": []}[by_id_too]:
            got = read_json(self.session, task_path(task.task_id, "steps", step.step_id))
            if isinstance(got, dict) and got.get("step_id") == step.step_id:  # another step: AP-STEP-004's
                self.compare_step(task, step, got, "GET by id")

    def check_artifacts(self, task: TaskModel) -> None:
        path = task_path(task.task_id, "artifacts")
        walked = walk(self.session, path, "artifacts", PAGE, len(task.artifacts))
        if walked is not None:
            items, total = walked
            ids = [a.get("artifact_id") for a in items if isinstance(a, dict)]
            known = sorted(task.artifacts)
            self.session.check(
                LISTS,
                sorted(ids, key=str) == known and not miscounted("total_items", total, len(ids), "artifacts"),
                lambda: (
                    f"task {task.task_id}: the artifact list holds {ids} (total_items {total}); "
                    f"the run uploaded or its steps reported {known}"
                ),
                fact=ARTIFACT_LIST,
                over=len(known),
            )
            for artifact_id, item in by_id(items, "artifact_id").items():
                if artifact_id in task.artifacts:
                    self.same_artifact(task, task.artifacts[artifact_id], item, "the artifact list")
        for artifact_id, model in task.artifacts.items():
            if model.data is None:
                continue
            response = self.session.request("GET", task_path(task.task_id, "artifacts", artifact_id))
            if response.status == 200:
                ok = response.body == model.data
                self.session.check(
                    SAME_ARTIFACT,
                    ok,
                    ""
                    if ok
                    else f"task {task.task_id}: downloading artifact {artifact_id} "
                    f"({shown(model.fields.get('file_name'))}) gives {shown(response.body[:40])}, not "
                    f"the {len(model.data)} bytes uploaded as it",
                )


def edges_and_collisions(machine: AgentProtocolModel) -> None:
    """A task given the corpus's short file names, the same name twice with other bytes, then run to
    its last step, its lists read at small page sizes: what only some draws would reach."""
    task_id = machine.new_task("targeted: names, collisions and pages", edges.json_values())
    if not task_id:
        return
    for upload in edges.uploads(0):
        if upload.data and len(upload.data) <= MAX_TARGETED_UPLOAD and len(upload.file_name) < 128:
            machine.upload(task_id, upload.file_name, upload.relative_path, upload.data)
    machine.upload(task_id, FILE_NAMES[0], None, b"first")
    machine.upload(task_id, FILE_NAMES[0], None, b"second, other bytes")
    for _ in range(STEP_BOUND):
        if machine.ledger.tasks[task_id].finished:
            break
        machine.execute_step(task_id, edges.text("CJK text").value, {})
    for size in (1, 2, 3, 7):
        machine.check_task_list(size)


MAX_TARGETED_UPLOAD = 64 * 1024
"""Bytes an upload of the targeted sequence may have: it is read back after every later write."""

MODEL = Model(
    AgentProtocolModel,
    prepare,
    steps=10,
    calls_per_step=9,
    requirements=REQUIREMENTS,
    facts={LISTS: (TASK_LIST, STEP_LIST, ARTIFACT_LIST)},
    targeted=(edges_and_collisions,),
)
