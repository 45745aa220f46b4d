"""The commands the mock's landing page offers run the suite as they are (a small selection
appended, to keep it quick): per protocol, and ``--protocol all`` at the mock's root."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import httpx
import pytest

from conformance.cli.commands import main
from mockserver import EmbeddedServer, MockConfig

QUICK = ["--phase", "scenario", "-q"]


def suite_argv(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[:4] == ["python", "-m", "conformance", "run"], command
    return words[3:]


def test_synapses_command_reaches_it_at_its_server_path(tmp_path: Path) -> None:
    with EmbeddedServer(MockConfig()) as server:
        about = httpx.get(server.url + "/", headers={"Accept": "application/json"}).json()
        synapse = next(p for p in about["protocols"] if p["id"] == "synapse-agent")
        argv = [*suite_argv(synapse["run"]), "--only", "SYN-SESS-001", *QUICK, "--report-dir", str(tmp_path)]
        assert main(argv) == 0
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in results["requirements"]] == ["passed"]


def test_all_protocols_at_the_mocks_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with EmbeddedServer(MockConfig()) as server:
        about = httpx.get(server.url + "/", headers={"Accept": "application/json"}).json()
        only = ["--only", "AP-TASK-001", "--only", "SYN-SESS-001", "--jobs", "1"]
        assert main([*suite_argv(about["run_all"]), *only, *QUICK, "--report-dir", str(tmp_path)]) == 0
    for pid, path in (("agent-protocol", ""), ("synapse-agent", "/repo/v1")):
        results = json.loads((tmp_path / pid / "results.json").read_text(encoding="utf-8"))
        assert results["target"] == server.url + path and results["requirements"][0]["status"] == "passed"
