"""How each client requirement is decided from one scenario's play: the journal's exchanges and
the client's exit status. One function per requirement number; a protocol's flows by (protocol,
number). Each answers passed, failed or not verified, with the exchanges that show it."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from urllib.parse import urljoin, urlsplit

from specs.documents import load
from specs.schemas import SchemaSet

from ..check.traffic import Routes
from ..proxy.document import DocumentJudge
from ..verdicts.results import Status
from .traffic import Seen

RETRY_TOLERANCE_S = 0.05
"""Slack on a Retry-After delay: the journal's clock has millisecond steps."""
MAX_BUSY_RUN = 5
"""Most requests in a row a client may send that are answered 429/503 (CLIENT-003)."""
MAX_UNAUTHORIZED = 2
"""Most requests answered 401 in one scenario: the first and one retry (CLIENT-005)."""
MAX_POLLS_PER_SECOND = 5.0


@dataclass(slots=True)
class Play:
    """What happened in one scenario."""

    protocol: str
    scenario: str
    exchanges: list[Seen]
    exit_code: int | None
    """None: the client did not finish within the bound and was killed."""
    timeout_s: float
    duration_s: float = 0.0
    output: str = ""
    """The end of what the client printed (stderr, then stdout), for the report."""
    journal_full: bool = False
    origin: str = ""
    """The mock's root URL in this scenario (its evidence's URLs start with it)."""

    @property
    def ended(self) -> str:
        if self.exit_code is None:
            return f"the client did not finish within {self.timeout_s:g} s (killed)"
        return f"the client exited {self.exit_code}"

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0

    def of(self, operation: str) -> list[Seen]:
        return [e for e in self.exchanges if e.operation == operation]


@dataclass(slots=True)
class Judged:
    status: Status
    message: str
    evidence: list[Seen] = field(default_factory=list)


def passed(message: str, *evidence: Seen) -> Judged:
    return Judged(Status.PASSED, message, list(evidence))


def failed(message: str, *evidence: Seen) -> Judged:
    return Judged(Status.FAILED, message, list(evidence))


def not_verified(message: str) -> Judged:
    return Judged(Status.NOT_VERIFIED, message)


Judge = Callable[[Play], Judged]


@cache
def _document(protocol: str) -> tuple[DocumentJudge, Routes]:
    spec = load(protocol)
    return DocumentJudge(spec, SchemaSet(spec.raw), set(), {}, (), ()), Routes(spec)


def requests_valid(play: Play) -> Judged:
    """CLIENT-001: the proxy's own judge of a request, applied to each the client sent."""
    if not play.exchanges:
        return not_verified(f"the client sent no request ({play.ended})")
    judge, routes = _document(play.protocol)
    for seen in play.exchanges:
        problems = judge.request_problems(seen.observed(routes))
        if not seen.body_kept:  # the mock never read it (refused first, or cut): judge the rest
            problems = [p for p in problems if "body" not in p and "Content-Type" not in p]
        if problems:
            return failed(f"{seen.label}: {'; '.join(problems[:3])}", seen)
    return passed(f"{len(play.exchanges)} requests, each matching the document", play.exchanges[-1])


def _retry_after(seen: Seen) -> float | None:
    if seen.status not in (429, 503):
        return None
    try:
        return float(seen.response_headers.get("retry-after", ""))
    except ValueError:
        return None


def retry_after_honoured(play: Play) -> Judged:
    """CLIENT-002: the request after a 429/503 with Retry-After comes no sooner than the delay."""
    checked = 0
    for before, after in itertools.pairwise(play.exchanges):
        delay = _retry_after(before)
        if delay is None:
            continue
        checked += 1
        waited = after.at - before.at
        if waited + RETRY_TOLERANCE_S < delay:
            return failed(
                f"{after.label} came {waited:.3f} s after {before.label}, which said Retry-After: {delay:g}",
                before,
                after,
            )
    if not checked:
        return not_verified(f"the client sent no request after a Retry-After answer ({play.ended})")
    return passed(f"{checked} follow-up request(s), each after the delay Retry-After named")


def retries_bounded(play: Play) -> Judged:
    """CLIENT-003: a busy server meets a bounded run of retries, and a client that gave up says so."""
    run = longest = 0
    worst: Seen | None = None
    for seen in play.exchanges:
        run = run + 1 if seen.status in (429, 503) else 0
        if run > longest:
            longest, worst = run, seen
    if worst is None:
        return not_verified("no request was answered 429 or 503")
    if longest > MAX_BUSY_RUN:
        extra = " (the journal kept only the last exchanges)" if play.journal_full else ""
        return failed(f"{longest} requests in a row answered 429/503{extra}; {play.ended}", worst)
    if play.exit_code is None:
        return failed(f"{play.ended} after {longest} busy answers: it neither gave up nor finished", worst)
    if play.exit_code == 0 and play.exchanges[-1].status in (429, 503):
        return failed(f"the client exited 0 although its last request was answered {worst.status}", worst)
    return passed(f"{longest} request(s) in a row answered 429/503, then {play.ended}", worst)


