"""The Synapse agent chat mock, through HTTP: sessions, chat jobs, history, trace, auth and ownership."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from conformance.contrib.httpx import validate_exchange
from mockserver import MockLimits
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.synapse_agent.models import answer_for
from mockserver.protocols.synapse_agent.store import PAGE_SIZE
from specs.documents import load
from tests.timing import Deadline

ROOT = "/repo/v1"
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
ERROR_TYPE = "org.sagebionetworks.repo.model.ErrorResponse"
NOT_OWNER = "Only the user that started a session may access it"
ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
Serve = Callable[..., AbstractContextManager[EmbeddedServer]]


# -- helpers -----------------------------------------------------------------------------------


def new_session(http: httpx.Client, who: dict[str, str] = ALICE, **extra: Any) -> dict[str, Any]:
    body = {"agentAccessLevel": "PUBLICLY_ACCESSIBLE", **extra}
    r = http.post(f"{ROOT}/agent/session", json=body, headers=who)
    assert r.status_code == 201, r.text
    return dict(r.json())


def start_chat(
    http: httpx.Client, session_id: str, text: str = "Hello", trace: bool = False, who: dict[str, str] = ALICE
) -> str:
    body = {
        "concreteType": "org.sagebionetworks.repo.model.agent.AgentChatRequest",
        "sessionId": session_id,
        "chatText": text,
        "enableTrace": trace,
    }
    r = http.post(f"{ROOT}/agent/chat/async/start", json=body, headers=who)
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    assert re.fullmatch(r"\d+", token)
    return str(token)


def wait_done(http: httpx.Client, job_id: str, who: dict[str, str] = ALICE) -> httpx.Response:
    deadline = Deadline(5)
    while not deadline.passed():
        r = http.get(f"{ROOT}/agent/chat/async/get/{job_id}", headers=who)
        if r.status_code != 202:
            return r
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still PROCESSING after {deadline.waited:.0f} s")


def history(http: httpx.Client, session_id: str, token: str | None = None) -> dict[str, Any]:
    r = http.post(f"{ROOT}/agent/session/history/{session_id}", json={"nextPageToken": token}, headers=ALICE)
    assert r.status_code == 200, r.text
    return dict(r.json())


def assert_error(r: httpx.Response, status: int, reason: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["concreteType"] == ERROR_TYPE
    assert isinstance(body["reason"], str) and body["reason"]
    if reason is not None:
        assert body["reason"] == reason


# -- sessions ----------------------------------------------------------------------------------


def test_create_session_answers_201_with_the_session(http: httpx.Client) -> None:
    before = int(time.time() * 1000)
    session = new_session(http)
    assert uuid.UUID(session["sessionId"]).version == 4  # upstream's format (AgentDaoImpl: UUID.randomUUID)
    assert session["agentAccessLevel"] == "PUBLICLY_ACCESSIBLE"
    assert session["startedBy"] == 1000
    assert "agentRegistrationId" not in session  # unset fields are left out, as Synapse's JSON entities do
    assert None not in session.values()
    assert ISO_MS.match(session["startedOn"]) and session["modifiedOn"] == session["startedOn"]
    assert session["startedOn"] >= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(before // 1000))
    uuid.UUID(session["etag"])
    registered = new_session(http, BOB, agentRegistrationId="7", agentAccessLevel="READ_YOUR_PRIVATE_DATA")
    assert registered["agentRegistrationId"] == "7"
    assert registered["agentAccessLevel"] == "READ_YOUR_PRIVATE_DATA"
    assert registered["startedBy"] == 1001
    assert registered["sessionId"] != session["sessionId"]


@pytest.mark.parametrize("body", [{}, {"agentAccessLevel": "EVERYTHING"}, {"agentAccessLevel": 3}])
def test_create_session_rejects_an_invalid_body(http: httpx.Client, body: dict[str, Any]) -> None:
    assert_error(http.post(f"{ROOT}/agent/session", json=body, headers=ALICE), 400)


def test_get_session_returns_what_was_created(http: httpx.Client) -> None:
    session = new_session(http)
    r = http.get(f"{ROOT}/agent/session/{session['sessionId']}", headers=ALICE)
    assert r.status_code == 200
    assert r.json() == session


def test_update_session_changes_level_etag_and_modified_on(http: httpx.Client) -> None:
    session = new_session(http)
    sid = session["sessionId"]
    time.sleep(0.01)
    r = http.put(
        f"{ROOT}/agent/session/{sid}",
        headers=ALICE,
        json={"sessionId": sid, "agentAccessLevel": "WRITE_YOUR_PRIVATE_DATA"},
    )
    assert r.status_code == 200, r.text
    updated = r.json()
    assert updated["agentAccessLevel"] == "WRITE_YOUR_PRIVATE_DATA"
    assert updated["etag"] != session["etag"]
    assert updated["modifiedOn"] > session["modifiedOn"]
    assert updated["startedOn"] == session["startedOn"]
    assert http.get(f"{ROOT}/agent/session/{sid}", headers=ALICE).json() == updated


def test_update_session_the_path_names_the_session(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    other = new_session(http)["sessionId"]
    r = http.put(
        f"{ROOT}/agent/session/{sid}",
        headers=ALICE,
        json={"sessionId": other, "agentAccessLevel": "WRITE_YOUR_PRIVATE_DATA"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["sessionId"] == sid and r.json()["agentAccessLevel"] == "WRITE_YOUR_PRIVATE_DATA"
    untouched = http.get(f"{ROOT}/agent/session/{other}", headers=ALICE).json()
    assert untouched["agentAccessLevel"] == "PUBLICLY_ACCESSIBLE"
    assert_error(http.put(f"{ROOT}/agent/session/{sid}", headers=ALICE, json={"sessionId": sid}), 400)


def test_sessions_list_pages_newest_first(serve: Serve) -> None:
    with serve(protocols=("synapse-agent",)) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        created = [new_session(http)["sessionId"] for _ in range(25)]
        new_session(http, BOB)
        seen: list[str] = []
        token: str | None = None
        sizes = []
        for _ in range(5):
            r = http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": token}, headers=ALICE)
            assert r.status_code == 200, r.text
            body = r.json()
            sizes.append(len(body["page"]))
            assert all(s["startedBy"] == 1000 for s in body["page"])
            seen += [s["sessionId"] for s in body["page"]]
            token = body.get("nextPageToken")
            if token is None:
                break
        assert sizes == [PAGE_SIZE, PAGE_SIZE, 25 - 2 * PAGE_SIZE]
        assert seen == list(reversed(created))
        first = http.post(f"{ROOT}/agent/sessions/list", json={}, headers=ALICE).json()
        started = [s["startedOn"] for s in first["page"]]
        assert started == sorted(started, reverse=True)
        # a session created between pages neither repeats nor skips anything on the next page
        new_session(http)
        second = http.post(
            f"{ROOT}/agent/sessions/list", json={"nextPageToken": first["nextPageToken"]}, headers=ALICE
        ).json()
        assert [s["sessionId"] for s in second["page"]] == list(reversed(created))[PAGE_SIZE : 2 * PAGE_SIZE]
        bobs = http.post(f"{ROOT}/agent/sessions/list", json={}, headers=BOB).json()
        assert len(bobs["page"]) == 1 and "nextPageToken" not in bobs
        assert bobs["page"][0]["startedBy"] == 1001


def test_upstream_offset_tokens_page_exactly_and_shift_when_a_session_is_created_between_pages(serve: Serve) -> None:
    """The control syn-list-token-offset: upstream's ``<limit>a<offset>`` token, counted from the newest."""
    faults = ("syn-list-token-offset",)
    with serve(protocols=("synapse-agent",), faults=faults) as server, httpx.Client(base_url=server.url) as http:
        newest = list(reversed([new_session(http)["sessionId"] for _ in range(2 * PAGE_SIZE + 1)]))
        first = http.post(f"{ROOT}/agent/sessions/list", json={}, headers=ALICE).json()
        assert first["nextPageToken"] == f"{PAGE_SIZE}a{PAGE_SIZE}"
        second = http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": first["nextPageToken"]}, headers=ALICE)
        assert [s["sessionId"] for s in second.json()["page"]] == newest[PAGE_SIZE : 2 * PAGE_SIZE]
        new_session(http)  # another client's: every later page starts one session earlier
        shifted = http.post(
            f"{ROOT}/agent/sessions/list", json={"nextPageToken": first["nextPageToken"]}, headers=ALICE
        )
        assert [s["sessionId"] for s in shifted.json()["page"]] == newest[PAGE_SIZE - 1 : 2 * PAGE_SIZE - 1]


