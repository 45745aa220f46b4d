"""The proxy's judge given recorded exchanges (conformance/proxy/recorded.py), and its findings
naming the judgment that decided them, with its facts, as a run's findings do (issue 32)."""

from __future__ import annotations

import json
from typing import Any

from conformance.check.judgments import Seen, judge
from conformance.proxy.recorded import RecordedTraffic, judged
from conformance.verdicts.results import RequirementResult, RunResult, Status

TASKS = "/ap/v1/agent/tasks"
TASK = {"task_id": "t1", "input": "x", "additional_input": {}, "artifacts": []}


def _get(path: str, query: str, status: int, body: Any) -> RecordedTraffic:
    return RecordedTraffic(
        "GET",
        path,
        query,
        {"accept": "application/json"},
        b"",
        status,
        {"content-type": "application/json"},
        json.dumps(body).encode(),
        1_000.0,
        3.0,
    )


def _page(total_pages: int) -> RecordedTraffic:
    pagination = {"total_items": 3, "total_pages": total_pages, "current_page": 1, "page_size": 2}
    return _get(TASKS, "current_page=1&page_size=2", 200, {"tasks": [TASK, TASK], "pagination": pagination})


def _result(result: RunResult, rid: str) -> RequirementResult:
    return next(r for r in result.results if r.requirement.id == rid)


def test_a_page_total_rounded_down_names_the_page_judgment_and_its_facts() -> None:
    result = judged("agent-protocol", "http://127.0.0.1:9", [_page(1)])
    page = _result(result, "AP-PAGE-001")
    assert page.status is Status.FAILED, page.message
    (finding,) = page.findings
    assert finding.judgment == "pages.numbers"
    assert finding.facts["items"] == "tasks"
    # the facts are enough to judge the deciding answer again, as replay does
    deciding = finding.evidence[-1]
    seen = Seen("GET", deciding.url, 200, {}, (_page(1).response_body))
    assert judge(finding.judgment, seen, finding.facts)


def test_a_page_whose_total_holds_passes() -> None:
    assert _result(judged("agent-protocol", "http://127.0.0.1:9", [_page(2)]), "AP-PAGE-001").status is Status.PASSED


def test_an_error_body_of_another_shape_names_the_error_judgment() -> None:
    wrong = _get(f"{TASKS}/nope", "", 404, {"error": "no such task"})
    right = _get(f"{TASKS}/nope", "", 404, {"message": "no such task"})
    failed = _result(judged("agent-protocol", "http://127.0.0.1:9", [wrong]), "AP-ERR-001")
    assert failed.status is Status.FAILED
    assert [(f.judgment, f.facts) for f in failed.findings] == [("errors.shape", {"members": {"message": "string"}})]
    assert _result(judged("agent-protocol", "http://127.0.0.1:9", [right]), "AP-ERR-001").status is Status.PASSED


def test_a_recorded_exchange_round_trips_through_json() -> None:
    exchange = _get(TASKS, "page_size=2", 200, {"tasks": []})
    exchange = RecordedTraffic(**{**exchange.to_dict(), "request_body": b"\x00\xff\r\n", "response_body": b"\xfe"})
    assert RecordedTraffic.from_dict(json.loads(json.dumps(exchange.to_dict()))) == exchange


CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1737979200,
    "model": "sgr_agent_3f2b8c1e-5d4a-4e7b-9c2d-1a2b3c4d5e6f",
    "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
}


def _chat(*data: str) -> RecordedTraffic:
    body = json.dumps({"model": "sgr_agent", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    headers = {"content-type": "text/event-stream", "cache-control": "no-cache", "x-agent-id": CHUNK["model"]}
    events = "".join(f"data: {d}\n\n" for d in data).encode()
    return RecordedTraffic(
        "POST", "/v1/chat/completions", "", {"content-type": "application/json"}, body.encode(), 200, headers, events,
        1_000.0, 3.0,
    )  # fmt: skip


def test_each_event_of_a_stream_is_judged_against_the_item_schema_by_the_runs_judgment() -> None:
    fair = _result(
        judged("sgr-agent-core", "http://127.0.0.1:9", [_chat(json.dumps(CHUNK), "[DONE]")]), "SGR-SCHEMA-005"
    )
    assert fair.status is Status.PASSED, fair.message  # the control
    plain = _chat(json.dumps(CHUNK), "Researching prices", "[DONE]")  # sgr-non-json-event's stream
    failed = _result(judged("sgr-agent-core", "http://127.0.0.1:9", [plain]), "SGR-SCHEMA-005")
    assert failed.status is Status.FAILED and 'event 2 "Researching prices"' in failed.message
    (finding,) = failed.findings
    assert finding.judgment == "events.items" and finding.facts["document"] == "sgr-agent-core"
    seen = Seen("POST", "http://127.0.0.1:9/v1/chat/completions", 200, {}, plain.response_body)
    assert judge(finding.judgment, seen, finding.facts)  # replay judges the stream again by it


def _agent_chat(path: str, data: list[str], *, left: bool = False) -> RecordedTraffic:
    """A stream of the agent ``CHUNK`` names: its creating chat, or a clarification (``path``)."""
    body = json.dumps({"model": "sgr_agent", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    headers = {"content-type": "text/event-stream", "cache-control": "no-cache", "x-agent-id": CHUNK["model"]}
    events = "".join(f"data: {d}\n\n" for d in data).encode()
    return RecordedTraffic(
        "POST", path, "", {"content-type": "application/json"}, body.encode(), 200, headers, events, 1_000.0, 3.0,
        left,
    )  # fmt: skip


def _cancelled_state() -> RecordedTraffic:
    state = {
        "agent_id": CHUNK["model"], "task_messages": [{"role": "user", "content": "hi"}], "state": "cancelled",
        "iteration": 3, "searches_used": 2, "clarifications_used": 1, "sources_count": 4,
        "current_step_reasoning": None, "execution_result": None,
    }  # fmt: skip
    return _get(f"/agents/{CHUNK['model']}/state", "", 200, state)


def test_an_agent_whose_client_left_its_stream_may_be_cancelled_for_it() -> None:
    """A client that leaves an agent's stream may get it cancelled (the mock does, as the server
    does on a disconnect): its state after a later stream that ended is not judged then (a full run
    under load met it: the hostile clarifications left three streams). The control: no stream left,
    and the agent cancelled after its stream ended, fails."""
    chunk = json.dumps(CHUNK)
    clarify = f"/agents/{CHUNK['model']}/provide_clarification"
    left = [_agent_chat("/v1/chat/completions", [chunk, "[DONE]"]), _agent_chat(clarify, [chunk], left=True)]
    later = [_agent_chat(clarify, [chunk, "[DONE]"]), _cancelled_state()]
    fair = _result(judged("sgr-agent-core", "http://127.0.0.1:9", left + later), "SGR-AGENT-003")
    assert fair.status is not Status.FAILED, fair.message
    broken = [_agent_chat("/v1/chat/completions", [chunk, "[DONE]"]), *later]
    failed = _result(judged("sgr-agent-core", "http://127.0.0.1:9", broken), "SGR-AGENT-003")
    assert failed.status is Status.FAILED and '"cancelled"' in failed.message, failed.message
