"""Findings replay: every curl line in a report, run as printed, gets the status the report
recorded; ``conformance replay`` says a fault's findings are reproduced, that a fixed server's are
not, and that it cannot tell when a call needs an object the server no longer holds."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.check.credentials import Credentials
from conformance.cli.commands import main
from conformance.engine.runner import EMBEDDED_TOKENS, run
from conformance.evidence.replay import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, load_report, replay
from conformance.reporting import write_reports
from conformance.run.options import RunOptions
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


TOKENS = {"TOKEN": EMBEDDED_TOKENS[0], "SECOND_TOKEN": EMBEDDED_TOKENS[1]}
"""A report names the run's tokens; its curl lines, scripts and replay are given them again."""
GIVEN = Credentials(TOKENS)


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
        done = subprocess.run(
            ["bash", "-c", finding["curl"]], capture_output=True, timeout=60, env={**os.environ, **TOKENS}
        )
        assert done.returncode in (0, 18, 28), done.stderr  # 18/28: a stream the server left unfinished
        assert status_of(done.stdout) == finding["status"], finding["curl"]


def test_replay_reproduces_the_findings_and_a_fixed_server_does_not(faulty: tuple[str, str, Path]) -> None:
    fault, _, reports = faulty
    report = load_report(reports)
    again = replay(report, credentials=GIVEN)
    # a read of the whole state after refused writes (hostile bodies) is compared with a read before
    # them: one answer replayed cannot tell that, and replay says which call moved (inconclusive)
    whole_state = [o for o in again if o.key.split("|")[1].startswith("GET") and o.requirement.endswith("-ERR-004")]
    assert all(o.verdict == INCONCLUSIVE and "did not make" in o.detail for o in whole_state), whole_state
    assert again and all(o.verdict == REPRODUCED for o in again if o not in whole_state), [o.to_dict() for o in again]
    pid = protocol_of(fault)
    with EmbeddedServer(MockConfig(protocols=(pid,))) as fixed:
        fixed_base = fixed.url + load(pid).info.base_path
        after = replay(report, base_url=fixed_base, credentials=GIVEN)
    assert {o.key for o in after} == {o.key for o in again}
    # a generated request for a task no server holds (a random id) gets 404: that cannot tell
    states = {o.key for o in whole_state}
    assert all(o.verdict == INCONCLUSIVE and "did not make" in o.detail for o in after if o.key in states)
    cannot_tell = [
        o for o in after if o.key in states or (o.verdict == INCONCLUSIVE and "may no longer hold" in o.detail)
    ]
    assert all(o.verdict == NOT_REPRODUCED for o in after if o not in cannot_tell), [o.to_dict() for o in after]
    assert len(cannot_tell) < len(after)


def test_replay_command_exits_1_while_a_finding_is_reproduced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-created-201",))) as server:
        base = server.url + "/ap/v1".removesuffix("/ap/v1")
        write_reports(
            run(RunOptions(protocol="agent-protocol", base_url=base, only=("AP-TASK-001",), phases=("scenario",))),
            tmp_path,
        )
        assert main(["replay", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert "REPRODUCED      AP-TASK-001|POST /ap/v1/agent/tasks|scenario:" in out
        assert "replay: 1 findings: 1 reproduced, 0 not reproduced, 0 inconclusive" in out
        assert main(["replay", str(tmp_path / "results.json"), "--id", "AP-PAGE"]) == 0
        assert "nothing to replay" in capsys.readouterr().out
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as fixed:
        assert main(["replay", str(tmp_path), "--base-url", fixed.url]) == 0
        assert "1 findings: 0 reproduced, 1 not reproduced, 0 inconclusive" in capsys.readouterr().out


def test_a_call_for_an_object_the_server_no_longer_holds_is_inconclusive(tmp_path: Path) -> None:
    """The issue's case: a report that kept only the read of an old run's task, replayed against a
    restarted server, got 404. That cannot tell whether the bug is fixed. (The step's POST answer
    echoes what was sent; its read by id shows the loss: the finding is the read's.)"""
    fault = "ap-step-drops-additional-input"
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=(fault,))) as server:
        options = RunOptions(
            protocol="agent-protocol", base_url=server.url, only=("AP-STEP-002",), phases=("scenario",)
        )
        report = json.loads(json.dumps(run(options).to_dict()))
    read = next(f for r in report["requirements"] for f in r["findings"] if f["key"].startswith("AP-STEP-002|GET"))
    # as a report of format 2 kept it: the last calls, no captures
    read["evidence"] = read["evidence"][-1:]
    del read["captures"], read["baked"]
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=(fault,))) as restarted:
        again = next(o for o in replay(report, base_url=restarted.url) if o.key == read["key"])
    assert again.verdict == INCONCLUSIVE and again.status == 404, again.to_dict()
    assert "may no longer hold" in again.detail


@pytest.mark.parametrize("faulty", ["syn-error-body-message"], indirect=True)
def test_replay_is_given_the_tokens_the_report_names(
    faulty: tuple[str, str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report names the run's tokens and never holds them: without them replay says which to give."""
    _, _, reports = faulty
    for name in ("TOKEN", "SECOND_TOKEN", "CONFORMANCE_TOKEN", "CONFORMANCE_SECOND_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["replay", str(reports)]) == 2
    assert "give --token" in capsys.readouterr().err
    monkeypatch.setenv("TOKEN", EMBEDDED_TOKENS[0])
    assert main(["replay", str(reports), "--second-token", EMBEDDED_TOKENS[1]]) == 1  # reproduced
    assert "0 inconclusive" in capsys.readouterr().out


def test_replay_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text('{"format_version": 1, "requirements": []}')
    assert main(["replay", str(tmp_path)]) == 2
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
