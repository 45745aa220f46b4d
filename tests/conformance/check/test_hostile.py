"""The hostile inputs' mechanism (conformance/check/hostile.py): what is sent, drawn with the seed."""

from __future__ import annotations

import json

import pytest

from conformance.check import hostile
from specs.documents import load


def test_texts_are_the_lone_surrogates_then_a_seeded_draw_of_the_corpus() -> None:
    drawn = hostile.texts(0)
    assert drawn[: len(hostile.LONE_SURROGATES)] == hostile.LONE_SURROGATES
    corpus = set(hostile.corpus())
    assert len(corpus) > 50, "Hypothesis' corpus of hostile strings was not found"
    rest = [text for _, text in drawn[len(hostile.LONE_SURROGATES) :]]
    assert len(rest) == hostile.CORPUS_DRAWS and set(rest) <= corpus
    assert hostile.texts(0) == drawn, "the same seed draws the same strings"
    assert hostile.texts(1) != drawn


def test_a_lone_surrogate_is_sent_as_an_escape() -> None:
    sent = hostile.json_bytes({"input": "a\ud800b"})
    assert sent == b'{"input": "a\\ud800b"}'
    assert json.loads(sent) == {"input": "a\ud800b"}


@pytest.mark.parametrize(
    ("protocol", "operations"),
    [
        ("agent-protocol", {"createAgentTask", "executeAgentTaskStep"}),
        ("neuro-san", {"AgentService_StreamingChat"}),
        ("sgr-agent-core", {"createChatCompletion", "provideClarification"}),
        (
            "synapse-agent",
            {
                "createAgentSession",
                "updateAgentSession",
                "listAgentSessions",
                "getSessionHistory",
                "startAgentChat",
                "getTraceEvents",
            },
        ),
    ],
)
def test_the_operations_that_take_json_are_read_from_the_document(protocol: str, operations: set[str]) -> None:
    assert hostile.json_body_operations(load(protocol)) == operations
