"""Agent Protocol requirements judged from traffic: echoes and round trips (a write and a later
read of the same task, step or artifact), pagination arithmetic on every observed list page,
fresh step ids, error shapes, and uploaded bytes coming back unchanged."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...check.edges import same
from ...check.judgments import echoes, errors, pages
from ...check.passive import Bounded, Checks, Verdict
from ...check.shown import shown
from ...check.traffic import NotJson, Observed, multipart_fields
from .requirements import ERROR, artifact_fields, climbs, content_disposition, disposable

LISTS = {
    "listAgentTasks": ("tasks", "AP-PAGE-001"),
    "listAgentTaskSteps": ("steps", "AP-PAGE-002"),
    "listAgentTaskArtifacts": ("artifacts", "AP-PAGE-003"),
}
TASK_SCOPED_404 = (
    "getAgentTask",
    "listAgentTaskSteps",
    "executeAgentTaskStep",
    "listAgentTaskArtifacts",
    "uploadAgentTaskArtifacts",
)
STEP_BOUND = 20


@dataclass(slots=True)
class Upload:
    task_id: str
    answer: dict[str, Any]
    digest: str
    size: int


def _sent(ex: Observed) -> dict[str, Any]:
    """The input/additional_input a write carried (only the fields it did send)."""
    body = ex.request_json()
    return {k: body[k] for k in ("input", "additional_input") if k in body} if isinstance(body, dict) else {}


def _echo(v: Verdict, rid: str, got: Any, sent: dict[str, Any], where: str, answer: Observed | None = None) -> None:
    """The scenario checks' judgment (``echoes.members``) on an answer of live traffic: ``got`` is
    that ``answer``'s body (judged by name, and named by the finding) or an item of it."""
    if not sent or not isinstance(got, dict):
        return
    if answer is not None:
        v.judged(rid, echoes.MEMBERS, answer.seen(), {"sent": sent}, where)
        return
    why = echoes.unechoed(got, sent)
    if why:
        v.fail(rid, f"{where}: {why}")
        return
    v.ok(rid)