def test_sessions_list_of_a_user_without_sessions_is_empty(serve: Serve) -> None:
    with serve(protocols=("synapse-agent",)) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        new_session(http)
        r = http.post(f"{ROOT}/agent/sessions/list", json={}, headers=BOB)
        assert r.status_code == 200
        assert r.json() == {"page": []}


def test_foreign_page_tokens_read_as_past_the_end(serve: Serve) -> None:
    with serve(protocols=("synapse-agent",)) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        created = [new_session(http)["sessionId"] for _ in range(PAGE_SIZE + 1)]
        new_session(http, BOB)
        token = http.post(f"{ROOT}/agent/sessions/list", json={}, headers=ALICE).json()["nextPageToken"]
        cursor, _, signature = token.partition(".")
        forged = ["garbage", "", f"{int(cursor) + 1}.{signature}", f"{cursor}.{signature[::-1]}", token + "0"]
        for bad in forged:
            r = http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": bad}, headers=ALICE)
            assert r.status_code == 200, r.text
            assert r.json() == {"page": []}
        # a token is bound to its list: bob cannot replay alice's, nor use it for a history
        r = http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": token}, headers=BOB)
        assert r.json() == {"page": []}
        sid = new_session(http)["sessionId"]
        r = http.post(f"{ROOT}/agent/session/history/{sid}", json={"nextPageToken": token}, headers=ALICE)
        assert r.json() == {"sessionId": sid, "page": []}
        # upstream's <limit>a<offset> form (the document's example) counts from the newest
        newest_first = [sid, *reversed(created)]
        r = http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": "3a2"}, headers=ALICE)
        body = r.json()
        assert [s["sessionId"] for s in body["page"]] == newest_first[2:5]
        rest = http.post(
            f"{ROOT}/agent/sessions/list", json={"nextPageToken": body["nextPageToken"]}, headers=ALICE
        ).json()
        assert [s["sessionId"] for s in rest["page"]] == newest_first[5 : 5 + PAGE_SIZE]
        r = http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": "50a50"}, headers=ALICE)
        assert r.json() == {"page": []}


