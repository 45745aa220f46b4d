"""The client judges on made-up traffic: the edges the example clients do not reach."""

from __future__ import annotations

import json
from typing import Any

from conformance.client import judges
from conformance.client.judges import Play
from conformance.client.traffic import Seen
from conformance.verdicts.results import Status


def _seen(
    n: int,
    at: float,
    operation: str,
    status: int,
    *,
    method: str = "POST",
    path: str = "/ap/v1/agent/tasks",
    request: Any = None,
    answer: Any = None,
    headers: dict[str, str] | None = None,
    path_params: dict[str, str] | None = None,
) -> Seen:
    return Seen(
        n,
        at,
        operation,
        method,
        path,
        [],
        path_params or {},
        {"content-type": "application/json"} if request is not None else {},
        json.dumps(request) if request is not None else "",
        status,
        headers or {},
        json.dumps(answer) if answer is not None else "",
        0.001,
    )


def _play(protocol: str, *exchanges: Seen, code: int | None = 0) -> Play:
    return Play(protocol, "made-up", list(exchanges), code, 5.0)


def test_retry_after_holds_to_the_millisecond_and_fails_short_of_it() -> None:
    busy = _seen(1, 100.0, "createAgentTask", 429, headers={"retry-after": "1"})
    on_time = _seen(2, 100.96, "createAgentTask", 200)
    early = _seen(2, 100.90, "createAgentTask", 200)
    assert judges.retry_after_honoured(_play("agent-protocol", busy, on_time)).status is Status.PASSED
    verdict = judges.retry_after_honoured(_play("agent-protocol", busy, early))
    assert verdict.status is Status.FAILED and "0.900 s after" in verdict.message
    gave_up = judges.retry_after_honoured(_play("agent-protocol", busy, code=1))
    assert gave_up.status is Status.NOT_VERIFIED and "exited 1" in gave_up.message


def test_a_retry_after_date_is_not_mistaken_for_seconds() -> None:
    dated = _seen(1, 100.0, "createAgentTask", 503, headers={"retry-after": "Fri, 04 Dec 2026 22:00:00 GMT"})
    verdict = judges.retry_after_honoured(_play("agent-protocol", dated, _seen(2, 100.01, "createAgentTask", 200)))
    assert verdict.status is Status.NOT_VERIFIED


def test_bounded_retries_count_the_longest_busy_run_and_the_exit_status() -> None:
    busy = [_seen(n, 100.0 + n, "createAgentTask", 503) for n in range(1, 7)]
    assert judges.retries_bounded(_play("agent-protocol", *busy[:4], code=1)).status is Status.PASSED
    flood = judges.retries_bounded(_play("agent-protocol", *busy, code=None))
    assert flood.status is Status.FAILED and "6 requests in a row" in flood.message
    lied = judges.retries_bounded(_play("agent-protocol", *busy[:2], code=0))
    assert lied.status is Status.FAILED and "exited 0" in lied.message


def test_a_401_retried_once_is_fair_twice_is_a_loop() -> None:
    def refused(n: int) -> Seen:
        return _seen(n, 100.0 + n, "createAgentSession", 401, path="/repo/v1/agent/session")

    assert (
        judges.unauthorized_not_looped(_play("synapse-agent", refused(1), refused(2), code=1)).status is Status.PASSED
    )
    loop = judges.unauthorized_not_looped(_play("synapse-agent", refused(1), refused(2), refused(3), code=1))
    assert loop.status is Status.FAILED and "3 requests answered 401" in loop.message


def test_synapse_pages_no_further_than_the_last_and_each_token_sent_back() -> None:
    path = "/repo/v1/agent/sessions/list"
    first = _seen(
        1, 1.0, "listAgentSessions", 200, path=path, request={}, answer={"page": [], "nextPageToken": "10a10"}
    )
    last = _seen(2, 2.0, "listAgentSessions", 200, path=path, request={"nextPageToken": "10a10"}, answer={"page": []})
    again = _seen(3, 3.0, "listAgentSessions", 200, path=path, request={}, answer={"page": []})
    wrong = _seen(2, 2.0, "listAgentSessions", 200, path=path, request={"nextPageToken": "5a5"}, answer={"page": []})
    assert judges.syn_pages_walked(_play("synapse-agent", first, last)).status is Status.PASSED
    assert "after the last page" in judges.syn_pages_walked(_play("synapse-agent", first, last, again)).message
    assert "'5a5' sent where '10a10'" in judges.syn_pages_walked(_play("synapse-agent", first, wrong)).message


def test_a_body_the_mock_never_read_is_not_judged_but_its_parameters_are() -> None:
    unread = _seen(1, 1.0, "createAgentSession", 401, path="/repo/v1/agent/session")
    unread.request_headers["content-length"] = "40"
    unread.body_kept = False
    assert judges.requests_valid(_play("synapse-agent", unread, code=1)).status is Status.PASSED
    unknown = _seen(1, 1.0, "", 404, method="GET", path="/repo/v1/agent/nowhere")
    verdict = judges.requests_valid(_play("synapse-agent", unknown, code=1))
    assert verdict.status is Status.FAILED and "no operation of the document" in verdict.message


