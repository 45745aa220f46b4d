"""synapseclient (the official Synapse Python client) against the mock: login, sessions, traced chat.

The client polls a PROCESSING job once a second, so each chat here takes about a second.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.synapse_agent.models import answer_for

pytestmark = pytest.mark.interop
synapseclient = pytest.importorskip(
    "synapseclient", reason="synapseclient is not installed (pip install 'synapseclient==4.14.0')"
)
from synapseclient.core.exceptions import SynapseAuthenticationError, SynapseHTTPError  # noqa: E402
from synapseclient.models import Agent, AgentSession  # noqa: E402


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with EmbeddedServer(MockConfig(protocols=("synapse-agent",), job_seconds=0.2)) as server:
        yield server.url


def login(url: str, token: str, home: Path) -> Any:
    """A client pointed at the mock, with its config and cache kept out of the user's home."""
    syn = synapseclient.Synapse(
        repoEndpoint=url + "/repo/v1",
        authEndpoint=url + "/auth/v1",
        fileHandleEndpoint=url + "/file/v1",
        portalEndpoint=url + "/",
        skip_checks=True,
        cache_client=False,
        silent=True,
        configPath=str(home / "synapseConfig"),
        cache_root_dir=str(home / "cache"),
    )
    syn.login(authToken=token, silent=True)
    return syn


def test_login_reads_the_callers_profile(url: str, tmp_path: Path) -> None:
    syn = login(url, "alice-token", tmp_path)
    assert syn.credentials.username == "alice"
    assert str(syn.credentials.owner_id) == "1000"


def test_login_with_an_unknown_token_fails(url: str, tmp_path: Path) -> None:
    with pytest.raises(SynapseAuthenticationError) as raised:
        login(url, "not-a-token", tmp_path)
    assert "401" in str(raised.value.__cause__)


def test_session_traced_chat_and_ownership(url: str, tmp_path: Path) -> None:
    alice = login(url, "alice-token", tmp_path)
    session = AgentSession().start(synapse_client=alice)
    assert uuid.UUID(session.id).version == 4  # the real service's session id format
    assert session.access_level == "PUBLICLY_ACCESSIBLE"
    assert session.started_by == 1000

    prompt = session.prompt(prompt="How many files are in syn123?", enable_trace=True, synapse_client=alice)
    assert prompt.response == answer_for("How many files are in syn123?")
    assert prompt.session_id == session.id
    assert prompt.trace is not None and "How many files are in syn123?" in prompt.trace

    fetched = AgentSession(id=session.id).get(synapse_client=alice)
    assert fetched.etag == session.etag
    fetched.access_level = "READ_YOUR_PRIVATE_DATA"
    updated = fetched.update(synapse_client=alice)
    assert updated.access_level == "READ_YOUR_PRIVATE_DATA"
    assert updated.etag != session.etag

    bob = login(url, "bob-token", tmp_path)
    with pytest.raises(SynapseHTTPError, match="Only the user that started a session may access it"):
        AgentSession(id=session.id).get(synapse_client=bob)
    with pytest.raises(SynapseHTTPError, match="403"):
        AgentSession(id=session.id).prompt(prompt="Let me in", synapse_client=bob)

    # the mock's history saw exactly the one exchange
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer alice-token"}) as http:
        page = http.post(f"/repo/v1/agent/session/history/{session.id}", json={}).json()["page"]
    assert [(i["requestText"], i["responseText"]) for i in page] == [
        ("How many files are in syn123?", answer_for("How many files are in syn123?"))
    ]


def test_agent_starts_a_session_for_its_first_prompt(url: str, tmp_path: Path) -> None:
    alice = login(url, "alice-token", tmp_path)
    agent = Agent()
    prompt = agent.prompt(prompt="Hello", synapse_client=alice)
    assert prompt.response == answer_for("Hello")
    assert prompt.trace is None
    assert agent.current_session is not None
    assert agent.current_session.agent_registration_id is None
    assert [p.prompt for p in agent.get_chat_history() or []] == ["Hello"]


JOBS = {
    "jobs": [
        # 400, not a 5xx: synapseclient retries those for minutes before it gives up
        {"chatText": {"contains": "fail"}, "seconds": 0.1, "failure": {"status": 400, "reason": "The agent failed"}},
        {"chatText": "Budget?", "identity": "alice", "seconds": 0.1, "responseText": "The budget is fine."},
    ]
}


def test_the_client_sees_exactly_the_job_outcomes_stubs_say(tmp_path: Path) -> None:
    """Data stubs (docs/mock.md, stubs): one chat's job fails, another's answer is given."""
    stubs = {"data": {"synapse-agent": JOBS}}
    with EmbeddedServer(MockConfig(protocols=("synapse-agent",), job_seconds=0.2, stubs=stubs)) as server:
        alice = login(server.url, "alice-token", tmp_path)
        session = AgentSession().start(synapse_client=alice)
        with pytest.raises(SynapseHTTPError, match="The agent failed") as failed:
            session.prompt(prompt="please fail", synapse_client=alice)
        assert "400" in str(failed.value)
        answered = session.prompt(prompt="Budget?", synapse_client=alice)
        assert answered.response == "The budget is fine."
        bob = login(server.url, "bob-token", tmp_path)
        other = AgentSession().start(synapse_client=bob).prompt(prompt="Budget?", synapse_client=bob)
        assert other.response == answer_for("Budget?")  # the rule names alice
