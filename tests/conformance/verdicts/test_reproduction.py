"""Which calls a finding keeps: the deciding call and each earlier one it depends on, ids captured."""

from __future__ import annotations

from conformance.verdicts.reproduction import find, reproduction, unknown_ids
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
        _ex("POST", f"{BASE}/{TASK}/steps", 200, '{"step_id": "s-1", "task_id": "' + TASK + '"}', "{}"),
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


def test_what_a_discovery_read_found_links_no_other_call() -> None:
    """An agent found by a listing is not an object the calls made: two chats with it are unrelated."""
    calls = [
        _ex("GET", "http://h/api/v1/list", 200, '{"agents": [{"agent_name": "hello_world"}]}'),
        _ex("POST", "http://h/api/v1/hello_world/streaming_chat", 200, '{"response": {}}', '{"a": 1}'),
        _ex("POST", "http://h/api/v1/hello_world/streaming_chat", 200, '{"response": {}}', '{"a": 2}'),
    ]
    rep = reproduction(calls, 2)
    assert [e.request_body for e in rep.steps] == [None, '{"a": 2}']
    assert [c.value for c in rep.captures] == ["hello_world"]


def test_ids_whose_maker_is_unknown_are_listed() -> None:
    read = _ex("GET", f"{BASE}/{TASK}", 200, "{}")
    assert unknown_ids([read], []) == {TASK}
