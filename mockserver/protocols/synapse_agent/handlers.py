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

faults.py makes the mock violate one requirement per fault, for the suite's self-tests.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from ...api import Call, Handlers, ProtocolApi, operation
from ...errors import ApiError
from ...faults import TextEdits
from ...reply import Reply
from ...store import RacyIds
from .faults import LONG_CHAT, NEWEST_SESSIONS, SESSION_READ_LAG_MS, Switches
from .models import Job, Session, iso
from .store import Store
from .stubs import Data

CHAT_RESPONSE = "org.sagebionetworks.repo.model.agent.AgentChatResponse"


def caller(call: Call) -> str:
    if call.user is None:  # every operation is secured; kept for type safety
        raise ApiError(401, "Authentication required")
    return call.user


def now() -> float:
    return asyncio.get_running_loop().time()


def stored_request(body: dict[str, Any], on: Switches) -> dict[str, Any]:
    """The chat request as the edge faults store it (the unfaulted mock keeps it verbatim)."""
    text = body.get("chatText")
    if not isinstance(text, str):
        return body
    if on.long_chat_refused and len(text) > LONG_CHAT:
        raise ApiError(400, f"chatText is longer than {LONG_CHAT} characters")  # a fair limit
    text = TextEdits(nfc=on.chat_text_nfc, trimmed=on.chat_text_trimmed, column=on.chat_text_column).apply(text)
    return {**body, "chatText": text}


