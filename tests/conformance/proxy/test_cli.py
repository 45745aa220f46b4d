"""``python -m conformance proxy`` as a user runs it: usage errors, and reports written on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conformance.cli.commands import main
from mockserver import EmbeddedServer, MockConfig
from tests.har import har_problems
from tests.interop.peers import free_port


def test_a_bad_upstream_is_a_usage_error() -> None:
    assert main(["proxy", "--protocol", "agent-protocol", "--upstream", "localhost:8000"]) == 2


def _proxy_cli(tmp_path: Path, *extra: str, page_size: str) -> tuple[int, str, str]:
    """The proxy as a subprocess in front of the mock: one create, one list, then SIGTERM."""
    port = free_port()
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as server:
        command = [
            sys.executable,
            "-m",
            "conformance",
            "proxy",
            "--protocol",
            "agent-protocol",
            "--upstream",
            server.url,
            "--port",
            str(port),
            "--report-dir",
            str(tmp_path),
            *extra,
        ]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120  # a loaded machine starts Python slowly
            while True:
                try:
                    httpx.post(f"http://127.0.0.1:{port}/ap/v1/agent/tasks", json={"input": "x"}, timeout=2)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and process.poll() is None, "the proxy did not start"
                    time.sleep(0.2)
            httpx.get(f"http://127.0.0.1:{port}/ap/v1/agent/tasks", params={"page_size": page_size}, timeout=5)
        finally:
            os.kill(process.pid, signal.SIGTERM)
            out, err = process.communicate(timeout=20)
    return process.returncode, out, err


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_sigterm_writes_the_reports(tmp_path: Path, loop: str) -> None:
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    code, out, err = _proxy_cli(tmp_path, "--loop", loop, page_size="0")
    assert code == 1, err  # the client's page_size 0 broke AP-CLIENT-001
    assert "AP-CLIENT-001 #2 GET /ap/v1/agent/tasks (listAgentTasks) -> 422" in err
    results = json.loads((tmp_path / "results.json").read_text())
    statuses = {r["id"]: r["status"] for r in results["requirements"]}
    assert statuses["AP-CLIENT-001"] == "failed" and statuses["AP-SCHEMA-005"] == "passed"
    assert "2 exchanges, 1 violations" in out
    assert f"({loop} loop)" in out


def test_client_mode_exits_0_on_clean_traffic_and_writes_the_har(tmp_path: Path) -> None:
    har = tmp_path / "traffic.har"
    code, out, err = _proxy_cli(tmp_path, "--client-mode", "--har", str(har), page_size="2")
    assert code == 0, err
    assert json.loads((tmp_path / "results.json").read_text())["exit_code"] == 0
    doc = json.loads(har.read_text(encoding="utf-8"))
    assert har_problems(doc) == [] and len(doc["log"]["entries"]) == 2
    assert f"HAR in {har}" in out
