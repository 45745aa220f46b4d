"""Real clients meeting a bad day on purpose: chaos rules test how they cope, and the journal shows
what they did about it. The mock stays correct throughout; only its reliability changes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.synapse_agent.models import answer_for

pytestmark = pytest.mark.interop


def _journal(url: str, operation: str) -> list[dict[str, Any]]:
    entries = httpx.get(f"{url}/__mock/journal", params={"operation": operation}).json()["entries"]
    return list(reversed(entries))  # oldest first


@pytest.fixture
def sgr_url() -> Iterator[str]:
    rule = {"protocol": "sgr-agent-core", "operation": "createChatCompletion", "error": 429, "rate": 0.5}
    # seed 4: the rule's draws answer 429, 429, then 200, 200, 429, 200
    with EmbeddedServer(MockConfig(protocols=("sgr-agent-core",), chaos=(rule,), journal=100, seed=4)) as server:
        yield server.url


def test_openai_client_retries_through_429s(sgr_url: str) -> None:
    openai = pytest.importorskip("openai", reason="the openai client package is not installed")
    completions = 3
    with openai.OpenAI(base_url=sgr_url + "/v1", api_key="unused", max_retries=8, timeout=10) as client:
        for i in range(completions):
            stream = client.chat.completions.create(
                model="sgr_agent", messages=[{"role": "user", "content": f"research owls {i}"}], stream=True
            )
            chunks = list(stream)
            assert chunks[-1].choices[0].finish_reason == "stop"  # every completion got through
    entries = _journal(sgr_url, "createChatCompletion")
    statuses = [e["response"]["status"] for e in entries]
    assert statuses.count(200) == completions
    assert statuses.count(429) >= 1, statuses  # the seeded draws put 429s in this run
    assert set(statuses) == {200, 429}
    assert all(e["chaos"] == ["error 429"] for e in entries if e["response"]["status"] == 429)
    assert all(e["response"]["headers"]["Retry-After"] == "1" for e in entries if e["response"]["status"] == 429)
    # the journal shows the client's retries for what they are: the same request again, counted
    for before, after in itertools.pairwise(entries):
        retry = int(after["request"]["headers"].get("x-stainless-retry-count", "0"))
        if before["response"]["status"] == 429:
            assert retry >= 1 and after["request"]["body"]["text"] == before["request"]["body"]["text"]
        else:
            assert retry == 0


def test_agent_protocol_client_under_added_latency(serve: Any) -> None:
    from .test_agent_protocol_client import drive

    delay = 0.4
    rules = (
        {"protocol": "agent-protocol", "operation": "executeAgentTaskStep", "latency": {"fixed": delay}},
        {
            "protocol": "agent-protocol",
            "operation": "createAgentTask",
            "latency": {"lognormal": {"median": 0.05, "sigma": 0.3}},
        },
    )
    with serve(protocols=("agent-protocol",), chaos=rules, journal=50) as server:
        got = drive("latency", server.url, str(delay))
        slow = _journal(server.url, "executeAgentTaskStep")
    assert got["patient_s"] >= delay and got["step"]["step_id"]  # patient: gets its answer
    assert got["impatient"] == "TimeoutError"  # impatient: its own timeout fires, as it should
    assert got["listed"]["pagination"]["total_items"] >= 1
    assert slow and all(e["latency_ms"] >= delay * 1000 for e in slow)
    assert all(e["chaos"] == [f"latency {delay * 1000:.0f} ms"] for e in slow)


def test_synapseclient_retries_503s_on_async_get(tmp_path: Path) -> None:
    synapseclient = pytest.importorskip("synapseclient", reason="synapseclient is not installed")
    from synapseclient.models import AgentSession

    rule = {"protocol": "synapse-agent", "operation": "getAgentChatResult", "error": 503, "rate": 0.5}
    config = MockConfig(protocols=("synapse-agent",), job_seconds=0.2, chaos=(rule,), journal=100, seed=1)
    with EmbeddedServer(config) as server:
        syn = synapseclient.Synapse(
            repoEndpoint=server.url + "/repo/v1",
            authEndpoint=server.url + "/auth/v1",
            fileHandleEndpoint=server.url + "/file/v1",
            portalEndpoint=server.url + "/",
            skip_checks=True,
            cache_client=False,
            silent=True,
            configPath=str(tmp_path / "synapseConfig"),
            cache_root_dir=str(tmp_path / "cache"),
        )
        syn.login(authToken="alice-token", silent=True)
        session = AgentSession().start(synapse_client=syn)
        for text in ("first question", "second question"):
            prompt = session.prompt(prompt=text, synapse_client=syn)
            assert prompt.response == answer_for(text)
        statuses = [e["response"]["status"] for e in _journal(server.url, "getAgentChatResult")]
    assert 503 in statuses, statuses  # it met 503s ...
    assert statuses.count(200) == 2  # ... and each chat still reached its answer
    assert set(statuses) <= {200, 202, 503}
