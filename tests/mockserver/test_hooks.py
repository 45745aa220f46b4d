"""The access log (status, latency, operation, chaos) and -v bodies, in process and from the CLI."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

from mockserver import EmbeddedServer

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
REPO = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^127\.0\.0\.1 (GET|POST) (\S+) (\d{3}|reset|aborted) (\d+\.\d)ms (\S+) (\S+)( chaos: .*)?$")


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mockserver.access"]


def test_access_log_has_status_latency_and_operation(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mockserver.access")
    with (
        serve(
            protocols=("agent-protocol",),
            access_log=True,
            chaos=({"operation": "getAgentTask", "latency": 0.05}, {"operation": "listAgentTasks", "reset": True}),
        ) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        c.post("/ap/v1/agent/tasks", json={"input": "secret words"})
        c.get("/ap/v1/agent/tasks/nope")
        c.get("/ap/v1/agent/nothing")
        with pytest.raises(httpx.TransportError):
            c.get("/ap/v1/agent/tasks")
    lines = _lines(caplog)
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m[2], m[3], m[6]) for m in parsed if m] == [
        ("/ap/v1/agent/tasks", "200", "createAgentTask"),
        ("/ap/v1/agent/tasks/nope", "404", "getAgentTask"),
        ("/ap/v1/agent/nothing", "404", "-"),
        ("/ap/v1/agent/tasks", "reset", "listAgentTasks"),
    ]
    slow = parsed[1]
    assert slow is not None and float(slow[4]) >= 50 and slow[7] == " chaos: latency 50 ms"
    assert not any("secret words" in line for line in lines)  # bodies only with -v


def test_verbose_logs_bodies(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mockserver.access")
    with serve(protocols=("agent-protocol",), verbose=True) as server, httpx.Client(base_url=server.url) as c:
        task = c.post("/ap/v1/agent/tasks", json={"input": "secret words"}).json()
    lines = _lines(caplog)
    assert '  request body: {"input":"secret words"}' in lines
    assert any(line.startswith("  response body: ") and task["task_id"] in line for line in lines)


def test_nothing_logged_without_the_flag(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mockserver.access")
    with serve(protocols=("sgr-agent-core",)) as server:
        httpx.get(server.url + "/health")
    assert _lines(caplog) == []


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockserver", "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chaos-rule", "error=418"], "error: chaos: rule 1: error must be one of 429, 500, 503"),
        (["--chaos-rule", "protocol=synapse-agent,drip=1", "--protocol", "synapse-agent"], "streams nothing"),
        (["--chaos", "/nonexistent/chaos.yaml"], "error: cannot read the chaos file"),
        (["--journal", "-1"], "--journal N needs N >= 0"),
    ],
)
def test_cli_refuses_bad_settings_before_serving(args: list[str], message: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "listening" not in proc.stdout


def test_cli_refuses_bad_files(tmp_path: Path) -> None:
    chaos = tmp_path / "chaos.yaml"
    chaos.write_text("rules: [{error: 429, rate: 2}]\n")
    proc = _cli("--chaos", str(chaos))
    assert proc.returncode == 2 and "rate must be between 0 and 1" in proc.stderr
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text("synapse-agent: {sessions: [{owner: mallory}]}\n")
    proc = _cli("--fixtures", str(fixtures))
    assert proc.returncode == 2 and "error: fixtures: synapse-agent.sessions[0].owner" in proc.stderr
    fixtures.write_text("{unclosed: [")
    proc = _cli("--fixtures", str(fixtures))
    assert proc.returncode == 2 and "not valid YAML" in proc.stderr


def test_cli_serves_chaos_fixtures_journal_and_access_log(tmp_path: Path) -> None:
    chaos = tmp_path / "chaos.yaml"
    chaos.write_text("seed: 3\nrules:\n  - {protocol: agent-protocol, operation: listAgentTasks, error: 503}\n")
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text("agent-protocol:\n  tasks: [{task_id: t-1, input: hello}]\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockserver",
            "--port",
            "0",
            "--protocol",
            "agent-protocol",
            "--chaos",
            str(chaos),
            "--chaos-rule",
            "operation=getAgentTask,latency=0.01",
            "--fixtures",
            str(fixtures),
            "--journal",
            "--access-log",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        url = proc.stdout.readline().split()[3]
        with httpx.Client(base_url=url, timeout=5) as c:
            assert c.get("/ap/v1/agent/tasks/t-1").json()["input"] == "hello"
            assert c.get("/ap/v1/agent/tasks").status_code == 503
            assert c.get("/__mock/chaos").json()["seed"] == 3
            assert [e["operation"] for e in c.get("/__mock/journal").json()["entries"]] == [
                "listAgentTasks",
                "getAgentTask",
            ]
        proc.terminate()
        proc.wait(15)
        log = proc.stderr.read()
        assert re.search(r"GET /ap/v1/agent/tasks/t-1 200 \d+\.\dms agent-protocol getAgentTask chaos: latency", log)
        assert "GET /ap/v1/agent/tasks 503 " in log
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
