"""The ``client`` command's driver for the openai client (SGR Agent Core): reads
CONFORMANCE_BASE_URL and CONFORMANCE_SCENARIO, does the scenario's task the way an application
using openai would, exits 0 when the client returned an answer and 1 when it raised.

It adds no check of its own (no finish_reason test, no [DONE] test): what it exits is what the
client made of the stream, so the verdicts are the client's.
"""

from __future__ import annotations

import os
import sys

import httpx
import openai


def _ask(client: openai.OpenAI, model: str, text: str) -> tuple[str, str]:
    """(the answer's text, the model the chunks named: the agent's id)."""
    stream = client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}], stream=True)
    parts, agent = [], ""
    for chunk in stream:
        agent = chunk.model or agent
        parts.extend(choice.delta.content or "" for choice in chunk.choices)
    return "".join(parts), agent


def main() -> int:
    base = os.environ["CONFORMANCE_BASE_URL"]
    scenario = os.environ["CONFORMANCE_SCENARIO"]
    try:
        with openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=3, timeout=10) as client:
            if scenario in ("redirect", "gzip"):
                text = " ".join(model.id for model in client.models.list())
            elif scenario == "clarification":
                text, agent = _ask(client, "owl_expert", "tell me about owls")
                state = httpx.get(f"{base}/agents/{agent}/state", timeout=10).json()
                if state.get("state") == "waiting_for_clarification":  # the documented way back: its id as model
                    text, _ = _ask(client, agent, "barn owls")
            else:
                text, _ = _ask(client, "sgr_agent", "hello")
    except openai.OpenAIError as exc:
        print(f"gave up: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