def unknown_fields_ignored(play: Play) -> Judged:
    """CLIENT-004: the answers carrying a field the client cannot know (a stub's) did not stop it."""
    stubbed = [e for e in play.exchanges if e.stub and 200 <= e.status < 300]
    if not stubbed:
        return not_verified(f"the client never received the answer with the unknown field ({play.ended})")
    if not play.succeeded:
        return failed(f"{play.ended} after {stubbed[0].label}, whose answer carried an unknown field", stubbed[0])
    return passed(f"the client completed its task after {len(stubbed)} answer(s) with an unknown field", stubbed[0])


def unknown_events_ignored(play: Play) -> Judged:
    """CLIENT-007: a stream carrying events of a type the client cannot know (a stub's) did not stop it."""
    streamed = [e for e in play.exchanges if e.stub and e.status == 200]
    if not streamed:
        return not_verified(f"the client never received the stream with the unknown event type ({play.ended})")
    if not play.succeeded:
        return failed(
            f"{play.ended} after {streamed[0].label}, whose stream carried an unknown event type", streamed[0]
        )
    return passed("the client completed its task from a stream that carried an unknown event type", streamed[0])


def unauthorized_not_looped(play: Play) -> Judged:
    """CLIENT-005: a 401 ends the task; at most one retry."""
    refused = [e for e in play.exchanges if e.status == 401]
    if not refused:
        return not_verified(f"no request was answered 401 ({play.ended})")
    if len(refused) > MAX_UNAUTHORIZED:
        return failed(f"{len(refused)} requests answered 401 (at most {MAX_UNAUTHORIZED}); {play.ended}", refused[-1])
    if play.exit_code is None:
        return failed(f"{play.ended} after a 401: it should have given up", refused[-1])
    if play.exit_code == 0:
        return failed("the client exited 0 although its requests were refused 401", refused[-1])
    return passed(f"{len(refused)} request(s) answered 401, then {play.ended}", refused[-1])


def cut_stream_not_complete(play: Play) -> Judged:
    """CLIENT-006: a stream that ended before its terminal frame is not a complete answer."""
    cut = [e for e in play.exchanges if e.stub and e.status == 200]
    if not cut:
        return not_verified(f"the client never read the cut stream ({play.ended})")
    if play.exit_code == 0:
        return failed("the client exited 0 after a stream that ended before its terminal frame", cut[0])
    if play.exit_code is None:
        return failed(f"{play.ended}: a stream that ended early must end the client's wait", cut[0])
    return passed(f"{play.ended} after the cut stream", cut[0])


def _target(play: Play, moved: Seen) -> str | None:
    """The path and query a redirect's Location names, resolved against the request (RFC 9110
    §10.2.2: a relative reference is relative to the target URI); None: no Location, or another origin."""
    location = moved.response_headers.get("location")
    if not location:
        return None
    query = "&".join(f"{k}={v}" for k, v in moved.query)
    url = urlsplit(urljoin(f"{play.origin}{moved.path}" + (f"?{query}" if query else ""), location))
    if f"{url.scheme}://{url.netloc}" != play.origin:
        return None
    return url.path + (f"?{url.query}" if url.query else "")


def _path_qs(seen: Seen) -> str:
    query = "&".join(f"{k}={v}" for k, v in seen.query)
    return seen.path + (f"?{query}" if query else "")


def redirect_handled(play: Play) -> Judged:
    """CLIENT-008: each 307/308 followed to its Location with the same method and body, or the client
    gave up; never an exit 0 that took the redirect for the answer."""
    moved = [e for e in play.exchanges if e.status in (307, 308)]
    if not moved:
        return not_verified(f"no request was answered 307 or 308 ({play.ended})")
    followed = 0
    for answer in moved:
        target = _target(play, answer)
        follow = next((e for e in play.exchanges[answer.number :] if _path_qs(e) == target), None)
        if follow is None:
            if play.exit_code == 0:
                return failed(f"the client exited 0 without requesting the Location of {answer.label}", answer)
            if play.exit_code is None:
                return failed(f"{play.ended} after {answer.label}, neither following it nor giving up", answer)
            continue  # it did not follow the redirect, and said so: a client may decline one
        if follow.method != answer.method:
            return failed(f"{follow.label} followed {answer.label} with another method", answer, follow)
        if answer.body_kept and follow.body_kept and follow.request_body != answer.request_body:
            return failed(f"{follow.label} followed {answer.label} without its body", answer, follow)
        followed += 1
    if not followed:
        return passed(f"{len(moved)} redirect(s) not followed, and {play.ended}", moved[0])
    return _task_failed(play, "read the answer at the Location") or passed(
        f"{followed} redirect(s) followed to the Location with the same method", moved[0]
    )


