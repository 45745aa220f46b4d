"""Synapse agent chat: the requirements the schema cannot say.

Sessions round-trip and update, lists page without repeats or gaps and show only the caller's
sessions, the history grows exactly once per finished chat, chat jobs go 202 PROCESSING -> answer
within a bound, traces carry events in order, and every operation guards its data: 401 without
valid credentials, 403 for another user's session or job (with ``--second-token``), 404 and 400
in the ErrorResponse shape.

Paths are relative to the base URL, which already ends in ``/repo/v1``. Fixtures are created
through lenient helpers (any 2xx, only what the next step needs), so a fault shows up in the
requirement that owns it and not in every check that happens to create a session.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import quote

from specs.documents import protocol

from ...check import edges, hostile
from ...check.concurrent import AT_ONCE, at_once, expect_distinct, posts
from ...check.context import Blocked, CheckFailed, Context
from ...check.http import Response
from ...check.judgments import lists, pages
from ...check.judgments.pages import TokenWalk
from ...check.judgments.pages import listed as pages_listed
from ...check.shown import shown
from ...check.signature import Signature, has
from ...check.waiting import Waited, wait_for
from ...verdicts.requirements import Level, Registry, operation_ref

registry = Registry("synapse-agent")
DOC = "synapse-agent/openapi.yaml"
LEVELS = ("PUBLICLY_ACCESSIBLE", "READ_YOUR_PRIVATE_DATA", "WRITE_YOUR_PRIVATE_DATA")
CHAT_REQUEST = "org.sagebionetworks.repo.model.agent.AgentChatRequest"


def _error_response(status: int, body: Any) -> bool:
    """The document's ErrorResponse under one of its 401 or 403 answers."""
    return status in (401, 403) and has(body, reason=str)


SIGNATURES = (
    Signature(
        "the caller's profile {ownerId} or a 401 ErrorResponse {reason}",
        "GET",
        "/userProfile",
        lambda status, body: (status == 200 and has(body, ownerId=(str, int))) or _error_response(status, body),
        authenticated=True,
    ),
    Signature(
        "a page of sessions {page} or a 401 ErrorResponse {reason}",
        "POST",
        "/agent/sessions/list",
        lambda status, body: (status == 200 and has(body, page=list)) or _error_response(status, body),
        json={},
        authenticated=True,
    ),
)
"""What only a Synapse agent-chat server answers (the preflight's recognition)."""

SESSION = "/agent/session"
SESSIONS_LIST = "/agent/sessions/list"
CHAT_START = "/agent/chat/async/start"

MAX_PAGING_SESSIONS = 120
"""Most sessions the paging check creates while looking for a second page."""
PAGING = protocol("synapse-agent").paging
"""How its lists page (``paging`` in its protocol.yaml): the items' member, the token's."""
MAX_PAGES = 200
"""Most pages any list walk reads: a server whose tokens never end fails instead of hanging."""
WALKS = 3
"""Walks of the session list that others change while it is read (two walks that differ), before
its paging is left not verified (as AP-PAGE-001's)."""
JOB_RESULT = "a chat job's result"
"""The progress a poll of a job waits for (``check/waiting.py``: one wait that runs out is not paid again)."""


def _ref(path: str, method: str, tail: str = "") -> str:
    return operation_ref(DOC, path, method, tail)


def job_bound(ctx: Context) -> float:
    """Seconds a chat job may take to finish: the run's bound of every wait for progress
    (``check/waiting.progress_bound``: three request timeouts, 30 s by default)."""
    return ctx.limits.stream_seconds


def _wait_job(ctx: Context, job_id: str, auth: str | None = None) -> Waited[Response]:
    """Poll a job until it answers anything but 202 (running), within the run's bound."""
    return wait_for(
        lambda: ctx.client.get(f"/agent/chat/async/get/{_seg(job_id)}", auth=auth),
        lambda resp: resp.status != 202,
        what=JOB_RESULT,
        bound=job_bound(ctx),
        guard=ctx.guard,
    )


def _seg(value: str) -> str:
    return quote(value, safe="")


def _nonce(ctx: Context, label: str) -> str:
    """A word that tells a text from the others a check sends, drawn from the seed (``Context.draws``)."""
    return f"{ctx.draws(label).getrandbits(32):08x}"


# -- lenient fixtures --------------------------------------------------------------------------


def _json_object(resp: Response, what: str) -> dict[str, Any]:
    body = resp.json()
    if not isinstance(body, dict):
        raise CheckFailed(f"{what}: expected a JSON object, got {shown(body, 200)}")
    return body


def _session(ctx: Context, level: str = "PUBLICLY_ACCESSIBLE", auth: str | None = None) -> dict[str, Any]:
    """A new session (setup: any 2xx with a sessionId will do; SYN-SESS-001 judges the create)."""
    with ctx.setup("SYN-SESS-001"):
        resp = ctx.client.post(SESSION, json={"agentAccessLevel": level}, auth=auth)
        if not 200 <= resp.status < 300:
            ctx.fail(f"creating a session answered {resp.status}: {resp.shown(300)}")
        body = _json_object(resp, "created session")
        if not isinstance(body.get("sessionId"), str) or not body["sessionId"]:
            ctx.fail(f"the created session has no sessionId: {shown(body, 300)}")
    return body


def _start(ctx: Context, session_id: str, text: str, trace: bool = False, auth: str | None = None) -> str:
    """The token of a new chat job (setup: any 2xx with a token will do)."""
    body = {"concreteType": CHAT_REQUEST, "sessionId": session_id, "chatText": text, "enableTrace": trace}
    with ctx.setup("SYN-JOB-001"):
        resp = ctx.client.post(CHAT_START, json=body, auth=auth)
        if not 200 <= resp.status < 300:
            ctx.fail(f"starting a chat job answered {resp.status}: {resp.shown(300)}")
        token = usable_token(_json_object(resp, "started job").get("token"))
        if token is None:
            ctx.fail(f"the started job has no token: {resp.shown(300)}")
    return token


