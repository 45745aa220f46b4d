"""An SGR Agent Core client (OpenAI chat completions over SSE) for the ``client`` command's
scenarios: ``python -m conformance.client.examples.sgr_agent_core [--break NAME]`` (``catalogue.py``)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from .calls import Answer, GaveUp, call, entry, expect, fields, patient

BREAKS = (
    "ignore-retry-after",
    "flood",
    "take-cut-as-complete",
    "skip-clarification",
    "new-chat",
    "strict-fields",
    "strict-events",
    "bad-body",
)
CHAT = "/v1/chat/completions"
KNOWN_CHUNK = {"id", "object", "created", "model", "choices", "system_fingerprint", "usage"}


@dataclass(frozen=True, slots=True)
class Reply:
    agent: str
    text: str


def _read(answer: Answer, broken: str | None) -> Reply:
    """The answer's content, from its message events (an event of another type is not one: its
    ``event:`` field names it); only a stream ended by ``data: [DONE]`` is whole."""
    expect(answer, "the chat")
    text, done, event = [], False, "message"
    for line in answer.body.decode("utf-8", "replace").splitlines():
        if not line:  # a blank line ends an event: the next one is a message unless it says otherwise
            event = "message"
            continue
        if line.startswith("event:"):
            event = line[6:].strip() or "message"
            if event != "message" and broken == "strict-events":
                raise ValueError(f"unexpected event type {event!r}")  # a client that knows only its own events
            continue
        if not line.startswith("data:") or event != "message":
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            done = True
            break
        chunk = json.loads(data)
        if broken == "strict-fields" and set(chunk) - KNOWN_CHUNK:
            raise ValueError(f"unexpected fields {sorted(set(chunk) - KNOWN_CHUNK)}")  # a strict model's crash
        for choice in chunk.get("choices", []):
            text.append(choice.get("delta", {}).get("content") or "")
    if not done and broken != "take-cut-as-complete":
        raise GaveUp("the stream ended before data: [DONE]: the answer is incomplete")
    return Reply(answer.headers.get("x-agent-id", ""), "".join(text))


def _chat(model: str, content: str, broken: str | None) -> Answer:
    body = {"model": model, "messages": [{"role": "user", "content": content}], "stream": True}
    if broken == "bad-body":
        body["messages"] = "hello"  # the document wants a list of messages
    return patient("POST", CHAT, body, broken=broken)


def ask(broken: str | None) -> None:
    print(_read(_chat("sgr_agent", "hello", broken), broken).text)


def models(broken: str | None) -> None:
    listed = fields(expect(patient("GET", "/v1/models", broken=broken), "listing the models"))
    print(" ".join(model.get("id", "") for model in listed.get("data", [])))


def clarify(broken: str | None) -> None:
    first = _read(_chat("owl_expert", "tell me about owls", broken), broken)
    state = call("GET", f"/agents/{first.agent}/state").json()
    if state.get("state") == "waiting_for_clarification" and broken != "skip-clarification":
        if broken == "new-chat":  # the answer sent as a new task: a new agent that asks again
            answer = _chat("owl_expert", "barn owls", broken)
        else:
            clarification = {"messages": [{"role": "user", "content": "barn owls"}]}
            answer = call("POST", f"/agents/{first.agent}/provide_clarification", clarification)
        print(_read(answer, broken).text)
    else:
        print(first.text)


def main(argv: list[str] | None = None) -> int:
    tasks = {
        "clarification": clarify,
        "cut-stream": ask,
        "retry-after": ask,
        "busy": ask,
        "unknown-fields": ask,
        "unknown-event": ask,
        "redirect": models,
        "redirect-post": ask,
        "gzip": models,
    }
    return entry("sgr_agent_core", tasks, BREAKS, argv)


if __name__ == "__main__":
    sys.exit(main())
