"""``events.items``: each event of a stream holds the document's item schema, one rule for the run's
property-based phase, the proxy's document judge (event by event) and replay."""

from __future__ import annotations

import json
from typing import Any

from conformance.check.judgments import Seen, events, judge
from conformance.check.streams import sse_events
from specs.documents import load
from specs.schemas import SchemaSet

SGR = load("sgr-agent-core")
CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1737979200,
    "model": "sgr_agent_1",
    "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}],
}


def stream(*data: str, extra: str = "") -> Seen:
    body = "".join(f"{extra}data: {d}\n\n" for d in data).encode()
    return Seen("POST", "http://127.0.0.1:1/v1/chat/completions", 200, {"content-type": "text/event-stream"}, body)


def facts() -> dict[str, Any]:
    schema = events.item_schema(SGR, SGR.operation("createChatCompletion"), 200)
    assert schema == {"$ref": "#/components/schemas/ChatCompletionStreamEvent"}
    return events.facts_of(SGR, schema)


def test_a_fair_stream_holds_and_a_plain_text_event_or_a_wrong_chunk_object_does_not() -> None:
    fair = json.dumps(CHUNK)
    assert judge(events.ITEMS, stream(fair, fair, "[DONE]"), facts()) == []  # the control
    (plain,) = judge(events.ITEMS, stream(fair, "Researching prices", "[DONE]"), facts())  # sgr-non-json-event
    assert plain.startswith('event 2 "Researching prices": /data:') and "is not application/json" in plain
    wrong = json.dumps({**CHUNK, "object": "chat.completion"})  # sgr-wrong-chunk-object
    problems = judge(events.ITEMS, stream(wrong, wrong, "[DONE]"), facts())
    assert len(problems) == 2 and all('/object: "chat.completion" is not one of' in p for p in problems)


def test_the_event_is_judged_as_a_client_dispatches_it_and_a_stream_is_judged_up_to_its_framing() -> None:
    strict = {"type": "object", "required": ["data", "event"], "properties": {"event": {"const": "message"}}}
    own = {**events.facts_of(SGR, strict)}
    assert judge(events.ITEMS, stream("[DONE]"), own) == []  # no event: field dispatches "message"
    (named,) = judge(events.ITEMS, stream("[DONE]", extra="event: delta\n"), own)
    assert '/event: "message" was expected' in named
    cut = stream(json.dumps(CHUNK), "oops")
    assert judge(events.ITEMS, Seen(cut.method, cut.url, 200, {}, cut.body[:-9]), facts()) == []  # cut inside "oops"


def test_the_proxy_judges_each_event_by_the_same_rule_as_it_comes() -> None:
    items = events.Items(SchemaSet(SGR.raw), facts()["schema"])
    seen = stream(json.dumps(CHUNK), "Researching prices", "[DONE]")
    per_event = [p for frame in sse_events([seen.body]) for p in items.problems(frame)]
    assert per_event == judge(events.ITEMS, seen, facts()) and len(per_event) == 1


def test_no_item_schema_no_judgment() -> None:
    assert events.item_schema(SGR, SGR.operation("listAgents"), 200) is None
    ns = load("neuro-san")  # its stream is NDJSON and its document gives it no itemSchema
    assert events.item_schema(ns, ns.operation("AgentService_StreamingChat"), 200) is None