def usable_token(value: Any) -> str | None:
    """A started job's token as another check can use it: a string, or a number a server typed
    wrongly (its type is SYN-JOB-001's fact, and the job it names still exists); None when there
    is none."""
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        return None
    return str(value)


def _finish(ctx: Context, job_id: str, owner: str | None = "SYN-JOB-002") -> dict[str, Any]:
    """Poll a job until it is done and return its AgentChatResponse, within ``job_bound`` seconds.

    202 bodies are not judged here (SYN-JOB-003 does that); the final answer must conform.
    SYN-JOB-002 judges this; any other check is blocked by it.
    """
    with ctx.setup(owner):
        return _finish_job(ctx, job_id)


def _finish_job(ctx: Context, job_id: str) -> dict[str, Any]:
    waited = _wait_job(ctx, job_id)
    if not waited.done:
        ctx.fail(
            f"job {job_id} did not complete within {waited.seconds:g} s (still 202 after {waited.polls} polls"
            f"{waited.shortened})"
        )
    body = ctx.conforms(waited.last, "getAgentChatResult", 200, 201)
    ctx.expect(isinstance(body, dict), f"job {job_id}: the answer is not a JSON object")
    return body  # type: ignore[no-any-return]


def _history(ctx: Context, session_id: str) -> list[dict[str, Any]]:
    """The whole history of a session, in served order, following nextPageToken."""
    items: list[dict[str, Any]] = []
    for page in _pages(ctx, f"/agent/session/history/{_seg(session_id)}", "getSessionHistory", owner="SYN-HIST-001"):
        items.extend(pages_listed(page.body, PAGING["items"]))
    return items


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a walk: its answer, its body, and the facts ``pages.tokens`` judged it with."""

    response: Response
    body: dict[str, Any]
    facts: dict[str, Any]


def _pages(
    ctx: Context,
    path: str,
    operation_id: str,
    auth: str | None = None,
    owner: str | None = "SYN-PAGE-001",
    walk: TokenWalk | None = None,
) -> Iterator[Page]:
    """Each page of a paged list, from the first one to the last nextPageToken (at most
    ``MAX_PAGES``), each judged by ``pages.tokens`` as it comes: a token handed out twice or one
    still handed out after ``MAX_PAGES`` pages is ``owner``'s failure. Items listed twice are the
    caller's to judge (``Page.facts``, with ``walk``'s id). The pages' form is SYN-SCHEMA-003/005's
    subject; the checks judge what is listed and in which order."""
    walk = walk or TokenWalk(PAGING, most=MAX_PAGES)
    while not walk.done:
        response = ctx.client.post(path, json=walk.request(), auth=auth)
        body = ctx.conforms(response, operation_id, 200, judge=False)
        ctx.expect(isinstance(body, dict), f"{operation_id}: a page is not a JSON object: {shown(body, 200)}", response)
        facts = walk.facts()
        walk.take(response.seen())
        yield Page(response, body, facts)
        with ctx.setup(owner):  # the tokens are the paging requirement's subject
            ctx.judge(pages.TOKENS, response, f"{operation_id}:", **{**facts, "id": None})
            if walk.exhausted:
                ctx.fail(f"{operation_id}: still a nextPageToken after {MAX_PAGES} pages", response)


def _sessions(
    ctx: Context,
    auth: str | None = None,
    stop: Callable[[list[dict[str, Any]]], bool] | None = None,
    owner: str | None = "SYN-PAGE-001",
) -> list[dict[str, Any]]:
    """The caller's sessions in served order, to the end of the list or until ``stop`` says so."""
    sessions: list[dict[str, Any]] = []
    for page in _pages(ctx, SESSIONS_LIST, "listAgentSessions", auth, owner):
        sessions.extend(pages_listed(page.body, PAGING["items"]))
        if stop is not None and stop(sessions):
            break
    return sessions


def _session_ids(ctx: Context, auth: str | None = None) -> list[str]:
    return [str(s.get("sessionId")) for s in _sessions(ctx, auth)]


@dataclass(frozen=True, slots=True)
class Fixture:
    """A session of the first user and a traced chat job started in it."""

    session_id: str
    job_id: str


def _fixture(ctx: Context) -> Fixture:
    def make() -> Fixture:
        session_id = _session(ctx)["sessionId"]
        return Fixture(session_id, _start(ctx, session_id, f"Trace this request {_nonce(ctx, 'trace')}", trace=True))

    result: Fixture = ctx.memo("syn-fixture", make)
    return result


def _finished_fixture(ctx: Context) -> Fixture:
    def make() -> Fixture:
        fixture = _fixture(ctx)
        _finish(ctx, fixture.job_id)
        return fixture

    result: Fixture = ctx.memo("syn-fixture-finished", make)
    return result


def _second_user(ctx: Context) -> str:
    if not ctx.second_token:
        ctx.not_verified("needs a second user's token (--second-token) to act as another user")
    if ctx.second_token == ctx.token:
        ctx.not_verified("--second-token is the same token as --token, so there is no other user")
    return ctx.second_token


def _expect_error(ctx: Context, resp: Response, operation_id: str, status: int) -> None:
    """``status`` with the document's ErrorResponse body (``reason`` a string); its Content-Type is
    SYN-SCHEMA-003's subject."""
    body = ctx.conforms(resp, operation_id, status, judge=False)
    ctx.expect(
        isinstance(body, dict) and isinstance(body.get("reason"), str),
        f"{operation_id} {status}: the body is not an ErrorResponse with a reason: {resp.shown(200)}",
    )


