"""Text cut short at a word, with an ellipsis, in every report and on the console."""

from __future__ import annotations

import pytest

from conformance.reporting.clip import ELLIPSIS, clip


def test_text_that_fits_is_untouched() -> None:
    assert clip("getAgentTask answered 500", 25) == "getAgentTask answered 500"
    assert clip("", 0) == ""


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("the body does not match /ap/v1/agent/tasks", 30, "the body does not match…"),  # not "/ap/v1"
        ("the body does not match", 12, "the body…"),
        ("one, two: three", 10, "one, two…"),  # no dangling punctuation before the ellipsis
        ("a " + "x" * 40, 20, "a " + "x" * 17 + ELLIPSIS),  # a token longer than half the room is cut inside
    ],
)
def test_a_cut_ends_at_a_word_with_an_ellipsis(text: str, limit: int, expected: str) -> None:
    assert clip(text, limit) == expected
    assert len(clip(text, limit)) <= limit


def test_the_cut_never_exceeds_the_limit() -> None:
    text = "word " * 100
    for limit in range(1, 60):
        cut = clip(text, limit)
        assert len(cut) <= limit and cut.endswith(ELLIPSIS)
