"""The official neuro-san client (0.7.15) against the mock, on every agent network it serves.

The client needs Python >= 3.12, so it runs from its own venv (neuro_san_peer.py) through
neuro_san_client_driver.py in a subprocess; what each call returned comes back as JSON and is
judged here against the mock's own networks. Skipped, with the reason, where no Python 3.12
exists or the venv cannot be built.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.neuro_san.models import NETWORKS

from .neuro_san_peer import neuro_san_python
from .peers import PeerUnavailable, skip_reason

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]  # a first run builds the peer venv

DRIVER = Path(__file__).with_name("neuro_san_client_driver.py")
FIRST, SECOND = "6 * 7", "2 + 3"  # the driver's two turns


def drive(config: MockConfig) -> dict[str, Any]:
    """The driver's calls against a mock of ``config`` (skips where the client's venv cannot be had)."""
    try:
        python = neuro_san_python()
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))
    with EmbeddedServer(config) as server:
        done = subprocess.run(
            [str(python), str(DRIVER), str(server.port)], capture_output=True, text=True, timeout=120, check=False
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def driven() -> Iterator[dict[str, Any]]:
    yield drive(MockConfig(protocols=("neuro-san",)))


@pytest.fixture(params=sorted(NETWORKS))
def network(request: pytest.FixtureRequest, driven: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name: str = request.param
    assert name in driven["agents"], f"the concierge list did not name {name}: {driven['list']}"
    return name, driven["agents"][name]


def test_the_concierge_lists_every_network(driven: dict[str, Any]) -> None:
    assert driven["list"] == {"agents": [n.info() for n in NETWORKS.values()]}


def test_function_and_connectivity(network: tuple[str, dict[str, Any]]) -> None:
    name, got = network
    assert got["function"] == NETWORKS[name].function()
    assert got["connectivity"] == NETWORKS[name].connectivity()


def test_minimal_stream_is_the_answer_alone(network: tuple[str, dict[str, Any]]) -> None:
    name, got = network
    assert [m["type"] for m in got["minimal"]] == ["AGENT_FRAMEWORK"]
    assert got["minimal"][0]["text"] == NETWORKS[name].respond(FIRST, 1).answer
    assert got["minimal"][0]["chat_context"]["chat_histories"]


def test_maximal_stream_continues_through_chat_context(network: tuple[str, dict[str, Any]]) -> None:
    name, got = network
    stream = got["maximal_continued"]
    assert [m["type"] for m in stream] == ["SYSTEM", "AGENT", "AGENT_TOOL_RESULT", "AI", "AGENT_FRAMEWORK"]
    assert stream[-1]["text"] == NETWORKS[name].respond(SECOND, 2).answer  # turn 2: the context was read
    history = [m["text"] for h in stream[-1]["chat_context"]["chat_histories"] for m in h["messages"]]
    assert history == [FIRST, NETWORKS[name].respond(FIRST, 1).answer, SECOND, stream[-1]["text"]]


def test_async_session_streams(network: tuple[str, dict[str, Any]]) -> None:
    name, got = network
    assert [m["text"] for m in got["async_minimal"]] == [NETWORKS[name].respond(FIRST, 1).answer]


def test_unknown_agent_reads_as_a_status(driven: dict[str, Any]) -> None:
    assert driven["unknown_function"]["code"] == 5  # NOT_FOUND, the client hands the Status back as is


WEATHER = {
    "name": "weather_bot",
    "description": "I forecast the weather.",
    "front": "Forecaster",
    "tools": ["almanac", "radar"],
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "answers": ["Sunny.", "Rain later."],
}


def test_the_client_sees_exactly_what_a_stubbed_network_says() -> None:
    """A data stub (docs/mock.md, stubs) makes an agent network the client lists, reads and chats with."""
    got = drive(MockConfig(protocols=("neuro-san",), stubs={"data": {"neuro-san": {"networks": [WEATHER]}}}))
    assert "weather_bot" in [a["agent_name"] for a in got["list"]["agents"]]
    network = got["agents"]["weather_bot"]
    assert network["connectivity"]["connectivity_info"] == [
        {"origin": "Forecaster", "tools": ["almanac", "radar"], "display_as": "llm_agent"},
        {"origin": "almanac", "tools": [], "display_as": "llm_agent"},
        {"origin": "radar", "tools": [], "display_as": "llm_agent"},
    ]
    assert network["function"] == {
        "function": {"description": WEATHER["description"], "parameters": WEATHER["parameters"]}
    }
    assert [m["text"] for m in network["minimal"]] == ["Sunny."]
    assert network["maximal_continued"][-1]["text"] == "Rain later."  # the second turn, through the context
    assert [m["text"] for m in network["async_minimal"]] == ["Sunny."]