def test_a_job_start_pushed_out_of_a_full_journal_is_not_verified() -> None:
    polls = [
        _seen(n, 1.0 + n / 1000, "getAgentChatResult", 202, method="GET", path_params={"jobId": "7"})
        for n in range(1, 4)
    ]
    full = _play("synapse-agent", *polls, code=None)
    assert judges.syn_job_polled(full).status is Status.FAILED
    full.journal_full = True
    assert judges.syn_job_polled(full).status is Status.NOT_VERIFIED
    assert judges.syn_poll_rate(full).status is Status.FAILED  # what it kept still shows the rate


def test_agent_protocol_page_one_of_an_empty_list_is_the_end_not_past_it() -> None:
    def page(n: int, current: int, total: int) -> Seen:
        answer = {
            "tasks": [],
            "pagination": {"total_items": 0, "total_pages": total, "current_page": current, "page_size": 10},
        }
        return _seen(n, float(n), "listAgentTasks", 200, method="GET", answer=answer)

    assert judges.ap_pages_walked(_play("agent-protocol", page(1, 1, 0))).status is Status.PASSED
    past = judges.ap_pages_walked(_play("agent-protocol", page(1, 1, 1), page(2, 2, 1)))
    assert past.status is Status.FAILED and "page 2 asked for, past the last page (1)" in past.message


def test_a_redirect_followed_with_its_method_passes_another_method_or_none_taken_as_answer_fails() -> None:
    moved = _seen(1, 100.0, "listModels", 307, method="GET", path="/v1/models", headers={"location": "/v1/models"})
    same = _seen(2, 100.1, "listModels", 200, method="GET", path="/v1/models")
    other = _seen(2, 100.1, None, 405, method="POST", path="/v1/models")  # type: ignore[arg-type]
    origin = "http://127.0.0.1:1"

    def judged(*exchanges: Seen, code: int | None = 0) -> judges.Judged:
        return judges.redirect_handled(Play("sgr-agent-core", "redirect", list(exchanges), code, 5.0, origin=origin))

    assert judged(moved, same).status is Status.PASSED
    assert judged(moved, other).status is Status.FAILED and "another method" in judged(moved, other).message
    assert judged(moved).status is Status.FAILED  # exited 0 with the redirect for its answer
    assert judged(moved, code=1).status is Status.PASSED  # declined to follow, and said so
    assert judged(moved, code=None).status is Status.FAILED
    assert judged(same).status is Status.NOT_VERIFIED
    elsewhere = _seen(1, 100.0, "listModels", 307, method="GET", path="/v1/models", headers={"location": "http://x/"})
    assert judged(elsewhere).status is Status.FAILED  # another origin is no Location it could follow here


def test_a_body_dropped_on_a_307_fails() -> None:
    moved = _seen(1, 100.0, "listAgentSessions", 307, request={"nextPageToken": "a"}, headers={"location": "/x"})
    moved.path = "/x"
    bare = _seen(2, 100.1, "listAgentSessions", 200, request={})
    bare.path = "/x"
    verdict = judges.redirect_handled(Play("synapse-agent", "redirect", [moved, bare], 0, 5.0, origin="http://h"))
    assert verdict.status is Status.FAILED and "without its body" in verdict.message


def test_a_client_that_accepts_no_coding_and_gets_none_passes_one_that_cannot_read_gzip_fails() -> None:
    plain = _seen(1, 100.0, "listModels", 200, method="GET", answer={"data": []})
    plain.stub = "gzip"
    assert judges.content_coding_read(_play("sgr-agent-core", plain)).status is Status.PASSED
    coded = _seen(1, 100.0, "listModels", 200, method="GET", headers={"content-encoding": "gzip"})
    coded.stub, coded.request_headers = "gzip", {"accept-encoding": "gzip, deflate"}
    assert judges.content_coding_read(_play("sgr-agent-core", coded)).status is Status.PASSED
    unread = judges.content_coding_read(_play("sgr-agent-core", coded, code=1))
    assert unread.status is Status.FAILED and "in gzip" in unread.message
    assert judges.content_coding_read(_play("sgr-agent-core", code=1)).status is Status.NOT_VERIFIED
    refused = _seen(1, 100.0, "listModels", 200, method="GET", answer={"data": []})
    refused.stub, refused.request_headers = "gzip", {"accept-encoding": "br, gzip;q=0"}
    assert judges.content_coding_read(_play("sgr-agent-core", refused)).status is Status.PASSED  # gzip refused
    plain.request_headers = {"accept-encoding": "gzip"}  # accepted, yet sent plain: the mock's fault, no verdict
    assert judges.content_coding_read(_play("sgr-agent-core", plain)).status is Status.NOT_VERIFIED
