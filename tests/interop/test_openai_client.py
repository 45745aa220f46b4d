"""The official openai Python client against the SGR Agent Core mock (base_url .../v1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer

openai = pytest.importorskip("openai", reason="the openai client package is not installed")

pytestmark = pytest.mark.interop

TASK = "Research BMW X6 2025 prices in Russia"
REPORT = (
    "## Research report\n"
    f"Task: {TASK}\n"
    "- BMW: 2 sources reviewed\n- 2025: 2 sources reviewed\n- prices: 2 sources reviewed\n"
    "Conclusion: research on BMW, 2025, prices is complete.\n"
)
ASKING = "Compare EV batteries, clarify the scope first"
ANSWER = "Focus on luxury models only"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    # No retries: the 5xx answers under test must surface at once.
    with (
        EmbeddedServer(MockConfig(protocols=("sgr-agent-core",))) as server,
        openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=10) as api,
    ):
        yield api


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def read(stream: Any) -> tuple[str, str, list[str | None]]:
    """Concatenated content, the agent id (chunk ``model``) and the finish reasons."""
    content, models, reasons = [], set(), []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        models.add(chunk.model)
        choice = chunk.choices[0]
        content.append(choice.delta.content or "")
        reasons.append(choice.finish_reason)
    assert len(models) == 1
    return "".join(content), models.pop(), reasons


def test_models_list(client: Any) -> None:
    models = client.models.list()
    assert [m.id for m in models.data] == ["sgr_agent", "sgr_tool_calling_agent", "tool_calling_agent"]
    assert {m.owned_by for m in models.data} == {"sgr-agent-core"}


def test_streamed_research(client: Any) -> None:
    stream = client.chat.completions.create(model="sgr_agent", messages=[user(TASK)], stream=True)
    content, agent_id, reasons = read(stream)
    assert agent_id.startswith("sgr_agent_")
    assert content == (
        f"Agent {agent_id} started\n"
        "Searching the web for 'BMW'\nSearching the web for '2025'\nSearching the web for 'prices'\n" + REPORT
    )
    assert reasons[-1] == "stop" and set(reasons[:-1]) == {None}


def test_clarification_round_trip(client: Any) -> None:
    raw = client.chat.completions.with_raw_response.create(model="sgr_agent", messages=[user(ASKING)], stream=True)
    agent_id = raw.headers["X-Agent-ID"]
    assert raw.headers["X-Agent-Model"] == "sgr_agent"
    question, model, reasons = read(raw.parse())
    assert model == agent_id and reasons[-1] == "stop"
    assert question.endswith("2. Which region and time period matter?\n")

    answer = client.chat.completions.create(model=agent_id, messages=[user(ANSWER)], stream=True)
    content, model, reasons = read(answer)
    assert model == agent_id and reasons[-1] == "stop"
    assert content.startswith(f"Clarification received: {ANSWER}\n")
    assert f"Clarification: {ANSWER}\n" in content
    assert content.endswith("Conclusion: research on Compare, batteries, scope is complete.\n")


def test_invalid_model_is_a_bad_request(client: Any) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="invalid_model", messages=[user(TASK)], stream=True)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "detail": "Invalid model 'invalid_model'. Available models: "
        "['sgr_agent', 'sgr_tool_calling_agent', 'tool_calling_agent']"
    }


def test_non_streaming_is_not_implemented(client: Any) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="sgr_agent", messages=[user(TASK)], stream=False)
    assert caught.value.status_code == 501
    assert caught.value.body == {"detail": "Only streaming responses are supported. Set 'stream=true'"}


def _chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": 1737979200,
        "model": "sgr_agent_stub",
        "choices": [{"index": 0, "delta": {} if content is None else {"content": content}, "finish_reason": finish}],
    }


STREAM_STUB = {
    "request": {
        "protocol": "sgr-agent-core",
        "operation": "createChatCompletion",
        "body": [{"pointer": "/messages/0/content", "contains": "owls"}],
    },
    "times": 1,
    "response": {
        "headers": {"X-Agent-ID": "sgr_agent_stub"},
        "stream": {"frames": [{"data": _chunk("Owls ")}, {"data": _chunk("hoot.")}, {"data": _chunk(None, "stop")}]},
    },
}


def test_the_client_sees_exactly_what_a_stub_streams() -> None:
    """An operation stub (docs/mock.md, stubs): the next chat about owls streams these chunks, once."""
    stubs = {
        "stubs": [STREAM_STUB],
        "data": {"sgr-agent-core": {"models": [{"name": "owl_expert", "reply": "Hoot.\n"}]}},
    }
    with (
        EmbeddedServer(MockConfig(protocols=("sgr-agent-core",), stubs=stubs)) as server,
        openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=10) as api,
    ):
        raw = api.chat.completions.with_raw_response.create(model="sgr_agent", messages=[user("owls?")], stream=True)
        assert raw.headers["X-Agent-ID"] == "sgr_agent_stub"
        chunks = list(raw.parse())
        seen = [(c.id, c.created, c.model, c.choices[0].delta.content, c.choices[0].finish_reason) for c in chunks]
        stub = ("chatcmpl-stub", 1737979200, "sgr_agent_stub")
        assert seen == [(*stub, "Owls ", None), (*stub, "hoot.", None), (*stub, None, "stop")]
        _, agent, _ = read(api.chat.completions.create(model="sgr_agent", messages=[user("owls?")], stream=True))
        assert agent.startswith("sgr_agent_") and agent != "sgr_agent_stub"  # times: 1, then the mock's own
        assert "owl_expert" in [m.id for m in api.models.list().data]  # a data stub: a model and its reply
        said, expert, reasons = read(api.chat.completions.create(model="owl_expert", messages=[user("x")], stream=True))
        assert said == "Hoot.\n" and expert.startswith("owl_expert_") and reasons[-1] == "stop"
