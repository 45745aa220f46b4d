"""What a conversation's history must hold across calls, whoever keeps it (the client in a context
it sends back, or the server in a session): the rule every protocol's model judges a history by
(issue 34, class 7).

A history is a list of messages in order; the caller says which of them are the user's questions.
A conversation started afresh holds one question, its own: none of another conversation's (a
server that joins the most recent one). A conversation continued holds the history it continued,
message for message, then the new turn: exactly one question, the one just asked (a server that
doubles what it was sent back shows the earlier questions again after it). What else a turn adds
(the answer, a system message, tool calls) is the server's to choose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .shown import shown

Asked = Callable[[Any], str | None]
"""The question a message asks (its text), or None when it is not the user's."""


def started(history: Sequence[Any], question: str, asked: Asked) -> list[str]:
    """The problems of a history a new conversation's first answer holds (empty: it holds)."""
    questions = [q for m in history if (q := asked(m)) is not None]
    if questions == [question]:
        return []
    if question not in questions:
        return [f"the history does not hold the question {shown(question)} (it asks {shown(questions, 300)})"]
    return [
        f"a new conversation's history asks {len(questions)} questions, {shown(questions, 300)}: only "
        f"{shown(question)} was asked in it (it joined another conversation)"
    ]


def continued(before: Sequence[Any], history: Sequence[Any], question: str, asked: Asked) -> list[str]:
    """The problems of ``history``, the answer to ``question`` asked in the conversation that held
    ``before`` (compared as given: the caller reduces messages to what it compares)."""
    if list(history[: len(before)]) != list(before):
        return [f"the history does not start with the {len(before)} message(s) sent back: {shown(list(history), 400)}"]
    turn = [q for m in history[len(before) :] if (q := asked(m)) is not None]
    if turn == [question]:
        return []
    if question not in turn:
        return [f"after the {len(before)} message(s) sent back, no message asks {shown(question)}"]
    return [
        f"after the {len(before)} message(s) sent back, the turn asks {len(turn)} questions, {shown(turn, 300)}: "
        f"only {shown(question)} was asked (earlier messages came back again)"
    ]
