"""Which calls a finding keeps: the deciding call and each earlier one it depends on, ids captured."""

from __future__ import annotations

from conformance.verdicts.reproduction import (
    MAX_STEPS,
    Reproduction,
    compared,
    find,
    judged_setup,
    outside_state,
    pauses,
    reproduction,
    required,
    unknown_ids,
)
from conformance.verdicts.results import Exchange

BASE = "http://127.0.0.1:9/ap/v1/agent/tasks"
TASK = "6f1c1a52-0d6e-4a0b-9a55-3f1a2b3c4d5e"
OTHER = "0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e"


def _ex(method: str, url: str, status: int, answer: str = "", body: str | None = None, **headers: str) -> Exchange:
    return Exchange(
        method, url, {"accept": "*/*"}, body, status, {"content-type": "application/json", **headers}, answer
    )


def test_the_create_before_the_read_is_kept_and_its_id_captured_unrelated_calls_are_not() -> None:
    calls = [
        _ex("POST", BASE, 200, f'{{"task_id": "{TASK}", "input": "a"}}', '{"input": "a"}'),
        _ex("GET", f"{BASE}/{OTHER}", 404, '{"message": "not found"}'),  # a probe with the client's own id
        _ex("POST", BASE, 200, f'{{"task_id": "{OTHER}x", "input": "b"}}', '{"input": "b"}'),  # another task
        _ex("POST", f"{BASE}/{TASK}/steps", 200, '{"step_id": "s-1", "task_id": "' + TASK + '"}', '{"input": "go"}'),
        _ex("GET", f"{BASE}/{TASK}", 200, f'{{"task_id": "{TASK}", "input": "b"}}'),
    ]
    rep = reproduction(calls, 4)
    assert [(e.method, e.url) for e in rep.steps] == [
        ("POST", BASE),
        ("POST", f"{BASE}/{TASK}/steps"),
        ("GET", f"{BASE}/{TASK}"),
    ]
    (capture,) = rep.captures
    assert (capture.name, capture.step, capture.source, capture.key, capture.nth) == (
        "TASK_ID",
        0,
        "body",
        "task_id",
        1,
    )
    assert rep.baked == []


def test_an_id_from_a_header_and_the_nth_member_of_a_listing() -> None:
    calls = [
        _ex("POST", "http://h/v1/chat", 200, "data: {}\n\n", '{"m": 1}', **{"X-Agent-ID": "agent_1a2b"}),
        _ex("GET", "http://h/agents", 200, '[{"id": "agent_0000"}, {"id": "agent_1a2b"}]'),
        _ex("GET", "http://h/agents/agent_1a2b", 200, '{"id": "agent_1a2b"}'),
    ]
    rep = reproduction(calls, 2)
    assert [e.url for e in rep.steps] == ["http://h/v1/chat", "http://h/agents/agent_1a2b"]
    (capture,) = rep.captures
    assert (capture.source, capture.key) == ("header", "X-Agent-ID")
    assert find(capture, "", [("x-agent-id", "agent_9z9z")]) == "agent_9z9z"
    listing = reproduction(calls[1:], 1)  # taken from the listing: the second "id" member
    assert [(c.key, c.nth) for c in listing.captures] == [("id", 2)]
    assert find(listing.captures[0], '[{"id": "a_1"}, {"id": "a_2"}]', []) == "a_2"


