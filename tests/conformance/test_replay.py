"""Findings replay: every curl line in a report, run as printed, gets the status the report
recorded; ``conformance replay`` says a fault's findings still fail, and that a fixed server's do not."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.replay import FIXED, STILL_FAILS, load_report, replay
from conformance.reporting import write_reports
from conformance.run.options import RunOptions
from conformance.runner import EMBEDDED_TOKENS, run
from mockserver import EmbeddedServer, MockConfig
from specs.documents import load

# one of each way a request is recorded: generated GETs with a query, a binary multipart upload,
# a bearer token, a stream; and a scenario with several distinct failures (one per invalid body)
CASES = {
    "ap-create-accepts-invalid": ("AP-ERR-004",),
    "ap-page-huge-size-crashes": ("AP-SCHEMA-001",),
    "ap-upload-marks-agent-created": ("AP-ARTIFACT-001", "AP-ARTIFACT-004"),
    "syn-error-body-message": ("SYN-ERR-001",),
    "sgr-missing-done": ("SGR-STREAM-007",),
}


def protocol_of(fault: str) -> str:
    return {"ap": "agent-protocol", "syn": "synapse-agent", "sgr": "sgr-agent-core"}[fault.split("-", 1)[0]]


@pytest.fixture(params=sorted(CASES))
def faulty(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    fault = request.param
    pid = protocol_of(fault)
    with EmbeddedServer(MockConfig(protocols=(pid,), faults=(fault,))) as server:
        base = server.url + load(pid).info.base_path
        options = RunOptions(
            protocol=pid,
            base_url=base,
            token=EMBEDDED_TOKENS[0],
            second_token=EMBEDDED_TOKENS[1],
            max_examples=5,
            only=CASES[fault],
            phases=("schema",) if "-SCHEMA-" in CASES[fault][0] else ("scenario",),
        )
        write_reports(run(options), tmp_path)
        yield fault, base, tmp_path


def status_of(output: bytes) -> int:
    """The final status line curl -i printed (an interim 100 Continue comes first, if any)."""
    statuses = [int(m) for m in re.findall(rb"^HTTP/[\d.]+ (\d{3})", output, re.M) if int(m) != 100]
    assert statuses, output[:300]
    return statuses[0]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_every_curl_line_run_as_printed_gets_the_recorded_status(faulty: tuple[str, str, Path]) -> None:
    fault, _, reports = faulty
    data = json.loads((reports / "results.json").read_text())
    findings = [f for r in data["requirements"] for f in r["findings"]]
    assert findings, f"{fault}: the report has no finding"
    for finding in findings:
        assert finding["curl"] and finding["status"] is not None, finding["key"]
        done = subprocess.run(["bash", "-c", finding["curl"]], capture_output=True, timeout=60)
        assert done.returncode in (0, 18, 28), done.stderr  # 18/28: a stream the server left unfinished
        assert status_of(done.stdout) == finding["status"], finding["curl"]


def test_replay_says_the_findings_still_fail_and_that_a_fixed_server_passes(faulty: tuple[str, str, Path]) -> None:
    fault, _, reports = faulty
    report = load_report(reports)
    tokens = {"token": EMBEDDED_TOKENS[0], "second_token": EMBEDDED_TOKENS[1]}
    again = replay(report, **tokens)
    assert again and all(o.verdict == STILL_FAILS for o in again), [o.to_dict() for o in again]
    pid = protocol_of(fault)
    with EmbeddedServer(MockConfig(protocols=(pid,))) as fixed:
        fixed_base = fixed.url + load(pid).info.base_path
        after = replay(report, base_url=fixed_base, **tokens)
    assert {o.key for o in after} == {o.key for o in again}
    assert all(o.verdict == FIXED for o in after), [o.to_dict() for o in after]


def test_replay_command_exits_1_while_a_finding_still_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-created-201",))) as server:
        base = server.url + "/ap/v1".removesuffix("/ap/v1")
        write_reports(
            run(RunOptions(protocol="agent-protocol", base_url=base, only=("AP-TASK-001",), phases=("scenario",))),
            tmp_path,
        )
        assert main(["replay", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert "STILL FAILS  AP-TASK-001|POST /ap/v1/agent/tasks|scenario:" in out
        assert "1 of 1 findings still fail" in out
        assert main(["replay", str(tmp_path / "results.json"), "--id", "AP-PAGE"]) == 0
        assert "nothing to replay" in capsys.readouterr().out


def test_replay_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text('{"format_version": 1, "requirements": []}')
    assert main(["replay", str(tmp_path)]) == 2
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
