"""Synapse agent chat's store: one app's sessions and jobs, and the signed cursors that page them."""

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
from typing import Any

from ...api import ProtocolApi
from ...errors import ApiError
from ...store import Capacity
from .models import CHAT_REQUEST, Job, Session, iso

PAGE_SIZE = 10
"""Sessions per list page and interactions per history page."""
FIRST_USER_ID = 1000
"""Users get FIRST_USER_ID + their index in config.tokens."""
FIRST_JOB_ID = 7_000_001
"""Job ids are numeric strings, as upstream's; session ids are UUIDs, as upstream's (``Store.etag``)."""
NOT_OWNER = "Only the user that started a session may access it"
_TOKEN = re.compile(r"^(\d{1,12})\.([0-9a-f]{32})$")
_UPSTREAM_TOKEN = re.compile(r"^(\d{1,12})a(\d{1,12})$")
"""Synapse's own NextPageToken form, ``<limit>a<offset>``, offset counted from the newest item."""
STALLED_JOB_SECONDS = 1e9
"""Duration of a job under ``syn-job-never-finishes`` (finite: trace offsets stay numbers)."""


class Store:
    def __init__(self, api: ProtocolApi) -> None:
        self.config = api.config
        self.capacity = Capacity(api.config.limits)
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
        self.capacity.reserve(1)  # sessions and jobs are never removed

    # -- sessions ---------------------------------------------------------------------------
    def create_session(self, owner: str, access_level: str, registration_id: str | None) -> Session:
        self._reserve()
        now = self.now_ms()
        session_id = self.etag()  # a random UUID, drawn from the seeded generator
        session = Session(
            session_id, owner, access_level, registration_id, now, now, self.etag(), first_level=access_level
        )
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
    def start_job(
        self,
        owner: str,
        session: Session,
        request: dict[str, Any],
        stall: bool = False,
        seconds: float | None = None,
        response: str | None = None,
        failure: ApiError | None = None,
        job_id: str | None = None,
    ) -> Job:
        """A chat job; ``seconds``, ``response`` and ``failure`` are what a data stub decides; ``job_id``
        given (syn-job-start-race), a job that had it is replaced."""
        self._reserve()
        duration = STALLED_JOB_SECONDS if stall else seconds if seconds is not None else self.config.job_seconds
        job = Job(
            job_id or self.next_job_id(),
            owner,
            session,
            {"concreteType": CHAT_REQUEST, **request},
            self.now_ms(),
            asyncio.get_running_loop().time(),
            duration,
            self.etag(),
            response=response,
            failure=failure,
        )
        self.jobs[job.id] = job
        session.pending.append(job)
        return job

    def next_job_id(self) -> str:
        return str(next(self._job_ids))

    def job(self, job_id: str, user: str, check_owner: bool = True) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise ApiError(404, f"Asynchronous job {job_id} does not exist")
        if check_owner and job.owner != user:
            raise ApiError(403, NOT_OWNER)
        return job

    def settle(
        self,
        session: Session,
        now: float,
        duplicate: bool = False,
        drop: bool = False,
        swap_times: bool = False,
        zone: str = "Z",
    ) -> None:
        """Append the interactions of the session's finished jobs, each exactly once.

        ``duplicate`` and ``drop`` are the history faults: each interaction twice, or only the
        latest one kept.
        """
        finished = [job for job in session.pending if job.done(now)]
        if not finished:
            return
        # in completion order: a job a data stub made quicker may finish before an earlier one
        finished.sort(key=lambda job: job.started_at + job.duration)
        session.pending = [job for job in session.pending if not job.done(now)]
        for job in finished:
            if job.failure is not None:
                continue  # a failed job answered no question
            interaction = {
                "requestText": job.chat_text,
                "requestTimestamp": iso(job.started_ms, zone),
                "responseText": job.answer,
                "responseTimestamp": iso(job.started_ms + int(job.duration * 1000), zone),
            }
            if swap_times:  # the fault: the two columns written in each other's place
                interaction["requestTimestamp"], interaction["responseTimestamp"] = (
                    interaction["responseTimestamp"],
                    interaction["requestTimestamp"],
                )
            if drop:
                session.history.clear()
            session.history.extend([interaction, dict(interaction)] if duplicate else [interaction])

    # -- pages ------------------------------------------------------------------------------
    def _sign(self, scope: str, cursor: int) -> str:
        return hmac.new(self._key, f"{scope}|{cursor}".encode(), hashlib.sha256).hexdigest()[:32]

    def page(
        self, items: list[Any], scope: str, token: str | None, repeat: bool = False, offset: bool = False
    ) -> tuple[list[Any], str | None]:
        """Newest first: a page of ``items`` (oldest first, append-only) and the next page's token.

        The cursor is how many of the oldest items are still to come, so appends between pages
        neither repeat nor skip anything. ``repeat`` is the broken-pagination fault: the token
        names the page just served. ``offset``: upstream's ``<limit>a<offset>`` token instead,
        the offset counted from the newest item, so an item added between pages shifts the next
        page by one (its first item is the last one served again).
        """
        end, limit = (len(items), PAGE_SIZE) if token is None else self._cursor(scope, token, len(items))
        start = max(0, end - limit)
        chosen = list(reversed(items[start:end]))
        if start <= 0:
            return chosen, None
        if offset:
            return chosen, f"{PAGE_SIZE}a{len(items) - (end if repeat else start)}"
        cursor = end if repeat else start
        return chosen, f"{cursor}.{self._sign(scope, cursor)}"

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
