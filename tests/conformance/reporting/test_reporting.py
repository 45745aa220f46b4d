"""Report writers fed from a hand-built RunResult: content, parseability, escaping, exit codes."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conformance.reporting import (
    WRITERS,
    ReportFiles,
    render_badge,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    write_reports,
)
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import Exchange, RequirementResult, RunResult, Status

HOSTILE_BODY = '<script>alert("pwned")</script> | & \x00\x1b[31m'


def req(rid: str, level: Level = Level.MUST, statement: str = "does a thing") -> Requirement:
    return Requirement(rid, level, statement, f"doc.json#/{rid}", "agent-protocol")


def failing_exchange() -> Exchange:
    return Exchange(
        "POST",
        "http://127.0.0.1:9/ap/v1/agent/tasks",
        {"content-type": "application/json"},
        '{"input": "x"}',
        status=500,
        response_headers={"content-type": "text/html"},
        response_body=HOSTILE_BODY,
        elapsed_ms=12.5,
    )


def make_run(*, fatal: str | None = None) -> RunResult:
    run = RunResult(
        protocol="agent-protocol",
        target="http://127.0.0.1:9",
        suite_version="9.9.9",
        seed=42,
        level=Level.MAY,
        started_at="2025-01-01T00:00:00+00:00",
        finished_at="2025-01-01T00:00:05+00:00",
        duration_s=5.0,
        fatal=fatal,
    )
    run.results = [
        RequirementResult(req("T-PASS-001"), Status.PASSED, "passed", [Exchange("GET", "http://x/", {}, None, 200)]),
        RequirementResult(
            req("T-FAIL-001", statement="answers <b>200</b> | always"),
            Status.FAILED,
            "expected HTTP 200, got 500: <script>x</script>",
            [failing_exchange()],
            0.25,
        ),
        RequirementResult(req("T-SKIP-001", Level.SHOULD), Status.NOT_VERIFIED, "not verified: no second token"),
        RequirementResult(req("T-ERR-001", Level.MAY), Status.ERROR, "suite error: KeyError: 'x' (at a.py:1)"),
        RequirementResult(
            req("T-ERR-002", Level.MUST),
            Status.ERROR,
            "the target misbehaved: stream stalled",
            [Exchange("GET", "http://x/s", {}, None, error="stream stalled: nothing for 1 s")],
        ),
    ]
    return run


# --- exit code logic -----------------------------------------------------------------------------


def _with(*results: RequirementResult, fatal: str | None = None) -> RunResult:
    run = make_run(fatal=fatal)
    run.results = list(results)
    return run


def test_all_musts_passed_exits_0_even_with_should_failures() -> None:
    run = _with(
        RequirementResult(req("A"), Status.PASSED),
        RequirementResult(req("B", Level.SHOULD), Status.FAILED, "nope"),
        RequirementResult(req("C", Level.MAY), Status.ERROR, "bug"),
    )
    assert run.must_passed and run.exit_code == 0


@pytest.mark.parametrize("status", [Status.FAILED, Status.NOT_VERIFIED, Status.ERROR])
def test_a_must_that_did_not_pass_exits_1(status: Status) -> None:
    run = _with(RequirementResult(req("A"), Status.PASSED), RequirementResult(req("B"), status, "why"))
    assert not run.must_passed
    assert run.exit_code == 1


def test_a_selection_without_musts_gates_on_what_it_ran() -> None:
    assert _with(RequirementResult(req("A", Level.SHOULD), Status.PASSED)).exit_code == 0
    assert (
        _with(
            RequirementResult(req("A", Level.SHOULD), Status.PASSED),
            RequirementResult(req("B", Level.MAY), Status.NOT_VERIFIED, "why"),
        ).exit_code
        == 1
    )


def test_an_empty_run_is_not_a_pass() -> None:
    run = _with()
    assert not run.must_passed and run.exit_code == 1


def test_fatal_exits_2_whatever_passed() -> None:
    run = _with(RequirementResult(req("A"), Status.PASSED), fatal="target unreachable")
    assert not run.must_passed and run.exit_code == 2


def test_tally_rolls_up_by_level() -> None:
    tally = make_run().tally()
    assert tally["must"] == {"passed": 1, "failed": 1, "not verified": 0, "error": 1, "blocked": 0}
    assert tally["should"] == {"passed": 0, "failed": 0, "not verified": 1, "error": 0, "blocked": 0}
    assert tally["may"] == {"passed": 0, "failed": 0, "not verified": 0, "error": 1, "blocked": 0}


# --- results.json --------------------------------------------------------------------------------


def test_results_json() -> None:
    data = json.loads(render_json(make_run()))
    assert (data["protocol"], data["target"], data["suite_version"], data["seed"]) == (
        "agent-protocol",
        "http://127.0.0.1:9",
        "9.9.9",
        42,
    )
    assert data["exit_code"] == 1 and data["fatal"] is None
    assert data["summary"]["must"]["failed"] == 1
    by_id = {r["id"]: r for r in data["requirements"]}
    assert list(by_id) == ["T-PASS-001", "T-FAIL-001", "T-SKIP-001", "T-ERR-001", "T-ERR-002"]
    for r in data["requirements"]:
        assert {"id", "level", "status", "message", "evidence"} <= set(r)
    failed = by_id["T-FAIL-001"]
    assert (failed["level"], failed["status"]) == ("must", "failed")
    assert failed["message"].startswith("expected HTTP 200, got 500")
    [ev] = failed["evidence"]
    assert (ev["method"], ev["url"], ev["status"]) == ("POST", "http://127.0.0.1:9/ap/v1/agent/tasks", 500)
    assert ev["request_body"] == '{"input": "x"}'
    assert ev["response_body"] == HOSTILE_BODY  # JSON carries it exactly
    assert by_id["T-SKIP-001"]["status"] == "not verified" and by_id["T-SKIP-001"]["level"] == "should"
    assert by_id["T-ERR-002"]["evidence"][0]["error"].startswith("stream stalled")


def test_results_json_with_fatal() -> None:
    data = json.loads(render_json(make_run(fatal="target unreachable or not speaking HTTP: refused")))
    assert data["fatal"].startswith("target unreachable")
    assert data["exit_code"] == 2


# --- junit.xml -----------------------------------------------------------------------------------


def test_junit_counts_and_parses_with_hostile_bytes() -> None:
    root = ET.fromstring(render_junit(make_run()).encode())
    assert root.tag == "testsuite"
    # only what decides the exit code (the MUSTs) fails or errs; the MAY error is a note
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("5", "1", "1", "1")
    cases = root.findall("testcase")
    assert [c.get("name") for c in cases] == ["T-PASS-001", "T-FAIL-001", "T-SKIP-001", "T-ERR-001", "T-ERR-002"]
    assert {c.get("classname") for c in cases} == {"agent-protocol"}
    assert len(root.findall("testcase/failure")) == 1
    assert [c.get("name") for c in cases if c.find("error") is not None] == ["T-ERR-002"]
    assert len(root.findall("testcase/skipped")) == 1
    note = cases[3].find("system-out")
    assert note is not None and (note.text or "").startswith("MAY requirement error (does not decide the exit code)")
    failure = root.find("testcase/failure")
    assert failure is not None and failure.text is not None
    assert "POST http://127.0.0.1:9/ap/v1/agent/tasks -> 500" in failure.text
    assert '<script>alert("pwned")</script>' in failure.text  # escaped in XML, intact once parsed
    props = {p.get("name"): p.get("value") for p in root.findall("properties/property")}
    assert props == {
        "target": "http://127.0.0.1:9",
        "implementation": "http://127.0.0.1:9",  # not named: the implementation is its URL
        "target_name": "",
        "target_version": "",
        "seed": "42",
        "suite_version": "9.9.9",
        "exit_code": "1",
    }


def test_junit_fatal_is_an_extra_error_case_and_counted() -> None:
    root = ET.fromstring(render_junit(make_run(fatal="unreachable \x07 bell")).encode())
    cases = root.findall("testcase")
    assert root.get("tests") == str(len(cases)) == "6"
    assert root.get("errors") == "2"
    assert cases[0].get("name") == "target"
    error = cases[0].find("error")
    assert error is not None and (error.get("message") or "").startswith("unreachable")


# --- report.html ---------------------------------------------------------------------------------


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.refs += [(k, v or "") for k, v in attrs if k in ("src", "href", "action")]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_one_self_contained_page() -> None:
    page = render_html(make_run())
    parser = _Collect()
    parser.feed(page)
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert all(v.startswith("#") for _, v in parser.refs), parser.refs  # nothing external to load
    assert "link" not in parser.tags and "script" not in parser.tags and "img" not in parser.tags
    assert "@import" not in page and "url(" not in page


def test_html_shows_every_requirement_and_the_failing_evidence() -> None:
    page = render_html(make_run())
    for rid in ("T-PASS-001", "T-FAIL-001", "T-SKIP-001", "T-ERR-001", "T-ERR-002"):
        assert rid in page
    text = "".join(_text(page))
    assert "POST http://127.0.0.1:9/ap/v1/agent/tasks" in text
    assert "HTTP 500 (12.5 ms)" in text
    assert '<script>alert("pwned")</script>' in text  # shown as text to the reader
    assert "error: stream stalled: nothing for 1 s" in text
    assert "FAIL" in text and "Exit code 1" in text
    # failures come before passes, and their evidence is collapsed until asked for
    assert page.index("T-FAIL-001") < page.index("T-PASS-001")
    assert "<details><summary>evidence</summary><pre>POST" in page and "<details open" not in page
    # the root failures lead the page; a filter box per status and level
    assert page.index("Root failures (1)") < page.index("<tr id='T-PASS-001'")
    assert "id='f-blocked'" in page and "id='f-should'" in page and "tr.st-failed{display:none}" in page


def test_html_shows_json_bodies_as_characters_not_escapes() -> None:
    run = make_run()
    run.results[1].evidence[0].response_body = '{"input": "caf\\u00e9 \\u2713"}'
    text = "".join(_text(render_html(run)))
    assert "caf\u00e9 \u2713" in text and "\\u00e9" not in text


def _text(page: str) -> list[str]:
    parser = _Collect()
    parser.feed(page)
    return parser.text


def test_html_escapes_hostile_strings() -> None:
    run = make_run(fatal='<img src="x" onerror="alert(1)">')
    run.target = "http://t/<svg onload=alert(1)>"
    page = render_html(run)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert "<b>200</b>" not in page and "&lt;b&gt;200&lt;/b&gt;" in page
    assert "<img" not in page and "<svg" not in page
    assert "TARGET ERROR" in page


# --- summary.md ----------------------------------------------------------------------------------


def test_summary_markdown_table() -> None:
    md = render_markdown(make_run())
    lines = md.splitlines()
    assert lines[0] == "# Conformance: agent-protocol - FAIL"
    assert "| level | passed | failed | blocked | not verified | error |" in lines
    assert "| MUST | 1 | 1 | 0 | 0 | 1 |" in lines
    assert "| id | level | result | statement | detail |" in lines
    rows = [ln for ln in lines if ln.startswith("| T-")]
    assert len(rows) == 5
    fail = next(r for r in rows if r.startswith("| T-FAIL-001 "))
    # the statement's pipe is escaped, so the row still has exactly five cells
    assert len(re.split(r"(?<!\\)\|", fail.strip().strip("|"))) == 5
    assert "**failed**" in fail and "expected HTTP 200, got 500" in fail
    assert not re.search(r"(?<!\\)<[a-z/]", md)  # no tag GitHub would render: each is backslash-escaped
    assert "answers \\<b>200\\</b> \\| always" in fail and "&lt;" not in md  # and reads as it was written
    assert next(r for r in rows if r.startswith("| T-PASS-001 ")).endswith("| passed | does a thing |  |")
    assert "| not verified |" in next(r for r in rows if r.startswith("| T-SKIP-001 "))


def test_summary_markdown_fatal_is_one_quoted_line() -> None:
    md = render_markdown(make_run(fatal="unreachable\nsecond line <b>x</b>"))
    assert md.splitlines()[0].endswith("TARGET ERROR")
    assert "> unreachable second line \\<b>x\\</b>" in md.splitlines()


# --- write_reports -------------------------------------------------------------------------------


def test_write_reports_writes_every_format(tmp_path: Path) -> None:
    target = tmp_path / "nested" / "dir"
    written = write_reports(make_run(), target)
    names = ["badge.svg", "document.html", "junit.xml", "report.html", "results.json", "summary.md"]
    assert sorted(p.name for p in written if p.parent == target) == sorted(WRITERS) == names
    assert json.loads((target / "results.json").read_text(encoding="utf-8"))["seed"] == 42
    ET.parse(target / "junit.xml")
    assert "T-FAIL-001" in (target / "report.html").read_text(encoding="utf-8")
    assert "| T-FAIL-001 |" in (target / "summary.md").read_text(encoding="utf-8")


# --- badge.svg -----------------------------------------------------------------------------------


def test_the_badge_names_the_level_reached_and_the_must_and_should_counts() -> None:
    from conformance.reporting.badge import level_reached

    run = make_run()
    assert level_reached(run) == "none"  # a MUST failed
    svg = ET.fromstring(render_badge(run))
    title = svg.find("{http://www.w3.org/2000/svg}title")
    assert title is not None and title.text == "agent-protocol: MUST 1/3 \u00b7 SHOULD 0/1 (level reached: none)"
    run.results = [r for r in run.results if r.status is Status.PASSED]
    assert level_reached(run) == "MUST"  # every MUST passed; no SHOULD in the run, so not reached
    run.results.append(RequirementResult(req("T-S-001", Level.SHOULD), Status.PASSED))
    assert level_reached(run) == "SHOULD"
    assert level_reached(make_run(fatal="unreachable")) == "error"
    assert "target error" in render_badge(make_run(fatal="unreachable"))


def test_every_report_names_the_verdicts_that_depend_on_the_servers_state() -> None:
    run = make_run()
    listing = Requirement(
        "T-LIST-001",
        Level.MUST,
        "pages the whole list",
        "doc.json#/list",
        "agent-protocol",
        depends_on_state="walks every item the server holds",
    )
    run.results.append(RequirementResult(listing, Status.PASSED, "passed"))
    data = json.loads(render_json(run))
    assert data["state_dependent"] == {"T-LIST-001": "walks every item the server holds"}
    by_id = {r["id"]: r for r in data["requirements"]}
    assert by_id["T-LIST-001"]["depends_on_state"] == "walks every item the server holds"
    assert by_id["T-PASS-001"]["depends_on_state"] is None
    summary = render_markdown(run)
    assert "## Verdicts that depend on the server's own state" in summary
    assert "- T-LIST-001: walks every item the server holds" in summary
    page = render_html(run)
    assert "Verdicts that depend on the server's own state</h2>" in page and "href='#T-LIST-001'" in page
    assert json.loads(render_json(make_run()))["state_dependent"] == {}


def test_report_files_are_written_when_a_run_finishes_and_only_then(tmp_path: Path) -> None:
    from conformance.run.events import PhaseStarted, RunFinished

    run = make_run()
    handler = ReportFiles(lambda pid: tmp_path / pid)
    handler.handle(PhaseStarted("scenario"))
    assert not (tmp_path / run.protocol).exists() and handler.written == []
    handler.handle(RunFinished(run))
    folder = tmp_path / run.protocol
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == sorted(WRITERS)
    report = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert report["requirements"] == json.loads(WRITERS["results.json"](run))["requirements"]
    assert sorted(report["certificate"]["files"]) == sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != "results.json"
    )
    assert handler.written == [(run, folder)]


def test_a_run_whose_target_was_unusable_gets_no_report_folder(tmp_path: Path) -> None:
    from conformance.run.events import RunFinished

    run = make_run(fatal="target unreachable or not speaking HTTP: refused")
    handler = ReportFiles(lambda pid: tmp_path / pid)
    handler.handle(RunFinished(run))
    assert not (tmp_path / run.protocol).exists() and handler.written == [] and handler.unusable == [run]
