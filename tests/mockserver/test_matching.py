"""Request predicates (mockserver/matching.py): each operator, JSON pointers, and matchers that
refuse names nothing serves, with the place named."""

from __future__ import annotations

from typing import Any

import pytest

from mockserver.matching import (
    MISSING,
    MatchError,
    Seen,
    Slot,
    equal,
    parse_matcher,
    parse_pointer,
    parse_test,
    resolve_pointer,
)

OPERATIONS = {"agent-protocol": {"createAgentTask": set(), "getAgentTask": {"task_id"}}}
BODY = {"input": "write about owls", "n": 3, "flag": True, "tags": ["a", "b"], "meta": {"k": 1, "j": [1]}}


@pytest.mark.parametrize(
    ("predicate", "value", "holds"),
    [
        ("owls", "owls", True),
        ("owls", "Owls", False),
        ({"equals": 3}, 3.0, True),
        ({"equals": 1}, True, False),  # JSON: true is not 1
        ({"equals": {"k": 1}}, {"k": 1}, True),
        ({"equals": {"k": 1}}, {"k": 1, "x": 2}, False),
        ({"contains": "owl"}, "write about owls", True),
        ({"contains": "a"}, ["a", "b"], True),
        ({"contains": {"k": 1}}, {"k": 1, "j": [1]}, True),
        ({"contains": 5}, "5", False),
        ({"matches": "^wr.*s$"}, "write about owls", True),
        ({"matches": "^x"}, "write", False),
        ({"matches": "x"}, 5, False),
        ({"present": True}, MISSING, False),
        ({"present": False}, MISSING, True),
        ({"present": True}, 0, True),
        ({"equals": None}, None, True),
        ({"equals": "x"}, MISSING, False),
    ],
)
def test_each_operator(predicate: Any, value: Any, holds: bool) -> None:
    assert parse_test("t", predicate).holds(value) is holds


def test_text_values_compare_with_json_text() -> None:
    assert parse_test("t", 5).holds("5", text=True)
    assert parse_test("t", True).holds("true", text=True)
    assert not parse_test("t", 5).holds("6", text=True)


def test_json_equality() -> None:
    assert equal([1, {"a": 2.0}], [1.0, {"a": 2}])
    assert not equal([1], [1, 1]) and not equal(False, 0) and not equal("1", 1)


@pytest.mark.parametrize(
    ("pointer", "found"),
    [
        ("", BODY),
        ("/input", "write about owls"),
        ("/tags/1", "b"),
        ("/tags/2", MISSING),
        ("/tags/01", MISSING),  # RFC 6901: no leading zeros
        ("/meta/j/0", 1),
        ("/n/x", MISSING),
        ("/nope", MISSING),
    ],
)
def test_pointers(pointer: str, found: Any) -> None:
    assert resolve_pointer(BODY, parse_pointer("p", pointer)) == found or found is MISSING
    if found is MISSING:
        assert resolve_pointer(BODY, parse_pointer("p", pointer)) is MISSING


def test_pointer_escapes() -> None:
    assert resolve_pointer({"a/b": {"~c": 1}}, parse_pointer("p", "/a~1b/~0c")) == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"contains": "x", "matches": "y"}, "t: give one of equals, contains, matches, present"),
        ({"matches": "("}, "t.matches: not a regular expression"),
        ({"present": "yes"}, "t.present: true or false"),
        ({"unknown": 1}, "t: give one of"),
    ],
)
def test_bad_predicates_name_the_place(raw: Any, message: str) -> None:
    with pytest.raises(MatchError, match=f"^{message}"):
        parse_test("t", raw)