def test_a_write_to_the_resource_a_read_names_is_kept_a_read_of_another_is_not() -> None:
    """An agent found by a listing is not an object the calls made, but a chat with it may change
    what its connectivity shows (each chat registered a tool again): the chat before the read is
    kept, and the same read before it (a read may change what the next one shows); a chat with
    another agent is not."""
    calls = [
        _ex("GET", "http://h/api/v1/list", 200, '{"agents": [{"agent_name": "hello_world"}, {"agent_name": "e_2"}]}'),
        _ex("POST", "http://h/api/v1/hello_world/streaming_chat", 200, '{"response": {}}', '{"a": 1}'),
        _ex("POST", "http://h/api/v1/e_2/streaming_chat", 200, '{"response": {}}', '{"a": 2}'),
        _ex("GET", "http://h/api/v1/hello_world/connectivity", 200, '{"connectivity_info": []}'),
        _ex("GET", "http://h/api/v1/hello_world/connectivity", 200, '{"connectivity_info": [{}]}'),
    ]
    rep = reproduction(calls, 4)
    kept = [(e.method, e.url.rsplit("/", 2)[-2], e.request_body) for e in rep.steps]
    assert kept == [("GET", "v1", None), ("POST", "hello_world", '{"a": 1}'), *[("GET", "hello_world", None)] * 2]
    assert [c.value for c in rep.captures] == ["hello_world"] and not rep.unsure


def test_a_reproduction_longer_than_it_keeps_says_it_cannot_tell() -> None:
    calls = [_ex("POST", BASE, 200, f'{{"task_id": "{TASK}"}}', '{"input": "a"}')]
    calls += [_ex("POST", f"{BASE}/{TASK}/steps", 200, "{}", '{"input": "b"}') for _ in range(60)]
    calls.append(_ex("GET", f"{BASE}/{TASK}/steps", 200, "{}"))
    rep = reproduction(calls, len(calls) - 1)
    assert len(rep.steps) == MAX_STEPS and rep.unsure.startswith("62 calls led to it") and outside_state(rep)


def test_ids_whose_maker_is_unknown_are_listed() -> None:
    read = _ex("GET", f"{BASE}/{TASK}", 200, "{}")
    assert unknown_ids([read], []) == {TASK}


def test_a_job_token_of_digits_is_captured_and_an_etag_made_anew_is_named_where_it_stands() -> None:
    session = "0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e"
    calls = [
        _ex("POST", "http://h/session", 201, f'{{"sessionId": "{session}", "etag": "{TASK}"}}', '{"level": "x"}'),
        _ex("POST", "http://h/chat", 201, '{"token": "7000003"}', f'{{"sessionId": "{session}", "chatText": "hi"}}'),
        _ex("GET", "http://h/chat/7000003", 200, '{"jobState": "COMPLETE"}'),
    ]
    rep = reproduction(calls, 2)
    assert len(rep.steps) == 3 and rep.baked == []
    by_name = {c.name: (c.step, c.value, c.used) for c in rep.captures}
    assert by_name["TOKEN_2"] == (1, "7000003", True)  # TOKEN is the run's bearer token's name
    assert by_name["ETAG"] == (0, TASK, False)  # compared by where it stands, never sent


def test_an_object_the_message_names_brings_the_calls_that_made_and_changed_it() -> None:
    """A listing that leaves a session out shows nothing of it: the message names it."""
    left_out = "0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e"
    calls = [
        _ex("POST", "http://h/session", 201, f'{{"sessionId": "{left_out}"}}', '{"level": "x"}'),
        _ex("PUT", f"http://h/session/{left_out}", 200, f'{{"sessionId": "{left_out}"}}', '{"level": "x"}'),
        _ex("POST", "http://h/session", 201, f'{{"sessionId": "{TASK}"}}', '{"level": "x"}'),
        _ex("POST", "http://h/sessions/list", 200, f'{{"page": [{{"sessionId": "{TASK}"}}]}}', "{}"),
    ]
    plain = reproduction(calls, 3)
    assert [e.method for e in plain.steps] == ["POST", "POST"]
    named = reproduction(calls, 3, message=f"session {left_out} is missing from the list")
    assert [e.method for e in named.steps] == ["POST", "PUT", "POST", "POST"]


