"""Synapse agent chat requirements judged from traffic: 401 without or with an unknown token, 403
when a token reaches another token's session or job (tokens differing is all the proxy needs),
sessions as created and updated, chat jobs across observed polls, error shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...check.passive import Bounded, Checks, Verdict
from ...check.shown import shown
from ...check.traffic import Observed

SESSION_OPS = ("getAgentSession", "updateAgentSession", "getSessionHistory", "startAgentChat")
JOB_OPS = ("getAgentChatResult", "getTraceEvents")


@dataclass(slots=True)
class Job:
    owner: str
    session_id: str
    started: float
    done: bool = False


def _session_of(ex: Observed) -> str:
    """The session a request names: in its path, or (a chat start) in its body; "" for none."""
    request = ex.request_json()
    named = ex.path_params.get("sessionId") or (request.get("sessionId") if isinstance(request, dict) else None)
    return named if isinstance(named, str) else ""


def _error(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("reason"), str)


class Passive(Checks):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.sessions: Bounded[str, tuple[str, str]] = Bounded()
        """sessionId -> (owner's token, the access level it should have now)."""
        self.updated: Bounded[str, bool] = Bounded()
        self.jobs: Bounded[str, Job] = Bounded()
        self.named: Bounded[str, bool] = Bounded()
        """Session ids some answer named (created, read, listed): any other one is unknown to the server."""

    def on_response(self, ex: Observed, v: Verdict) -> None:
        op, status, body = ex.operation_id, ex.status, ex.json()
        assert op is not None and status is not None
        token = ex.bearer
        if status == 401:
            challenge = ex.response_headers.get("www-authenticate", "")
            v.check(
                "SYN-AUTH-003",
                challenge.lower().startswith("bearer"),
                f"{op} 401 carries WWW-Authenticate {shown(challenge)}, not a Bearer challenge",
            )
        if not token:
            v.check(
                "SYN-AUTH-001",
                status == 401 and _error(body),
                f"{op} without credentials answered {status} {shown(body, 100)}, not 401 with an ErrorResponse",
            )
            return
        if self.tokens and token not in self.tokens:
            v.check(
                "SYN-AUTH-002",
                status == 401 and _error(body),
                f"{op} with a token the upstream does not issue answered {status}, not 401 with an ErrorResponse",
            )
            return
        if status == 401:
            return  # a token the proxy was not told about: it cannot tell whose fault this is
        if status == 404:
            v.check("SYN-ERR-001", _error(body), f"{op} 404: body {shown(body, 120)} is not an ErrorResponse")
            session_id = _session_of(ex)
            if op in SESSION_OPS and self.sessions.get(session_id, ("", ""))[0] == token:
                # whose fact it is, as the run's checks file it: an update's, a chat start's, a read's
                rid = {"updateAgentSession": "SYN-SESS-002", "startAgentChat": "SYN-JOB-001"}.get(op)
                rid = rid or ("SYN-SESS-002" if session_id in self.updated else "SYN-SESS-001")
                v.fail(rid, f"{op} of the session {session_id} its owner created answered 404")
        self._unknown(ex, v, op, status)
        self._ownership(ex, v, op, status, body, token)
        if 200 <= status < 300:
            self._answered(ex, v, op, status, body, token)
            self._name(op, body)

    def _unknown(self, ex: Observed, v: Verdict, op: str, status: int) -> None:
        """A session no answer ever named is one the server does not have: 404, never a crash (as
        the run's SYN-ERR-001 asks of an id it drew)."""
        if op not in SESSION_OPS or status < 500:
            return
        session_id = _session_of(ex)
        if session_id and session_id not in self.named and session_id not in self.sessions:
            v.fail("SYN-ERR-001", f"{op} of session {session_id}, which no answer named, answered {status}, not 404")

    def _name(self, op: str, body: Any) -> None:
        if not isinstance(body, dict):
            return
        listed = body.get("page") if op == "listAgentSessions" else [body]
        for item in listed if isinstance(listed, list) else ():
            if isinstance(item, dict) and isinstance(item.get("sessionId"), str):
                self.named[item["sessionId"]] = True

    def _ownership(self, ex: Observed, v: Verdict, op: str, status: int, body: Any, token: str) -> None:
        session_id = _session_of(ex)
        owner = self.sessions.get(str(session_id), ("", ""))[0] if op in SESSION_OPS else ""
        job = self.jobs.get(ex.path_params.get("jobId", "")) if op in JOB_OPS else None
        if owner and owner != token:
            v.check(
                "SYN-OWN-001",
                status == 403 and _error(body),
                f"{op} of another token's session {session_id} answered {status}, not 403 with an ErrorResponse",
            )
        elif job is not None and job.owner != token:
            v.check(
                "SYN-OWN-002",
                status == 403 and _error(body),
                f"{op} of another token's job answered {status}, not 403 with an ErrorResponse",
            )

    def _answered(self, ex: Observed, v: Verdict, op: str, status: int, body: Any, token: str) -> None:
        request = ex.request_json() if isinstance(ex.request_json(), dict) else {}
        if op == "createAgentSession":
            ok = (
                isinstance(body, dict)
                and isinstance(body.get("sessionId"), str)
                and status == 201
                and body.get("agentAccessLevel") == request.get("agentAccessLevel")
            )
            if v.check(
                "SYN-SESS-001",
                ok,
                f"createAgentSession answered {status} {shown(body, 160)}, not 201 with a "
                f"sessionId and the requested {shown(request.get('agentAccessLevel'))}",
            ):
                self.sessions[body["sessionId"]] = (token, str(body["agentAccessLevel"]))
        elif op in ("getAgentSession", "updateAgentSession") and isinstance(body, dict):
            session_id = ex.path_params.get("sessionId", "")
            owner, level = self.sessions.get(session_id, ("", ""))
            if owner != token:
                return
            if op == "updateAgentSession":
                level = str(request.get("agentAccessLevel"))
                self.sessions[session_id] = (owner, level)
                self.updated[session_id] = True
            rid = "SYN-SESS-002" if session_id in self.updated else "SYN-SESS-001"
            v.check(
                rid,
                body.get("sessionId") == session_id and body.get("agentAccessLevel") == level,
                f"{op} of {session_id}: {shown(body, 160)} does not show agentAccessLevel {shown(level)}",
            )
        elif op == "listAgentSessions" and isinstance(body, dict):
            listed = body.get("page")
            page = listed if isinstance(listed, list) else []
            foreign = [
                s.get("sessionId")
                for s in page
                if isinstance(s, dict) and self.sessions.get(str(s.get("sessionId")), (token, ""))[0] != token
            ]
            v.check("SYN-OWN-003", not foreign, f"the list shows other tokens' sessions {foreign[:3]}")
        elif op == "startAgentChat" and isinstance(body, dict):
            job_id = body.get("token")
            fresh = isinstance(job_id, str) and job_id.isdigit() and job_id not in self.jobs
            if v.check(
                "SYN-JOB-001",
                fresh and status == 201,
                f"startAgentChat answered {status} with token {shown(job_id)}, not 201 with a new string of digits",
            ):
                self.jobs[str(job_id)] = Job(token, str(request.get("sessionId")), ex.started_at)
        elif op == "getAgentChatResult":
            self._polled(ex, v, status, body, token)

    def _polled(self, ex: Observed, v: Verdict, status: int, body: Any, token: str) -> None:
        job = self.jobs.get(ex.path_params.get("jobId", ""))
        if job is None or job.owner != token:
            return
        if status == 202:
            state = body.get("jobState") if isinstance(body, dict) else None
            v.check("SYN-JOB-003", state == "PROCESSING", f"a running job's 202 says jobState {shown(state)}")
            if job.done:
                v.fail("SYN-JOB-002", "the job answered 202 again after it had answered its result")
            elif ex.started_at - job.started > self.settle_s:  # the exchanges' clock: judged live or recorded
                v.fail("SYN-JOB-002", f"the job is still running {self.settle_s:g} s after it started")
            return
        ok = (
            isinstance(body, dict)
            and body.get("sessionId") == job.session_id
            and isinstance(body.get("responseText"), str)
        )
        v.check(
            "SYN-JOB-002",
            ok,
            f"the job's result {shown(body, 160)} is not an AgentChatResponse for session "
            f"{job.session_id} with a responseText",
        )
        job.done = True