def _start_refused(ctx: Context, body: dict[str, Any], status: int, auth: str | None = None) -> None:
    """A chat start the server must refuse with ``status``: at the start itself, or, as upstream
    Synapse does, by starting the job and answering ``status`` when its result is read (UPSTREAM-FACTS:
    "a failed job re-raises its original error status")."""
    resp = ctx.client.post(CHAT_START, json=body, auth=auth)
    if not 200 <= resp.status < 300:
        _expect_error(ctx, resp, "startAgentChat", status)
        return
    token = resp.json().get("token") if isinstance(resp.json(), dict) else None
    ctx.expect(
        isinstance(token, str | int) and not isinstance(token, bool) and token != "",
        f"startAgentChat answered {resp.status} without refusing and without a job token: {resp.shown(200)}",
    )
    waited = _wait_job(ctx, str(token), auth)
    result = waited.last
    ctx.expect(
        waited.done,
        f"the job started for a refused chat is still running after {waited.seconds:g} s" + waited.shortened,
    )
    if 200 <= result.status < 300:
        ctx.fail(
            f"the chat was accepted: startAgentChat answered {resp.status} and its job result "
            f"{result.status}, neither {status}: {result.shown(200)}"
        )
    _expect_error(ctx, result, "getAgentChatResult", status)


def _each(ctx: Context, cases: list[tuple[str, Callable[[], None]]]) -> None:
    """Run every case, each an independent part: every case that fails is a finding of its own."""
    for label, case in cases:
        with ctx.part(label):
            case()


# -- sessions ----------------------------------------------------------------------------------


@registry.requirement(
    "SYN-SESS-001",
    Level.MUST,
    "POST /agent/session answers 201 with an AgentSession carrying a sessionId and the requested "
    "agentAccessLevel, and GET /agent/session/{sessionId} returns that session",
    ref=_ref("/agent/session", "post", "/responses/201"),
    from_traffic=True,
)
def session_created_and_readable(ctx: Context) -> None:
    seen: set[str] = set()
    for level in LEVELS:
        body = ctx.conforms(ctx.client.post(SESSION, json={"agentAccessLevel": level}), "createAgentSession", 201)
        session_id = body.get("sessionId")
        ctx.expect(isinstance(session_id, str) and session_id, f"the created session has no sessionId: {body}")
        ctx.expect(session_id not in seen, f"sessionId {shown(session_id)} was issued twice")
        seen.add(session_id)
        ctx.expect_equal(body.get("agentAccessLevel"), level, "agentAccessLevel of the created session")
        got = ctx.conforms(ctx.client.get(f"{SESSION}/{_seg(session_id)}"), "getAgentSession", 200)
        ctx.expect_equal(got.get("sessionId"), session_id, "sessionId read back with GET")
        ctx.expect_equal(got.get("agentAccessLevel"), level, "agentAccessLevel read back with GET")