def test_calls_of_another_failure_and_of_the_own_probe_are_marked() -> None:
    calls = [
        _ex("POST", BASE, 200, f'{{"task_id": "{TASK}"}}', '{"input": "a"}'),
        _ex("PUT", f"{BASE}/{TASK}", 200, "{}", "{}"),  # another failure's: the intruder's write let through
        _ex("POST", f"{BASE}/{TASK}/steps", 200, '{"step_id": "s-1234"}', '{"input": "b"}'),  # this failure's probe
        _ex("GET", f"{BASE}/{TASK}/steps/s-1234", 200, "{}"),
    ]
    rep = reproduction(calls, 3, wrong=[calls[1]], probe=[calls[2]])
    assert (rep.wrong, rep.probe) == ([1], [2])
    assert judged_setup(rep, 1) and judged_setup(rep, 2)  # both compared
    assert not required(rep, 1) and not required(rep, 2) and required(rep, 0)  # neither required


def test_a_read_of_an_object_that_changed_by_itself_cannot_tell() -> None:
    """A job that finished between two reads, nothing written to it: a replay cannot be at the
    moment the recorded read was."""
    job = "http://h/chat/7000003"
    calls = [
        _ex("POST", "http://h/chat", 201, '{"token": "7000003"}', '{"chatText": "hi"}'),
        _ex("GET", job, 202, '{"jobState": "PROCESSING"}'),
        _ex("GET", job, 200, '{"responseText": "hello"}'),
        _ex("POST", f"{job}/trace", 200, '{"page": [{"message": "Received"}]}', "{}"),
    ]
    assert "GET /chat/7000003 answered otherwise by itself" in reproduction(calls, 3).unsure
    assert reproduction(calls[:2] + calls[3:], 2).unsure == ""  # read once: nothing says it moves


def test_reads_of_other_resources_under_one_object_differ_by_nature() -> None:
    """Two artifacts of one task, each downloaded once: other answers, and no drift."""
    task = "http://h/tasks/t-0001"
    calls = [
        _ex("POST", "http://h/tasks", 200, '{"task_id": "t-0001"}', '{"input": "x"}'),
        _ex("GET", f"{task}/artifacts/a-0001", 200, "first file"),
        _ex("GET", f"{task}/artifacts/a-0002", 200, "second file"),
        _ex("GET", f"{task}/artifacts/a-0002", 200, "second file"),
        _ex("POST", f"{task}/steps", 200, '{"step_id": "s-0001"}', '{"input": "y"}'),
        _ex("GET", f"{task}/artifacts/a-0002", 200, "changed by the step"),
        _ex("GET", task, 200, '{"task_id": "t-0001"}'),
    ]
    assert reproduction(calls, 6).unsure == ""  # what a write changed did not change by itself


def test_a_listing_that_counts_more_than_the_calls_made_cannot_tell() -> None:
    """An empty page past the end still counts every task of the run: from a fresh state with
    these calls alone it counts otherwise, whatever the server does."""
    created = _ex("POST", BASE, 200, f'{{"task_id": "{TASK}", "input": "a"}}', '{"input": "a"}')

    def page(total: int, tasks: str = "") -> Exchange:
        pagination = f'"pagination": {{"total_items": {total}, "total_pages": 1, "current_page": 1, "page_size": 2}}'
        return _ex("GET", f"{BASE}?current_page=1&page_size=2", 200, f'{{"tasks": [{tasks}], {pagination}}}')

    assert outside_state(reproduction([created, page(57)], 1))
    listed = f'{{"task_id": "{TASK}", "input": "a"}}'
    assert not outside_state(reproduction([created, page(1, listed)], 1))  # what the calls made, counted
    assert outside_state(reproduction([created, page(2, listed)], 1))


