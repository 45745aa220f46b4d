"""Synapse agent chat: sessions, chat messages run as asynchronous jobs, history and trace events.

A chat job stays PROCESSING for ``config.job_seconds`` (on the event loop's clock); its outcome is
computed when somebody looks, so no background task exists. Every read that can observe a finished
job first settles its session: each finished job appends its interaction to the history exactly
once, in completion order. Sessions and histories are append-only, so page tokens are cursors into
them, signed with a per-app key so that a forged or foreign token is a 400, not a wrong page.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import random
import re
import secrets
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..api import Call, ProtocolApi, Reply
from ..errors import ApiError
from ..faults import Fault

FAULTS: tuple[Fault, ...] = ()

PAGE_SIZE = 10
"""Sessions per list page and interactions per history page."""
FIRST_USER_ID = 1000
"""Users get FIRST_USER_ID + their index in config.tokens."""
FIRST_SESSION_ID = 1
FIRST_JOB_ID = 7_000_001
"""Job ids start far from session ids, so that one is never mistaken for the other."""
NOT_OWNER = "Only the user that started a session may access it"
CHAT_RESPONSE = "org.sagebionetworks.repo.model.agent.AgentChatResponse"
CHAT_REQUEST = "org.sagebionetworks.repo.model.agent.AgentChatRequest"
TRACE_STEPS = (
    (0.0, "Received the request: {text}"),
    (0.5, "Searching Synapse for: {text}"),
    (1.0, "Composed the answer."),
)
"""Trace events of a traced job: (fraction of the job's duration, message)."""
_TOKEN = re.compile(r"^(\d{1,12})\.([0-9a-f]{32})$")


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def answer_for(chat_text: str) -> str:
    """The agent's deterministic answer, so tests and clients can assert it."""
    return f'You asked: "{chat_text.strip()}". This is the mock Synapse agent\'s answer.'


@dataclass(slots=True)
class Session:
    id: str
    owner: str
    access_level: str
    registration_id: str | None
    started_ms: int
    modified_ms: int
    etag: str
    history: list[dict[str, str]] = field(default_factory=list)
    pending: list[Job] = field(default_factory=list)
    """Jobs whose interaction is not in the history yet, in start (hence completion) order."""

    def body(self, user_id: int) -> dict[str, Any]:
        return {
            "sessionId": self.id, "agentAccessLevel": self.access_level, "startedOn": iso(self.started_ms),
            "startedBy": user_id, "modifiedOn": iso(self.modified_ms),
            "agentRegistrationId": self.registration_id, "etag": self.etag,
        }


@dataclass(slots=True)
class Job:
    id: str
    owner: str
    session: Session
    request: dict[str, Any]
    started_ms: int
    started_at: float
    """Event-loop time of the start; the job is done at started_at + duration."""
    duration: float
    etag: str

    @property
    def chat_text(self) -> str:
        return str(self.request["chatText"])

    def done(self, now: float) -> bool:
        return now >= self.started_at + self.duration

    def trace(self, now: float) -> list[dict[str, Any]]:
        """The events produced so far, oldest first, with distinct millisecond timestamps."""
        if not self.request.get("enableTrace"):
            return []
        events: list[dict[str, Any]] = []
        last = self.started_ms - 1
        for fraction, message in TRACE_STEPS:
            offset = self.duration * fraction
            if now < self.started_at + offset:
                break
            last = max(last + 1, self.started_ms + int(offset * 1000))
            events.append({"timestamp": last, "message": message.format(text=self.chat_text[:200])})
        return events


class Store:
    def __init__(self, api: ProtocolApi) -> None:
        self.config = api.config
        self.user_ids = {user: FIRST_USER_ID + i for i, user in enumerate(api.config.tokens)}
        self.sessions: dict[str, Session] = {}
        self.by_owner: dict[str, list[Session]] = {}
        self.jobs: dict[str, Job] = {}
        self._session_ids = itertools.count(FIRST_SESSION_ID)
        self._job_ids = itertools.count(FIRST_JOB_ID)
        self._rng = random.Random(api.config.seed)
        self._key = secrets.token_bytes(32)
        self._last_ms = 0

    # -- identities, clocks, ids ------------------------------------------------------------
    def user_id(self, user: str) -> int:
        return self.user_ids.get(user, 0)

    def now_ms(self) -> int:
        """Wall-clock milliseconds, never going backwards: creation order is startedOn order."""
        self._last_ms = max(self._last_ms, int(time.time() * 1000))
        return self._last_ms

    def etag(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def _reserve(self) -> None:
        if len(self.sessions) + len(self.jobs) >= self.config.limits.max_stored_objects:
            raise ApiError(507, f"Storage limit reached ({self.config.limits.max_stored_objects} objects)")

    # -- sessions ---------------------------------------------------------------------------
    def create_session(self, owner: str, access_level: str, registration_id: str | None) -> Session:
        self._reserve()
        now = self.now_ms()
        session_id = str(next(self._session_ids))
        session = Session(session_id, owner, access_level, registration_id, now, now, self.etag())
        self.sessions[session.id] = session
        self.by_owner.setdefault(owner, []).append(session)
        return session

    def session(self, session_id: str, user: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise ApiError(404, f"Session {session_id} does not exist")
        if session.owner != user:
            raise ApiError(403, NOT_OWNER)
        return session

    # -- jobs -------------------------------------------------------------------------------
    def start_job(self, owner: str, session: Session, request: dict[str, Any]) -> Job:
        self._reserve()
        job = Job(
            str(next(self._job_ids)), owner, session, {"concreteType": CHAT_REQUEST, **request},
            self.now_ms(), asyncio.get_running_loop().time(), self.config.job_seconds, self.etag(),
        )
        self.jobs[job.id] = job
        session.pending.append(job)
        return job

    def job(self, job_id: str, user: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise ApiError(404, f"Asynchronous job {job_id} does not exist")
        if job.owner != user:
            raise ApiError(403, NOT_OWNER)
        return job

    def settle(self, session: Session, now: float) -> None:
        """Append the interactions of the session's finished jobs, each exactly once."""
        while session.pending and session.pending[0].done(now):
            job = session.pending.pop(0)
            session.history.append({
                "requestText": job.chat_text, "requestTimestamp": iso(job.started_ms),
                "responseText": answer_for(job.chat_text),
                "responseTimestamp": iso(job.started_ms + int(job.duration * 1000)),
            })

    # -- pages ------------------------------------------------------------------------------
    def _sign(self, scope: str, cursor: int) -> str:
        return hmac.new(self._key, f"{scope}|{cursor}".encode(), hashlib.sha256).hexdigest()[:32]

    def page(self, items: list[Any], scope: str, token: str | None) -> tuple[list[Any], str | None]:
        """Newest first: a page of ``items`` (oldest first, append-only) and the next page's token.

        The cursor is how many of the oldest items are still to come, so appends between pages
        neither repeat nor skip anything.
        """
        end = len(items) if token is None else self._cursor(scope, token, len(items))
        start = max(0, end - PAGE_SIZE)
        chosen = list(reversed(items[start:end]))
        return chosen, (f"{start}.{self._sign(scope, start)}" if start > 0 else None)

    def _cursor(self, scope: str, token: str, size: int) -> int:
        match = _TOKEN.match(token)
        if match is None or not hmac.compare_digest(match[2], self._sign(scope, int(match[1]))):
            raise ApiError(400, "Invalid nextPageToken")
        return min(int(match[1]), size)


def mount(api: ProtocolApi) -> None:
    store = Store(api)

    def caller(call: Call) -> str:
        if call.user is None:  # every operation is secured; kept for type safety
            raise ApiError(401, "Authentication required")
        return call.user

    def now() -> float:
        return asyncio.get_running_loop().time()

    @api.operation("createAgentSession")
    async def create_session(call: Call) -> Reply:
        user = caller(call)
        body = call.body
        session = store.create_session(user, body["agentAccessLevel"], body.get("agentRegistrationId"))
        return Reply(session.body(store.user_id(user)), status=201)

    @api.operation("getAgentSession")
    async def get_session(call: Call) -> Reply:
        user = caller(call)
        return Reply(store.session(call.path["sessionId"], user).body(store.user_id(user)))

    @api.operation("updateAgentSession")
    async def update_session(call: Call) -> Reply:
        user = caller(call)
        session_id = call.path["sessionId"]
        if call.body["sessionId"] != session_id:
            raise ApiError(400, "The sessionId of the body must match the sessionId of the path")
        session = store.session(session_id, user)
        session.access_level = call.body["agentAccessLevel"]
        session.modified_ms = store.now_ms()
        session.etag = store.etag()
        return Reply(session.body(store.user_id(user)))

    @api.operation("listAgentSessions")
    async def list_sessions(call: Call) -> Reply:
        user = caller(call)
        token = (call.body or {}).get("nextPageToken")
        sessions, next_token = store.page(store.by_owner.get(user, []), f"sessions|{user}", token)
        body: dict[str, Any] = {"page": [s.body(store.user_id(user)) for s in sessions]}
        if next_token:
            body["nextPageToken"] = next_token
        return Reply(body)

    @api.operation("getSessionHistory")
    async def get_history(call: Call) -> Reply:
        user = caller(call)
        session = store.session(call.path["sessionId"], user)
        store.settle(session, now())
        token = (call.body or {}).get("nextPageToken")
        interactions, next_token = store.page(session.history, f"history|{session.id}", token)
        body: dict[str, Any] = {"sessionId": session.id, "page": interactions}
        if next_token:
            body["nextPageToken"] = next_token
        return Reply(body)

    @api.operation("startAgentChat")
    async def start_chat(call: Call) -> Reply:
        user = caller(call)
        session = store.session(call.body["sessionId"], user)
        job = store.start_job(user, session, call.body)
        return Reply({"token": job.id}, status=201)

    @api.operation("getAgentChatResult")
    async def get_result(call: Call) -> Reply:
        job = store.job(call.path["jobId"], caller(call))
        moment = now()
        store.settle(job.session, moment)
        if job.done(moment):
            # Upstream answers 201 here; the document allows 200 and 201, and 200 is the plain one.
            return Reply({"concreteType": CHAT_RESPONSE, "sessionId": job.session.id,
                          "responseText": answer_for(job.chat_text)})
        return Reply(status_body(job, store.user_id(job.owner)), status=202)

    @api.operation("getTraceEvents")
    async def get_trace(call: Call) -> Reply:
        job_id = call.path["jobId"]
        body = call.body or {}
        if body.get("jobId") not in (None, job_id):
            raise ApiError(400, "The jobId of the body must match the jobId of the path")
        job = store.job(job_id, caller(call))
        newer_than = body.get("newerThanTimestamp")
        events = [e for e in job.trace(now()) if newer_than is None or e["timestamp"] > newer_than]
        return Reply({"jobId": job.id, "page": events})

    @api.operation("getMyOwnUserProfile")
    async def user_profile(call: Call) -> Reply:
        user = caller(call)
        return Reply({"ownerId": str(store.user_id(user)), "userName": user,
                      "displayName": user.capitalize(), "emails": [f"{user}@example.org"]})


def status_body(job: Job, user_id: int) -> dict[str, Any]:
    started = iso(job.started_ms)
    return {
        "jobState": "PROCESSING", "jobCanceling": False, "requestBody": job.request, "etag": job.etag,
        "jobId": job.id, "startedByUserId": user_id, "startedOn": started, "changedOn": started,
        "progressMessage": "Waiting for the agent", "progressCurrent": 0, "progressTotal": 100,
    }
