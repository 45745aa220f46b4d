"""The hostile inputs' mechanism (conformance/check/hostile.py): what is sent, drawn with the seed."""

from __future__ import annotations

import json

import pytest

from conformance.check import hostile
from conformance.check.traffic import Observed
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


def test_a_hostile_file_name_is_sent_as_the_bytes_a_lenient_form_encoder_writes() -> None:
    """No encoder writes a lone surrogate into a multipart header, and JSON's escapes do not reach
    one: the name goes as the three bytes a lenient encoder writes for it (not UTF-8), its '"', CR
    and LF escaped as HTML5's form encoding does, so it cannot end the header."""
    body, content_type = hostile.multipart(
        [("relative_path", None, hostile.form_text("in\udfff")), ("file", 'a"b\r\n\ud800.txt', b"data")]
    )
    boundary = content_type.split("boundary=")[1]
    assert content_type.startswith("multipart/form-data; ")
    assert b'filename="a%22b%0D%0A\xed\xa0\x80.txt"' in body
    assert b"\r\n\r\nin\xed\xbf\xbf\r\n" in body and body.endswith(f"--{boundary}--\r\n".encode())
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")


def test_a_form_whose_file_name_or_text_is_not_utf8_is_left_open_to_the_proxy() -> None:
    """The proxy leaves a refusal of such a form to the HOSTILE requirements, as it does a lone
    surrogate in JSON; a form with UTF-8 names and binary file content is judged as usual."""

    def observed(parts: list[tuple[str, str | None, bytes]]) -> Observed:
        body, content_type = hostile.multipart(parts)
        return Observed(1, "POST", "/ap/v1/agent/tasks/t/artifacts", [], {"content-type": content_type}, body)

    assert observed([("file", "a\ud800.txt", b"x")]).left_open
    assert observed([("relative_path", None, hostile.form_text("\udfff")), ("file", "ok.txt", b"x")]).left_open
    utf8_folder = ("relative_path", None, "donn\u00e9es".encode())
    fair = observed([utf8_folder, ("file", "r\u00e9sum\u00e9", b"\xed\xa0\x80\xff")])
    assert not fair.left_open
