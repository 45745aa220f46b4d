"""Synapse agent chat's model: sessions, their chat jobs, histories and traces, as every route and
every poll must show them.

The ledger holds every session the run created (and the ids the caller held before), each with its
access level as last set, its etag and the jobs started in it. After each write the model reads the
session (GET, its item in the sessions list walked through every nextPageToken) and its history,
and polls its jobs; every poll is a statement by the server and is judged as one. Times are judged
by the value oracle against the wall clock of the exchange that made them.

Tolerated here because other requirements own them: answers that are not the documented shape
(SYN-SCHEMA-005), a create answered with another status (SYN-SESS-001), the jobs' statuses.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize, rule

from ...check.http import Response
from ...check.judgments.echoes import unechoed
from ...check.judgments.lists import out_of_order
from ...check.judgments.pages import TokenWalk
from ...check.listing import Others, judge_listing, known
from ...check.model import SUPPORT, Model, ModelMachine, Session
from ...check.oracle import Window, datetime_problems, epoch_problems, parse_datetime
from ...check.shown import shown
from ...check.waiting import FIRST_POLL_S, wait_for
from ...verdicts.requirements import Level, Requirement
from .requirements import CHAT_START, JOB_RESULT, LEVELS, PAGING, SESSION, SESSIONS_LIST

DOC = "synapse-agent/openapi.yaml"
PROTOCOL = "synapse-agent"
MAX_PAGES = 60
FIELDS = ("sessionId", "agentAccessLevel", "startedOn", "startedBy", "agentRegistrationId", "etag")
"""What every route that shows a session must agree on (modifiedOn too, judged on its own)."""

SAME_SESSION = "SYN-MODEL-001"
SESSIONS = "SYN-MODEL-002"
VALUES = "SYN-MODEL-003"
POLLS = "SYN-MODEL-004"
HISTORY = "SYN-MODEL-005"

LISTED, ORDERED = "each session listed once", "the order by startedOn"
"""SYN-MODEL-002's facts."""
ROUTES, UPDATES = "the same session on every route", "a new etag and modifiedOn with each update"
"""SYN-MODEL-001's facts."""

REQUIREMENTS = (
    Requirement(
        SAME_SESSION,
        Level.MUST,
        "Every route that shows a session (the create and update answers, GET, its item in the sessions "
        "list) shows the same sessionId, startedOn, startedBy, agentRegistrationId, the access level last "
        "set and one etag, which changes with each update and only then; modifiedOn moves with each update",
        f"{DOC}#/components/schemas/AgentSession",
        PROTOCOL,
        "model",
    ),
    Requirement(
        SESSIONS,
        Level.MUST,
        "The sessions list, walked through every nextPageToken, holds each session the caller created in the "
        "run (and those held before) exactly once, ordered by startedOn descending",
        f"{DOC}#/components/schemas/ListAgentSessionsRequest",
        PROTOCOL,
        "model",
    ),
    Requirement(
        VALUES,
        Level.MUST,
        "Times are facts of the exchanges: a session's startedOn and modifiedOn, a job's startedOn and "
        "changedOn lie within 5 minutes of the call that set them, startedOn is not after modifiedOn or "
        "changedOn, trace timestamps are milliseconds since the epoch within the job's lifetime, and "
        "startedBy / startedByUserId are the caller's user id (GET /userProfile ownerId)",
        f"{DOC}#/components/schemas/TraceEvent/properties/timestamp",
        PROTOCOL,
        "model",
    ),
    Requirement(
        POLLS,
        Level.MUST,
        "Every poll of a chat job agrees with the job: a 202 says PROCESSING with the job's jobId and the "
        "requestBody sent, a finished job answers its AgentChatResponse with the session's sessionId and a "
        "responseText, and once finished it never answers 202 again",
        f"{DOC}#/paths/~1agent~1chat~1async~1get~1{{jobId}}/get",
        PROTOCOL,
        "model",
    ),
    Requirement(
        HISTORY,
        Level.MUST,
        "A session's history holds one interaction per chat of the session that finished (none of another "
        "session's), newest first, each with the chat's text as requestText, a responseText, and a "
        "requestTimestamp not after its responseTimestamp, both within the job's lifetime",
        f"{DOC}#/components/schemas/SessionHistoryResponse",
        PROTOCOL,
        "model",
    ),
)


