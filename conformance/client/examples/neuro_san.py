"""A NeuroSan client (streaming_chat, NDJSON) for the ``client`` command's scenarios:
``python -m conformance.client.examples.neuro_san [--break NAME]`` (``catalogue.py``)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from .calls import Answer, GaveUp, entry, expect, fields, patient

BREAKS = ("ignore-retry-after", "flood", "take-cut-as-complete", "forget-context", "strict-fields", "bad-body")
CHAT = "/api/v1/hello_world/streaming_chat"
KNOWN_MESSAGE = {"type", "text", "origin", "chat_context", "structure", "sly_data", "mime_data", "tool_result_origin"}


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    chat_context: Any


def _read(answer: Answer, broken: str | None) -> Reply:
    """The answer is the last AGENT_FRAMEWORK message (the document's point 1); a stream without one
    ended before its answer."""
    expect(answer, "the chat")
    final: dict[str, Any] | None = None
    last_text = ""
    for line in answer.body.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        frame = json.loads(line)
        if "error" in frame:
            raise GaveUp(f"the stream carried an error: {frame['error']}")
        message = frame.get("response", {})
        if broken == "strict-fields" and set(message) - KNOWN_MESSAGE:
            raise ValueError(f"unexpected fields {sorted(set(message) - KNOWN_MESSAGE)}")  # a strict model's crash
        last_text = message.get("text", last_text)
        if message.get("type") == "AGENT_FRAMEWORK":
            final = message
    if final is None:
        if broken == "take-cut-as-complete":
            return Reply(last_text, None)
        raise GaveUp("the stream ended before its AGENT_FRAMEWORK answer")
    return Reply(final.get("text", ""), final.get("chat_context"))


def _say(text: str, context: Any, broken: str | None) -> Reply:
    body: dict[str, Any] = {"user_message": {"type": "HUMAN", "text": text}}
    if broken == "bad-body":
        body["user_message"] = text  # the document wants a ChatMessage object
    if context is not None and broken != "forget-context":
        body["chat_context"] = context
    return _read(patient("POST", CHAT, body, broken=broken), broken)


def function(broken: str | None) -> None:
    read = fields(expect(patient("GET", "/api/v1/hello_world/function", broken=broken), "the function"))
    print(read.get("function", {}).get("description", ""))


def ask(broken: str | None) -> None:
    print(_say("hello", None, broken).text)


def converse(broken: str | None) -> None:
    first = _say("hi, I am Ann", None, broken)
    print(_say("what is my name?", first.chat_context, broken).text)


def main(argv: list[str] | None = None) -> int:
    tasks = {
        "continue-conversation": converse,
        "cut-stream": ask,
        "retry-after": ask,
        "busy": ask,
        "unknown-fields": ask,
        "redirect": function,
        "gzip": function,
    }
    return entry("neuro_san", tasks, BREAKS, argv)


if __name__ == "__main__":
    sys.exit(main())