def _accepts_gzip(seen: Seen) -> bool:
    """Whether the request's Accept-Encoding names gzip (or x-gzip, or *) with a weight above 0
    (RFC 9110 §12.5.3): a sanity check of the mock, which encodes only then."""
    weights: dict[str, float] = {}
    for item in seen.request_headers.get("accept-encoding", "").split(","):
        name, _, params = item.partition(";")
        key, _, value = params.partition("=")
        try:
            weights[name.strip().lower()] = float(value) if key.strip().lower() == "q" else 1.0
        except ValueError:
            weights[name.strip().lower()] = 0.0
    named = next((weights[n] for n in ("gzip", "x-gzip", "*") if n in weights), 0.0)
    return named > 0


def content_coding_read(play: Play) -> Judged:
    """CLIENT-009: a client that accepted gzip read the gzip answer and completed its task."""
    coded = [e for e in play.exchanges if e.stub and e.response_headers.get("content-encoding")]
    offered = [e for e in play.exchanges if e.stub and 200 <= e.status < 300]
    if not offered:
        return not_verified(f"the client never received the answer that may be encoded ({play.ended})")
    if not coded:
        if any(_accepts_gzip(e) for e in offered):  # the mock breaks its own rule: not the client's fault
            return not_verified("the client accepted gzip, yet the answer was not encoded")
        return _task_failed(play, "read the answer") or passed(
            "the client accepted no content coding, was sent none, and completed its task", offered[0]
        )
    first = coded[0]
    return _task_failed(play, f"read an answer in {first.response_headers['content-encoding']}") or passed(
        f"the client read {len(coded)} answer(s) in {first.response_headers['content-encoding']} and completed "
        "its task",
        first,
    )


def _task_failed(play: Play, what: str) -> Judged | None:
    if play.succeeded:
        return None
    return failed(f"{play.ended}: the task ({what}) did not succeed although the server allowed it")


def ap_pages_walked(play: Play) -> Judged:
    """AP-CLIENT-010: listAgentTasks from current_page 1 to total_pages, none beyond."""
    lists = [e for e in play.of("listAgentTasks") if e.status == 200]
    if not lists:
        return failed(f"{play.ended} without listing the tasks")
    seen_pages: set[int] = set()
    total = 0
    for e in lists:
        body = e.json()
        pagination = body.get("pagination", {}) if isinstance(body, dict) else {}
        current, pages = pagination.get("current_page"), pagination.get("total_pages")
        if not isinstance(current, int) or not isinstance(pages, int):
            continue
        total = max(total, pages)
        if current > max(pages, 1):  # page 1 of an empty list is no page past the end
            return failed(f"{e.label}: page {current} asked for, past the last page ({pages})", e)
        seen_pages.add(current)
    missing = sorted(set(range(1, total + 1)) - seen_pages)
    if missing:
        return failed(f"pages {missing[:10]} of {total} never read; {play.ended}", lists[-1])
    return _task_failed(play, "list every task") or passed(f"pages 1 to {total} read, none beyond", lists[-1])


def syn_pages_walked(play: Play) -> Judged:
    """SYN-CLIENT-010: listAgentSessions' nextPageToken sent back until a page has none."""
    lists = [e for e in play.of("listAgentSessions") if e.status == 200]
    if not lists:
        return failed(f"{play.ended} without listing the sessions")
    expected: str | None = None
    ended = False
    for e in lists:
        if ended:
            return failed(f"{e.label}: sent after the last page (its answer had no nextPageToken)", e)
        body = e.request_json()
        token = body.get("nextPageToken") if isinstance(body, dict) else None
        if token != expected:
            return failed(f"{e.label}: nextPageToken {token!r} sent where {expected!r} was expected", e)
        answer = e.json()
        expected = answer.get("nextPageToken") if isinstance(answer, dict) else None
        ended = expected is None
    if not ended:
        return failed(f"the last page's nextPageToken {expected!r} was never followed; {play.ended}", lists[-1])
    return _task_failed(play, "list every session") or passed(f"{len(lists)} pages read to the last", lists[-1])