# -- chat jobs and history ---------------------------------------------------------------------


def test_job_lifecycle_processing_then_answer(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    job = start_chat(http, sid, "How many files are in syn123?")
    r = http.get(f"{ROOT}/agent/chat/async/get/{job}", headers=ALICE)
    assert r.status_code == 202
    status = r.json()
    assert status["jobState"] == "PROCESSING"
    assert status["jobId"] == job
    assert status["startedByUserId"] == 1000
    assert ISO_MS.match(status["startedOn"]) and ISO_MS.match(status["changedOn"])
    assert status["requestBody"]["chatText"] == "How many files are in syn123?"
    assert status["requestBody"]["sessionId"] == sid
    uuid.UUID(status["etag"])
    done = wait_done(http, job)
    assert done.status_code == 200
    assert done.json() == {
        "concreteType": "org.sagebionetworks.repo.model.agent.AgentChatResponse",
        "sessionId": sid,
        "responseText": answer_for("How many files are in syn123?"),
    }
    assert "How many files are in syn123?" in done.json()["responseText"]
    assert wait_done(http, job).json() == done.json()  # stable once done


def test_start_chat_without_concrete_type_and_trace_flag(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    r = http.post(f"{ROOT}/agent/chat/async/start", json={"sessionId": sid, "chatText": "Hi"}, headers=ALICE)
    assert r.status_code == 201
    status = http.get(f"{ROOT}/agent/chat/async/get/{r.json()['token']}", headers=ALICE).json()
    assert status["requestBody"]["concreteType"] == "org.sagebionetworks.repo.model.agent.AgentChatRequest"


@pytest.mark.parametrize(
    "body",
    [
        {"sessionId": "1"},
        {"chatText": "x"},
        {"sessionId": 1, "chatText": "x"},
        {"sessionId": "1", "chatText": "x", "concreteType": "other"},
    ],
)
def test_start_chat_rejects_an_invalid_body(http: httpx.Client, body: dict[str, Any]) -> None:
    assert_error(http.post(f"{ROOT}/agent/chat/async/start", json=body, headers=ALICE), 400)


def test_history_grows_exactly_once_per_completed_job(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    assert history(http, sid) == {"sessionId": sid, "page": []}
    first = start_chat(http, sid, "first")
    assert history(http, sid)["page"] == []  # still processing
    for _ in range(3):
        wait_done(http, first)
    second = start_chat(http, sid, "second")
    wait_done(http, second)
    wait_done(http, second)
    page = history(http, sid)["page"]
    assert [i["requestText"] for i in page] == ["second", "first"]
    assert [i["responseText"] for i in page] == [answer_for("second"), answer_for("first")]
    for item in page:
        assert ISO_MS.match(item["requestTimestamp"]) and ISO_MS.match(item["responseTimestamp"])
        assert item["responseTimestamp"] > item["requestTimestamp"]
    assert history(http, sid)["page"] == page


def test_history_records_a_finished_job_nobody_polled(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    job = start_chat(http, sid, "unpolled")
    time.sleep(0.3)
    assert [i["requestText"] for i in history(http, sid)["page"]] == ["unpolled"]
    assert wait_done(http, job).status_code == 200
    assert len(history(http, sid)["page"]) == 1


def test_history_pages(serve: Serve) -> None:
    with (
        serve(protocols=("synapse-agent",), job_seconds=0.0) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        sid = new_session(http)["sessionId"]
        texts = [f"message {i}" for i in range(PAGE_SIZE + 2)]
        for text in texts:
            start_chat(http, sid, text)
        first = history(http, sid)
        assert [i["requestText"] for i in first["page"]] == list(reversed(texts))[:PAGE_SIZE]
        second = history(http, sid, first["nextPageToken"])
        assert [i["requestText"] for i in second["page"]] == ["message 1", "message 0"]
        assert "nextPageToken" not in second
        assert second["sessionId"] == sid


# -- trace -------------------------------------------------------------------------------------


def trace(http: httpx.Client, job: str, newer_than: int | None = None) -> httpx.Response:
    body = {"jobId": job, "newerThanTimestamp": newer_than}
    return http.post(f"{ROOT}/agent/chat/trace/{job}", json=body, headers=ALICE)


def test_trace_events_of_a_traced_job(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    before = int(time.time() * 1000)
    job = start_chat(http, sid, "trace me", trace=True)
    early = trace(http, job)
    assert early.status_code == 200
    assert early.json()["jobId"] == job
    assert len(early.json()["page"]) >= 1  # the start event exists at once
    wait_done(http, job)
    events = trace(http, job).json()["page"]
    assert len(events) == 3
    stamps = [e["timestamp"] for e in events]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    assert before <= stamps[0] <= int(time.time() * 1000)
    assert "trace me" in events[0]["message"]
    assert all(isinstance(e["message"], str) and e["message"] for e in events)
    newer = trace(http, job, stamps[0]).json()["page"]
    assert newer == events[1:]
    assert trace(http, job, stamps[-1]).json()["page"] == []
    assert trace(http, job, stamps[0] - 1).json()["page"] == events
    # the body's jobId is optional
    r = http.post(f"{ROOT}/agent/chat/trace/{job}", json={}, headers=ALICE)
    assert r.json()["page"] == events


def test_no_trace_events_without_enable_trace(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    job = start_chat(http, sid, "quiet")
    wait_done(http, job)
    r = trace(http, job)
    assert r.status_code == 200
    assert r.json() == {"jobId": job, "page": []}


def test_trace_the_path_names_the_job(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    job = start_chat(http, sid, trace=True)
    r = http.post(f"{ROOT}/agent/chat/trace/{job}", json={"jobId": job + "1"}, headers=ALICE)
    assert r.status_code == 200 and r.json()["jobId"] == job
    r = http.post(f"{ROOT}/agent/chat/trace/{job}", json={"newerThanTimestamp": "x"}, headers=ALICE)
    assert_error(r, 400)


# -- user profile ------------------------------------------------------------------------------


def test_user_profile_of_each_user(http: httpx.Client) -> None:
    r = http.get(f"{ROOT}/userProfile", headers=ALICE)
    assert r.status_code == 200
    assert r.json() == {"ownerId": "1000", "userName": "alice", "displayName": "Alice", "emails": ["alice@example.org"]}
    assert http.get(f"{ROOT}/userProfile", headers=BOB).json()["ownerId"] == "1001"


# -- auth, ownership, not found, limits -------------------------------------------------------


@dataclass
class Fixture:
    session: str
    job: str


@pytest.fixture(scope="module")
def alices(mock_url: str) -> Fixture:
    with httpx.Client(base_url=mock_url, timeout=10) as http:
        sid = new_session(http)["sessionId"]
        return Fixture(sid, start_chat(http, sid, "private", trace=True))


def routes(f: Fixture) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(method, path, body) of every operation, aimed at alice's session and job."""
    return [
        ("POST", "/agent/session", {"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}),
        ("GET", f"/agent/session/{f.session}", None),
        ("PUT", f"/agent/session/{f.session}", {"sessionId": f.session, "agentAccessLevel": "WRITE_YOUR_PRIVATE_DATA"}),
        ("POST", "/agent/sessions/list", {}),
        ("POST", f"/agent/session/history/{f.session}", {}),
        ("POST", "/agent/chat/async/start", {"sessionId": f.session, "chatText": "hi"}),
        ("GET", f"/agent/chat/async/get/{f.job}", None),
        ("POST", f"/agent/chat/trace/{f.job}", {"jobId": f.job}),
        ("GET", "/userProfile", None),
    ]


def test_routes_cover_every_operation() -> None:
    spec = load("synapse-agent")
    assert len(routes(Fixture("1", "2"))) == len(list(spec.operations())) == 9


@pytest.mark.parametrize("index", range(9))
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic YWxpY2U="}],
    ids=["no-token", "unknown-token", "wrong-scheme"],
)
def test_every_operation_needs_a_valid_token(
    http: httpx.Client, alices: Fixture, index: int, headers: dict[str, str]
) -> None:
    method, path, body = routes(alices)[index]
    r = http.request(method, ROOT + path, json=body, headers=headers)
    assert_error(r, 401)
    assert r.headers["WWW-Authenticate"] == 'Bearer realm="Synapse Repository Services"'


@pytest.mark.parametrize("index", [1, 2, 4, 5, 6, 7], ids=["get", "update", "history", "chat", "result", "trace"])
def test_another_users_session_or_job_is_403(http: httpx.Client, alices: Fixture, index: int) -> None:
    method, path, body = routes(alices)[index]
    assert_error(http.request(method, ROOT + path, json=body, headers=BOB), 403, NOT_OWNER)
    # and nothing changed for the owner
    session = http.get(f"{ROOT}/agent/session/{alices.session}", headers=ALICE).json()
    assert session["agentAccessLevel"] == "PUBLICLY_ACCESSIBLE"


def test_other_users_never_see_alices_data(http: httpx.Client, alices: Fixture) -> None:
    wait_done(http, alices.job)
    listed = http.post(f"{ROOT}/agent/sessions/list", json={}, headers=BOB).json()
    assert alices.session not in [s["sessionId"] for s in listed["page"]]
    assert all(s["startedBy"] == 1001 for s in listed["page"])


@pytest.mark.parametrize(
    "method,path,body",
    [
        ("GET", "/agent/session/999999", None),
        ("PUT", "/agent/session/999999", {"sessionId": "999999", "agentAccessLevel": "PUBLICLY_ACCESSIBLE"}),
        ("POST", "/agent/session/history/999999", {}),
        ("POST", "/agent/chat/async/start", {"sessionId": "999999", "chatText": "hi"}),
        ("GET", "/agent/chat/async/get/1", None),
        ("GET", "/agent/chat/async/get/not-a-job", None),
        ("POST", "/agent/chat/trace/999999999", {}),
    ],
    ids=["get", "update", "history", "chat", "result", "result-text", "trace"],
)
def test_unknown_session_or_job_is_404(http: httpx.Client, method: str, path: str, body: Any) -> None:
    assert_error(http.request(method, ROOT + path, json=body, headers=ALICE), 404)


def test_a_session_id_is_not_a_job_id(http: httpx.Client) -> None:
    sid = new_session(http)["sessionId"]
    assert_error(http.get(f"{ROOT}/agent/chat/async/get/{sid}", headers=ALICE), 404)


def test_store_limit_answers_507(serve: Serve) -> None:
    with (
        serve(protocols=("synapse-agent",), limits=MockLimits(max_stored_objects=2)) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        sid = new_session(http)["sessionId"]
        start_chat(http, sid)
        assert_error(
            http.post(f"{ROOT}/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=ALICE), 507
        )
        chat = {"sessionId": sid, "chatText": "x"}
        assert_error(http.post(f"{ROOT}/agent/chat/async/start", json=chat, headers=ALICE), 507)
        assert http.get(f"{ROOT}/agent/session/{sid}", headers=ALICE).status_code == 200


# -- the document ------------------------------------------------------------------------------


def test_answers_match_the_document(serve: Serve) -> None:
    """Every operation, successes and errors, validated with openapi-core against the document."""
    spec = load("synapse-agent")
    exchanges: list[httpx.Response] = []

    def record(response: httpx.Response) -> None:
        response.read()
        exchanges.append(response)

    with (
        serve(protocols=("synapse-agent",), job_seconds=0.1) as server,
        httpx.Client(base_url=server.url, timeout=10, event_hooks={"response": [record]}) as http,
    ):
        sid = new_session(http, agentRegistrationId="7")["sessionId"]
        job = start_chat(http, sid, trace=True)
        http.get(f"{ROOT}/agent/chat/async/get/{job}", headers=ALICE)  # 202
        wait_done(http, job)
        for method, path, body in routes(Fixture(sid, job)):
            for headers in (ALICE, BOB, {}):
                http.request(method, ROOT + path, json=body, headers=headers)
        for _ in range(PAGE_SIZE):
            new_session(http)
        http.post(f"{ROOT}/agent/sessions/list", json={"nextPageToken": 5}, headers=ALICE)
        http.post(f"{ROOT}/agent/session", json={}, headers=ALICE)
        http.get(f"{ROOT}/agent/session/0", headers=ALICE)

    seen: set[tuple[str, int]] = set()
    for response in exchanges:
        # 400 and 401 answer a body malformed or a token left out on purpose: only the answer is checked
        operation = validate_exchange(spec, response, check_request=response.status_code not in (400, 401))
        seen.add((operation, response.status_code))
    assert {op for op, _ in seen} == {op.operation_id for op in spec.operations()}
    assert {status for _, status in seen} == {200, 201, 202, 400, 401, 403, 404}
    assert {("getAgentChatResult", 202), ("getAgentChatResult", 200), ("startAgentChat", 201)} <= seen