# --- the ledger ----------------------------------------------------------------------------------


@dataclass(slots=True)
class JobModel:
    job_id: str
    request: dict[str, Any]
    started: Window
    """The wall clock of the start call."""
    finished: Window | None = None
    """The first poll that saw the job finished (its end bounds the job's lifetime)."""
    response_text: str | None = None


@dataclass(slots=True)
class SessionModel:
    session_id: str
    first: dict[str, Any]
    level: str
    etag: Any
    modified: Any
    created: Window
    updated: Window | None = None
    jobs: list[JobModel] = field(default_factory=list)


@dataclass(slots=True)
class Ledger:
    user_id: int | None
    before: set[str]
    sessions: dict[str, SessionModel] = field(default_factory=dict)
    others: Others = field(default_factory=Others)
    """What the run knows of the caller's sessions others created (check/listing.py)."""


def json_body(response: Response, *statuses: int) -> Any:
    return response.json_value() if response.status in statuses else None


def walk(session: Session, path: str, listed: bool = True) -> TokenWalk | None:
    """Every page of a paged list, in order, as ``pages.tokens`` walks it (a token handed out twice,
    or still one after ``MAX_PAGES`` pages, ends it: ``walk.problems``, ``walk.exhausted``); None
    when an answer is not a 200 JSON object listing its items (``listed`` False: a page may leave
    its items out), the documented shape being SYN-SCHEMA-005's subject."""
    pages = TokenWalk(PAGING, most=MAX_PAGES)
    while not pages.done:
        response = session.request("POST", path, json=pages.request())
        body = json_body(response, 200)
        items = body.get(PAGING["items"], None if listed else []) if isinstance(body, dict) else None
        if not isinstance(items, list):
            return None
        pages.take(response.seen())
    return pages


def walk_sessions(session: Session) -> list[dict[str, Any]] | None:
    """Every page of the sessions list, in order; None when an answer is not the documented shape
    or its tokens do not end (SYN-PAGE-001's subject, which removes the comparison)."""
    pages = walk(session, SESSIONS_LIST, listed=False)
    if pages is None:
        session.cannot_compare(SESSIONS, "listAgentSessions does not answer the documented shape")
    elif pages.problems or pages.exhausted:
        session.cannot_compare(
            SESSIONS, f"the sessions list's tokens do not end (SYN-PAGE-001): {pages.problems}", by="SYN-PAGE-001"
        )
    else:
        return pages.items
    return None


def walk_history(session: Session, session_id: str) -> list[dict[str, Any]] | None:
    """A session's whole history, every page its nextPageToken leads to, in served order; None
    when an answer is not the documented shape or the tokens do not end (SYN-HIST-*'s subject)."""
    pages = walk(session, f"{SESSION}/history/{quote(session_id, safe='')}")
    return None if pages is None or pages.problems or pages.exhausted else pages.items


def prepare(session: Session) -> Ledger:
    profile = json_body(session.request("GET", "/userProfile"), 200)
    owner = profile.get("ownerId") if isinstance(profile, dict) else None
    user_id = int(owner) if isinstance(owner, str) and owner.isdigit() else None
    listed = walk_sessions(session) or []
    before = {str(s.get("sessionId")) for s in listed}
    return Ledger(user_id, before, others=known(before))


def millis(value: Any) -> float | None:
    parsed, _ = parse_datetime(value)
    return parsed.timestamp() * 1000 if parsed is not None else None


# --- the state machine ---------------------------------------------------------------------------

chat_texts = st.lists(
    st.sampled_from(("How", "many", "files", "in", "syn123", "\u00fcber", "?")), min_size=1, max_size=5
).map(" ".join)
ACTIONS = (
    "update",
    "chat",
    "chat and wait for the answer",
    "poll",
    "reread a session of the run",
    "walk the sessions list",
)


