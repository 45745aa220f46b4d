"""Record and replay against real servers: the mock in front of the Agent Protocol SDK server and the
real sgr-agent-core server (``--record URL``), then serving what it wrote (``--stubs``).

For each server: a real client's calls get the same answers from the replay as from the server, and
the suite run against the replay gives the verdicts the suite gave through the recorder (against
the real server) for every requirement the recording covers. A requirement is covered when the
replay answered every request made while it was judged from the recording; one that reached the
mock's own handlers (a call the recording never saw: a stream the real server never ended, a case
drawn from the answers of a server that draws random ids) takes it out of the comparison, and the
test says which. The suite's own draws (unknown ids, bad tokens) follow the seed, so both runs send
the same ones.

The runs are the scenario and model phases: the property-based phase sends requests from several
flows whose order varies from run to run, and uploads (multipart bodies, which a recording matches
by their order alone) can then meet each other's answers (docs/mock.md, record).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockserver import EmbeddedServer, MockConfig

from .peers import CliRun, PeerUnavailable, run_suite, skip_reason
from .test_agent_protocol_client import drive
from .test_agent_protocol_sdk import sdk_server
from .test_sgr_agent_core_server import sgr_server

openai = pytest.importorskip("openai", reason="the openai client package is not installed")

pytestmark = [pytest.mark.interop, pytest.mark.timeout(1800)]
JOURNAL = 2000
PHASES = ("--phase", "scenario", "--phase", "model")
SLOP_S = 0.002


def recording(protocol: str, upstream: str) -> EmbeddedServer:
    return EmbeddedServer(MockConfig(protocols=(protocol,), record=upstream))


def replaying(protocol: str, document: dict[str, Any]) -> EmbeddedServer:
    return EmbeddedServer(MockConfig(protocols=(protocol,), stubs=document, journal=JOURNAL))


def document_of(server: EmbeddedServer) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(server.url + "/__mock/recording", timeout=60).json()
    return found


def _time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def uncovered(replay: EmbeddedServer, events: Path) -> set[str]:
    """The requirements the replay did not answer from the recording alone: each one being judged
    (between its requirement_started and requirement_finished events) when a request reached the
    mock's own handlers; a request outside every such window takes its whole phase. The journal
    stamps a request when it arrives, which is inside the window of the check that sent it: both
    clocks are the machine's, in milliseconds, so only a millisecond's rounding is allowed for."""
    journal = httpx.get(replay.url + "/__mock/journal", params={"limit": JOURNAL}, timeout=30).json()
    assert journal["total"] < JOURNAL, "the journal overflowed: coverage cannot be told"
    missed = [_time(e["at"]) for e in journal["entries"] if e["stub"] is None and e["operation"] is not None]
    lines = [json.loads(line) for line in events.read_text(encoding="utf-8").split("\n") if line]
    phases = [(_time(e["time"]), set(e["requirements"])) for e in lines if e["event"] == "phase_started"]
    opened: dict[str, float] = {}
    windows: list[tuple[float, float, str]] = []
    for event in lines:
        if event["event"] == "requirement_started":
            opened[event["id"]] = _time(event["time"])
        elif event["event"] == "requirement_finished":
            rid = event["result"]["id"]
            windows.append((opened.pop(rid, 0.0), _time(event["time"]), rid))
    out: set[str] = set()
    for at in missed:
        judged = {rid for start, end, rid in windows if start - SLOP_S <= at <= end + SLOP_S}
        if judged:
            out |= judged
        else:
            current = [reqs for started, reqs in phases if started <= at + SLOP_S]
            out |= current[-1] if current else {r for _, reqs in phases for r in reqs}
    return out


def compare(real: CliRun, replayed: CliRun, not_covered: set[str]) -> set[str]:
    """The covered requirements, each with the same verdict in both runs (asserted)."""
    covered = set(real.statuses) - not_covered
    differ = {
        rid: (real.statuses[rid], replayed.statuses.get(rid))
        for rid in covered
        if real.statuses[rid] != replayed.statuses.get(rid)
    }
    assert not differ, f"covered requirements judged differently (real, replay): {differ}"
    return covered


# -- Agent Protocol: the SDK server ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        with sdk_server(tmp_path_factory.mktemp("ap-sdk-record")) as url:
            yield url
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))


def test_the_ap_client_gets_the_same_answers_from_the_replay(sdk_url: str) -> None:
    with recording("agent-protocol", sdk_url) as recorder:
        real = drive("session", recorder.url)
        document = document_of(recorder)
    assert len(document["stubs"]) >= 6
    with replaying("agent-protocol", document) as replay:
        again = drive("session", replay.url)
    assert again == real


def test_the_suite_judges_the_ap_replay_as_it_judged_the_sdk(sdk_url: str, tmp_path: Path) -> None:
    with recording("agent-protocol", sdk_url) as recorder:
        real = run_suite("agent-protocol", recorder.url, tmp_path / "real", *PHASES)
        document = document_of(recorder)
    events = tmp_path / "events.ndjson"
    with replaying("agent-protocol", document) as replay:
        replayed = run_suite("agent-protocol", replay.url, tmp_path / "replay", *PHASES, "--events", str(events))
        missing = uncovered(replay, events)
    assert real.fatal is None and replayed.fatal is None
    covered = compare(real, replayed, missing)
    assert len(covered) >= len(real.statuses) * 0.8, f"only {sorted(covered)} covered; not: {sorted(missing)}"


# -- sgr-agent-core: the real server --------------------------------------------------------------


@pytest.fixture(scope="module")
def sgr_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        with sgr_server(tmp_path_factory.mktemp("sgr-record")) as url:
            yield url
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))


def openai_session(url: str) -> list[Any]:
    """What an application does with the openai client: models, a streamed chat, the agent after."""
    with openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=30) as api:
        models = [m.model_dump() for m in api.models.list().data]
        raw = api.chat.completions.with_raw_response.create(
            model="sgr_tool_calling_agent", messages=[{"role": "user", "content": "Research owls"}], stream=True
        )
        agent = raw.headers["X-Agent-ID"]
        chunks = [c.model_dump() for c in raw.parse()]
    with httpx.Client(base_url=url, timeout=30) as http:
        state = http.get(f"/agents/{agent}/state").json()
        listed = http.get("/agents").json()
    return [models, agent, chunks, state, listed]


def test_the_openai_client_gets_the_same_answers_from_the_replay(sgr_url: str) -> None:
    with recording("sgr-agent-core", sgr_url) as recorder:
        real = openai_session(recorder.url)
        document = document_of(recorder)
    assert any(s["response"].get("stream") for s in document["stubs"])
    with replaying("sgr-agent-core", document) as replay:
        again = openai_session(replay.url)
    assert again == real


def test_the_suite_judges_the_sgr_replay_as_it_judged_the_server(sgr_url: str, tmp_path: Path) -> None:
    with recording("sgr-agent-core", sgr_url) as recorder:
        real = run_suite("sgr-agent-core", recorder.url, tmp_path / "real", *PHASES, timeout_s=900)
        document = document_of(recorder)
    events = tmp_path / "events.ndjson"
    with replaying("sgr-agent-core", document) as replay:
        replayed = run_suite(
            "sgr-agent-core", replay.url, tmp_path / "replay", *PHASES, "--events", str(events), timeout_s=900
        )
        missing = uncovered(replay, events)
    assert real.fatal is None and replayed.fatal is None
    covered = compare(real, replayed, missing)
    assert len(covered) >= len(real.statuses) * 0.8, f"only {sorted(covered)} covered; not: {sorted(missing)}"
