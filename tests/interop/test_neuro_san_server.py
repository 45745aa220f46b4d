"""The suite against the real neuro-san server (0.7.15), offline, on loopback only.

The server runs from the Python 3.12 peer venv (neuro_san_peer.py), started as its own entry point
(``neuro_san.service.main_loop.server_main_loop``, whose worker supervisor stays out of the way
with one instance) with ``AGENT_MANIFEST_FILE``, ``AGENT_HTTP_PORT``,
``AGENT_HTTP_SERVER_INSTANCES=1``, ``AGENT_HEALTH_PROBE_PORT=0`` and ``AGENT_MCP_ENABLE=false``.
It serves one agent network, ``mock_echo``, whose LLM is the ``ChatMockLlm`` the package ships (an
echo that needs no model): every chat runs the real service, agent and streaming code. The
interpreter imports neuro_san_site/sitecustomize.py first, which binds the server to 127.0.0.1 (it
has no setting for that) and gives tiktoken an offline encoding (ChatMockLlm counts tokens, and
the real encoding is a download). The server is stopped by its PID.

The verdicts are a snapshot, each failure reproduced by hand in docs/interop-neuro-san.md: a
change in any set means the suite or the server changed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from .neuro_san_peer import neuro_san_python
from .peers import CliRun, PeerUnavailable, free_port, run_suite, serve, skip_reason

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]  # a first run builds the peer venv

SITE = Path(__file__).with_name("neuro_san_site")
DRIVER = Path(__file__).with_name("neuro_san_client_driver.py")
AGENT = "mock_echo"
NETWORK = {
    "metadata": {"description": "Echoes the user through the ChatMockLlm shipped with neuro-san.", "tags": ["test"]},
    "llm_config": {"class": "neuro_san.test.llms.chat_mock_llm.ChatMockLlm", "model_name": "echo"},
    "tools": [
        {
            "name": "echoer",
            "function": {"description": "An agent whose LLM echoes the input."},
            "instructions": "System prompt for the mock llm",
        }
    ],
}

PASSED = {
    "NS-CONN-001",
    "NS-FUNC-001",
    "NS-HTTP-001",
    "NS-ERR-001",
    "NS-STREAM-001",
    "NS-STREAM-002",
    "NS-STREAM-003",
    "NS-CTX-001",
    # six chats asked at the same moment: each final chat_context holds its own question, no other's
    "NS-CTX-003",
    "NS-FILTER-001",
    "NS-FILTER-002",
    "NS-LIST-001",
    "NS-SCHEMA-005",
    "NS-SCHEMA-007",
    "NS-MODEL-002",  # every filter and turn ends with the answer and its chat_context
    "NS-MODEL-003",  # a continued (or forked) history keeps the one sent back, message for message
    "NS-MODEL-004",
    # a lone surrogate is answered, echoed back as its JSON escape; connectivity and function still answer
    "NS-HOSTILE-001",
}
FAILED = {
    "NS-ERR-002",  # an unknown agent: 404 with an empty text/html body, no Status
    "NS-ERR-003",  # malformed JSON: 400 {"error": ...}, no Status
    "NS-SCHEMA-003",  # the same 404s (and a 500 page) as text/html
    # a targeted case every run (phases/schema/targeted.py): a body that is not UTF-8 is a 500 page
    "NS-SCHEMA-001",
    # targeted cases every run: a ChatRequest whose sly_data is a number, or whose chat_histories holds
    # one, is answered 200 and streamed (it was found before only where the upstream profile's draws
    # reached it)
    "NS-SCHEMA-006",
    # the edge corpus: a question holding braces enters the chat_context's history with each brace
    # doubled ('{x}' comes back '{{x}}')
    "NS-CTX-002",
}
NOT_VERIFIED = {
    "NS-MODEL-001",  # no error it answers is a Status (see NS-ERR-002, NS-ERR-003): no code to judge
}

# --profile upstream adds GET /api/v1/list to the document: schemathesis links its agent_name to the
# agent paths. What its draws found there (NS-SCHEMA-006; NS-SCHEMA-001 by earlier draws) targeted
# cases now find in both profiles, whatever the draws.
UPSTREAM_FAILED = FAILED
UPSTREAM_PASSED = PASSED - UPSTREAM_FAILED


@dataclass(frozen=True)
class Server:
    url: str
    pid: int
    log: Path


@contextmanager
def neuro_san_server(home: Path) -> Iterator[Server]:
    python = neuro_san_python()
    (home / f"{AGENT}.hocon").write_text(json.dumps(NETWORK, indent=2))  # HOCON reads JSON
    (home / "manifest.hocon").write_text(json.dumps({f"{AGENT}.hocon": True}))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "AGENT_MANIFEST_FILE": str(home / "manifest.hocon"),
        "AGENT_HTTP_PORT": str(port),
        "AGENT_HTTP_SERVER_INSTANCES": "1",
        "AGENT_HEALTH_PROBE_PORT": "0",
        "AGENT_MCP_ENABLE": "false",
        # a module path: a directory would have to lie under PYTHONPATH, which holds only SITE here
        "AGENT_TOOL_PATH": "neuro_san.coded_tools",
        "PYTHONPATH": str(SITE),
    }
    command = [str(python), "-m", "neuro_san.service.main_loop.server_main_loop"]
    log = home / "server.log"
    with serve(command, f"{url}/api/v1/list", timeout_s=120, env=env, cwd=home, log=log) as process:
        # The first request to an agent loads its network (about 10 s here); not the suite's to wait for.
        httpx.get(f"{url}/api/v1/{AGENT}/connectivity", timeout=120)
        yield Server(url, process.pid, log)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    try:
        with neuro_san_server(tmp_path_factory.mktemp("neuro-san")) as running:
            yield running
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))


@pytest.fixture(scope="module")
def default_run(server: Server, tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    report_dir = tmp_path_factory.mktemp("report")
    return run_suite("neuro-san", server.url, report_dir, "--events", str(report_dir / "events.jsonl"))


@pytest.fixture(scope="module")
def upstream_run(server: Server, tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    report_dir = tmp_path_factory.mktemp("report-upstream")
    events = report_dir / "events.jsonl"
    return run_suite("neuro-san", server.url, report_dir, "--profile", "upstream", "--events", str(events))


# --- the target is what it claims: loopback only, offline, a working agent --------------------------------------


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN that process ``pid`` holds, from /proc."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in inodes:  # 0A: LISTEN
                continue
            raw, port = local.split(":")
            packed = b"".join(bytes.fromhex(raw[i : i + 8])[::-1] for i in range(0, len(raw), 8))
            found.add((socket.inet_ntop(family, packed), int(port, 16)))
    return found


def test_the_server_listens_on_loopback_only(server: Server) -> None:
    addresses = listening_addresses(server.pid)
    assert addresses, "the server holds no listening socket"
    assert {address for address, _ in addresses} <= {"127.0.0.1", "::1"}, addresses


def test_the_official_client_talks_to_the_server(server: Server) -> None:
    # The real client against the real server: a working agent, so the suite's failures are the server's.
    port = server.url.rsplit(":", 1)[1]
    done = subprocess.run(
        [str(neuro_san_python()), str(DRIVER), port], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    driven: dict[str, Any] = json.loads(done.stdout)
    assert [a["agent_name"] for a in driven["list"]["agents"]] == [AGENT]
    got = driven["agents"][AGENT]
    assert [m["type"] for m in got["minimal"]] == ["AGENT_FRAMEWORK"]
    assert got["minimal"][0]["text"] == "6 * 7"  # the echo
    continued = got["maximal_continued"]
    assert len(continued) > 1 and continued[-1]["type"] == "AGENT_FRAMEWORK" and continued[-1]["text"] == "2 + 3"
    history = [m["text"] for h in continued[-1]["chat_context"]["chat_histories"] for m in h["messages"]]
    assert history[:2] == ["6 * 7", "6 * 7"] and history[-1] == "2 + 3", history
    assert [m["text"] for m in got["async_minimal"]] == ["6 * 7"]
    # The server's 404 for an unknown agent has an empty body (NS-ERR-002): its own client cannot read it.
    assert driven["unknown_function"] == {"client_error": "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"}


# --- what the suite reports ------------------------------------------------------------------------------------------


def test_the_server_is_reachable_and_judged(default_run: CliRun, upstream_run: CliRun) -> None:
    for run in (default_run, upstream_run):
        assert run.fatal is None
        assert run.exit_code == 1  # reachable (not 2), and it fails MUST requirements (see the snapshot)
        assert not run.ids("error"), {rid: run.messages[rid] for rid in run.ids("error")}


def test_what_the_suite_reports_about_the_server(default_run: CliRun) -> None:
    default_run.assert_verdicts(PASSED, FAILED, NOT_VERIFIED)


def test_what_the_suite_reports_with_the_upstream_profile(upstream_run: CliRun) -> None:
    upstream_run.assert_verdicts(UPSTREAM_PASSED, UPSTREAM_FAILED, NOT_VERIFIED)


# --- the property-based phase reaches the agent, not only names that answer 404 ----------------------------------


def schema_phase_requests_to_the_agent(server: Server, report_dir: Path) -> int:
    """Requests that reached mock_echo (the server's log) while the run's schema phase ran (its events)."""
    times = {}
    for line in (report_dir / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("phase") == "schema" and event["event"] in ("phase_started", "phase_finished"):
            times[event["event"]] = datetime.fromisoformat(event["time"])
    begin, end = times["phase_started"], times["phase_finished"]
    reached = 0
    # split on LF alone: the server logs the questions the suite sent, U+2028 and NEL among them, raw
    for line in server.log.read_text(errors="replace").split("\n"):
        if f"Received a {AGENT}." in line:
            try:
                logged = datetime.fromisoformat(json.loads(line, strict=False)["Timestamp"]).astimezone(UTC)
            except (ValueError, KeyError):
                continue  # not one of its JSON lines (strict=False: it logs the NUL we sent raw)
            reached += begin <= logged <= end
    return reached


def test_with_the_upstream_profile_generated_requests_reach_the_agent(server: Server, upstream_run: CliRun) -> None:
    reached = schema_phase_requests_to_the_agent(server, upstream_run.report_dir)
    assert reached >= 5, f"only {reached} generated request(s) reached {AGENT}"


def test_generated_requests_reach_the_agent(server: Server, default_run: CliRun) -> None:
    # the default document names no agent: the schema phase fills {agent_name} with the one discovery found
    reached = schema_phase_requests_to_the_agent(server, default_run.report_dir)
    assert reached >= 5, f"only {reached} generated request(s) reached {AGENT}"