class Passive(Checks):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.tasks: Bounded[str, dict[str, Any]] = Bounded()
        """task_id -> the input/additional_input it was created with."""
        self.steps: Bounded[str, dict[str, dict[str, Any]]] = Bounded()
        """task_id -> step_id -> what the step was executed with."""
        self.completed: Bounded[tuple[str, str], dict[str, Any]] = Bounded()
        """A completed step's answer, final: later reads must equal it."""
        self.step_owner: Bounded[str, str] = Bounded()
        self.posts: Bounded[str, tuple[int, bool]] = Bounded()
        """task_id -> (step POSTs seen, whether one reported is_last)."""
        self.seen: Bounded[str, set[str]] = Bounded()
        """task_id (created through the proxy) -> every step and artifact id any answer named. A
        client learns ids only from answers, so an id never seen is one the server never issued."""
        self.uploads: Bounded[str, dict[str, Upload]] = Bounded(2_000)
        """task_id -> artifact_id -> what was uploaded (a digest, not the bytes)."""
        self.defaults = {
            op.operation_id: {
                p["name"]: self.spec.resolve(p.get("schema") or {}).get("default")
                for p in map(self.spec.resolve, op.definition.get("parameters", []))
                if p.get("in") == "query"
            }
            for op in self.spec.operations()
        }

    def on_response(self, ex: Observed, v: Verdict) -> None:
        op, status, body = ex.operation_id, ex.status, ex.json()
        assert op is not None and status is not None
        if status == 404:
            self._not_found(ex, v, op, body)
        uploaded = ex.path_params.get("artifact_id", "") in self.uploads.get(ex.path_params.get("task_id", ""), {})
        if op == "downloadAgentTaskArtifact" and status >= 500 and uploaded:
            v.fail("AP-ARTIFACT-002", f"the download of an artifact its upload reported stored answered {status}")
        if op in ("createAgentTask", "executeAgentTaskStep") and isinstance(ex.request_json(), NotJson | list | str):
            v.check(
                "AP-ERR-004",
                status == 422 and isinstance(body, dict),
                f"{op} answered {status} with {shown(body, 120)} to a body that is not a JSON object",
            )
        elif op in ("createAgentTask", "executeAgentTaskStep") and status == 422:
            v.check("AP-ERR-004", isinstance(body, dict), f"{op} 422: body {shown(body, 120)} is not an object")
        task_id = ex.path_params.get("task_id", "")
        if op == "createAgentTask" and 200 < status < 300:
            v.fail("AP-TASK-001", f"createAgentTask answered {status}, not the documented 200")
        known = op == "listAgentTasks" or task_id in self.tasks
        if op in LISTS and status == 404 and ex.param("current_page") and known:
            v.fail("AP-PAGE-004", f"{op} answered 404 for current_page {ex.param('current_page')} of an existing list")
        if op == "uploadAgentTaskArtifacts" and status >= 400:
            self._refused_upload(ex, v, status)
        if status != 200:
            return
        self._note_ids(task_id or (body.get("task_id") if isinstance(body, dict) else "") or "", body)
        if op == "createAgentTask":
            self._created(ex, v, body)
        elif op == "getAgentTask":
            self._task_read(ex, v, task_id, body)
        elif op == "executeAgentTaskStep":
            self._executed(ex, v, task_id, body)
        elif op == "getAgentTaskStep":
            self._step_read(ex, v, task_id, ex.path_params.get("step_id", ""), body)
        elif op == "uploadAgentTaskArtifacts":
            self._uploaded(ex, v, task_id, body)
        elif op == "downloadAgentTaskArtifact":
            self._downloaded(ex, v, task_id, ex.path_params.get("artifact_id", ""))
        if op in LISTS:
            self._page(ex, v, op, body)

    def _note_ids(self, task_id: str, body: Any) -> None:
        ids = self.seen.get(task_id)
        if ids is None or len(ids) > 50_000:
            return
        stack, budget = [body], 10_000
        while stack and budget:
            node = stack.pop()
            budget -= 1
            if isinstance(node, dict):
                ids.update(str(node[k]) for k in ("step_id", "artifact_id") if isinstance(node.get(k), str))
                stack.extend(x for x in node.values() if isinstance(x, dict | list))
            elif isinstance(node, list):
                stack.extend(x for x in node if isinstance(x, dict | list))

    def _never_issued(self, task_id: str, item_id: str) -> bool:
        return task_id in self.seen and item_id not in self.seen[task_id]

    def on_broken(self, ex: Observed, v: Verdict, reason: str) -> None:
        task_id, artifact_id = ex.path_params.get("task_id", ""), ex.path_params.get("artifact_id", "")
        if ex.operation_id == "downloadAgentTaskArtifact" and artifact_id in self.uploads.get(task_id, {}):
            v.fail("AP-ARTIFACT-002", f"the download of an uploaded artifact never completed: {reason}")

    # errors ---------------------------------------------------------------------------------------
    def _not_found(self, ex: Observed, v: Verdict, op: str, body: Any) -> None:
        rid = "AP-ERR-001" if op in TASK_SCOPED_404 else {"getAgentTaskStep": "AP-ERR-002"}.get(op)
        rid = rid or ("AP-ERR-003" if op == "downloadAgentTaskArtifact" else None)
        if rid is not None:  # the scenario checks' judgment
            v.judged(rid, errors.SHAPE, ex.seen(), ERROR, f"{op} 404")
        task_id = ex.path_params.get("task_id", "")
        if op == "downloadAgentTaskArtifact" and ex.path_params.get("artifact_id", "") in self.uploads.get(task_id, {}):
            v.fail(
                "AP-ARTIFACT-002",
                f"the download of an artifact its upload reported stored answered 404: {shown(body, 80)}",
            )
        if op == "getAgentTask" and task_id in self.tasks:
            v.fail("AP-SCHEMA-008", f"task {task_id} answered 404 after createAgentTask reported it created")
            v.fail("AP-TASK-002", f"task {task_id} read back by id answered 404")  # as the run files it
        step_id = ex.path_params.get("step_id", "")
        if op == "getAgentTaskStep" and step_id in self.steps.get(task_id, {}):
            for rid in ("AP-STEP-002", "AP-STEP-004"):  # the read-back's facts, as the run files them
                v.fail(rid, f"step {step_id}, executed under task {task_id}, read back by id answered 404")

    # tasks ----------------------------------------------------------------------------------------
    def _created(self, ex: Observed, v: Verdict, body: Any) -> None:
        task_id = body.get("task_id") if isinstance(body, dict) else None
        if not v.check(
            "AP-TASK-001", isinstance(task_id, str) and task_id, f"the answer has no task_id: {shown(body)}"
        ):
            return
        sent = _sent(ex)
        _echo(v, "AP-TASK-002", body, sent, "createAgentTask answer", ex)
        self.tasks[str(task_id)] = sent
        self.seen[str(task_id)] = set()
        self._note_ids(str(task_id), body)

    def _task_read(self, ex: Observed, v: Verdict, task_id: str, body: Any) -> None:
        if task_id in self.tasks:
            v.ok("AP-SCHEMA-008")
            _echo(v, "AP-TASK-002", body, self.tasks[task_id], f"getAgentTask of {task_id}", ex)
        listed = body.get("artifacts") if isinstance(body, dict) else None
        mine = self.uploads.get(task_id, {})
        if mine and isinstance(listed, list):
            by_id = {a.get("artifact_id"): a for a in listed if isinstance(a, dict)}
            for artifact_id, up in mine.items():
                found = by_id.get(artifact_id)
                v.check(
                    "AP-ARTIFACT-005",
                    found is not None and same(artifact_fields(found), artifact_fields(up.answer)),
                    f"the task's artifacts {shown(listed, 160)} lack the uploaded {shown(artifact_fields(up.answer))}",
                )

    # steps ----------------------------------------------------------------------------------------
    def _executed(self, ex: Observed, v: Verdict, task_id: str, body: Any) -> None:
        if not isinstance(body, dict):
            return
        step_id = body.get("step_id")
        sent = _sent(ex)
        # the answer's form, as the run's AP-STEP-001 judges the step it executes (ctx.conforms)
        answer = self.spec.response("executeAgentTaskStep", 200) or {}
        schema = answer["content"]["application/json"]["schema"]
        problems = "; ".join(map(str, self.schemas.violations(schema, body, 3)))
        v.check("AP-STEP-001", not problems, f"executeAgentTaskStep 200 body does not match the document: {problems}")
        _echo(v, "AP-STEP-002", body, sent, "the step POST answer", ex)
        count, finished = self.posts.get(task_id, (0, False))
        if isinstance(step_id, str):
            owner = self.step_owner.get(step_id)
            v.check(
                "AP-STEP-001",
                owner is None,
                f"step_id {step_id} was already answered by an earlier POST (task {owner})",
            )
            self.step_owner[step_id] = task_id
            mine = self.steps.get(task_id) or {}
            if len(mine) < 1_000:
                mine[step_id] = sent
            self.steps[task_id] = mine
            if body.get("status") == "completed":
                self.completed[(task_id, step_id)] = body
        finished = finished or body.get("is_last") is True
        count += 1
        if count >= STEP_BOUND and not finished:
            v.fail("AP-STEP-001", f"{count} step POSTs to task {task_id} and none reported is_last: true")
        self.posts[task_id] = (count, finished)

    def _step_read(self, ex: Observed, v: Verdict, task_id: str, step_id: str, body: Any) -> None:
        if not isinstance(body, dict):
            return
        owner = self.step_owner.get(step_id)
        if owner is not None and owner != task_id:
            v.fail("AP-ERR-002", f"another task's step {step_id} (of task {owner}) answered 200 under task {task_id}")
            return
        if self._never_issued(task_id, step_id) and body.get("step_id") != step_id:
            v.fail(
                "AP-ERR-002",
                f"step id {shown(step_id)}, which no answer ever named, answered 200 with step "
                f"{shown(body.get('step_id'))} instead of 404",
            )
            return
        v.check(
            "AP-STEP-004",
            body.get("step_id") == step_id and body.get("task_id") == task_id,
            f"GET step {step_id} of task {task_id} answered step {shown(body.get('step_id'))} "
            f"of task {shown(body.get('task_id'))}",
        )
        known = self.completed.get((task_id, step_id))
        if known is not None:
            changed = [k for k in known if not same(body.get(k), known.get(k))]
            v.check("AP-STEP-004", not changed, f"the completed step read back differs in {changed}")
        sent = self.steps.get(task_id, {}).get(step_id)
        if sent is not None:
            _echo(v, "AP-STEP-002", body, sent, f"step {step_id} read back by id", ex)

    # artifacts ------------------------------------------------------------------------------------
    def _uploaded(self, ex: Observed, v: Verdict, task_id: str, body: Any) -> None:
        if not isinstance(body, dict):
            return
        fields = multipart_fields(ex) or {}
        name, data = fields.get("file", (None, b""))
        relative = (
            fields.get("relative_path", (None, b""))[1].decode("utf-8", "replace")
            if "relative_path" in fields
            else None
        )
        problems = []
        if not (isinstance(body.get("artifact_id"), str) and body["artifact_id"]):
            problems.append("no artifact_id")
        if body.get("agent_created") is not False:
            problems.append(f"agent_created is {shown(body.get('agent_created'))}, not false")
        if name is not None and body.get("file_name") != name and not climbs(name, relative):
            problems.append(f"file_name {shown(body.get('file_name'))} is not the {shown(name)} uploaded")
        if relative is not None and body.get("relative_path") != relative:
            problems.append(f"relative_path {shown(body.get('relative_path'))} is not the {shown(relative)} sent")
        digest = hashlib.sha256(data).hexdigest()
        earlier = self.uploads.get(task_id, {}).get(str(body.get("artifact_id")))
        if earlier is not None and earlier.digest != digest:
            problems.append(
                f"artifact_id {shown(body.get('artifact_id'))} is the one an earlier upload of other bytes "
                f"({shown(earlier.answer.get('file_name'))}) was given: that artifact's bytes are replaced"
            )
        v.check("AP-ARTIFACT-001", not problems, "the upload's answer: " + "; ".join(problems))
        if isinstance(body.get("artifact_id"), str) and "file" in fields:
            mine = self.uploads.get(task_id) or {}
            if len(mine) < 1_000:  # an id answered again keeps its first upload: those bytes are still its own
                mine.setdefault(body["artifact_id"], Upload(task_id, body, digest, len(data)))
            self.uploads[task_id] = mine

    def _refused_upload(self, ex: Observed, v: Verdict, status: int) -> None:
        """An upload that carries its file is stored or refused with a 4xx; a 5xx is neither, and an
        empty file (the document sets no least size) is no reason to refuse."""
        fields = multipart_fields(ex) or {}
        if "file" not in fields or ex.path_params.get("task_id", "") not in self.tasks:
            return  # no file (a request the client got wrong), or a task the proxy never saw made
        if status >= 500:
            v.fail("AP-ARTIFACT-001", f"an upload that carries its file answered {status}, neither stored nor refused")
        elif not fields["file"][1]:
            v.fail("AP-ARTIFACT-001", f"an empty file was refused with {status}; the document sets no least size")

    def _downloaded(self, ex: Observed, v: Verdict, task_id: str, artifact_id: str) -> None:
        if self._never_issued(task_id, artifact_id):
            v.fail("AP-ERR-003", f"artifact id {shown(artifact_id)}, which no answer ever named, answered 200, not 404")
            return
        up = self.uploads.get(task_id, {}).get(artifact_id)
        if up is None:
            return
        got = hashlib.sha256(ex.response_body).hexdigest()
        v.check(
            "AP-ARTIFACT-002",
            got == up.digest,  # its label is AP-SCHEMA-003's fact
            f"the download ({len(ex.response_body)} bytes) is not the {up.size} bytes uploaded",
        )
        header = ex.response_headers.get("content-disposition", "")
        kind, name = content_disposition(header)
        stored = up.answer.get("file_name")
        v.check(
            "AP-ARTIFACT-003",
            kind == "attachment" and (name == stored or disposable(stored, up.answer.get("relative_path"))),
            f"Content-Disposition {shown(header)} is not an attachment named {shown(up.answer.get('file_name'))}",
        )

    # pagination -----------------------------------------------------------------------------------
    def _page(self, ex: Observed, v: Verdict, op: str, body: Any) -> None:
        # the arithmetic is the scenario walk's and replay's judgment (check/judgments/pages.py)
        key, rid = LISTS[op]
        seen = ex.seen()
        facts: dict[str, Any] = {"items": key, "defaults": self.defaults.get(op, {})}
        known = self._known(op, ex.path_params.get("task_id", ""))
        if known:
            facts["at_least"] = known  # what it saw made: the run's checks give what they made
        page = pages.page_of(seen, facts)
        if page is None:
            return  # an invalid request: the document judge has it
        v.judged(rid, pages.NUMBERS, seen, facts)  # a body that is no page too (page_of's reason)
        if isinstance(page, str):
            return
        if page.beyond:
            v.judged("AP-PAGE-004", pages.BEYOND, seen, facts)
            return
        items = page.items
        if op == "listAgentTaskArtifacts":
            self._listed_artifacts(v, ex.path_params.get("task_id", ""), items, whole=page.pages <= 1)
        if op == "listAgentTaskSteps" and page.pages <= 1:
            self._listed_steps(v, ex.path_params.get("task_id", ""), items, rid)

    def _known(self, op: str, task_id: str) -> int:
        """How many items of the list the traffic made: tasks; a task's steps and uploads when its
        creation passed through (else some may be from before)."""
        if op == "listAgentTasks":
            return len(self.tasks)
        if task_id not in self.tasks:
            return 0
        made = self.steps if op == "listAgentTaskSteps" else self.uploads
        return len(made.get(task_id) or {})

    def _listed_steps(self, v: Verdict, task_id: str, items: list[Any], rid: str) -> None:
        """The one page holds every step: each executed through the proxy is on it, as executed."""
        executed = self.steps.get(task_id, {})
        if not executed:
            return
        listed = {str(s.get("step_id")): s for s in items if isinstance(s, dict)}
        missing = [sid for sid in executed if sid not in listed]
        v.check(rid, not missing, f"executed steps {missing[:3]} are on no page")
        v.check("AP-STEP-003", not missing, f"executed steps {missing[:3]} are not listed")
        for sid, sent in executed.items():
            if sid in listed:
                _echo(v, "AP-STEP-003", listed[sid], sent, f"listed step {sid}")

    def _listed_artifacts(self, v: Verdict, task_id: str, items: list[Any], whole: bool) -> None:
        mine = self.uploads.get(task_id, {})
        listed = {str(a.get("artifact_id")): a for a in items if isinstance(a, dict)}
        if whole and mine:  # the one page holds every artifact: each upload must be on it
            missing = [i for i in mine if i not in listed]
            v.check("AP-ARTIFACT-004", not missing, f"uploaded artifacts {missing[:3]} are not listed")
        for artifact_id, artifact in listed.items():
            up = mine.get(artifact_id)
            if up is not None:
                v.check(
                    "AP-ARTIFACT-004",
                    same(artifact_fields(artifact), artifact_fields(up.answer)),
                    f"listed artifact {shown(artifact_fields(artifact))} differs from the upload's answer "
                    f"{shown(artifact_fields(up.answer))}",
                )
