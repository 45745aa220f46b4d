"""The suite against the real SGR Agent Core server (sgr-agent-core 0.7.1), offline.

The server runs from its own venv under ``.peers/`` (peers.py; skipped with pip's error when it
cannot be built) with one agent definition, ``sgr_tool_calling_agent`` (the package's
SGRToolCallingAgent with its final-answer and clarification tools), whose LLM is fake_llm.py on
loopback: every chat the suite starts runs the real agent loop (reasoning phase, action phase,
tool execution, SSE streaming) against scripted tool calls, and no request leaves the machine.
The server binds 127.0.0.1 (its default is 0.0.0.0) and is stopped by its PID.

The verdicts are a snapshot of what the suite reports, checked by hand in
docs/interop-sgr-agent-core.md: a change in either set means the suite or the server changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .fake_llm import fake_llm
from .peers import CliRun, PeerUnavailable, free_port, peer_python, run_suite, serve, skip_reason

pytestmark = [pytest.mark.interop, pytest.mark.timeout(1200)]  # a first run builds the peer venv

PACKAGE = "sgr-agent-core==0.7.1"
AGENT = "sgr_tool_calling_agent"

CONFIG = """\
llm:
  api_key: offline
  base_url: {llm}
  model: fake-llm
  max_tokens: 1000
execution:
  logs_dir: ""
  reports_dir: {reports}
agents:
  {agent}:
    base_class: SGRToolCallingAgent
    tools:
      - final_answer_tool
      - clarification_tool
"""

PASSED = {
    "SGR-SVC-001",
    "SGR-MODEL-001",
    "SGR-STREAM-001",
    "SGR-STREAM-002",
    "SGR-STREAM-003",
    "SGR-STREAM-004",
    "SGR-STREAM-005",
    "SGR-STREAM-006",
    "SGR-STREAM-007",
    "SGR-STREAM-008",
    "SGR-AGENT-001",
    "SGR-AGENT-002",
    "SGR-AGENT-003",
    "SGR-AGENT-004",
    # four chats started at the same moment: four X-Agent-IDs, each agent's state holds its own messages
    "SGR-AGENT-005",
    "SGR-ERR-001",
    "SGR-ERR-002",
    "SGR-ERR-003",
    "SGR-ERR-004",
    "SGR-ERR-005",
    "SGR-CLAR-001",
    "SGR-CLAR-002",
    "SGR-SCHEMA-002",
    "SGR-SCHEMA-004",
    "SGR-SCHEMA-007",
    "SGR-SCHEMA-009",
    "SGR-FACT-001",
    "SGR-FACT-002",
    "SGR-FACT-003",
    "SGR-FACT-005",
}
FAILED = {
    # the document's own example chat with `model: null` (negative data: model is a string) is
    # answered 500 text/plain "Internal Server Error", not a 4xx in FastAPI's shape
    "SGR-SCHEMA-001",
    "SGR-SCHEMA-003",
    # a waiting agent's execution_result is its questions, not null (model phase)
    "SGR-FACT-004",
    # provide_clarification for a completed agent: a 200 stream that never ends (model phase)
    "SGR-FACT-006",
    # a chat holding a lone surrogate is accepted; GET /agents then answers 500 (UnicodeEncodeError)
    "SGR-HOSTILE-001",
    "SGR-SCHEMA-006",
}
STATE_DEPENDENT = frozenset(
    {
        # GET /agents echoes a task message whose `name` is not a string, accepted at chat time: met
        # only when a generated read of the list follows such a chat (failed the recorded run, passed
        # one on 2026-12-02 with the same seed); the report names it as depending on the server's state
        "SGR-SCHEMA-005",
    }
)
NOT_VERIFIED: set[str] = set()


@contextmanager
def sgr_server(home: Path) -> Iterator[str]:
    """The server from its own venv, its LLM the fake on loopback; yields its base URL."""
    python = peer_python(PACKAGE)
    with fake_llm() as llm:
        config = home / "config.yaml"
        config.write_text(
            CONFIG.format(llm=f"http://127.0.0.1:{llm.server_port}/v1", reports=home / "reports", agent=AGENT)
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        command = [
            str(python),
            "-m",
            "sgr_agent_core.server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            str(config),
        ]
        with serve(command, f"{url}/health", timeout_s=60, cwd=home, log=home / "server.log"):
            yield url


@pytest.fixture(scope="module")
def sgr_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        with sgr_server(tmp_path_factory.mktemp("sgr-agent-core")) as url:
            yield url
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))


@pytest.fixture(scope="module")
def sgr_run(sgr_url: str, tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    # a property-based phase cut by its budget decides nothing it did not fail: the budget must let
    # it finish, or the snapshot would depend on the machine's speed
    return run_suite("sgr-agent-core", sgr_url, tmp_path_factory.mktemp("report"), "--budget", "900", timeout_s=900)


def test_the_server_is_reachable_and_judged(sgr_run: CliRun) -> None:
    assert sgr_run.fatal is None
    assert sgr_run.exit_code != 2
    assert not sgr_run.ids("error"), {rid: sgr_run.messages[rid] for rid in sgr_run.ids("error")}


def test_what_the_suite_reports_about_the_server(sgr_run: CliRun) -> None:
    sgr_run.assert_verdicts(PASSED, FAILED, NOT_VERIFIED, either=STATE_DEPENDENT)
