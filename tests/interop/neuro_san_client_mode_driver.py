"""The ``client`` command's driver for the neuro-san client (0.7.15, Python >= 3.12): reads
CONFORMANCE_BASE_URL and CONFORMANCE_SCENARIO, talks to hello_world the way neuro-san's own
agent_cli does (HttpServiceAgentSession under a StreamingInputProcessor, which carries the
chat_context from one turn to the next), exits 0 when the client gave an answer and 1 when it
raised or gave none.

Run with the client's own venv (neuro_san_peer.py). The session takes a host and a port and builds
http://HOST:PORT/api/v1/AGENT/METHOD itself, so the base URL is read for those two only (the
document's paths sit at the server's root). The client has no retry of its own; the driver adds
none, and no check of the stream: what it exits is what the client made of the answers.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from urllib.parse import urlsplit

from neuro_san.client.streaming_input_processor import StreamingInputProcessor
from neuro_san.session.http_service_agent_session import HttpServiceAgentSession

AGENT = "hello_world"


def turn(processor: StreamingInputProcessor, state: dict[str, Any], text: str) -> dict[str, Any]:
    return processor.process_once({**state, "user_input": text})


def main(base: str, scenario: str) -> int:
    url = urlsplit(base)
    session = HttpServiceAgentSession(
        host=url.hostname, port=str(url.port), agent_name=AGENT, timeout_in_seconds=10, streaming_timeout_in_seconds=10
    )
    processor = StreamingInputProcessor(session=session)
    try:
        if scenario in ("redirect", "gzip"):  # a read: the agent's function description
            print(session.function({})["function"]["description"])
            return 0
        if scenario == "continue-conversation":
            state = turn(processor, turn(processor, {}, "hi, I am Ann"), "what is my name?")
        else:
            state = turn(processor, {}, "hello")
    except ValueError as exc:  # the session's own error for any failed call (its cause chained)
        print(f"gave up: {exc.__cause__!r}", file=sys.stderr)
        return 1
    answer = state.get("last_chat_response")
    if not answer:
        print("gave up: the client gave no answer", file=sys.stderr)
        return 1
    print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(os.environ["CONFORMANCE_BASE_URL"], os.environ["CONFORMANCE_SCENARIO"]))
