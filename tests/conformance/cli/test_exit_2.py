"""Every way ``python -m conformance run`` ends in exit 2 (a usage error, a target it cannot test)
says so once, gives no verdict and leaves no report folder: nothing was tested, so there is
nothing to report, and a folder per mistake would only litter ``reports/``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mockserver import EmbeddedServer, MockConfig
from tests.hostile import closed_port_url

REPO = Path(__file__).resolve().parents[3]
VERDICT = re.compile(r"^(?:[a-z-]+|(?:all )?\d+ protocols): (?:PASS|FAIL|INTERRUPTED)\b", re.MULTILINE)


@pytest.fixture(scope="module")
def agent_protocol_mock() -> Iterator[str]:
    """A server that speaks HTTP, and Agent Protocol only: any other protocol's target is wrong."""
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), seed=1)) as server:
        yield server.url


def run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}  # pinned: no re-execution
    return subprocess.run(
        [sys.executable, "-m", "conformance", "run", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


def assert_one_error_and_nothing_else(proc: subprocess.CompletedProcess[str], cwd: Path, *errors: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for error in errors:
        assert proc.stderr.count(error) == 1, proc.stderr
    assert len(proc.stderr.splitlines()) == len(errors), proc.stderr  # one line each, nothing said twice
    assert not VERDICT.search(proc.stdout + proc.stderr), proc.stdout + proc.stderr
    assert not (cwd / "reports").exists() and not (cwd / "out").exists(), sorted(p.name for p in cwd.iterdir())


def test_an_unknown_option(tmp_path: Path) -> None:
    proc = run(tmp_path, "--protocol", "agent-protocol", "--bogus", "--report-dir", "out")
    assert_one_error_and_nothing_else(proc, tmp_path, "error: unrecognized arguments: --bogus")


def test_a_config_file_that_is_missing_or_invalid(tmp_path: Path) -> None:
    proc = run(tmp_path, "--protocol", "agent-protocol", "--config", "missing.toml")
    assert_one_error_and_nothing_else(proc, tmp_path, "error: config missing.toml: cannot read it")
    (tmp_path / "ci.toml").write_text('[agent-protocol]\nbudget = "long"\nreport-dir = "out"\n', encoding="utf-8")
    proc = run(tmp_path, "--protocol", "agent-protocol", "--config", "ci.toml")
    assert_one_error_and_nothing_else(proc, tmp_path, "budget")


def test_an_unwritable_events_file_after_the_report_folder_was_checked(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where its folder would be", encoding="utf-8")
    proc = run(tmp_path, "--protocol", "agent-protocol", "--events", "blocker/events.jsonl")
    assert_one_error_and_nothing_else(proc, tmp_path, "error: cannot write --events blocker/events.jsonl")


def test_an_unreachable_base_url(tmp_path: Path) -> None:
    url = closed_port_url()
    proc = run(tmp_path, "--protocol", "agent-protocol", "--base-url", url, "--timeout", "1", "--report-dir", "out")
    error = f"error: agent-protocol: target unreachable or not speaking HTTP: cannot connect to {url}/"
    assert_one_error_and_nothing_else(proc, tmp_path, error)


def test_a_target_that_does_not_speak_the_protocol(tmp_path: Path, agent_protocol_mock: str) -> None:
    proc = run(tmp_path, "--protocol", "neuro-san", "--base-url", agent_protocol_mock, "--timeout", "5", "-q")
    assert_one_error_and_nothing_else(proc, tmp_path, "error: neuro-san: the target does not speak neuro-san at ")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_all_protocols_against_an_unreachable_target(tmp_path: Path, jobs: str) -> None:
    url = closed_port_url()
    proc = run(tmp_path, "--protocol", "all", "--base-url", url, "--token", "t", "--timeout", "1", "--jobs", jobs)
    errors = [f"error: {pid}: target unreachable" for pid in ("agent-protocol", "neuro-san", "sgr-agent-core")]
    assert_one_error_and_nothing_else(proc, tmp_path, *errors, "error: synapse-agent: target unreachable")


def test_one_unusable_protocol_among_tested_ones_is_named_by_the_closing_line(
    tmp_path: Path, agent_protocol_mock: str
) -> None:
    """Only the tested protocols get a folder and a verdict; the run still exits 2."""
    config = (
        f'[agent-protocol]\nbase-url = "{agent_protocol_mock}"\nonly = "AP-TASK-001"\nphase = "scenario"\n'
        f'[neuro-san]\nbase-url = "{agent_protocol_mock}"\n'
        f'[sgr-agent-core]\nbase-url = "{closed_port_url()}"\n'
        '[synapse-agent]\nonly = "SYN-SESS-001"\nphase = "scenario"\n'
    )
    (tmp_path / "conformance.toml").write_text(config, encoding="utf-8")
    proc = run(tmp_path, "--protocol", "all", "--jobs", "1", "--timeout", "5", "-q")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("error: neuro-san: the target does not speak neuro-san") == 1, proc.stderr
    assert proc.stderr.count("error: sgr-agent-core: target unreachable") == 1, proc.stderr
    assert "agent-protocol: PASS" in proc.stdout and "synapse-agent: " in proc.stdout
    assert "neuro-san: FAIL" not in proc.stdout and "sgr-agent-core: FAIL" not in proc.stdout
    assert "not tested (target error above): neuro-san, sgr-agent-core" in proc.stdout
    folders = sorted(p.name.rsplit("-", 2)[0] for p in (tmp_path / "reports").iterdir() if p.is_dir())
    assert folders == ["agent-protocol", "synapse-agent"]


def test_an_events_file_gets_its_folder_in_or_beside_the_report_folder(tmp_path: Path) -> None:
    """The report folder is made when the reports are written; an event log's folder from the start."""
    argv = ["--protocol", "agent-protocol", "--only", "AP-TASK-001", "--phase", "scenario", "-q"]
    for events in ("out/events/run.jsonl", "logs/run.jsonl"):
        proc = run(tmp_path, *argv, "--report-dir", "out", "--events", events)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert (tmp_path / "out" / "results.json").is_file() and (tmp_path / events).stat().st_size
