"""Real clients through the validation proxy (``conformance proxy``).

To the mock: the official clients' own interop scenarios (test_agent_protocol_client.py and
test_openai_client.py), unchanged, each against a fresh mock behind a fresh proxy: the proxy must
report no violation and pass every requirement the traffic exercised. To the Agent Protocol SDK
server: ordinary agent-protocol-client traffic, and the SDK's known deviations reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conformance.proxy.forward import ProxyConfig, ProxyServer
from conformance.proxy.observer import Selection
from conformance.proxy.report import run_result
from conformance.verdicts.results import Status
from mockserver import EmbeddedServer, MockConfig

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
CLIENT_MODE = Selection(client_mode=True)
"""The proxy as a client developer runs it: only what the traffic broke decides the exit code."""


class Behind:
    """A mock behind a proxy; ``url`` is the proxy's, as the client sees it."""

    def __init__(self, proxy: ProxyServer, lines: list[str]) -> None:
        self.proxy = proxy
        self.url = proxy.url
        self.lines = lines


@contextmanager
def behind_proxy(**settings: Any) -> Iterator[Behind]:
    protocol = settings["protocols"][0]
    lines: list[str] = []
    with (
        EmbeddedServer(MockConfig(**settings)) as server,
        ProxyServer(ProxyConfig(protocol, server.url, console=lines.append, selection=CLIENT_MODE)) as proxy,
    ):
        yield Behind(proxy, lines)


def verdicts(proxy: ProxyServer) -> dict[str, tuple[Status, str]]:
    """Per requirement: status, and the message with every distinct finding's reason."""
    return {
        r.requirement.id: (r.status, " | ".join([r.message, *(f.message for f in r.findings)]))
        for r in run_result(proxy.observer).results
    }


def assert_clean(seen: list[Behind], must_pass: set[str]) -> None:
    """No violation line, nothing failed, and the named requirements were exercised and held."""
    passed: set[str] = set()
    for behind in seen:
        got = verdicts(behind.proxy)
        assert behind.lines == [], behind.lines
        assert {rid: m for rid, (s, m) in got.items() if s is not Status.PASSED and s is not Status.NOT_VERIFIED} == {}
        assert all(m.startswith("not observed") for s, m in got.values() if s is Status.NOT_VERIFIED)
        passed |= {rid for rid, (s, _) in got.items() if s is Status.PASSED}
        assert run_result(behind.proxy.observer).exit_code == 0  # the client mode's verdict: clean traffic
    assert must_pass - passed == set(), "requirements the traffic should have exercised"


def test_agent_protocol_client_through_the_proxy_to_the_mock(tmp_path: Path) -> None:
    from . import test_agent_protocol_client as scenarios

    seen: list[Behind] = []

    @contextmanager
    def serve(**settings: Any) -> Iterator[Behind]:
        with behind_proxy(**settings) as behind:
            seen.append(behind)
            yield behind

    scenarios.test_client_runs_a_task_to_its_last_step(serve)
    scenarios.test_client_uploads_and_downloads_bytes(serve, tmp_path)
    scenarios.test_client_lists_tasks_page_by_page(serve)
    scenarios.test_client_gets_404_for_unknown_ids(serve)
    assert_clean(
        seen,
        {
            "AP-TASK-001",
            "AP-TASK-002",
            "AP-STEP-001",
            "AP-STEP-002",
            "AP-STEP-004",
            "AP-ERR-001",
            "AP-ERR-003",
            "AP-ARTIFACT-001",
            "AP-ARTIFACT-002",
            "AP-ARTIFACT-003",
            "AP-ARTIFACT-005",
            "AP-PAGE-001",
            "AP-PAGE-002",
            "AP-PAGE-003",
            "AP-PAGE-004",
            "AP-SCHEMA-001",
            "AP-SCHEMA-003",
            "AP-SCHEMA-005",
            "AP-SCHEMA-007",
            "AP-CLIENT-001",
        },
    )


# --- the Agent Protocol SDK server ---------------------------------------------------------------

SDK_DEVIATIONS = {
    "AP-TASK-002": 'additional_input differs from what was sent in 1 member(s): "mode": sent "test"',
    "AP-STEP-002": 'additional_input differs from what was sent in 1 member(s): "n": sent 1',
    "AP-STEP-003": "listed step",
    "AP-PAGE-002": '"total_pages": 0',
    "AP-PAGE-003": "the answer is not {artifacts, pagination}: [",
    "AP-SCHEMA-005": "listAgentTaskArtifacts 200 body: /: [",
}
"""What ordinary client traffic shows of the SDK (docs/interop-agent-protocol-sdk.md): the dropped
additional_input, total_pages rounded down, and the bare-array artifact list."""


@pytest.mark.timeout(600)
def test_agent_protocol_client_through_the_proxy_to_the_sdk(tmp_path: Path) -> None:
    from .peers import PeerUnavailable, skip_reason
    from .test_agent_protocol_client import drive
    from .test_agent_protocol_sdk import sdk_server

    lines: list[str] = []
    try:
        with (
            sdk_server(tmp_path) as upstream,
            ProxyServer(ProxyConfig("agent-protocol", upstream, console=lines.append, selection=CLIENT_MODE)) as proxy,
        ):
            errors = drive("sdk-traffic", proxy.url)["errors"]  # ordinary application traffic
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))
    got = verdicts(proxy)
    failed = {rid: m for rid, (s, m) in got.items() if s is Status.FAILED}
    assert errors  # the client itself chokes on the bare array
    assert set(failed) == set(SDK_DEVIATIONS), failed
    for rid, words in SDK_DEVIATIONS.items():
        assert words in failed[rid], (rid, failed[rid])
        assert any(line.startswith(f"{rid} #") for line in lines), rid
    assert got["AP-CLIENT-001"][0] is Status.PASSED  # the client's requests were all fine
    assert run_result(proxy.observer).exit_code == 1  # the client mode fails on what the traffic showed


def test_openai_client_streams_through_the_proxy_to_the_mock() -> None:
    openai = pytest.importorskip("openai")
    from . import test_openai_client as scenarios

    with (
        behind_proxy(protocols=("sgr-agent-core",)) as behind,
        openai.OpenAI(base_url=behind.url + "/v1", api_key="unused", max_retries=0, timeout=10) as client,
    ):
        scenarios.test_models_list(client)
        scenarios.test_streamed_research(client)
        scenarios.test_clarification_round_trip(client)
        scenarios.test_invalid_model_is_a_bad_request(client)
        scenarios.test_non_streaming_is_not_implemented(client)
    assert_clean(
        [behind],
        {
            "SGR-MODEL-001",
            "SGR-STREAM-001",
            "SGR-STREAM-002",
            "SGR-STREAM-003",
            "SGR-STREAM-004",
            "SGR-STREAM-005",
            "SGR-STREAM-006",
            "SGR-STREAM-007",
            "SGR-ERR-001",
            "SGR-ERR-002",
            "SGR-SCHEMA-001",
            "SGR-SCHEMA-002",
            "SGR-SCHEMA-003",
            "SGR-SCHEMA-004",
            "SGR-SCHEMA-007",
            "SGR-CLIENT-001",
        },
    )
