"""reporting/github.py: which requirements become annotations, how they read, and the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.reporting import write_reports
from conformance.reporting.combined import write_combined
from conformance.reporting.github import ANNOTATIONS_PER_KIND, main, summary, workflow_commands
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import RequirementResult, RunResult, Status

LINK = "https://github.example/o/r/actions/runs/1/artifacts/2"


def result(rid: str, status: Status, level: Level = Level.MUST, **kw: str) -> RequirementResult:
    statement = f"the server does {rid}"
    return RequirementResult(Requirement(rid, level, statement, "doc#/x", "agent-protocol"), status, **kw)


def run_of(*results: RequirementResult, protocol: str = "agent-protocol", fatal: str | None = None) -> RunResult:
    return RunResult(protocol, "http://t", "0", 0, Level.MAY, "now", results=list(results), fatal=fatal)


def parsed(lines: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for line in lines:
        kind, rest = line.removeprefix("::").split(" title=", 1)
        title, message = rest.split("::", 1)
        out.append((kind, title, message))
    return out


def test_every_must_that_did_not_pass_is_an_error_and_a_failed_should_a_warning() -> None:
    run = run_of(
        result("X-1", Status.FAILED, message="got 500"),
        result("X-2", Status.NOT_VERIFIED, message="no task to read"),
        result("X-3", Status.ERROR, message="the check raised"),
        result("X-4", Status.BLOCKED, message="blocked by X-1", blocked_by="X-1"),
        result("X-5", Status.PASSED),
        result("X-6", Status.FAILED, Level.SHOULD, message="no Retry-After"),
        result("X-7", Status.NOT_VERIFIED, Level.SHOULD, message="not applicable"),
        result("X-8", Status.FAILED, message="known", baseline="expected"),
        result("X-9", Status.BLOCKED, message="blocked by X-8", blocked_by="X-8"),
    )
    got = [(kind, title) for kind, title, _ in parsed(workflow_commands([run], LINK))]
    assert got == [
        ("error", "X-1 (MUST) failed"),
        ("error", "X-2 (MUST) not verified"),
        ("error", "X-3 (MUST) error"),
        ("error", "X-4 (MUST) blocked"),
        ("warning", "X-6 (SHOULD) failed"),
    ]


def test_the_message_is_the_requirements_text_escaped_for_a_workflow_command() -> None:
    message = "expected 404, got 500: {'detail': '50% done'}\nsecond line\r"
    [line] = workflow_commands([run_of(result("X-1", Status.FAILED, message=message))], LINK)
    assert line == (
        "::error title=X-1 (MUST) failed::the server does X-1%0A"
        "expected 404, got 500: {'detail': '50%25 done'}%0Asecond line%0D%0A"
        f"Reports: {LINK}"
    )
    long = "x" * 5000
    [line] = workflow_commands([run_of(result("X-1", Status.FAILED, message=long))], LINK)
    assert "x" * 999 + "…%0AReports" in line and "x" * 1000 not in line  # MESSAGE_LIMIT, the ellipsis counted


def test_a_target_error_and_a_stale_entry_are_errors_with_titles_escaped() -> None:
    stale = result("X-1", Status.PASSED, Level.SHOULD, baseline="stale", baseline_reason="issue 12")
    lines = workflow_commands([run_of(stale, fatal="connect: refused"), run_of(protocol="a,b:c", fatal="x")], LINK)
    assert parsed(lines) == [
        ("error", "agent-protocol%3A target error", f"connect: refused%0AReports: {LINK}"),
        ("error", "a%2Cb%3Ac%3A target error", f"x%0AReports: {LINK}"),
        ("error", "X-1 (SHOULD) stale", "listed in the expected failures (issue 12) but passes now: remove it"),
    ]


def test_past_what_github_shows_the_last_annotation_counts_the_rest() -> None:
    many = [result(f"X-{n}", Status.FAILED, message="m") for n in range(25)]
    shoulds = [result(f"Y-{n}", Status.FAILED, Level.SHOULD, message="m") for n in range(3)]
    got = parsed(workflow_commands([run_of(*many, *shoulds)], LINK))
    errors = [title for kind, title, _ in got if kind == "error"]
    assert len(errors) == ANNOTATIONS_PER_KIND
    assert errors[:-1] == [f"X-{n} (MUST) failed" for n in range(ANNOTATIONS_PER_KIND - 1)]
    assert errors[-1] == "16 more" and LINK in got[ANNOTATIONS_PER_KIND - 1][2]
    assert [title for kind, title, _ in got if kind == "warning"] == [
        "Y-0 (SHOULD) failed",
        "Y-1 (SHOULD) failed",
        "Y-2 (SHOULD) failed",
    ]


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    runs = [run_of(result("X-1", Status.PASSED), protocol=p) for p in ("agent-protocol", "neuro-san")]
    for run in runs:
        write_reports(run, tmp_path / run.protocol)
    write_combined(runs, tmp_path, {r.protocol: r.protocol for r in runs})
    return tmp_path


def test_the_summary_of_several_protocols_is_the_combined_one_each_protocol_once(reports: Path) -> None:
    text = summary(reports, LINK)
    assert text.count("# Conformance: every protocol") == 1
    assert text.count("## Conformance: agent-protocol") == 1 and text.count("## Conformance: neuro-san") == 1
    assert text.rstrip().endswith(LINK)
    (reports / "summary.md").unlink()  # without the combined one: each protocol's, once
    text = summary(reports, LINK)
    assert text.count("# Conformance: agent-protocol") == 1 and text.count("# Conformance: neuro-san") == 1


def test_a_summary_past_githubs_limit_is_cut_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.reporting.github as github

    monkeypatch.setattr(github, "SUMMARY_LIMIT", 2000)
    (tmp_path / "summary.md").write_text("".join(f"| row {n} |\n" for n in range(1000)), encoding="utf-8")
    text = summary(tmp_path, LINK)
    assert len(text.encode()) <= 2000 and "The summary is cut here" in text and text.rstrip().endswith(LINK)


def test_no_report_says_so_in_the_summary_and_in_an_annotation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    assert main([str(tmp_path / "reports"), "--link", LINK, "--exit-code", "2"]) == 0
    assert "no report was written" in step_summary.read_text(encoding="utf-8")
    assert capsys.readouterr().out.startswith("::error title=conformance%3A no report::the run ended with exit code 2")


def test_the_command_reads_the_reports_a_run_wrote(
    reports: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads((reports / "neuro-san" / "results.json").read_text(encoding="utf-8"))
    record["requirements"][0]["status"] = "failed"
    record["requirements"][0]["message"] = "got 500"
    (reports / "neuro-san" / "results.json").write_text(json.dumps(record), encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(reports / "step-summary.md"))
    assert main([str(reports), "--link", LINK, "--exit-code", "1"]) == 0
    assert (
        capsys.readouterr().out == f"::error title=X-1 (MUST) failed::the server does X-1%0Agot 500%0AReports: {LINK}\n"
    )