def syn_job_polled(play: Play) -> Judged:
    """SYN-CLIENT-011: each started job polled until done and its result read."""
    started = [e for e in play.of("startAgentChat") if e.status == 201]
    if not started and play.journal_full:  # a flood of polls pushed the start out of the journal
        return not_verified(f"the journal kept only the last exchanges, none of them the job's start; {play.ended}")
    if not started:
        return failed(f"{play.ended} without starting a chat job")
    for start in started:
        answer = start.json()
        job = answer.get("token") if isinstance(answer, dict) else None
        polls = [e for e in play.of("getAgentChatResult") if e.path_params.get("jobId") == job]
        if not any(e.status in (200, 201) for e in polls):
            last = polls[-1] if polls else start
            return failed(f"job {job} was never read once done ({len(polls)} polls); {play.ended}", last)
    return _task_failed(play, "read the chat's answer") or passed(
        f"{len(started)} job(s) polled until done and read", started[-1]
    )


def syn_poll_rate(play: Play) -> Judged:
    """SYN-CLIENT-012: polls of a running job are spaced (practice)."""
    polls = [e for e in play.of("getAgentChatResult") if e.status == 202]
    if len(polls) < 2:
        return not_verified(f"fewer than two polls of a running job ({play.ended})")
    span = polls[-1].at - polls[0].at
    rate = (len(polls) - 1) / span if span > 0 else float("inf")
    if rate > MAX_POLLS_PER_SECOND:
        return failed(f"{len(polls)} polls in {span:.3f} s ({rate:.0f} a second)", polls[-1])
    return passed(f"{len(polls)} polls in {span:.3f} s", polls[-1])


def sgr_clarification_answered(play: Play) -> Judged:
    """SGR-CLIENT-010: the agent that asked gets the answer on a documented route, read to its end."""
    asked = next(
        (e for e in play.of("createChatCompletion") if e.status == 200 and e.response_headers.get("x-agent-id")),
        None,
    )
    if asked is None:
        return failed(f"{play.ended} without starting a chat")
    agent = asked.response_headers["x-agent-id"]
    for e in play.exchanges[asked.number :]:
        body = e.request_json()
        by_model = e.operation == "createChatCompletion" and isinstance(body, dict) and body.get("model") == agent
        if (e.operation == "provideClarification" and e.path_params.get("agent_id") == agent) or by_model:
            if e.status != 200:
                return failed(f"{e.label}: the clarification was refused", e)
            return _task_failed(play, "answer the question and read the answer") or passed(
                f"{e.label} answered agent {agent}'s question", e
            )
    return failed(f"agent {agent}'s question was never answered; {play.ended}", asked)


def _last_context(seen: Seen) -> object | None:
    """The chat_context of an NDJSON answer's last AGENT_FRAMEWORK message (None: it has none)."""
    context = None
    for line in seen.response_body.splitlines():
        try:
            frame = json.loads(line)
        except ValueError:
            continue
        response = frame.get("response") if isinstance(frame, dict) else None
        if isinstance(response, dict) and response.get("type") == "AGENT_FRAMEWORK" and "chat_context" in response:
            context = response["chat_context"]
    return context


def ns_context_continued(play: Play) -> Judged:
    """NS-CLIENT-010: the second turn sends back the first answer's chat_context, whole."""
    chats = [e for e in play.of("AgentService_StreamingChat") if e.status == 200]
    if len(chats) < 2:
        return failed(f"{len(chats)} chat turn(s) answered; the task takes two; {play.ended}", *chats[-1:])
    for before, after in itertools.pairwise(chats):
        context = _last_context(before)
        body = after.request_json()
        sent = body.get("chat_context") if isinstance(body, dict) else None
        if context is not None and sent != context:
            shown = "no chat_context" if sent is None else "a chat_context other than the one answered"
            return failed(f"{after.label} sent {shown} after {before.label}", before, after)
    return _task_failed(play, "continue the conversation") or passed(
        f"{len(chats)} turns, each continuing the last answer's chat_context", chats[-1]
    )


GENERIC: dict[str, Judge] = {
    "001": requests_valid,
    "002": retry_after_honoured,
    "003": retries_bounded,
    "004": unknown_fields_ignored,
    "005": unauthorized_not_looped,
    "006": cut_stream_not_complete,
    "007": unknown_events_ignored,
    "008": redirect_handled,
    "009": content_coding_read,
}
FLOWS: dict[tuple[str, str], Judge] = {
    ("agent-protocol", "010"): ap_pages_walked,
    ("synapse-agent", "010"): syn_pages_walked,
    ("synapse-agent", "011"): syn_job_polled,
    ("synapse-agent", "012"): syn_poll_rate,
    ("sgr-agent-core", "010"): sgr_clarification_answered,
    ("neuro-san", "010"): ns_context_continued,
}


def judge_for(protocol: str, number: str) -> Judge:
    return FLOWS.get((protocol, number)) or GENERIC[number]
