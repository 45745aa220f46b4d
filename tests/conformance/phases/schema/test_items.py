"""The property-based phase judges the events of each stream it read by ``events.items`` (the
proxy's rule), in place of schemathesis's own event validation."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from conformance.phases.schema.items import ItemStreams
from specs.documents import load

CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1737979200,
    "model": "sgr_agent_1",
    "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}],
}


def interaction(status: int, *data: str, label: str = "text/event-stream") -> Any:
    request = SimpleNamespace(method="POST", uri="http://127.0.0.1:1/v1/chat/completions")
    body = "".join(f"data: {d}\n\n" for d in data).encode()
    return SimpleNamespace(
        request=request, response=SimpleNamespace(status_code=status, headers={"content-type": [label]}, content=body)
    )


def test_a_chat_stream_is_judged_event_by_event_whatever_its_label() -> None:
    streams = ItemStreams(load("sgr-agent-core"))
    fair = streams.judged("POST /v1/chat/completions", interaction(200, json.dumps(CHUNK), "[DONE]"))
    assert fair is not None and fair.problems == []  # the control
    assert fair.facts["schema"] == {"$ref": "#/components/schemas/ChatCompletionStreamEvent"}
    plain = streams.judged("POST /v1/chat/completions", interaction(200, json.dumps(CHUNK), "oops", label="text/plain"))
    assert plain is not None and len(plain.problems) == 1 and plain.problems[0].startswith('event 2 "oops"')


def test_an_answer_the_document_gives_no_item_schema_is_left_to_schemathesis() -> None:
    streams = ItemStreams(load("sgr-agent-core"))
    assert streams.judged("POST /v1/chat/completions", interaction(422, "x")) is None  # a JSON error body
    assert streams.judged("GET /agents", interaction(200, "x")) is None
    assert streams.judged("GET /nowhere", interaction(200, "x")) is None