class SynapseAgent(Handlers):
    """Sessions and jobs of one store; ``on`` holds the behaviour faults of this run."""

    protocol = "synapse-agent"
    data: Data

    def __init__(self, api: ProtocolApi) -> None:
        super().__init__(api)
        self.store = api.stateful(lambda: Store(api))
        self.on = Switches.of(api.faults)
        self.zone = "+00:00" if self.on.times_utc_offset else "+03:00" if self.on.times_east_offset else "Z"
        """How every date-time written names its offset (the controls' other choices than Z)."""
        self.data = Data()
        self.racy_ids = RacyIds(lambda: self.store.next_job_id())
        """syn-job-start-race's job ids: jobs started at the same moment take one."""

    def owned_session(self, call: Call, session_id: str) -> Session:
        on, store = self.on, self.store
        if on.unknown_session_crash and session_id not in store.sessions:
            raise KeyError(session_id)  # the fault: a lookup without a check, rendered as 500 instead of 404
        session = store.session(session_id, caller(call), check_owner=not on.cross_user_access)
        if on.session_read_lag and store.now_ms() - session.started_ms < SESSION_READ_LAG_MS:
            raise ApiError(404, f"Session {session_id} does not exist")  # the fault: the replica lags behind
        return session

    def owned_job(self, call: Call) -> Job:
        return self.store.job(call.path["jobId"], caller(call), check_owner=not self.on.cross_user_access)

    def check_token(self, scope: str, token: str | None) -> None:
        if self.on.foreign_page_token_400 and token is not None and not self.store.issued(scope, token):
            raise ApiError(400, f"Invalid nextPageToken: {token}")  # the fault: valid strings refused

    def settle(self, session: Session) -> None:
        on = self.on
        self.store.settle(
            session,
            now(),
            duplicate=on.history_duplicates,
            drop=on.history_drops,
            swap_times=on.history_times_swapped,
            zone=self.zone,
        )

    def view(self, session: Session) -> dict[str, Any]:
        return session.body(self.store.user_id(session.owner), local_time=self.on.started_on_local_time, zone=self.zone)

    @operation("createAgentSession")
    async def create_session(self, call: Call) -> Reply:
        user = caller(call)
        # a dict unless syn-accepts-invalid-input skipped validation: then anything goes through
        body = call.body if isinstance(call.body, dict) else {}
        session = self.store.create_session(user, body.get("agentAccessLevel", ""), body.get("agentRegistrationId"))
        return Reply(self.view(session), status=201)

    @operation("getAgentSession")
    async def get_session(self, call: Call) -> Reply:
        return Reply(self.view(self.owned_session(call, call.path["sessionId"])))

    @operation("updateAgentSession")
    async def update_session(self, call: Call) -> Reply:
        on, store = self.on, self.store
        session = self.owned_session(call, call.path["sessionId"])  # the path names it (module docstring)
        level = call.body["agentAccessLevel"]
        etag = session.etag if on.etag_unchanged else store.etag()
        if on.update_not_stored:
            answered = replace(session, access_level=level, modified_ms=store.now_ms(), etag=etag)
            return Reply(answered.body(store.user_id(session.owner)))
        session.access_level = level
        if not on.modified_on_not_updated:
            session.modified_ms = store.now_ms()
        session.etag = etag
        session.updated = True
        return Reply(self.view(session))

    @operation("listAgentSessions")
    async def list_sessions(self, call: Call) -> Reply:
        on, store = self.on, self.store
        user = caller(call)
        token = (call.body or {}).get("nextPageToken")
        if on.list_shows_others:
            mine, scope = list(store.sessions.values()), "sessions|*"
        else:
            mine, scope = store.by_owner.get(user, []), f"sessions|{user}"
        if on.list_omits_updated:  # an update re-files the session out of the user's index
            mine = [s for s in mine if not s.updated]
        if on.list_newest_20:
            mine = mine[-NEWEST_SESSIONS:]
        self.check_token(scope, token)
        sessions, next_token = store.page(mine, scope, token, repeat=on.page_token_repeats, offset=on.list_token_offset)
        if on.list_token_page_short and token is not None:
            sessions = sessions[:-1]
        if on.list_oldest_first:
            sessions.reverse()
        body: dict[str, Any] = {"page": [self.view(s) for s in sessions]}
        if on.list_level_cached:
            for item, s in zip(body["page"], sessions, strict=True):
                item["agentAccessLevel"] = s.first_level
        if next_token:
            body["nextPageToken"] = next_token
        return Reply(body)

    @operation("getSessionHistory")
    async def get_history(self, call: Call) -> Reply:
        on, store = self.on, self.store
        session = self.owned_session(call, call.path["sessionId"])
        self.settle(session)
        token = (call.body or {}).get("nextPageToken")
        self.check_token(f"history|{session.id}", token)
        history = session.history
        if on.history_by_user:  # the query filters on the owner, not the session
            history = [i for s in store.by_owner.get(session.owner, []) for i in s.history]
        if on.history_of_latest_session:  # a cache keyed by the caller, not the session
            history = next((s.history for s in reversed(store.by_owner.get(session.owner, [])) if s.history), [])
        interactions, next_token = store.page(history, f"history|{session.id}", token)
        if on.history_token_page_short and token is not None:
            interactions = interactions[:-1]
        if on.history_oldest_first:
            interactions.reverse()
        body: dict[str, Any] = {"sessionId": session.id, "page": interactions}
        if next_token:
            body["nextPageToken"] = next_token
        return Reply(body)

    @operation("startAgentChat")
    async def start_chat(self, call: Call) -> Reply:
        user = caller(call)
        session = self.owned_session(call, call.body["sessionId"])
        request = stored_request(call.body, self.on)
        stubbed = self.data.outcome(call.body["chatText"], user, session.id) if self.data.jobs else None
        job_id = await self.racy_ids.take() if self.on.job_start_race else None
        if stubbed is None:
            job = self.store.start_job(user, session, request, stall=self.on.job_never_finishes, job_id=job_id)
        else:
            job = self.store.start_job(
                user,
                session,
                request,
                self.on.job_never_finishes,
                stubbed.seconds,
                stubbed.response_text,
                stubbed.failure,
                job_id,
            )
        return Reply({"token": job.id}, status=201)

    @operation("getAgentChatResult")
    async def get_result(self, call: Call) -> Reply:
        on, store = self.on, self.store
        job = self.owned_job(call)
        moment = now()
        self.settle(job.session)
        if job.done(moment):
            if job.failure is not None:
                raise job.failure  # as the real service re-raises a failed job's error
            job.done_polls += 1
            if on.job_reverts_to_processing and job.done_polls % 2 == 0:
                return Reply(status_body(job, store.user_id(job.owner), self.zone), status=202)  # a lagging replica
            answer: dict[str, Any] = {
                "concreteType": CHAT_RESPONSE,
                "sessionId": job.session.id,
                "responseText": job.answer,
            }
            if on.job_result_consumed and job.done_polls > 1:
                del answer["responseText"]  # the result was popped from a queue by the first read
            # Upstream answers 201 here; the document allows 200 and 201, and 200 is the plain one.
            return Reply(answer)
        body = status_body(job, store.user_id(job.owner), self.zone)
        if on.first_request_of_session_202:
            first = next(j for j in store.jobs.values() if j.session is job.session)
            body["requestBody"] = first.request  # a status cache keyed by session
        return Reply(body, status=202)

    @operation("getTraceEvents")
    async def get_trace(self, call: Call) -> Reply:
        on = self.on
        job = self.owned_job(call)  # the path names it (module docstring)
        newer_than = (call.body or {}).get("newerThanTimestamp")
        events = [e for e in job.trace(now()) if newer_than is None or e["timestamp"] > newer_than]
        if on.trace_seconds:
            events = [{**e, "timestamp": e["timestamp"] // 1000} for e in events]
        if on.trace_empty:
            events = []
        if on.trace_newest_first:
            events.reverse()
        return Reply({"jobId": job.id, "page": events})

    @operation("getMyOwnUserProfile")
    async def user_profile(self, call: Call) -> Reply:
        user = caller(call)
        return Reply(
            {
                "ownerId": str(self.store.user_id(user)),
                "userName": user,
                "displayName": user.capitalize(),
                "emails": [f"{user}@example.org"],
            }
        )


def status_body(job: Job, user_id: int, zone: str = "Z") -> dict[str, Any]:
    started = iso(job.started_ms, zone)
    return {
        "jobState": "PROCESSING",
        "jobCanceling": False,
        "requestBody": job.request,
        "etag": job.etag,
        "jobId": job.id,
        "startedByUserId": user_id,
        "startedOn": started,
        "changedOn": started,
        "progressMessage": "Waiting for the agent",
        "progressCurrent": 0,
        "progressTotal": 100,
    }
