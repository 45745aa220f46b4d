"""Synapse agent chat: sessions, chat messages run as asynchronous jobs, history and trace events.

A chat job stays PROCESSING for ``config.job_seconds`` (on the event loop's clock); its outcome is
computed when somebody looks, so no background task exists. Every read that can observe a finished
job first settles its session: each finished job appends its interaction to the history exactly
once, in completion order. Sessions and histories are append-only, so page tokens are cursors into
them, signed with a per-app key so that a forged or foreign token cannot pick a page.

Leniencies, each because the document declares the field as any string and schema-valid requests
must not be rejected (the suite's SYN-SCHEMA-007 sends arbitrary strings there): a page token in
upstream's ``<limit>a<offset>`` form (the document's example ``50a50``) counts from the newest item;
any other token the server did not issue for that list names no position in it and reads as past
its end (an empty last page). The path names the session (PUT) or job (trace): a different
``sessionId``/``jobId`` in the body is ignored, the document's "must match" binding clients only.

FAULTS at the end make the mock violate one requirement each, for the suite's self-tests.
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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from ...api import Call, ProtocolApi, Reply
from ...errors import ApiError
from ...faults import Fault, fault_maker

PAGE_SIZE = 10
"""Sessions per list page and interactions per history page."""
FIRST_USER_ID = 1000
"""Users get FIRST_USER_ID + their index in config.tokens."""
FIRST_JOB_ID = 7_000_001
"""Job ids are numeric strings, as upstream's; session ids are UUIDs, as upstream's (``Store.etag``)."""
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
_UPSTREAM_TOKEN = re.compile(r"^(\d{1,12})a(\d{1,12})$")
"""Synapse's own NextPageToken form, ``<limit>a<offset>``, offset counted from the newest item."""
LOCAL_OFFSET_MS = 3 * 3_600_000
"""Under ``syn-started-on-local-time``, the server's local time (UTC+3) written with a Z."""
SESSION_READ_LAG_MS = 10_000
"""Under ``syn-session-read-lag``, how long a new session stays unreadable (replication lag)."""
STALLED_JOB_SECONDS = 1e9
"""Duration of a job under ``syn-job-never-finishes`` (finite: trace offsets stay numbers)."""
PROTOCOL = "synapse-agent"


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
    first_level: str = ""
    """The access level it was created with (what the list cache of syn-list-level-cached keeps)."""
    updated: bool = False

    def body(self, user_id: int, local_time: bool = False) -> dict[str, Any]:
        # Synapse's JSON entities leave an unset field out rather than sending null
        started = self.started_ms + LOCAL_OFFSET_MS if local_time else self.started_ms
        body = {
            "sessionId": self.id, "agentAccessLevel": self.access_level, "startedOn": iso(started),
            "startedBy": user_id, "modifiedOn": iso(self.modified_ms), "etag": self.etag,
        }
        if self.registration_id is not None:
            body["agentRegistrationId"] = self.registration_id
        return body


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
    done_polls: int = 0
    """Polls answered since the job finished (the poll-race faults count them)."""

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
        session_id = self.etag()  # a random UUID, drawn from the seeded generator
        session = Session(session_id, owner, access_level, registration_id, now, now, self.etag(),
                          first_level=access_level)
        self.sessions[session.id] = session
        self.by_owner.setdefault(owner, []).append(session)
        return session

    def session(self, session_id: str, user: str, check_owner: bool = True) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise ApiError(404, f"Session {session_id} does not exist")
        if check_owner and session.owner != user:
            raise ApiError(403, NOT_OWNER)
        return session

    # -- jobs -------------------------------------------------------------------------------
    def start_job(self, owner: str, session: Session, request: dict[str, Any], stall: bool = False) -> Job:
        self._reserve()
        duration = STALLED_JOB_SECONDS if stall else self.config.job_seconds
        job = Job(
            str(next(self._job_ids)), owner, session, {"concreteType": CHAT_REQUEST, **request},
            self.now_ms(), asyncio.get_running_loop().time(), duration, self.etag(),
        )
        self.jobs[job.id] = job
        session.pending.append(job)
        return job

    def job(self, job_id: str, user: str, check_owner: bool = True) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise ApiError(404, f"Asynchronous job {job_id} does not exist")
        if check_owner and job.owner != user:
            raise ApiError(403, NOT_OWNER)
        return job

    def settle(self, session: Session, now: float, duplicate: bool = False, drop: bool = False,
               swap_times: bool = False) -> None:
        """Append the interactions of the session's finished jobs, each exactly once.

        ``duplicate`` and ``drop`` are the history faults: each interaction twice, or only the
        latest one kept.
        """
        while session.pending and session.pending[0].done(now):
            job = session.pending.pop(0)
            interaction = {
                "requestText": job.chat_text, "requestTimestamp": iso(job.started_ms),
                "responseText": answer_for(job.chat_text),
                "responseTimestamp": iso(job.started_ms + int(job.duration * 1000)),
            }
            if swap_times:  # the fault: the two columns written in each other's place
                interaction["requestTimestamp"], interaction["responseTimestamp"] = (
                    interaction["responseTimestamp"], interaction["requestTimestamp"])
            if drop:
                session.history.clear()
            session.history.extend([interaction, dict(interaction)] if duplicate else [interaction])

    # -- pages ------------------------------------------------------------------------------
    def _sign(self, scope: str, cursor: int) -> str:
        return hmac.new(self._key, f"{scope}|{cursor}".encode(), hashlib.sha256).hexdigest()[:32]

    def page(
        self, items: list[Any], scope: str, token: str | None, repeat: bool = False
    ) -> tuple[list[Any], str | None]:
        """Newest first: a page of ``items`` (oldest first, append-only) and the next page's token.

        The cursor is how many of the oldest items are still to come, so appends between pages
        neither repeat nor skip anything. ``repeat`` is the broken-pagination fault: the token
        names the page just served.
        """
        end, limit = (len(items), PAGE_SIZE) if token is None else self._cursor(scope, token, len(items))
        start = max(0, end - limit)
        chosen = list(reversed(items[start:end]))
        cursor = end if repeat else start
        return chosen, (f"{cursor}.{self._sign(scope, cursor)}" if start > 0 else None)

    def issued(self, scope: str, token: str) -> bool:
        """Whether ``token`` is one this server handed out for the list ``scope``."""
        match = _TOKEN.match(token)
        return match is not None and hmac.compare_digest(match[2], self._sign(scope, int(match[1])))

    def _cursor(self, scope: str, token: str, size: int) -> tuple[int, int]:
        """(end, limit) of the page a token names; a token naming no position reads as the end."""
        upstream = _UPSTREAM_TOKEN.match(token)
        if upstream is not None:
            limit, offset = (int(g) for g in upstream.groups())
            return max(0, size - offset), min(limit, PAGE_SIZE)
        match = _TOKEN.match(token)
        if match is None or not hmac.compare_digest(match[2], self._sign(scope, int(match[1]))):
            return 0, PAGE_SIZE
        return min(int(match[1]), size), PAGE_SIZE