def test_an_answer_the_deciding_one_was_compared_with_is_kept_and_compared_never_required() -> None:
    """A task read by id against its item in the list: either may be the wrong one, so the read by
    id is in the reproduction and compared, but a server that answers it otherwise is a difference."""
    calls = [
        _ex("POST", BASE, 200, f'{{"task_id": "{TASK}", "input": "a"}}', '{"input": "a"}'),
        _ex("GET", f"{BASE}/{TASK}", 200, f'{{"task_id": "{TASK}", "artifacts": []}}'),
        _ex("GET", f"{BASE}?page_size=100", 200, f'{{"tasks": [{{"task_id": "{TASK}", "artifacts": [1]}}]}}'),
    ]
    alone = reproduction(calls, 2)
    assert [ex.url for ex in alone.steps] == [calls[0].url, calls[2].url]  # a read only looked: left out
    rep = reproduction(calls, 2, also=[calls[1]])
    assert [ex.url for ex in rep.steps] == [c.url for c in calls] and rep.also == [1]
    assert 1 in compared(rep) and not required(rep, 1)


def test_a_token_sent_back_to_a_path_whose_answer_was_cut_short_is_of_unknown_origin() -> None:
    """A long page kept only in part: the nextPageToken the next read sends may have been past the
    cut, so it is an old run's value (baked), never one the client made."""
    history = f"{BASE}/{TASK}/history"
    first = _ex("POST", history, 200, '{"page": [{"text": "' + "x" * 50 + '"... [9000 more characters]', "{}")
    calls = [
        _ex("POST", BASE, 200, f'{{"task_id": "{TASK}", "input": "a"}}', '{"input": "a"}'),
        first,
        _ex("POST", history, 200, '{"page": []}', '{"nextPageToken": "1.ab12cd34ef"}'),
    ]
    assert reproduction(calls, 2).baked == ["1.ab12cd34ef"]
    whole = _ex("POST", history, 200, '{"page": [], "nextPageToken": "1.ab12cd34ef"}', "{}")
    assert reproduction([calls[0], whole, calls[2]], 2).baked == []  # found in the answer: captured


def test_the_wait_before_the_deciding_call_is_kept_first() -> None:
    """Many slow setup calls, then the read that waited for a job: the budget goes to the latest
    waits, so the read still comes as late after the job's start as it did."""
    calls = [_ex("POST", BASE, 201, f'{{"task_id": "t-{n:04d}"}}', '{"input": "a"}') for n in range(6)]
    for n, ex in enumerate(calls):
        ex.started, ex.elapsed_ms = 100.0 + 2 * n, 0.0  # 2 s between each: more than the budget
    read = _ex("GET", f"{BASE}/t-0005", 200, '{"task_id": "t-0005"}')
    read.started = calls[-1].started + 0.8
    waits = pauses(Reproduction([*calls, read]))
    assert waits[-1] == 0.8 and sum(waits) <= 3.0 and waits[0] == 0.0


def test_a_page_token_every_walk_gives_alike_is_taken_from_the_walk_the_call_went_on() -> None:
    """Offset cursors are the same on every walk of a list: the deciding page 2 of the second walk
    keeps that walk's page 1, and with it the create of the newest object it showed (which pushed
    the oldest out of a list cut short), not only the first walk's."""
    lst = "http://h/v1/list"
    newest = "aa00bb11-2222-4a0b-9a55-3f1a2b3c4d5e"
    calls = [
        _ex("POST", BASE, 201, f'{{"task_id": "{TASK}"}}', '{"input": "a"}'),
        _ex("POST", lst, 200, f'{{"page": [{{"task_id": "{TASK}"}}], "next": "10.c0ffee"}}', "{}"),
        _ex("POST", lst, 200, f'{{"page": [{{"task_id": "{TASK}"}}]}}', '{"next": "10.c0ffee"}'),
        _ex("POST", BASE, 201, f'{{"task_id": "{newest}"}}', '{"input": "b"}'),
        _ex("POST", lst, 200, f'{{"page": [{{"task_id": "{newest}"}}], "next": "10.c0ffee"}}', "{}"),
        _ex("POST", lst, 200, '{"page": []}', '{"next": "10.c0ffee"}'),
    ]
    rep = reproduction(calls, 5)
    assert [e.response_body for e in rep.steps] == [e.response_body for e in calls]
