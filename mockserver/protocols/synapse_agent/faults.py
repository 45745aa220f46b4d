"""Synapse agent chat's named faults: each breaks the named SYN-* requirements in one realistic way.

Edits of one operation's answer (a ``Reply``: body, status, headers, content_type), and the
behaviours the handlers switch on (``Switches``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ...faults import TEXT_COLUMN_BYTES, Fault, fault_maker, wire_controls
from ...faults import Switches as _Switches
from ...reply import Reply
from .faults_across import ACROSS

PROTOCOL = "synapse-agent"
SESSION_READ_LAG_MS = 10_000
"""Under ``syn-session-read-lag``, how long a new session stays unreadable (replication lag)."""


NEWEST_SESSIONS = 20
"""Sessions the list keeps under syn-list-newest-20."""
LONG_CHAT = 60000
"""Characters of chatText the control syn-long-chat-refused accepts."""


@dataclass(frozen=True, slots=True)
class Switches(_Switches):
    """The behaviour faults the handlers switch on (the rest edit answers: ``mutate``)."""

    prefix: ClassVar[str] = "syn"
    job_start_race: bool = False
    cross_user_access: bool = False
    etag_unchanged: bool = False
    first_request_of_session_202: bool = field(default=False, metadata={"fault": "syn-202-first-request-of-session"})
    foreign_page_token_400: bool = False
    history_by_user: bool = False
    history_drops: bool = False
    history_duplicates: bool = False
    history_oldest_first: bool = False
    history_times_swapped: bool = False
    job_never_finishes: bool = False
    job_result_consumed: bool = False
    job_reverts_to_processing: bool = False
    list_level_cached: bool = False
    list_oldest_first: bool = False
    list_omits_updated: bool = False
    list_shows_others: bool = False
    modified_on_not_updated: bool = False
    page_token_repeats: bool = False
    session_read_lag: bool = False
    started_on_local_time: bool = False
    trace_empty: bool = False
    trace_newest_first: bool = False
    trace_seconds: bool = False
    unknown_session_crash: bool = False
    update_not_stored: bool = False
    # the edge corpus (conformance/check/edges.py) and lists of any length and page
    chat_text_nfc: bool = False
    chat_text_trimmed: bool = False
    chat_text_column: bool = False
    history_token_page_short: bool = False
    list_token_page_short: bool = False
    list_newest_20: bool = False
    history_of_latest_session: bool = False
    # passing controls: what the document lets a server do with those edges
    long_chat_refused: bool = False
    # facts across calls (faults_across.py)
    list_token_offset: bool = False
    times_utc_offset: bool = False
    times_east_offset: bool = False


# Edits of one operation's answer (a ``Reply``: body, status, headers, content_type).


def _drop_session_id(reply: Reply) -> None:
    if reply.status == 201:
        reply.body.pop("sessionId", None)


def _lowercase_level(reply: Reply) -> None:
    if reply.status == 201 and isinstance(reply.body.get("agentAccessLevel"), str):
        reply.body["agentAccessLevel"] = reply.body["agentAccessLevel"].lower()


def _created_200(reply: Reply) -> None:
    if reply.status == 201:
        reply.status = 200


def _message_error(reply: Reply) -> None:
    if reply.status >= 400:
        reply.body = {"message": reply.body.get("reason")}


def _no_challenge(reply: Reply) -> None:
    if reply.status == 401:
        reply.headers.pop("WWW-Authenticate", None)


def _integer_token(reply: Reply) -> None:
    if reply.status == 201:
        reply.body["token"] = int(reply.body["token"])


def _running_state(reply: Reply) -> None:
    if reply.status == 202:
        reply.body["jobState"] = "RUNNING"


def _text_plain(reply: Reply) -> None:
    reply.content_type = "text/plain"


def _trace_time_renamed(reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict):
        for event in reply.body.get("page") or ():
            event["time"] = event.pop("timestamp", None)


_fault = fault_maker(PROTOCOL)


FAULTS: tuple[Fault, ...] = (
    # sessions: missing field, wrong enum, wrong status, lost update, stale etag
    _fault(
        "syn-session-missing-id",
        ("SYN-SESS-001", "SYN-SCHEMA-005"),
        "createAgentSession answers without the required sessionId",
        operation="createAgentSession",
        mutate=_drop_session_id,
    ),
    _fault(
        "syn-access-level-wrong-enum",
        ("SYN-SESS-001", "SYN-SCHEMA-005"),
        "createAgentSession spells agentAccessLevel in lower case, not a value of the enum",
        operation="createAgentSession",
        mutate=_lowercase_level,
    ),
    _fault(
        "syn-create-answers-200",
        ("SYN-SESS-001", "SYN-SCHEMA-002"),
        "createAgentSession answers 200 instead of the documented 201",
        operation="createAgentSession",
        mutate=_created_200,
    ),
    # reads then return the etag of a session that did not change
    _fault(
        "syn-update-not-stored",
        ("SYN-SESS-002", "SYN-SESS-003", "SYN-MODEL-001"),
        "updateAgentSession answers the new access level but does not keep it",
        operation="updateAgentSession",
    ),
    _fault("syn-etag-unchanged", ("SYN-SESS-003", "SYN-MODEL-001"), "updateAgentSession keeps the old etag"),
    # lists: broken pagination, wrong order, other users' data
    _fault(
        "syn-page-token-repeats",
        ("SYN-PAGE-001",),
        "listAgentSessions hands out a nextPageToken that names the page just served",
        operation="listAgentSessions",
    ),
    _fault(
        "syn-list-oldest-first",
        ("SYN-PAGE-002", "SYN-MODEL-002"),
        "listAgentSessions sorts each page oldest first",
        operation="listAgentSessions",
    ),
    _fault("syn-list-shows-others", ("SYN-OWN-003",), "listAgentSessions lists every user's sessions"),
    # history: duplicated or lost interactions, wrong order, wrong content type
    _fault("syn-history-duplicates", ("SYN-HIST-001", "SYN-MODEL-005"), "each finished chat enters the history twice"),
    _fault("syn-history-drops", ("SYN-HIST-001", "SYN-MODEL-005"), "the history keeps only the latest interaction"),
    _fault(
        "syn-history-oldest-first", ("SYN-HIST-002", "SYN-MODEL-005"), "getSessionHistory sorts its page oldest first"
    ),
    # a label, not the history's content: only the content-type requirement's subject
    _fault(
        "syn-history-text-plain",
        ("SYN-SCHEMA-003",),
        "getSessionHistory labels its JSON text/plain",
        operation="getSessionHistory",
        mutate=_text_plain,
    ),
    # jobs: wrong type, wrong enum, a job that never finishes
    _fault(
        "syn-job-token-integer",
        ("SYN-JOB-001", "SYN-SCHEMA-005"),
        "startAgentChat answers the job token as a JSON number",
        operation="startAgentChat",
        mutate=_integer_token,
    ),
    _fault("syn-job-never-finishes", ("SYN-JOB-002",), "chat jobs stay PROCESSING forever", hangs=True),
    # (only the scenario is sure to poll a running job: the schema phase rarely sees a 202)
    _fault(
        "syn-job-state-running",
        ("SYN-JOB-003", "SYN-MODEL-004"),
        "a running job's 202 status says jobState RUNNING, not a value of the enum",
        operation="getAgentChatResult",
        mutate=_running_state,
    ),
    # trace
    _fault("syn-trace-empty", ("SYN-TRACE-001",), "a job started with enableTrace has no trace events"),
    _fault("syn-trace-newest-first", ("SYN-TRACE-002",), "trace events come newest first"),
    # errors, input validation, auth, ownership
    _fault(
        "syn-error-body-message",
        ("SYN-ERR-001", "SYN-AUTH-001", "SYN-AUTH-002", "SYN-OWN-001", "SYN-SCHEMA-005"),
        "getAgentSession errors are {message} instead of an ErrorResponse {reason}",
        operation="getAgentSession",
        mutate=_message_error,
    ),
    # what it accepted it answers back: sessions off their schema
    _fault(
        "syn-accepts-invalid-input",
        ("SYN-ERR-002", "SYN-SCHEMA-006", "SYN-SCHEMA-005"),
        "createAgentSession accepts bodies the document forbids (unknown or missing agentAccessLevel)",
        operation="createAgentSession",
        skip_validation=True,
    ),
    _fault(
        "syn-unknown-session-crash",
        ("SYN-SCHEMA-001", "SYN-SCHEMA-002", "SYN-ERR-001"),
        "an unknown sessionId is looked up without a check: the KeyError answers 500, not 404",
    ),
    _fault(
        "syn-foreign-page-token-400",
        ("SYN-SCHEMA-007",),
        "a nextPageToken the server did not issue (any string, as the document allows) is refused 400 "
        "instead of reading as past the end of the list",
    ),
    # Not SYN-SCHEMA-008: schemathesis never reads back a session it created, so that requirement is
    # not registered for Synapse (conformance/run/applicability.py); the SESS scenarios catch this.
    # every requirement that uses a session right after creating it: its read, update, history,
    # a chat in it, and an invalid update's "changes nothing" read
    _fault(
        "syn-session-read-lag",
        ("SYN-SESS-001", "SYN-SESS-002", "SYN-HIST-001", "SYN-JOB-001", "SYN-ERR-002"),
        f"sessions are read from a replica that lags {SESSION_READ_LAG_MS // 1000} s behind: a session just "
        "created answers 404 (get, update, history, chat)",
    ),
    # wrong facts behind the right shapes (the model-based phase, conformance/protocols/synapse_agent/model.py)
    _fault(
        "syn-list-level-cached",
        ("SYN-MODEL-001",),
        "the sessions list shows each session's access level as created: an update never reaches it",
    ),
    _fault("syn-modified-on-not-updated", ("SYN-MODEL-001",), "an update leaves modifiedOn at startedOn"),
    _fault(
        "syn-list-omits-updated",
        ("SYN-MODEL-002",),
        "an update re-files the session out of the user's list index: updated sessions are never listed",
        operation="listAgentSessions",
        touches=("updateAgentSession",),
    ),
    _fault(
        "syn-started-on-local-time",
        ("SYN-MODEL-003",),
        "startedOn is the server's local time (UTC+3) written with a Z: three hours in the future",
    ),
    _fault(
        "syn-trace-seconds",
        ("SYN-MODEL-003", "SYN-TRACE-002"),
        "trace event timestamps are seconds since the epoch where the document says milliseconds",
    ),
    _fault(
        "syn-job-result-consumed",
        ("SYN-MODEL-004",),
        "a finished job's result is popped by the first read: later polls answer it without responseText",
    ),
    _fault(
        "syn-job-reverts-to-processing",
        ("SYN-MODEL-004",),
        "every second poll of a finished job answers 202 PROCESSING again (a lagging replica)",
    ),
    _fault(
        "syn-202-first-request-of-session",
        ("SYN-MODEL-004",),
        "a running job's 202 shows the requestBody of its session's first job (a status cache keyed by session)",
    ),
    _fault(
        "syn-history-times-swapped",
        ("SYN-MODEL-005",),
        "each interaction's requestTimestamp and responseTimestamp are written in each other's place",
    ),
    # a new session's history is not empty: SYN-HIST-001's subject too
    _fault(
        "syn-history-by-user",
        ("SYN-MODEL-005", "SYN-HIST-001"),
        "a session's history lists the interactions of every session of its owner",
    ),
    _fault(
        "syn-401-without-challenge",
        ("SYN-AUTH-003",),
        "createAgentSession answers 401 without a WWW-Authenticate challenge",
        operation="createAgentSession",
        mutate=_no_challenge,
    ),
    # with every caller the first user, another user's data is served to them too
    _fault(
        "syn-no-auth",
        ("SYN-AUTH-001", "SYN-AUTH-002", "SYN-SCHEMA-010", "SYN-OWN-001", "SYN-OWN-002", "SYN-OWN-003"),
        "no operation checks the bearer token (every caller is the first user)",
        disables_auth=True,
    ),
    _fault(
        "syn-cross-user-access",
        ("SYN-OWN-001", "SYN-OWN-002"),
        "any authenticated user may read and use another user's sessions and jobs",
    ),
    # the edge corpus (conformance/check/edges.py), fed to the history round trip each run
    _fault(
        "syn-chat-text-nfc", ("SYN-HIST-001",), "chatText is stored normalised to NFC: combining marks are composed"
    ),
    _fault("syn-chat-text-trimmed", ("SYN-HIST-001",), "chatText is stored with the whitespace at its ends trimmed"),
    _fault(
        "syn-chat-text-column",
        ("SYN-HIST-001",),
        f"chatText is stored cut to {TEXT_COLUMN_BYTES} bytes of UTF-8 (a TEXT column), silently",
    ),
    # lists of any length and page
    _fault(
        "syn-history-token-page-short",
        ("SYN-HIST-001",),
        "a history page reached by a nextPageToken lacks its last interaction (an off-by-one in the cursor)",
    ),
    _fault(
        "syn-list-token-page-short",
        ("SYN-PAGE-001", "SYN-MODEL-002"),
        "a sessions page reached by a nextPageToken lacks its last session (an off-by-one in the cursor)",
    ),
    _fault(
        "syn-list-newest-20",
        ("SYN-PAGE-001", "SYN-MODEL-002"),
        f"the sessions list holds only the caller's {NEWEST_SESSIONS} newest sessions: older ones drop off it",
    ),
    _fault(
        "syn-history-of-latest-session",
        ("SYN-HIST-001", "SYN-MODEL-005"),
        "getSessionHistory answers the history of the caller's latest session that has one, whatever the id",
    ),
    _fault(
        "syn-long-chat-refused",
        (),
        f"control: a chatText over {LONG_CHAT} characters is refused at the start with 400 and a reason",
        control=True,
    ),
    _fault(
        "syn-trace-time-renamed",
        # a server's shape: read as the document has it, the page fails its check, never as a suite error
        ("SYN-TRACE-001", "SYN-TRACE-002", "SYN-MODEL-003"),
        "getTraceEvents' events carry their time as `time`, not the document's `timestamp`",
        operation="getTraceEvents",
        mutate=_trace_time_renamed,
    ),
    # requests at the same moment (conformance/check/concurrent.py)
    _fault(
        "syn-job-start-race",
        ("SYN-JOB-004",),
        "job ids come from a counter read before the store's write and advanced after it: chat jobs started at "
        "the same moment share one token, the last one started replacing the others",
        operation="startAgentChat",
    ),
    # the latitude of HTTP, JSON (mockserver/wire.py): passing controls
    *wire_controls(_fault, "syn", None),
    *ACROSS,
)