@registry.requirement(
    "SYN-SESS-002",
    Level.MUST,
    "PUT /agent/session/{sessionId} changes the session's agentAccessLevel: the answer and later "
    "reads show the new level",
    ref=_ref("/agent/session/{sessionId}", "put"),
    from_traffic=True,
)
def session_update(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    path = f"{SESSION}/{_seg(session_id)}"
    for level in ("WRITE_YOUR_PRIVATE_DATA", "READ_YOUR_PRIVATE_DATA"):
        resp = ctx.client.put(path, json={"sessionId": session_id, "agentAccessLevel": level})
        body = ctx.conforms(resp, "updateAgentSession", 200)
        ctx.expect_equal(body.get("sessionId"), session_id, "sessionId of the updated session")
        ctx.expect_equal(body.get("agentAccessLevel"), level, "agentAccessLevel in the PUT answer")
        got = ctx.conforms(ctx.client.get(path), "getAgentSession", 200)
        ctx.expect_equal(got.get("agentAccessLevel"), level, "agentAccessLevel read back after the PUT")


@registry.requirement(
    "SYN-SESS-003",
    Level.SHOULD,
    "A session's etag changes when the session is updated, and reads return the current etag",
    ref=f"{DOC}#/components/schemas/AgentSession/properties/etag",
)
def session_etag(ctx: Context) -> None:
    created = _session(ctx)
    session_id = created["sessionId"]
    path = f"{SESSION}/{_seg(session_id)}"
    with ctx.setup("SYN-SESS-002"):  # the update itself is SYN-SESS-002's subject; the etag is this one's
        resp = ctx.client.put(path, json={"sessionId": session_id, "agentAccessLevel": "WRITE_YOUR_PRIVATE_DATA"})
        updated = ctx.conforms(resp, "updateAgentSession", 200)
    before, after = created.get("etag"), updated.get("etag")
    if before is None or after is None:
        ctx.not_verified("the server sends no etag on sessions (the field is optional)")
    ctx.expect(after != before, f"the etag stayed {shown(before)} although the access level changed")
    got = ctx.conforms(ctx.client.get(path), "getAgentSession", 200)
    ctx.expect_equal(got.get("etag"), after, "etag read back after the update")


# -- the sessions list -------------------------------------------------------------------------


@registry.requirement(
    "SYN-PAGE-001",
    Level.MUST,
    "Following nextPageToken through POST /agent/sessions/list shows every session exactly once: "
    "no page repeats a session and none is left out",
    ref=_ref("/agent/sessions/list", "post"),
    depends_on_state="pages through every session the user holds, those of earlier runs included: a paging "
    "error may show only at some list lengths",
)
def sessions_paging(ctx: Context) -> None:
    created: list[str] = []

    def create(count: int) -> None:
        for _ in range(count):
            created.append(_session(ctx)["sessionId"])

    create(3)
    # the page size is the server's: create sessions until the first page says there is more
    while True:
        first = ctx.conforms(ctx.client.post(SESSIONS_LIST, json={}), "listAgentSessions", 200)
        if first.get("nextPageToken") or len(created) >= MAX_PAGING_SESSIONS:
            break
        create(min(len(created), MAX_PAGING_SESSIONS - len(created)))
    if not first.get("nextPageToken"):
        ctx.not_verified(
            f"the first page listed {len(first.get('page') or [])} sessions without a nextPageToken after "
            f"{len(created)} were created: paging is not exercised"
        )
    # enough new sessions to fill more than two pages, so at least two tokens are followed
    page_size = len(first.get("page") or [])
    create(max(0, min(2 * page_size + 1, MAX_PAGING_SESSIONS) - len(created)))

    wanted = set(created)
    previous: list[str] | None = None
    for _ in range(WALKS):
        walk = TokenWalk(PAGING, id="sessionId", most=MAX_PAGES)
        walked: list[Page] = []
        for page in _pages(ctx, SESSIONS_LIST, "listAgentSessions", owner=None, walk=walk):
            walked.append(page)
            if wanted <= {s.get("sessionId") for s in walk.items}:
                break
        ids = [str(s.get("sessionId")) for s in walk.items]
        missing = [i for i in created if i not in set(ids)]
        if not (len(set(ids)) < len(ids) or missing) or ids == previous:
            break  # whole, or the same list twice: its paging, not a list changing under the walk
        # Sessions others created (or deleted) between two pages shift a page of a token counted
        # from the newest, as upstream's is: walk again, and judge a list that held still.
        previous = ids
    else:
        ctx.not_verified(
            f"listAgentSessions: the list changed while each of {WALKS} walks read it (others write to it)"
        )
    for page in walked:  # the first page that lists a session again shows it
        ctx.judge(pages.TOKENS, page.response, "listAgentSessions:", **page.facts)
    ctx.expect(
        not missing,
        f"{len(missing)} of the {len(created)} new sessions never listed: {missing[:10]}",
        [page.response for page in walked],
    )


@registry.requirement(
    "SYN-PAGE-002",
    Level.MUST,
    "POST /agent/sessions/list serves the caller's sessions newest first (startedOn descending)",
    ref=_ref("/agent/sessions/list", "post"),
)
def sessions_newest_first(ctx: Context) -> None:
    created = []
    for _ in range(3):
        created.append(_session(ctx)["sessionId"])
        time.sleep(0.01)  # distinct startedOn milliseconds: ties may be served in any order
    walked: list[Page] = []
    listed: list[dict[str, Any]] = []
    for page in _pages(ctx, SESSIONS_LIST, "listAgentSessions"):
        walked.append(page)
        listed.extend(pages_listed(page.body, PAGING["items"]))
        if len(listed) >= len(created):
            break
    newest = list(reversed(created))
    served = [s.get("sessionId") for s in listed[: len(newest)]]
    ctx.expect_equal(served, newest, "the first sessions listed (the three just created)", walked[0].response)
    for page in walked:  # each page, then where one page meets the next
        ctx.judge(lists.NEWEST_FIRST, page.response, "listAgentSessions:", items=PAGING["items"], by="startedOn")
    why = lists.out_of_order(listed, "startedOn", "sessions list")
    ctx.expect(why is None, f"across its pages, {why}", [page.response for page in walked])


# -- history -----------------------------------------------------------------------------------


@registry.requirement(
    "SYN-HIST-001",
    Level.MUST,
    "A session's history gains exactly one interaction per completed chat, with the chatText as "
    "requestText and the job's answer as responseText; reading it again adds nothing; and a session "
    "sent every text of the edge corpus (scripts, combining marks, astral characters, escapes, control "
    "characters, spaces at the ends; the empty, NUL and 64 Ki character ones unless refused with a 4xx) "
    "holds each once, exactly as sent, over every page its nextPageToken leads to",
    ref=_ref("/agent/session/history/{sessionId}", "post"),
)
def history_grows_once(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    ctx.expect_equal(_history(ctx, session_id), [], "history of a new session")
    asked: list[tuple[str, str]] = []
    for n in (1, 2):
        text = f"Conformance question {n} {_nonce(ctx, f'question {n}')}"
        answer = _finish(ctx, _start(ctx, session_id, text))
        asked.append((text, str(answer.get("responseText"))))
        for reading in ("first", "second"):
            items = _history(ctx, session_id)
            got = Counter((i.get("requestText"), i.get("responseText")) for i in items)
            if got != Counter(asked):
                ctx.fail(
                    f"after {n} completed chat(s), {reading} reading: expected exactly one interaction per "
                    f"chat {shown([t for t, _ in asked])}, the history holds {len(items)}: "
                    f"{shown([(i.get('requestText'), str(i.get('responseText'))[:60]) for i in items], 400)}"
                )
    edge_history(ctx)


def _settled(ctx: Context, job_id: str) -> Response:
    """A job's answer once it is no longer 202 (within the job bound), unjudged."""
    return _wait_job(ctx, job_id).last


def _edge_chat(ctx: Context, edge: edges.Edge[str], session_id: str, job_id: str | None) -> str | None:
    """The answer of the chat that sent ``edge`` (starting it unless ``job_id`` names it), or None
    when the server refused it fairly, at the start or as the job's re-raised error."""
    if job_id is None:
        body = {"concreteType": CHAT_REQUEST, "sessionId": session_id, "chatText": edge.value}
        resp = ctx.client.post(CHAT_START, json=body)
        if 400 <= resp.status < 500:
            ctx.expect(edge.refusable, f"startAgentChat refused it with {resp.status}: {resp.text[:200]}")
            return None
        with ctx.setup("SYN-JOB-001"):
            token = usable_token(_json_object(resp, "started job").get("token"))
            ctx.expect(token, f"the started job has no token: {resp.text[:200]}")
        job_id = str(token)
    result = _settled(ctx, job_id)
    if 400 <= result.status < 500:
        ctx.expect(edge.refusable, f"the chat's job answered {result.status}: {result.text[:200]}")
        return None
    with ctx.setup("SYN-JOB-002"):
        answer = ctx.conforms(result, "getAgentChatResult", 200, 201)
        ctx.expect(isinstance(answer, dict), f"job {job_id}: the answer is not a JSON object")
    return str(answer.get("responseText"))


def edge_history(ctx: Context) -> None:
    """The corpus's texts, each the chatText of one chat of one session, then the whole history.
    The chats are started together (the document lets a session have several running); one
    refused with a 4xx while others run is tried again alone, once they are done."""
    session_id = _session(ctx)["sessionId"]
    started: list[tuple[edges.Edge[str], str | None]] = []
    for edge in edges.TEXTS:
        body = {"concreteType": CHAT_REQUEST, "sessionId": session_id, "chatText": edge.value}
        resp = ctx.client.post(CHAT_START, json=body)
        answer = resp.json_value() if 200 <= resp.status < 300 else None
        started.append((edge, usable_token(answer.get("token")) if isinstance(answer, dict) else None))
    answers: dict[str, str] = {}
    for edge, job_id in [*((e, j) for e, j in started if j), *((e, j) for e, j in started if not j)]:
        with ctx.part(edge.name):
            answer = _edge_chat(ctx, edge, session_id, job_id)  # a refused one again, alone
            if answer is not None:
                answers[edge.value] = answer
    history = _history(ctx, session_id)
    unmatched = [i for i in history if i.get("requestText") not in answers]
    for edge in edges.TEXTS:
        if edge.value not in answers:
            continue
        with ctx.part(edge.name):
            held = [i for i in history if i.get("requestText") == edge.value]
            if not held:
                near = max(unmatched, key=lambda i: _likeness(i.get("requestText"), edge.value), default=None)
                ctx.fail(
                    f"none of the {len(history)} interactions has it as requestText"
                    + (
                        f"; the likeliest one's requestText {edges.difference(near.get('requestText'), edge.value)}"
                        if near
                        else ""
                    )
                )
            ctx.expect(len(held) == 1, f"the history holds it {len(held)} times")
            ctx.expect(
                held[0].get("responseText") == answers[edge.value],
                f"its responseText {edges.brief(held[0].get('responseText'))} is not the job's answer "
                f"{edges.brief(answers[edge.value])}",
            )
    strange = [i for i in unmatched if not any(_likeness(i.get("requestText"), v) > 0 for v in answers)]
    ctx.expect(
        not strange,
        f"the history holds {len(strange)} interaction(s) no chat of the session asked: "
        f"{[edges.brief(i.get('requestText'), 40) for i in strange[:3]]}",
    )


def _likeness(got: Any, sent: str) -> int:
    """How much of ``sent`` a requestText keeps: its common prefix, or all of it once normalised or trimmed."""
    if not isinstance(got, str):
        return 0
    if edges.difference(got, sent).startswith(("came back normalised", "came back with the whitespace")):
        return len(sent) + 1
    return next((i for i, (x, y) in enumerate(zip(got, sent, strict=False)) if x != y), min(len(got), len(sent)))


@registry.requirement(
    "SYN-HIST-002",
    Level.MUST,
    "A session's history is ordered newest interaction first",
    ref=f"{DOC}#/components/schemas/SessionHistoryResponse/properties/page",
)
def history_newest_first(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    texts = [f"Older question {_nonce(ctx, 'older')}", f"Newer question {_nonce(ctx, 'newer')}"]
    for text in texts:
        _finish(ctx, _start(ctx, session_id, text))
    items = _history(ctx, session_id)
    got = [i.get("requestText") for i in items]
    # which interactions are there (once each, and no other) is HIST-001's; the order of the two
    # chats wherever they first appear is this one's, judged whenever both are there
    ours = [i for i in items if i.get("requestText") in texts]
    present = list(dict.fromkeys(i.get("requestText") for i in ours))
    with ctx.setup("SYN-HIST-001"):
        ctx.expect(len(present) == len(texts), f"the history holds {got}, not the two chats {texts}")
    ctx.expect_equal(present, list(reversed(texts)), "requestText order")
    why = lists.out_of_order(ours, "requestTimestamp", "history")
    ctx.expect(why is None, str(why))


# -- chat jobs ---------------------------------------------------------------------------------


@registry.requirement(
    "SYN-JOB-001",
    Level.MUST,
    "POST /agent/chat/async/start answers 201 with an AsyncJobId whose token is a new string of digits",
    ref=_ref("/agent/chat/async/start", "post", "/responses/201"),
    from_traffic=True,
)
def job_started(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    tokens = []
    for n in (1, 2):
        body = {"concreteType": CHAT_REQUEST, "sessionId": session_id, "chatText": f"Job {n} {_nonce(ctx, f'job {n}')}"}
        answer = ctx.conforms(ctx.client.post(CHAT_START, json=body), "startAgentChat", 201)
        token = answer.get("token")
        ctx.expect(
            isinstance(token, str) and token.isascii() and token.isdigit(),
            f"token {shown(token)} is not a string of decimal digits",
        )
        tokens.append(token)
    ctx.expect(tokens[0] != tokens[1], f"two jobs got the same token {shown(tokens[0])}")


@registry.requirement(
    "SYN-JOB-002",
    Level.MUST,
    "A chat job completes within the run's bound of a wait (3 x --timeout) and GET /agent/chat/async/get/{jobId} then "
    "answers 2xx with an AgentChatResponse for the job's session with a responseText",
    ref=_ref("/agent/chat/async/get/{jobId}", "get"),
    from_traffic=True,
)
def job_completes(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    answer = _finish(ctx, _start(ctx, session_id, f"How many files are in syn123? {_nonce(ctx, 'files')}"), owner=None)
    ctx.expect_equal(answer.get("sessionId"), session_id, "sessionId of the AgentChatResponse")
    text = answer.get("responseText")
    ctx.expect(isinstance(text, str) and text.strip(), f"the answer has no responseText: {answer}")


@registry.requirement(
    "SYN-JOB-004",
    Level.MUST,
    f"Chat jobs started at the same moment ({AT_ONCE} POST /agent/chat/async/start on separate connections, one "
    "a session) are distinct: each has a token of its own, and each completes with an AgentChatResponse for "
    "the session it was started in",
    ref=_ref("/agent/chat/async/start", "post", "/responses/201"),
)
def concurrent_jobs(ctx: Context) -> None:
    # what the document says of a started job holds whatever else is being started at the time
    sessions = [_session(ctx)["sessionId"] for _ in range(AT_ONCE)]
    nonce = _nonce(ctx, "concurrent jobs")
    bodies = [
        {"concreteType": CHAT_REQUEST, "sessionId": session_id, "chatText": f"Concurrent job {n} {nonce}"}
        for n, session_id in enumerate(sessions)
    ]
    tokens: list[str] = []
    with ctx.setup("SYN-JOB-001"):  # each start's status and form are SYN-JOB-001's
        for resp in at_once(ctx, posts(CHAT_START, bodies)):
            if not 200 <= resp.status < 300:
                ctx.fail(f"starting a chat job answered {resp.status}: {resp.shown(300)}")
            token = usable_token(_json_object(resp, "started job").get("token"))
            ctx.expect(token, f"the started job has no token: {resp.shown(300)}")
            tokens.append(str(token))
    with ctx.part("tokens"):
        expect_distinct(ctx, tokens, "chat jobs", "token")
    for token, session_id in zip(tokens, sessions, strict=True):
        with ctx.part(f"job {token} of session {session_id}"):
            answer = _finish(ctx, token)
            ctx.expect_equal(answer.get("sessionId"), session_id, f"job {token}: sessionId of the AgentChatResponse")


@registry.requirement(
    "SYN-JOB-003",
    Level.MUST,
    "While a chat job runs, GET /agent/chat/async/get/{jobId} answers 202 with an "
    "AsynchronousJobStatus whose jobState is PROCESSING (not verified if every job is done before the first poll)",
    ref=_ref("/agent/chat/async/get/{jobId}", "get", "/responses/202"),
    depends_on_state="needs a job still running at its first poll: how long the server's jobs take decides "
    "whether the 202 form is seen (not verified) or judged",
    from_traffic=True,
)
def job_processing(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    attempts = 3
    for attempt in range(attempts):
        job_id = _start(ctx, session_id, f"Take your time {_nonce(ctx, f'slow {attempt}')}")
        started = time.monotonic()
        resp = ctx.client.get(f"/agent/chat/async/get/{_seg(job_id)}")
        if resp.status != 202:
            ctx.conforms(resp, "getAgentChatResult", 200, 201)  # done already: that answer must be right
            continue
        status = ctx.conforms(resp, "getAgentChatResult", 202)
        ctx.expect_equal(status.get("jobState"), "PROCESSING", "jobState of the 202 answer")
        if status.get("jobId") is not None:
            ctx.expect_equal(status.get("jobId"), job_id, "jobId of the 202 status")
        return
    elapsed = (time.monotonic() - started) * 1000
    ctx.not_verified(
        f"each of {attempts} jobs was already done at its first poll (the last {elapsed:.0f} ms after "
        "the start): the 202 AsynchronousJobStatus form was never observed"
    )


# -- trace -------------------------------------------------------------------------------------


def _trace(ctx: Context, job_id: str, newer_than: int | None = None, auth: str | None = None) -> Response:
    body = {"jobId": job_id, "newerThanTimestamp": newer_than}
    return ctx.client.post(f"/agent/chat/trace/{_seg(job_id)}", json=body, auth=auth)


@registry.requirement(
    "SYN-TRACE-001",
    Level.MUST,
    "A chat job started with enableTrace true has at least one trace event {timestamp, message}: the agent "
    "records events about its decision process",
    ref=f'{DOC}#/components/schemas/AgentChatRequest/properties/enableTrace ("When true, the agent records trace '
    'events about its decision process")',
)
def trace_has_events(ctx: Context) -> None:
    fixture = _finished_fixture(ctx)
    body = ctx.conforms(_trace(ctx, fixture.job_id), "getTraceEvents", 200)
    if body.get("jobId") is not None:
        ctx.expect_equal(body.get("jobId"), fixture.job_id, "jobId of the trace page")
    events = body.get("page") or []
    ctx.expect(events, f"no trace events for job {fixture.job_id}, started with enableTrace true")


@registry.requirement(
    "SYN-TRACE-002",
    Level.MUST,
    "Trace events come oldest first, and newerThanTimestamp keeps exactly the events after it",
    ref=_ref("/agent/chat/trace/{jobId}", "post"),
)
def trace_order_and_filter(ctx: Context) -> None:
    fixture = _finished_fixture(ctx)
    events = ctx.conforms(_trace(ctx, fixture.job_id), "getTraceEvents", 200).get("page") or []
    if not events:
        # the events' presence is SYN-TRACE-001's fact: their order is judged when there are some
        raise Blocked("SYN-TRACE-001", "the job has no trace events to order or filter")
    stamps = [e["timestamp"] for e in events]
    ctx.expect(stamps == sorted(stamps), f"trace timestamps are not ascending: {stamps}")
    for newer_than in (stamps[0] - 1, stamps[0], stamps[-1]):
        page = ctx.conforms(_trace(ctx, fixture.job_id, newer_than), "getTraceEvents", 200).get("page") or []
        expected = [e for e in events if e["timestamp"] > newer_than]
        ctx.expect_equal(
            [(e.get("timestamp"), e.get("message")) for e in page],
            [(e["timestamp"], e["message"]) for e in expected],
            f"events with newerThanTimestamp {newer_than}",
        )


# -- authentication ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    operation_id: str
    method: str
    path: str
    body: dict[str, Any] | None

    @property
    def label(self) -> str:
        return f"{self.method} {self.path} ({self.operation_id})"


def _calls(ctx: Context, fixture: Fixture) -> list[Call]:
    """One valid request per documented operation, on the first user's own session and job."""
    sid, job = fixture.session_id, fixture.job_id
    bodies: dict[str, dict[str, Any]] = {
        "createAgentSession": {"agentAccessLevel": "PUBLICLY_ACCESSIBLE"},
        "updateAgentSession": {"sessionId": sid, "agentAccessLevel": "READ_YOUR_PRIVATE_DATA"},
        "startAgentChat": {"concreteType": CHAT_REQUEST, "sessionId": sid, "chatText": "Who am I?"},
        "getTraceEvents": {"jobId": job, "newerThanTimestamp": None},
    }
    calls = []
    for op in ctx.spec.operations():
        path = op.path.replace("{sessionId}", _seg(sid)).replace("{jobId}", _seg(job))
        body = bodies.get(op.operation_id, {}) if op.method in ("post", "put", "patch") else None
        calls.append(Call(op.operation_id, op.method.upper(), path, body))
    return calls


def _send(ctx: Context, call: Call, auth: str) -> Response:
    return (
        ctx.client.request(call.method, call.path, json=call.body, auth=auth)
        if call.body is not None
        else ctx.client.request(call.method, call.path, auth=auth)
    )


def _rejected(ctx: Context, call: Call, auth: str) -> None:
    _expect_error(ctx, _send(ctx, call, auth), call.operation_id, 401)


def _rejects(ctx: Context, auth: str) -> None:
    fixture = _fixture(ctx)
    _each(ctx, [(call.label, partial(_rejected, ctx, call, auth)) for call in _calls(ctx, fixture)])


@registry.requirement(
    "SYN-AUTH-001",
    Level.MUST,
    "Every operation answers 401 with an ErrorResponse when no Authorization header is sent",
    ref=f"{DOC}#/components/responses/Unauthorized",
    from_traffic=True,
)
def auth_missing(ctx: Context) -> None:
    _rejects(ctx, "")


def _invalid_token(ctx: Context) -> str:
    return f"invalid-{ctx.draws('invalid token').getrandbits(128):032x}"


@registry.requirement(
    "SYN-AUTH-002",
    Level.MUST,
    "Every operation answers 401 with an ErrorResponse for an invalid bearer token",
    ref=f"{DOC}#/components/responses/Unauthorized",
    from_traffic=True,
)
def auth_invalid(ctx: Context) -> None:
    _rejects(ctx, _invalid_token(ctx))


@registry.requirement(
    "SYN-AUTH-003",
    Level.SHOULD,
    "401 answers carry a WWW-Authenticate Bearer challenge",
    ref=f"{DOC}#/components/responses/Unauthorized/headers; RFC 9110 section 11.6.1 (a 401 carries a "
    "WWW-Authenticate challenge) and RFC 6750 section 3 (the Bearer scheme the document's bearerAuth names)",
    from_traffic=True,
)
def auth_challenge(ctx: Context) -> None:
    fixture = _fixture(ctx)

    def challenged(call: Call, auth: str) -> None:
        resp = _send(ctx, call, auth)
        with ctx.setup("SYN-AUTH-001"):  # a 401 at all is SYN-AUTH-001/002's subject; its header is this one's
            ctx.expect_status(resp, 401)
        challenge = str(resp.headers.get("www-authenticate", ""))
        ctx.expect(
            challenge.lower().startswith("bearer"),
            f"WWW-Authenticate is {shown(challenge)}, not a Bearer challenge"
            if challenge
            else "no WWW-Authenticate header",
        )

    _each(
        ctx,
        [
            (f"{call.label} {what}", partial(challenged, call, auth))
            for call in _calls(ctx, fixture)
            for what, auth in (("without a token", ""), ("with an invalid token", _invalid_token(ctx)))
        ],
    )


# -- ownership ---------------------------------------------------------------------------------


@registry.requirement(
    "SYN-OWN-001",
    Level.MUST,
    "Another user's session answers 403 with an ErrorResponse to GET, PUT, its history and a chat "
    "start (at the start or at its job's result, as upstream), and the PUT changes nothing",
    ref=f"{DOC}#/components/responses/Forbidden (a refused chat start may also be answered at its job's result, "
    "as upstream does)",
    from_traffic=True,
)
def own_session(ctx: Context) -> None:
    other = _second_user(ctx)
    fixture = _fixture(ctx)
    path = f"{SESSION}/{_seg(fixture.session_id)}"
    before = ctx.conforms(ctx.client.get(path), "getAgentSession", 200).get("agentAccessLevel")
    intruder_level = next(level for level in LEVELS if level != before)
    _each(
        ctx,
        [
            ("GET", lambda: _expect_error(ctx, ctx.client.get(path, auth=other), "getAgentSession", 403)),
            (
                "PUT",
                lambda: _expect_error(
                    ctx,
                    ctx.client.put(
                        path, json={"sessionId": fixture.session_id, "agentAccessLevel": intruder_level}, auth=other
                    ),
                    "updateAgentSession",
                    403,
                ),
            ),
            (
                "history",
                lambda: _expect_error(
                    ctx,
                    ctx.client.post(f"/agent/session/history/{_seg(fixture.session_id)}", json={}, auth=other),
                    "getSessionHistory",
                    403,
                ),
            ),
            (
                "chat start",
                lambda: _start_refused(
                    ctx,
                    {"concreteType": CHAT_REQUEST, "sessionId": fixture.session_id, "chatText": "Let me in"},
                    403,
                    auth=other,
                ),
            ),
        ],
    )
    after = ctx.conforms(ctx.client.get(path), "getAgentSession", 200).get("agentAccessLevel")
    ctx.expect_equal(after, before, "agentAccessLevel after another user's PUT")


@registry.requirement(
    "SYN-OWN-002",
    Level.MUST,
    "Another user's chat job answers 403 with an ErrorResponse to its result and its trace",
    ref=f"{DOC}#/components/responses/Forbidden",
    from_traffic=True,
)
def own_job(ctx: Context) -> None:
    other = _second_user(ctx)
    job_id = _fixture(ctx).job_id
    _each(
        ctx,
        [
            (
                "result",
                lambda: _expect_error(
                    ctx, ctx.client.get(f"/agent/chat/async/get/{_seg(job_id)}", auth=other), "getAgentChatResult", 403
                ),
            ),
            ("trace", lambda: _expect_error(ctx, _trace(ctx, job_id, auth=other), "getTraceEvents", 403)),
        ],
    )


@registry.requirement(
    "SYN-OWN-003",
    Level.MUST,
    "POST /agent/sessions/list never shows another user's sessions",
    ref=_ref("/agent/sessions/list", "post", "/description"),
    from_traffic=True,
)
def own_list(ctx: Context) -> None:
    other = _second_user(ctx)
    mine = _fixture(ctx).session_id
    theirs = _session(ctx, auth=other)["sessionId"]
    ctx.expect(theirs not in _session_ids(ctx), f"the first user's list shows the second user's session {theirs}")
    ctx.expect(
        mine not in _session_ids(ctx, auth=other), f"the second user's list shows the first user's session {mine}"
    )


# -- errors ------------------------------------------------------------------------------------


@registry.requirement(
    "SYN-ERR-001",
    Level.MUST,
    "An unknown session (GET, PUT, history, chat start: at the start or at its job's result) or job "
    "(result, trace) answers 404 with an ErrorResponse",
    ref=f"{DOC}#/components/responses/NotFound",
    from_traffic=True,
)
def not_found(ctx: Context) -> None:
    sid = ctx.drawn_id("unknown session")
    job = str(900_000_000_000_000 + ctx.draws("unknown job").randrange(99_999_999_999_999))
    _each(
        ctx,
        [
            ("GET session", lambda: _expect_error(ctx, ctx.client.get(f"{SESSION}/{sid}"), "getAgentSession", 404)),
            (
                "PUT session",
                lambda: _expect_error(
                    ctx,
                    ctx.client.put(
                        f"{SESSION}/{sid}", json={"sessionId": sid, "agentAccessLevel": "PUBLICLY_ACCESSIBLE"}
                    ),
                    "updateAgentSession",
                    404,
                ),
            ),
            (
                "history",
                lambda: _expect_error(
                    ctx, ctx.client.post(f"/agent/session/history/{sid}", json={}), "getSessionHistory", 404
                ),
            ),
            (
                "chat start",
                lambda: _start_refused(
                    ctx, {"concreteType": CHAT_REQUEST, "sessionId": sid, "chatText": "Anyone?"}, 404
                ),
            ),
            (
                "job result",
                lambda: _expect_error(ctx, ctx.client.get(f"/agent/chat/async/get/{job}"), "getAgentChatResult", 404),
            ),
            ("trace", lambda: _expect_error(ctx, _trace(ctx, job), "getTraceEvents", 404)),
        ],
    )


@registry.requirement(
    "SYN-ERR-002",
    Level.MUST,
    "Invalid bodies (an unknown or missing agentAccessLevel, a chat without chatText; to every operation that "
    "takes JSON, null, an array, a string or a number) answer 400 with an ErrorResponse and change nothing",
    ref=f"{DOC}#/components/responses/BadRequest",
)
def bad_request(ctx: Context) -> None:
    session_id = _session(ctx)["sessionId"]
    path = f"{SESSION}/{_seg(session_id)}"
    _each(
        ctx,
        [
            (
                "create with an unknown agentAccessLevel",
                lambda: _expect_error(
                    ctx, ctx.client.post(SESSION, json={"agentAccessLevel": "EVERYTHING"}), "createAgentSession", 400
                ),
            ),
            (
                "create without agentAccessLevel",
                lambda: _expect_error(ctx, ctx.client.post(SESSION, json={}), "createAgentSession", 400),
            ),
            (
                "PUT with an unknown agentAccessLevel",
                lambda: _expect_error(
                    ctx,
                    ctx.client.put(path, json={"sessionId": session_id, "agentAccessLevel": "EVERYTHING"}),
                    "updateAgentSession",
                    400,
                ),
            ),
            (
                "chat start without chatText",
                lambda: _expect_error(
                    ctx,
                    ctx.client.post(CHAT_START, json={"concreteType": CHAT_REQUEST, "sessionId": session_id}),
                    "startAgentChat",
                    400,
                ),
            ),
        ],
    )
    got = ctx.conforms(ctx.client.get(path), "getAgentSession", 200)
    ctx.expect_equal(got.get("agentAccessLevel"), "PUBLICLY_ACCESSIBLE", "agentAccessLevel after a rejected PUT")
    _refuses_non_objects(ctx, session_id)


def _refuses_non_objects(ctx: Context, session_id: str) -> None:
    """The bodies that are not objects (``check/hostile.py``) to every operation that takes JSON."""
    path = f"{SESSION}/{_seg(session_id)}"
    job_id = _fixture(ctx).job_id

    def session() -> object:
        with ctx.setup("SYN-SESS-001"):
            return ctx.conforms(ctx.client.get(path), "getAgentSession", 200, judge=False)

    def history() -> object:
        return [item.get("jobId") if isinstance(item, dict) else item for item in _history(ctx, session_id)]

    def ids() -> object:
        return sorted(_session_ids(ctx))

    write = hostile.Write
    hostile.refuses_non_objects(
        ctx,
        [
            write("createAgentSession", "POST", SESSION, "the caller's sessions", ids, (400,)),
            write("updateAgentSession", "PUT", path, "the session", session, (400,)),
            write("listAgentSessions", "POST", SESSIONS_LIST, statuses=(400,)),
            write("getSessionHistory", "POST", f"/agent/session/history/{_seg(session_id)}", statuses=(400,)),
            write("startAgentChat", "POST", CHAT_START, "the session's history", history, (400,)),
            write("getTraceEvents", "POST", f"/agent/chat/trace/{_seg(job_id)}", statuses=(400,)),
        ],
    )