class SynapseModel(ModelMachine):
    sessions = Bundle("sessions")

    @property
    def ledger(self) -> Ledger:
        return self.session.ledger  # type: ignore[no-any-return]

    @initialize(target=sessions, level=st.sampled_from(LEVELS))
    def first_session(self, level: str) -> str:
        return self.new_session(level)

    @rule(target=sessions, level=st.sampled_from(LEVELS))
    def create_session(self, level: str) -> str:
        return self.new_session(level)

    @rule(session_id=sessions, data=st.data())
    def act(self, session_id: str, data: st.DataObject) -> None:
        """One rule for every call but a create, so that a short sequence still mixes them."""
        model = self.ledger.sessions.get(session_id)
        if model is None:
            return
        kind = data.draw(st.sampled_from(ACTIONS), label="action")
        if kind == "update":
            # always another level: an update that changes nothing would show nothing stale
            self.update(
                model, data.draw(st.sampled_from([lv for lv in LEVELS if lv != model.level]), label="agentAccessLevel")
            )
        elif kind.startswith("chat"):
            self.chat(
                model,
                data.draw(chat_texts, label="chatText"),
                data.draw(st.booleans(), label="enableTrace"),
                wait=kind != "chat",
            )
        elif kind == "poll":
            self.verify(model)
        elif kind == "reread a session of the run":
            self.verify(
                self.ledger.sessions[data.draw(st.sampled_from(sorted(self.ledger.sessions)), label="sessionId")]
            )
        else:
            self.check_list()

    # writes --------------------------------------------------------------------------------------

    def new_session(self, level: str) -> str:
        response = self.session.request("POST", SESSION, json={"agentAccessLevel": level})
        body = json_body(response, 201, 200)
        session_id = body.get("sessionId") if isinstance(body, dict) else None
        if not isinstance(session_id, str) or not session_id:
            # every requirement of the model follows the run's sessions: without an id there is none
            why = "createAgentSession answers no sessionId (SYN-SESS-001)"
            self.session.cannot_compare((r.id for r in REQUIREMENTS), why, by="SYN-SESS-001")
            return ""
        window = self.session.window()
        self.session.check(
            SESSIONS,
            session_id not in self.ledger.sessions and session_id not in self.ledger.before,
            f"createAgentSession answered sessionId {shown(session_id)}, a session that already exists",
            fact=SUPPORT,
        )
        model = SessionModel(session_id, dict(body), level, body.get("etag"), body.get("modifiedOn"), window)
        self.ledger.sessions[session_id] = model
        self.judge_session_times(model, body, "its create answer")
        self.verify(model, listed=True)
        return session_id

    def update(self, model: SessionModel, level: str) -> None:
        path = f"{SESSION}/{quote(model.session_id, safe='')}"
        body = json_body(
            self.session.request("PUT", path, json={"sessionId": model.session_id, "agentAccessLevel": level}), 200
        )
        if not isinstance(body, dict):  # the update's own answer is SYN-SESS-002's subject
            why = f"updateAgentSession answered {self.session.calls[-1].exchange.status} (SYN-SESS-002)"
            self.session.cannot_compare(SAME_SESSION, why, by="SYN-SESS-002", fact=UPDATES)
        else:
            window = self.session.window()
            old_etag, old_modified = model.etag, model.modified
            model.level, model.updated = level, window
            self.compare(model, body, "its update answer", etag_may_change=True)
            self.session.check(
                SAME_SESSION,
                body.get("etag") != old_etag,
                f"session {model.session_id}: the update answer's etag {shown(body.get('etag'))} is the "
                "one it had before the update",
                fact=UPDATES,
            )
            self.session.check(
                SAME_SESSION,
                body.get("modifiedOn") != old_modified or old_modified is None,
                f"session {model.session_id}: modifiedOn {shown(body.get('modifiedOn'))} did not move with the update",
                fact=UPDATES,
            )
            model.etag, model.modified = body.get("etag"), body.get("modifiedOn")
            self.judge_session_times(model, body, "its update answer")
        self.verify(model, listed=True)

    def chat(self, model: SessionModel, text: str, trace: bool, wait: bool) -> None:
        request = {
            "concreteType": "org.sagebionetworks.repo.model.agent.AgentChatRequest",
            "sessionId": model.session_id,
            "chatText": text,
            "enableTrace": trace,
        }
        body = json_body(self.session.request("POST", CHAT_START, json=request), 201, 200)
        token = body.get("token") if isinstance(body, dict) else None
        if isinstance(token, int) and not isinstance(token, bool):
            token = str(token)  # a number where the document says a string is SYN-JOB-001's finding
        if isinstance(token, str) and token:
            job = JobModel(token, request, self.session.window())
            model.jobs.append(job)
            if wait:  # until it finishes, answers neither 202 nor a result, or the run's bound of a wait
                client = self.session.client  # the job stays in the ledger: later reads poll it again
                wait_for(
                    lambda: self.poll(model, job),
                    lambda polled: not polled or job.finished is not None,
                    what=JOB_RESULT,
                    bound=client.limits.stream_seconds,
                    guard=client.guard,
                    most=FIRST_POLL_S,
                )
        self.verify(model)

    # the comparisons -----------------------------------------------------------------------------

    def verify(self, model: SessionModel, listed: bool = False) -> None:
        got = json_body(self.session.request("GET", f"{SESSION}/{quote(model.session_id, safe='')}"), 200)
        if isinstance(got, dict) and got.get("sessionId") == model.session_id:
            self.compare(model, got, "GET")
        if listed:
            self.check_list()
        for job in model.jobs:
            self.poll(model, job)
        self.check_history(model)

    def compare(self, model: SessionModel, got: dict[str, Any], where: str, etag_may_change: bool = False) -> None:
        for key in FIELDS:
            if key == "etag" and etag_may_change:
                continue
            want = {"agentAccessLevel": model.level, "etag": model.etag}.get(key, model.first.get(key))
            if key in model.first or key in got or key in ("agentAccessLevel", "etag"):
                why = unechoed(got, {key: want})  # a read-back: what was written, back the same
                self.session.check(
                    SAME_SESSION,
                    why is None,
                    f"session {model.session_id} ({where}): {why} (the model's, from its create answer and "
                    "the updates since)",
                    fact=ROUTES,
                )
        if not etag_may_change and "modifiedOn" in got:
            why = unechoed(got, {"modifiedOn": model.modified})
            self.session.check(
                SAME_SESSION,
                why is None,
                f"session {model.session_id} ({where}): {why} (the last write's answer)",
                fact=ROUTES,
            )

    def judge_session_times(self, model: SessionModel, got: dict[str, Any], where: str) -> None:
        problems = (
            datetime_problems(got.get("startedOn"), model.created, f"session {model.session_id} startedOn ({where})")
            if "startedOn" in got
            else []
        )
        window = model.updated or model.created
        if "modifiedOn" in got:
            problems += datetime_problems(
                got.get("modifiedOn"), window, f"session {model.session_id} modifiedOn ({where})"
            )
        start, modified = millis(got.get("startedOn")), millis(got.get("modifiedOn"))
        if start is not None and modified is not None and start > modified:
            problems.append(
                f"session {model.session_id} ({where}): startedOn {got['startedOn']} is after "
                f"modifiedOn {got['modifiedOn']}"
            )
        if self.ledger.user_id is not None and "startedBy" in got and got.get("startedBy") != self.ledger.user_id:
            problems.append(
                f"session {model.session_id} ({where}): startedBy {shown(got.get('startedBy'))} is not the "
                f"caller's user id {self.ledger.user_id}"
            )
        self.session.check(VALUES, not problems, "; ".join(problems))

    def check_list(self) -> None:
        items = walk_sessions(self.session)
        if items is None:
            return
        page = self.session.calls[-1].exchange  # what is judged: the reads by id below only explain it
        ids = [str(s.get("sessionId")) for s in items]
        listing = judge_listing(
            ids,
            live=self.ledger.sessions,
            others=self.ledger.others,
            readable=lambda session_id: (
                self.session.request("GET", f"{SESSION}/{quote(session_id, safe='')}").status == 200
            ),
        )
        self.session.check(
            SESSIONS,
            listing.ok,
            lambda: f"the sessions list ({len(ids)} items over its pages) " + listing.problems("session"),
            answer=page,
            fact=LISTED,
            over=len(self.ledger.sessions),  # the sessions held before alone are not the run's to judge
        )
        why = out_of_order(items, "startedOn", "sessions list")
        known = [s for s in items if isinstance(s, dict) and parse_datetime(s.get("startedOn"))[0] is not None]
        self.session.check(
            SESSIONS,
            why is None,
            str(why),
            fact=ORDERED,
            over=len(known) - 1,  # one session is in every order
        )
        for item in items:
            model = self.ledger.sessions.get(str(item.get("sessionId")))
            if model is not None:
                self.compare(model, item, "its item in the sessions list")

    def poll(self, model: SessionModel, job: JobModel) -> bool:
        """One poll, judged; False when the answer is neither a 202 nor a 2xx result (nothing to wait for)."""
        response = self.session.request("GET", f"/agent/chat/async/get/{quote(job.job_id, safe='')}")
        window = self.session.window()
        where = f"job {job.job_id} of session {model.session_id}"
        if response.status == 202:
            body = json_body(response, 202)
            if not isinstance(body, dict):
                return False
            problems = []
            if job.finished is not None:
                problems.append(f"{where} answered 202 (still running) after a poll had seen it finished")
            if body.get("jobState") != "PROCESSING":
                problems.append(f"{where}: the 202 says jobState {shown(body.get('jobState'))}, not PROCESSING")
            if "jobId" in body and body.get("jobId") != job.job_id:
                problems.append(f"{where}: the 202 says jobId {shown(body.get('jobId'))}")
            sent = {k: v for k, v in job.request.items() if k != "concreteType"}
            echoed = body.get("requestBody")
            why = unechoed(echoed, sent) if isinstance(echoed, dict) else None
            if why:
                problems.append(f"{where}: the 202's requestBody is not the request sent: {why}")
            self.session.check(POLLS, not problems, "; ".join(problems))
            self.judge_job_times(job, body, window)
            return True
        elif response.status in (200, 201):
            body = json_body(response, 200, 201)
            if not isinstance(body, dict):
                return False
            text = body.get("responseText")
            problems = []
            if body.get("sessionId", model.session_id) != model.session_id:
                problems.append(f"{where} finished with sessionId {shown(body.get('sessionId'))}")
            if not isinstance(text, str) or not text:
                problems.append(f"{where} answered finished with no responseText: {shown(body)}")
            elif job.response_text is not None and text != job.response_text:
                problems.append(f"{where} answered {shown(text)}, an earlier poll {shown(job.response_text)}")
            self.session.check(POLLS, not problems, "; ".join(problems))
            if job.finished is None:
                job.finished, job.response_text = window, text if isinstance(text, str) else None
            self.check_trace(model, job)
            return True
        return False

    def judge_job_times(self, job: JobModel, body: dict[str, Any], window: Window) -> None:
        problems = []
        if "startedOn" in body:
            problems += datetime_problems(body["startedOn"], job.started, f"job {job.job_id} startedOn")
        if "changedOn" in body:
            problems += datetime_problems(
                body["changedOn"], Window(job.started.start, window.end), f"job {job.job_id} changedOn"
            )
        start, changed = millis(body.get("startedOn")), millis(body.get("changedOn"))
        if start is not None and changed is not None and start > changed:
            problems.append(f"job {job.job_id}: startedOn {body['startedOn']} is after changedOn {body['changedOn']}")
        if (
            self.ledger.user_id is not None
            and "startedByUserId" in body
            and body["startedByUserId"] != self.ledger.user_id
        ):
            problems.append(
                f"job {job.job_id}: startedByUserId {shown(body['startedByUserId'])} is not the caller's "
                f"user id {self.ledger.user_id}"
            )
        self.session.check(VALUES, not problems, "; ".join(problems))

    def check_trace(self, model: SessionModel, job: JobModel) -> None:
        if not job.request.get("enableTrace") or job.finished is None:
            return
        body = json_body(
            self.session.request(
                "POST",
                f"/agent/chat/trace/{quote(job.job_id, safe='')}",
                json={"jobId": job.job_id, "newerThanTimestamp": None},
            ),
            200,
        )
        if not isinstance(body, dict) or not isinstance(body.get("page"), list):
            return
        lifetime = Window(job.started.start, job.finished.end)
        problems = [
            p
            for n, event in enumerate(body["page"])
            if isinstance(event, dict)
            for p in epoch_problems(
                event.get("timestamp"), "ms", lifetime, f"job {job.job_id} trace event {n + 1} timestamp"
            )
        ]
        self.session.check(VALUES, not problems, "; ".join(problems[:3]))

    def check_history(self, model: SessionModel) -> None:
        page = walk_history(self.session, model.session_id)
        if page is None:
            return
        finished = [j for j in model.jobs if j.finished is not None]
        texts = Counter(str(j.request["chatText"]) for j in model.jobs)
        got = Counter(str(i.get("requestText")) for i in page)
        problems = []
        if not len(finished) <= len(page) <= len(model.jobs):
            problems.append(
                f"session {model.session_id}: the history holds {len(page)} interactions; "
                f"{len(finished)} of the session's {len(model.jobs)} chats are known to have finished"
            )
        extra = got - texts
        if extra:
            problems.append(
                f"session {model.session_id}: the history holds requests never sent to it: {shown(sorted(extra)[:3])}"
            )
        lost = Counter(str(j.request["chatText"]) for j in finished) - got
        if lost:
            problems.append(
                f"session {model.session_id}: finished chats missing from its history: {shown(sorted(lost)[:3])}"
            )
        why = out_of_order(page, "requestTimestamp", "history")
        if why:
            problems.append(f"session {model.session_id}: {why}")
        lifetime = (
            Window(model.jobs[0].started.start, max((j.finished or j.started).end for j in model.jobs))
            if model.jobs
            else None
        )
        for n, item in enumerate(page, 1):
            request, response = millis(item.get("requestTimestamp")), millis(item.get("responseTimestamp"))
            if request is not None and response is not None and request > response:
                problems.append(
                    f"session {model.session_id}, interaction {n}: requestTimestamp "
                    f"{item['requestTimestamp']} is after responseTimestamp {item['responseTimestamp']}"
                )
            if not isinstance(item.get("responseText"), str) or not item.get("responseText"):
                problems.append(f"session {model.session_id}, interaction {n} has no responseText")
            if lifetime is not None:
                for key in ("requestTimestamp", "responseTimestamp"):
                    if key in item:
                        problems += datetime_problems(
                            item[key],
                            Window(lifetime.start, time.time()),
                            f"session {model.session_id}, interaction {n} {key}",
                        )
        self.session.check(HISTORY, not problems, "; ".join(problems[:3]))


