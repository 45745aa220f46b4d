"""The history rule every model judges a conversation by (conformance/check/turns.py)."""

from __future__ import annotations

from typing import Any

from conformance.check.turns import continued, started


def _asked(message: Any) -> str | None:
    return str(message["text"]) if message["type"] == "HUMAN" else None


def _turn(question: str, *extra: str) -> list[dict[str, str]]:
    between = [{"type": kind, "text": "..."} for kind in extra]
    return [{"type": "HUMAN", "text": question}, *between, {"type": "AI", "text": "a"}]


def test_a_new_conversation_asks_its_own_question_whatever_else_it_holds() -> None:
    assert started(_turn("q"), "q", _asked) == []
    assert started([{"type": "SYSTEM", "text": "be brief"}, *_turn("q", "AGENT")], "q", _asked) == []


def test_a_new_conversation_that_joined_another_is_named() -> None:
    [problem] = started([*_turn("earlier"), *_turn("q")], "q", _asked)
    assert "asks 2 questions" in problem and "joined another conversation" in problem
    [problem] = started(_turn("other"), "q", _asked)
    assert "does not hold the question" in problem


def test_a_continued_conversation_adds_one_turn_of_one_question() -> None:
    before = _turn("one")
    assert continued(before, [*before, *_turn("two", "AGENT_TOOL_RESULT")], "two", _asked) == []


def test_a_history_sent_back_and_returned_doubled_is_named() -> None:
    before = [*_turn("one"), *_turn("two")]
    [problem] = continued(before, [*before, *before, *_turn("three")], "three", _asked)
    assert "asks 3 questions" in problem and "earlier messages came back again" in problem


def test_a_continued_history_that_lost_or_reordered_what_was_sent_is_named() -> None:
    before = [*_turn("one"), *_turn("two")]
    [problem] = continued(before, [*_turn("two"), *_turn("one"), *_turn("three")], "three", _asked)
    assert "does not start with the 4 message(s) sent back" in problem
    [problem] = continued(before, [*before, {"type": "AI", "text": "a"}], "three", _asked)
    assert "no message asks 'three'" in problem or 'no message asks "three"' in problem
