"""SGR Agent Core's data stubs: models and what their agents say, clarification included."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.stubs import StubError

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
MODELS = {
    "models": [
        {"name": "owl_expert", "reply": "Owls hoot.\nThey fly at night.\n"},
        {"name": "careful", "chunks": ["Fine", "."], "clarify": ["Which owls?\n"]},
    ]
}


def chat(c: httpx.Client, model: str, text: str) -> tuple[str, str]:
    with c.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": model, "stream": True, "messages": [{"role": "user", "content": text}]},
    ) as r:
        assert r.status_code == 200
        events = [line.removeprefix("data: ") for line in r.iter_lines() if line.startswith("data: ")]
        agent = r.headers["X-Agent-ID"]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    return "".join(ch["choices"][0]["delta"].get("content", "") for ch in chunks), agent


def test_a_stubbed_model_is_listed_and_says_its_reply(serve: Serve) -> None:
    with (
        serve(protocols=("sgr-agent-core",), stubs={"data": {"sgr-agent-core": MODELS}}) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        assert {"owl_expert", "careful", "sgr_agent"} <= {m["id"] for m in c.get("/v1/models").json()["data"]}
        said, agent = chat(c, "owl_expert", "tell me")
        assert said == "Owls hoot.\nThey fly at night.\n" and agent.startswith("owl_expert_")
        state = c.get(f"/agents/{agent}/state").json()
        assert (state["state"], state["execution_result"]) == ("completed", said)
        asked, waiting = chat(c, "careful", "owls")
        assert asked == "Which owls?\n"
        assert c.get(f"/agents/{waiting}/state").json()["state"] == "waiting_for_clarification"
        answered, same = chat(c, waiting, "barn owls")
        assert (answered, same) == ("Fine.", waiting)
        assert c.get(f"/agents/{waiting}/state").json()["state"] == "completed"
        unknown = c.post("/v1/chat/completions", json={"model": "nope", "messages": [{"role": "user", "content": "x"}]})
        assert unknown.status_code == 400 and "owl_expert" in unknown.json()["detail"]


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ({"models": [{"name": "sgr_agent", "reply": "x"}]}, r"data\.sgr-agent-core\.models\[0\]\.name: 'sgr_agent'"),
        ({"models": [{"name": "m"}]}, r"data\.sgr-agent-core\.models\[0\]: give reply or chunks"),
        ({"models": [{"name": "m", "chunks": []}]}, r"data\.sgr-agent-core\.models\[0\]\.chunks: at least one"),
    ],
)
def test_a_bad_model_is_refused_with_the_path(models: Any, message: str) -> None:
    with pytest.raises(StubError, match=f"^{message}"):
        create_app(MockConfig(protocols=("sgr-agent-core",), stubs={"data": {"sgr-agent-core": models}}))