def mount(api: ProtocolApi) -> None:
    store = api.stateful(lambda: Store(api))

    def caller(call: Call) -> str:
        if call.user is None:  # every operation is secured; kept for type safety
            raise ApiError(401, "Authentication required")
        return call.user

    def now() -> float:
        return asyncio.get_running_loop().time()

    def owned_session(call: Call, session_id: str) -> Session:
        if call.fault("syn-unknown-session-crash") and session_id not in store.sessions:
            raise KeyError(session_id)  # the fault: a lookup without a check, rendered as 500 instead of 404
        session = store.session(session_id, caller(call), check_owner=not call.fault("syn-cross-user-access"))
        if call.fault("syn-session-read-lag") and store.now_ms() - session.started_ms < SESSION_READ_LAG_MS:
            raise ApiError(404, f"Session {session_id} does not exist")  # the fault: the replica lags behind
        return session

    def owned_job(call: Call) -> Job:
        return store.job(call.path["jobId"], caller(call), check_owner=not call.fault("syn-cross-user-access"))

    def check_token(call: Call, scope: str, token: str | None) -> None:
        if call.fault("syn-foreign-page-token-400") and token is not None and not store.issued(scope, token):
            raise ApiError(400, f"Invalid nextPageToken: {token}")  # the fault: valid strings refused

    def settle(call: Call, session: Session) -> None:
        store.settle(session, now(), duplicate=call.fault("syn-history-duplicates"),
                     drop=call.fault("syn-history-drops"), swap_times=call.fault("syn-history-times-swapped"))

    @api.operation("createAgentSession")
    async def create_session(call: Call) -> Reply:
        user = caller(call)
        # a dict unless syn-accepts-invalid-input skipped validation: then anything goes through
        body = call.body if isinstance(call.body, dict) else {}
        session = store.create_session(user, body.get("agentAccessLevel", ""), body.get("agentRegistrationId"))
        return Reply(view(call, session), status=201)

    def view(call: Call, session: Session) -> dict[str, Any]:
        return session.body(store.user_id(session.owner), local_time=call.fault("syn-started-on-local-time"))

    @api.operation("getAgentSession")
    async def get_session(call: Call) -> Reply:
        session = owned_session(call, call.path["sessionId"])
        return Reply(view(call, session))

    @api.operation("updateAgentSession")
    async def update_session(call: Call) -> Reply:
        session = owned_session(call, call.path["sessionId"])  # the path names it (module docstring)
        level = call.body["agentAccessLevel"]
        etag = session.etag if call.fault("syn-etag-unchanged") else store.etag()
        if call.fault("syn-update-not-stored"):
            answered = replace(session, access_level=level, modified_ms=store.now_ms(), etag=etag)
            return Reply(answered.body(store.user_id(session.owner)))
        session.access_level = level
        if not call.fault("syn-modified-on-not-updated"):
            session.modified_ms = store.now_ms()
        session.etag = etag
        session.updated = True
        return Reply(view(call, session))

    @api.operation("listAgentSessions")
    async def list_sessions(call: Call) -> Reply:
        user = caller(call)
        token = (call.body or {}).get("nextPageToken")
        if call.fault("syn-list-shows-others"):
            mine, scope = list(store.sessions.values()), "sessions|*"
        else:
            mine, scope = store.by_owner.get(user, []), f"sessions|{user}"
        if call.fault("syn-list-omits-updated"):  # an update re-files the session out of the user's index
            mine = [s for s in mine if not s.updated]
        check_token(call, scope, token)
        sessions, next_token = store.page(mine, scope, token, repeat=call.fault("syn-page-token-repeats"))
        if call.fault("syn-list-oldest-first"):
            sessions.reverse()
        body: dict[str, Any] = {"page": [view(call, s) for s in sessions]}
        if call.fault("syn-list-level-cached"):
            for item, s in zip(body["page"], sessions, strict=True):
                item["agentAccessLevel"] = s.first_level
        if next_token:
            body["nextPageToken"] = next_token
        return Reply(body)

    @api.operation("getSessionHistory")
    async def get_history(call: Call) -> Reply:
        session = owned_session(call, call.path["sessionId"])
        settle(call, session)
        token = (call.body or {}).get("nextPageToken")
        check_token(call, f"history|{session.id}", token)
        history = session.history
        if call.fault("syn-history-by-user"):  # the query filters on the owner, not the session
            history = [i for s in store.by_owner.get(session.owner, []) for i in s.history]
        interactions, next_token = store.page(history, f"history|{session.id}", token)
        if call.fault("syn-history-oldest-first"):
            interactions.reverse()
        body: dict[str, Any] = {"sessionId": session.id, "page": interactions}
        if next_token:
            body["nextPageToken"] = next_token
        return Reply(body)

    @api.operation("startAgentChat")
    async def start_chat(call: Call) -> Reply:
        user = caller(call)
        session = owned_session(call, call.body["sessionId"])
        job = store.start_job(user, session, call.body, stall=call.fault("syn-job-never-finishes"))
        return Reply({"token": job.id}, status=201)

    @api.operation("getAgentChatResult")
    async def get_result(call: Call) -> Reply:
        job = owned_job(call)
        moment = now()
        settle(call, job.session)
        if job.done(moment):
            job.done_polls += 1
            if call.fault("syn-job-reverts-to-processing") and job.done_polls % 2 == 0:
                return Reply(status_body(job, store.user_id(job.owner)), status=202)  # a lagging replica
            answer: dict[str, Any] = {"concreteType": CHAT_RESPONSE, "sessionId": job.session.id,
                                      "responseText": answer_for(job.chat_text)}
            if call.fault("syn-job-result-consumed") and job.done_polls > 1:
                del answer["responseText"]  # the result was popped from a queue by the first read
            # Upstream answers 201 here; the document allows 200 and 201, and 200 is the plain one.
            return Reply(answer)
        body = status_body(job, store.user_id(job.owner))
        if call.fault("syn-202-first-request-of-session"):
            first = next(j for j in store.jobs.values() if j.session is job.session)
            body["requestBody"] = first.request  # a status cache keyed by session
        return Reply(body, status=202)

    @api.operation("getTraceEvents")
    async def get_trace(call: Call) -> Reply:
        job = owned_job(call)  # the path names it (module docstring)
        newer_than = (call.body or {}).get("newerThanTimestamp")
        events = [e for e in job.trace(now()) if newer_than is None or e["timestamp"] > newer_than]
        if call.fault("syn-trace-seconds"):
            events = [{**e, "timestamp": e["timestamp"] // 1000} for e in events]
        if call.fault("syn-trace-empty"):
            events = []
        if call.fault("syn-trace-newest-first"):
            events.reverse()
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


# -- faults ------------------------------------------------------------------------------------
# Edits of one operation's answer (a ``Reply``: body, status, headers, content_type).

def _drop_session_id(reply: Any) -> None:
    if reply.status == 201:
        reply.body.pop("sessionId", None)


def _lowercase_level(reply: Any) -> None:
    if reply.status == 201 and isinstance(reply.body.get("agentAccessLevel"), str):
        reply.body["agentAccessLevel"] = reply.body["agentAccessLevel"].lower()


def _created_200(reply: Any) -> None:
    if reply.status == 201:
        reply.status = 200


def _message_error(reply: Any) -> None:
    if reply.status >= 400:
        reply.body = {"message": reply.body.get("reason")}


def _no_challenge(reply: Any) -> None:
    if reply.status == 401:
        reply.headers.pop("WWW-Authenticate", None)


def _integer_token(reply: Any) -> None:
    if reply.status == 201:
        reply.body["token"] = int(reply.body["token"])


def _running_state(reply: Any) -> None:
    if reply.status == 202:
        reply.body["jobState"] = "RUNNING"


def _text_plain(reply: Any) -> None:
    reply.content_type = "text/plain"


_fault = fault_maker(PROTOCOL)


FAULTS: tuple[Fault, ...] = (
    # sessions: missing field, wrong enum, wrong status, lost update, stale etag
    _fault("syn-session-missing-id", ("SYN-SESS-001", "SYN-SCHEMA-005"),
           "createAgentSession answers without the required sessionId", operation="createAgentSession",
           mutate=_drop_session_id),
    _fault("syn-access-level-wrong-enum", ("SYN-SESS-001", "SYN-SCHEMA-005"),
           "createAgentSession spells agentAccessLevel in lower case, not a value of the enum",
           operation="createAgentSession", mutate=_lowercase_level),
    _fault("syn-create-answers-200", ("SYN-SESS-001", "SYN-SCHEMA-002"),
           "createAgentSession answers 200 instead of the documented 201", operation="createAgentSession",
           mutate=_created_200),
    # reads then return the etag of a session that did not change
    _fault("syn-update-not-stored", ("SYN-SESS-002", "SYN-SESS-003"),
           "updateAgentSession answers the new access level but does not keep it"),
    _fault("syn-etag-unchanged", ("SYN-SESS-003",), "updateAgentSession keeps the old etag"),
    # lists: broken pagination, wrong order, other users' data
    _fault("syn-page-token-repeats", ("SYN-PAGE-001",),
           "listAgentSessions hands out a nextPageToken that names the page just served"),
    _fault("syn-list-oldest-first", ("SYN-PAGE-002",), "listAgentSessions sorts each page oldest first"),
    _fault("syn-list-shows-others", ("SYN-OWN-003",), "listAgentSessions lists every user's sessions"),
    # history: duplicated or lost interactions, wrong order, wrong content type
    _fault("syn-history-duplicates", ("SYN-HIST-001",), "each finished chat enters the history twice"),
    _fault("syn-history-drops", ("SYN-HIST-001",), "the history keeps only the latest interaction"),
    _fault("syn-history-oldest-first", ("SYN-HIST-002",), "getSessionHistory sorts its page oldest first"),
    # a label, not the history's content: only the content-type requirement's subject
    _fault("syn-history-text-plain", ("SYN-SCHEMA-003",),
           "getSessionHistory labels its JSON text/plain", operation="getSessionHistory", mutate=_text_plain),
    # jobs: wrong type, wrong enum, a job that never finishes
    _fault("syn-job-token-integer", ("SYN-JOB-001", "SYN-SCHEMA-005"),
           "startAgentChat answers the job token as a JSON number", operation="startAgentChat",
           mutate=_integer_token),
    _fault("syn-job-never-finishes", ("SYN-JOB-002",), "chat jobs stay PROCESSING forever", hangs=True),
    # (only the scenario is sure to poll a running job: the schema phase rarely sees a 202)
    _fault("syn-job-state-running", ("SYN-JOB-003",),
           "a running job's 202 status says jobState RUNNING, not a value of the enum",
           operation="getAgentChatResult", mutate=_running_state),
    # trace
    _fault("syn-trace-empty", ("SYN-TRACE-001",), "a job started with enableTrace has no trace events"),
    _fault("syn-trace-newest-first", ("SYN-TRACE-002",), "trace events come newest first"),
    # errors, input validation, auth, ownership
    _fault("syn-error-body-message",
           ("SYN-ERR-001", "SYN-AUTH-001", "SYN-AUTH-002", "SYN-OWN-001", "SYN-SCHEMA-005"),
           "getAgentSession errors are {message} instead of an ErrorResponse {reason}",
           operation="getAgentSession", mutate=_message_error),
    # what it accepted it answers back: sessions off their schema
    _fault("syn-accepts-invalid-input", ("SYN-ERR-002", "SYN-SCHEMA-006", "SYN-SCHEMA-005"),
           "createAgentSession accepts bodies the document forbids (unknown or missing agentAccessLevel)",
           operation="createAgentSession", skip_validation=True),
    _fault("syn-unknown-session-crash", ("SYN-SCHEMA-001", "SYN-SCHEMA-002", "SYN-ERR-001"),
           "an unknown sessionId is looked up without a check: the KeyError answers 500, not 404"),
    _fault("syn-foreign-page-token-400", ("SYN-SCHEMA-007",),
           "a nextPageToken the server did not issue (any string, as the document allows) is refused 400 "
           "instead of reading as past the end of the list"),
    # Not SYN-SCHEMA-008: schemathesis never reads back a session it created, so that requirement is
    # not registered for Synapse (conformance/applicability.py); the SESS scenarios catch this.
    # every requirement that uses a session right after creating it: its read, update, history,
    # a chat in it, and an invalid update's "changes nothing" read
    _fault("syn-session-read-lag",
           ("SYN-SESS-001", "SYN-SESS-002", "SYN-HIST-001", "SYN-JOB-001", "SYN-ERR-002"),
           f"sessions are read from a replica that lags {SESSION_READ_LAG_MS // 1000} s behind: a session just "
           "created answers 404 (get, update, history, chat)"),
    # wrong facts behind the right shapes (the model-based phase, conformance/protocols/synapse_agent/model.py)
    _fault("syn-list-level-cached", ("SYN-MODEL-001",),
           "the sessions list shows each session's access level as created: an update never reaches it"),
    _fault("syn-modified-on-not-updated", ("SYN-MODEL-001",), "an update leaves modifiedOn at startedOn"),
    _fault("syn-list-omits-updated", ("SYN-MODEL-002",),
           "an update re-files the session out of the user's list index: updated sessions are never listed"),
    _fault("syn-started-on-local-time", ("SYN-MODEL-003",),
           "startedOn is the server's local time (UTC+3) written with a Z: three hours in the future"),
    _fault("syn-trace-seconds", ("SYN-MODEL-003",),
           "trace event timestamps are seconds since the epoch where the document says milliseconds"),
    _fault("syn-job-result-consumed", ("SYN-MODEL-004",),
           "a finished job's result is popped by the first read: later polls answer it without responseText"),
    _fault("syn-job-reverts-to-processing", ("SYN-MODEL-004",),
           "every second poll of a finished job answers 202 PROCESSING again (a lagging replica)"),
    _fault("syn-202-first-request-of-session", ("SYN-MODEL-004",),
           "a running job's 202 shows the requestBody of its session's first job (a status cache keyed by session)"),
    _fault("syn-history-times-swapped", ("SYN-MODEL-005",),
           "each interaction's requestTimestamp and responseTimestamp are written in each other's place"),
    # a new session's history is not empty: SYN-HIST-001's subject too
    _fault("syn-history-by-user", ("SYN-MODEL-005", "SYN-HIST-001"),
           "a session's history lists the interactions of every session of its owner"),
    _fault("syn-401-without-challenge", ("SYN-AUTH-003",),
           "createAgentSession answers 401 without a WWW-Authenticate challenge",
           operation="createAgentSession", mutate=_no_challenge),
    # with every caller the first user, another user's data is served to them too
    _fault("syn-no-auth",
           ("SYN-AUTH-001", "SYN-AUTH-002", "SYN-SCHEMA-010", "SYN-OWN-001", "SYN-OWN-002", "SYN-OWN-003"),
           "no operation checks the bearer token (every caller is the first user)", disables_auth=True),
    _fault("syn-cross-user-access", ("SYN-OWN-001", "SYN-OWN-002"),
           "any authenticated user may read and use another user's sessions and jobs"),
)