def two_sessions(machine: SynapseModel) -> None:
    """Two sessions, one updated, each with a finished chat (one traced), the list walked: every
    route of every requirement compared once, whatever the seed draws after."""
    first, second = machine.new_session(LEVELS[0]), machine.new_session(LEVELS[1])
    if not first or not second:
        return
    sessions = machine.ledger.sessions
    machine.update(sessions[first], LEVELS[2])
    machine.chat(sessions[first], "targeted: the first session's question", True, wait=True)
    machine.chat(sessions[second], "targeted: the second session's question", False, wait=True)
    machine.verify(sessions[first], listed=True)


def more_sessions_than_a_page(machine: SynapseModel) -> None:
    """More sessions than a list of the newest 20 holds, the list walked after each create: every
    session of the run must stay listed whatever its age. The draws make a handful, so a list cut to
    the newest 20 was seen only where earlier phases had left enough sessions behind."""
    for n in range(LISTED_SESSIONS):
        if not machine.new_session(LEVELS[n % len(LEVELS)]):
            return


LISTED_SESSIONS = 22
"""Sessions the fixed sequence creates: more than a "recent sessions" list of 20 holds."""

MODEL = Model(
    SynapseModel,
    prepare,
    steps=8,
    calls_per_step=10,
    requirements=REQUIREMENTS,
    facts={SAME_SESSION: (ROUTES, UPDATES), SESSIONS: (LISTED, ORDERED)},
    targeted=(two_sessions, more_sessions_than_a_page),
)
