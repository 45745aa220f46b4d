"""Synapse agent chat's domain: sessions, chat jobs and their trace events (see handlers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...errors import ApiError

CHAT_REQUEST = "org.sagebionetworks.repo.model.agent.AgentChatRequest"
TRACE_STEPS = (
    (0.0, "Received the request: {text}"),
    (0.5, "Searching Synapse for: {text}"),
    (1.0, "Composed the answer."),
)
"""Trace events of a traced job: (fraction of the job's duration, message)."""
LOCAL_OFFSET_MS = 3 * 3_600_000
"""Under ``syn-started-on-local-time``, the server's local time (UTC+3) written with a Z."""


ZONES = {"Z": 0, "+00:00": 0, "+03:00": 3 * 3_600_000}
"""How a date-time may name its offset (the controls syn-times-utc-offset and syn-times-east-offset
write the others than Z), and the wall clock's lead on UTC under each."""


def iso(ms: int, zone: str = "Z") -> str:
    ms += ZONES[zone]
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}{zone}"


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

    def body(self, user_id: int, local_time: bool = False, zone: str = "Z") -> dict[str, Any]:
        # Synapse's JSON entities leave an unset field out rather than sending null
        started = self.started_ms + LOCAL_OFFSET_MS if local_time else self.started_ms
        body = {
            "sessionId": self.id,
            "agentAccessLevel": self.access_level,
            "startedOn": iso(started, zone),
            "startedBy": user_id,
            "modifiedOn": iso(self.modified_ms, zone),
            "etag": self.etag,
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
    response: str | None = None
    """The answer a data stub gives (stubs.py); None: ``answer_for`` its chat text."""
    failure: ApiError | None = None
    """The error a data stub makes the job end with: its poll answers it once the job is done."""

    @property
    def answer(self) -> str:
        return self.response if self.response is not None else answer_for(self.chat_text)

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
