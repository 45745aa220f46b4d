"""A server's JSON as a check reads it (conformance/check/answer.py): a read the answer cannot
satisfy fails the check, naming the path and carrying the answer's exchange, and is still the
KeyError/TypeError/IndexError Python would raise; the values behave as the JSON they are."""

from __future__ import annotations

import copy
import json

import pytest

from conformance.check.answer import BadIndex, MissingKey, Unreadable, WrongType, readable
from conformance.verdicts.results import CheckFailed, Exchange

ANSWER = Exchange("GET", "http://127.0.0.1/agents", {}, None, 200)


def test_a_read_the_answer_cannot_satisfy_fails_with_the_path_and_the_answer() -> None:
    body = readable({"agents": [{"agent_id": "a", "task": []}], "steps": {"s": 1}}, ANSWER)
    cases = [
        (lambda: body["agents"][0]["task_messages"], MissingKey, KeyError, '"task_messages" at $.agents[0]'),
        (lambda: body["agents"][3], BadIndex, IndexError, "1 item at $.agents, read at item 3"),
        (lambda: body["steps"][0], WrongType, TypeError, "an object at $.steps, read as an array"),
        (lambda: body["agents"]["agent_id"], WrongType, TypeError, "an array at $.agents, read as an object"),
    ]
    for read, kind, python, said in cases:
        with pytest.raises(kind) as caught:
            read()
        assert isinstance(caught.value, CheckFailed | Unreadable) and isinstance(caught.value, python)
        assert said in str(caught.value) and str(caught.value).startswith("the answer ")
        assert caught.value.shown_by == (ANSWER,)


def test_the_values_are_the_json_they_read() -> None:
    raw = {"a": [1, {"b": None}], "c": "text"}
    body = readable(raw, ANSWER)
    assert body == raw and json.loads(json.dumps(body)) == raw and copy.deepcopy(body) == raw
    assert body.get("missing") is None and "a" in body and body["a"][-1] == {"b": None}
    assert type(body["c"]) is str  # strings stay Python's own: the schema validator takes no subclass
