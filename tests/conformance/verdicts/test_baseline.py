"""``--expected-failures`` and ``conformance baseline``: a known failure is tolerated, a fixed one
goes stale and fails the run, and a file that cannot be trusted is a usage error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from conformance.cli.commands import main
from conformance.verdicts.baseline import Entry, judge
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import Finding, RequirementResult, RunResult, Status
from mockserver import EmbeddedServer, MockConfig
from specs.documents import load

TASKS = ["--only", "AP-TASK-001", "--phase", "scenario"]


@pytest.fixture(scope="module")
def broken_url() -> Iterator[str]:
    """A mock whose created tasks lack task_id: AP-TASK-001 fails."""
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-missing-id",))) as server:
        yield server.url + load("agent-protocol").info.base_path


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run(tmp: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["run", "--protocol", "agent-protocol", *TASKS, "--report-dir", str(tmp), "-q", *extra])
    return code, json.loads((tmp / "results.json").read_text(encoding="utf-8"))


def by_id(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in results["requirements"]}


def test_without_a_baseline_the_fault_fails_the_run(tmp_path: Path, broken_url: str) -> None:
    code, results = run(tmp_path, "--base-url", broken_url)
    assert code == 1 and by_id(results)["AP-TASK-001"]["status"] == "failed"
    assert by_id(results)["AP-TASK-001"]["baseline"] is None


def test_a_listed_failure_is_expected_and_does_not_fail_the_run(
    tmp_path: Path, broken_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = write(tmp_path / "b.yaml", "expected_failures:\n  - id: AP-TASK-001\n    reason: vendor bug 42\n")
    code, results = run(tmp_path / "r", "--base-url", broken_url, "--expected-failures", str(baseline))
    assert code == 0
    task = by_id(results)["AP-TASK-001"]
    assert task["status"] == "failed"  # still shown as the failure it is
    assert task["baseline"] == {"verdict": "expected", "reason": "vendor bug 42"}
    assert results["exit_code"] == 0 and results["baseline"] == {"expected": 1, "stale": 0}
    junit = ET.parse(tmp_path / "r" / "junit.xml").getroot()
    assert (junit.get("failures"), junit.get("skipped")) == ("0", "1")
    skipped = junit.find(".//testcase/skipped")
    assert skipped is not None and skipped.get("message", "").startswith("expected failure (vendor bug 42)")
    assert "| AP-TASK-001 | MUST | expected failure |" in (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "expected failure" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "1 expected failures, 0 stale" in capsys.readouterr().out


def test_the_baseline_command_writes_a_file_that_tolerates_exactly_that_failure(
    tmp_path: Path, broken_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run(tmp_path / "first", "--base-url", broken_url)
    out = tmp_path / "expected.yaml"
    assert main(["baseline", str(tmp_path / "first"), "-o", str(out)]) == 0
    import yaml

    entries = yaml.safe_load(out.read_text(encoding="utf-8"))["expected_failures"]
    assert [e["id"] for e in entries] == ["AP-TASK-001"]
    assert (
        entries[0]["failure"]
        == by_id(json.loads((tmp_path / "first" / "results.json").read_text()))["AP-TASK-001"]["findings"][0]["key"]
    )
    assert entries[0]["failure"].startswith("AP-TASK-001|POST /ap/v1/agent/tasks|")
    code, results = run(tmp_path / "again", "--base-url", broken_url, "--expected-failures", str(out))
    assert code == 0 and by_id(results)["AP-TASK-001"]["baseline"]["verdict"] == "expected"
    # a different failure of the same requirement is not tolerated by that key
    entries[0]["failure"] = "AP-TASK-001|POST /ap/v1/agent/tasks|scenario:0123456789"
    other = write(tmp_path / "other.yaml", yaml.safe_dump({"expected_failures": entries}))
    code, results = run(tmp_path / "other", "--base-url", broken_url, "--expected-failures", str(other))
    assert code == 1 and by_id(results)["AP-TASK-001"]["baseline"] is None


def test_a_listed_requirement_that_passes_is_stale_and_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = write(tmp_path / "b.yaml", "expected_failures:\n  - {id: AP-TASK-001, reason: fixed upstream}\n")
    code, results = run(tmp_path / "r", "--expected-failures", str(baseline))  # the unmodified mock
    assert code == 1
    task = by_id(results)["AP-TASK-001"]
    assert task["status"] == "passed" and task["baseline"]["verdict"] == "stale"
    assert results["baseline"] == {"expected": 0, "stale": 1}
    err = capsys.readouterr().err
    assert "AP-TASK-001 is stale" in err and "remove the entry" in err
    junit = ET.parse(tmp_path / "r" / "junit.xml").getroot()
    assert junit.get("failures") == "1"
    assert "| AP-TASK-001 | MUST | **stale** |" in (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")


def test_entries_for_requirements_the_run_did_not_select_are_neither_expected_nor_stale(tmp_path: Path) -> None:
    baseline = write(tmp_path / "b.yaml", "expected_failures:\n  - {id: SYN-AUTH-001, reason: other protocol}\n")
    code, results = run(tmp_path / "r", "--expected-failures", str(baseline))
    assert code == 0 and results["baseline"] == {"expected": 0, "stale": 0}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("expected_failures:\n  - {id: AP-NOPE-999, reason: x}\n", "unknown requirement id 'AP-NOPE-999'"),
        ("expected_failures:\n  - {id: AP-TASK-001}\n", "expected_failures[1] (AP-TASK-001): 'reason'"),
        ("expected_failures:\n  - {id: AP-TASK-001, reason: x, why: y}\n", "unknown key 'why'"),
        (
            "expected_failures:\n  - {id: AP-TASK-001, reason: x, failure: 3f9c}\n",
            "must be a finding key 'AP-TASK-001|",
        ),
        ("expected_failures: [AP-TASK-001]\n", "expected_failures[1]: expected a mapping"),
        ("- AP-TASK-001\n", "expected a mapping with an 'expected_failures' list"),
        ("expected_failures: [\n", "not valid YAML"),
    ],
)
def test_an_unusable_baseline_is_a_one_line_usage_error(
    tmp_path: Path, text: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = write(tmp_path / "b.yaml", text)
    code = main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            *TASKS,
            "--expected-failures",
            str(baseline),
            "--report-dir",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and err[0].startswith("error: --expected-failures")
    assert not (tmp_path / "r").exists()  # nothing ran


def test_a_missing_baseline_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--protocol", "agent-protocol", "--expected-failures", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_baseline_of_a_directory_without_results_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["baseline", str(tmp_path)]) == 2
    assert "no results.json" in capsys.readouterr().err


REQ = Requirement("AP-SCHEMA-005", Level.MUST, "s", "r", "agent-protocol", phase="schema")
K1, K2 = "AP-SCHEMA-005|GET /ap/v1/agent/tasks|ST101:x", "AP-SCHEMA-005|GET /ap/v1/agent/tasks/{task_id}|ST101:y"


def failed(*keys: str) -> RequirementResult:
    findings = [Finding(k, REQ.id, k.split("|")[1], k.split("|")[2], "m") for k in keys]
    return RequirementResult(REQ, Status.FAILED, "m", findings=findings)


def test_keys_tolerate_a_failure_only_when_every_distinct_failure_is_listed() -> None:
    entries = (Entry(REQ.id, "known", K1),)
    res = failed(K1)
    judge(res, entries)
    assert (res.baseline, res.baseline_reason, res.gates_ok) == ("expected", "known", True)
    res = failed(K1, K2)  # a second, new bug in the same requirement
    judge(res, entries)
    assert (res.baseline, res.gates_ok) == ("", False)
    res = failed(K1, K2)
    judge(res, (*entries, Entry(REQ.id, "also known", K2)))
    assert (res.baseline, res.baseline_reason) == ("expected", "known; also known")
    res = failed()  # failed without findings: a key cannot match it, an id-only entry can
    judge(res, entries)
    assert res.baseline == ""
    judge(res, (Entry(REQ.id, "any"),))
    assert res.baseline == "expected"


def test_a_passing_requirement_listed_by_key_is_stale_at_any_level() -> None:
    should = Requirement("AP-SCHEMA-006", Level.SHOULD, "s", "r", "agent-protocol", phase="schema")
    res = RequirementResult(should, Status.PASSED, "ok")
    judge(res, (Entry(should.id, "was broken", "AP-SCHEMA-006|GET /x|ST101:z"),))
    assert res.baseline == "stale" and not res.gates_ok
    run = RunResult(
        "agent-protocol", "t", "v", 0, Level.MAY, "now", results=[RequirementResult(REQ, Status.PASSED, "ok"), res]
    )
    assert run.must_passed and run.exit_code == 1  # the MUSTs pass; the stale SHOULD entry fails it