def test_a_matcher_matches_every_part() -> None:
    matcher = parse_matcher(
        "r",
        {
            "protocol": "agent-protocol",
            "operation": "getAgentTask",
            "path": {"task_id": {"matches": "^t-"}},
            "query": {"page": 2},
            "headers": {"X-Trace": {"present": True}},
            "identity": "alice",
            "body": [{"pointer": "/input", "contains": "owls"}],
        },
        OPERATIONS,
    )
    seen = Seen("agent-protocol", "getAgentTask", {"task_id": "t-1"}, {"page": "2"}, {"x-trace": "1"}, BODY, "alice")
    assert matcher.matches(seen)
    for changed in (
        {"protocol": "neuro-san"},
        {"operation": "createAgentTask"},
        {"path": {"task_id": "u-1"}},
        {"query": {"page": "3"}},
        {"headers": {}},
        {"identity": "bob"},
        {"body": {"input": "cats"}},
    ):
        other = Seen(**{**{f: getattr(seen, f) for f in seen.__dataclass_fields__}, **changed})
        assert not matcher.matches(other), changed
    assert matcher.to_json()["path"] == {"task_id": {"matches": "^t-"}}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"protocol": "toy"}, "r.protocol: 'toy' is not served here"),
        ({"operation": "nope"}, "r.operation: no served protocol has an operation 'nope'"),
        ({"protocol": "agent-protocol", "operation": "nope"}, "r.operation: agent-protocol has no operation"),
        ({"operation": "getAgentTask", "path": {"id": "x"}}, "r.path.id: getAgentTask has no path parameter 'id'"),
        ({"body": [{"pointer": "input", "equals": 1}]}, "r.body\\[0\\].pointer: a JSON pointer"),
        ({"body": {"pointer": "/a"}}, "r.body: a list"),
        ({"verb": "GET"}, "r: unknown field\\(s\\) verb"),
    ],
)
def test_bad_matchers_name_the_place(raw: Any, message: str) -> None:
    with pytest.raises(MatchError, match=f"^{message}"):
        parse_matcher("r", raw, OPERATIONS)


class _Stub:
    def __init__(self, name: str, request: dict[str, Any]) -> None:
        self.name = name
        self.matcher = parse_matcher(name, {"operation": "getAgentTask", **request}, OPERATIONS)


def _names(slot: Slot, **seen: Any) -> list[str]:
    values = {"path": {}, "query": {}, "headers": {}, "body": None, **seen}
    return [s.name for s in slot.candidates(Seen("agent-protocol", "getAgentTask", **values))]


def test_a_slot_looks_up_the_stubs_that_could_take_a_call_in_their_order() -> None:
    stubs = [
        _Stub("a1", {"path": {"task_id": "a"}}),
        _Stub("any", {"headers": {"X-Any": {"present": True}}}),
        _Stub("b", {"path": {"task_id": "b"}}),
        _Stub("a2", {"path": {"task_id": "a"}, "query": {"n": 5}}),
    ]
    slot = Slot()
    slot.fill(stubs)
    assert slot.key == ("path", "task_id")
    assert _names(slot, path={"task_id": "a"}) == ["a1", "any", "a2"]  # document order kept
    assert _names(slot, path={"task_id": "b"}) == ["any", "b"]
    assert _names(slot, path={"task_id": "c"}) == ["any"]  # those that index nothing, only
    for seen in ({"path": {"task_id": "a"}}, {"path": {"task_id": "c"}}):  # never one that could match is left out
        values = {"path": {}, "query": {"n": "5"}, "headers": {"x-any": "1"}, "body": None, **seen}
        full = Seen("agent-protocol", "getAgentTask", **values)
        assert {s.name for s in stubs if s.matcher.matches(full)} <= {s.name for s in slot.candidates(full)}


def test_a_slot_keys_values_as_equals_compares_them() -> None:
    slot = Slot()
    slot.fill(
        [
            _Stub("one", {"body": [{"pointer": "/n", "equals": 1}]}),
            _Stub("t", {"body": [{"pointer": "/n", "equals": True}]}),
        ]
    )
    assert _names(slot, body={"n": 1.0}) == ["one"] and _names(slot, body={"n": True}) == ["t"]
    assert _names(slot, body={"m": 1}) == [] and _names(slot, body=None) == []
    text = Slot()
    text.fill([_Stub("five", {"query": {"n": 5}})])
    assert _names(text, query={"n": "5"}) == ["five"] and _names(text, query={}) == []
