"""``python -m conformance``: listing requirements, a real run against the embedded mock, usage errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conformance.cli.commands import main
from tests.hostile import closed_port_url

REPORT_FILES = ["badge.svg", "document.html", "junit.xml", "report.html", "results.json", "summary.md"]

ID_LINE = re.compile(
    r"^(?P<id>[A-Z]+-[A-Z]+-\d{3})\s+(?P<level>MUST|SHOULD|MAY)\s+(?P<authority>document|practice)\s+"
    r"(?P<phase>schema|model|scenario|proxy|client)\s+\S"
)


def test_requirements_lists_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["requirements", "--protocol", "agent-protocol"]) == 0
    lines = capsys.readouterr().out.splitlines()
    parsed = [m.groupdict() for m in map(ID_LINE.match, lines) if m]
    assert len(parsed) == len(lines) > 0  # every line is a requirement
    ids = [p["id"] for p in parsed]
    assert len(ids) == len(set(ids))
    assert "AP-TASK-001" in ids
    assert {"AP-SCHEMA-001", "AP-SCHEMA-005"} <= set(ids)
    assert all(i.startswith("AP-") for i in ids)
    first = next(p for p in parsed if p["id"] == "AP-TASK-001")
    assert (first["level"], first["authority"], first["phase"]) == ("MUST", "document", "scenario")
    assert next(p for p in parsed if p["id"] == "AP-ARTIFACT-003")["authority"] == "practice"


def test_requirements_for_all_protocols(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["requirements"]) == 0
    ids = {m["id"] for m in map(ID_LINE.match, capsys.readouterr().out.splitlines()) if m}
    assert {"AP-SCHEMA-001", "NS-SCHEMA-001", "SGR-SCHEMA-001", "SYN-SCHEMA-001"} <= ids


def test_run_against_embedded_mock_writes_four_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report_dir = tmp_path / "reports"
    code = main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            "--only",
            "AP-TASK-001",
            "--phase",
            "scenario",
            "--report-dir",
            str(report_dir),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert sorted(p.name for p in report_dir.iterdir()) == REPORT_FILES

    data = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    assert data["protocol"] == "agent-protocol" and data["exit_code"] == 0
    assert data["target"].startswith("embedded reference mock (http://127.0.0.1:")
    assert [(r["id"], r["status"]) for r in data["requirements"]] == [("AP-TASK-001", "passed")]
    assert data["requirements"][0]["evidence"][0]["status"] == 200

    junit = ET.parse(report_dir / "junit.xml").getroot()
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("1", "0", "0")
    html = (report_dir / "report.html").read_text(encoding="utf-8")
    assert "AP-TASK-001" in html and "PASS" in html
    assert "| AP-TASK-001 | MUST | passed |" in (report_dir / "summary.md").read_text(encoding="utf-8")

    assert "agent-protocol: PASS - MUST 1 passed, 0 failed" in out
    assert "agent-protocol: scenarios phase done in " in err and " s: 1 passed" in err  # progress while it runs


def test_quiet_run_prints_no_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "run",
                "--protocol",
                "agent-protocol",
                "--only",
                "AP-TASK-001",
                "--phase",
                "scenario",
                "--report-dir",
                str(tmp_path),
                "-q",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert err == ""
    assert "PASS" in out


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["run"],
        ["run", "--protocol", "a2a"],
        ["run", "--protocol", "agent-protocol", "--timeout", "soon"],
        ["run", "--protocol", "agent-protocol", "--phase", "stateful"],
        ["run", "--protocol", "agent-protocol", "--level", "critical"],
        ["requirements", "--protocol", "nope"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()  # one line: what is wrong and where to look
    assert line.startswith("python -m conformance") and ": error: " in line and "--help)" in line


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    assert "--base-url" in capsys.readouterr().out


def test_unknown_profile_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            "--profile",
            "upstream",
            "--base-url",
            closed_port_url(),
            "--report-dir",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "error: no profile 'upstream' for agent-protocol (known: none)" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # refused before running anything


@pytest.mark.slow  # every protocol's whole suite
def test_run_all_protocols_passes_against_the_mock_and_writes_readable_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's main command, smaller: every protocol, every requirement, one report folder each."""
    code = main(["run", "--protocol", "all", "--max-examples", "3", "--report-dir", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert code == 0, out
    for pid in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"):
        folder = tmp_path / pid
        assert sorted(p.name for p in folder.iterdir()) == REPORT_FILES
        results = json.loads((folder / "results.json").read_text())
        assert results["protocol"] == pid and results["exit_code"] == 0
        assert results["requirements"]
        assert {r["id"]: r["message"] for r in results["requirements"] if r["status"] != "passed"} == {}
        suite = ET.parse(folder / "junit.xml").getroot()
        assert suite.get("failures") == "0" and int(suite.get("tests") or 0) == len(results["requirements"])
        html = (folder / "report.html").read_text()
        assert all(r["id"] in html for r in results["requirements"]) and "PASS" in html
        assert f"{pid}: PASS" in out
    # one summary, JUnit file and page for the whole run, beside the protocols' folders
    combined = ET.parse(tmp_path / "junit.xml").getroot()
    assert combined.tag == "testsuites" and [s.get("name") for s in combined] == [
        f"conformance.{pid}" for pid in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent")
    ]
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# Conformance: every protocol") and "| synapse-agent | PASS |" in summary
    page = (tmp_path / "report.html").read_text()
    assert "href='neuro-san/report.html'" in page and page.count("<svg") == 4


def test_verbose_prints_each_failure_with_its_evidence_and_curl_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mockserver import EmbeddedServer, MockConfig

    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-created-201",))) as server:
        code = main(
            [
                "run",
                "--protocol",
                "agent-protocol",
                "--base-url",
                server.url,
                "--only",
                "AP-TASK-001",
                "--phase",
                "scenario",
                "-v",
                "--report-dir",
                str(tmp_path),
            ]
        )
    err = capsys.readouterr().err
    assert code == 1
    assert "AP-TASK-001 failed: 1 distinct failure(s)" in err
    assert "[1x] AP-TASK-001|POST /ap/v1/agent/tasks|scenario:" in err
    assert "-> HTTP 201" in err and "curl -sS -i -X POST " in err


def test_a_run_of_several_protocols_ends_with_one_line_naming_the_combined_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--protocol", "all", "--only", "AP-TASK-001", "--only", "NS-FUNC-001", "--phase", "scenario"]
    code = main([*argv, "--report-dir", str(tmp_path), "-q", "--jobs", "1"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 0
    assert last == (
        f"all 2 protocols: PASS (agent-protocol PASS, neuro-san PASS); combined report {tmp_path / 'report.html'}"
    )
