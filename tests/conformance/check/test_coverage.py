"""What a run exercised of the document (``check/coverage.py``): counted from the exchanges the
run's clients made, laid over the document's operations, statuses, parameters and properties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.check.coverage import Tap
from conformance.check.guard import Routes
from conformance.engine.runner import run
from conformance.evidence.verify import check_files
from conformance.reporting import write_reports
from conformance.run.options import RunOptions
from specs.documents import load

BASE = "http://127.0.0.1:1"


def _tap() -> Tap:
    return Tap(Routes(load("agent-protocol"), BASE))


def _op(report: dict[str, Any], label: str) -> dict[str, Any]:
    found = [o for o in report["operations"] if o["operation"] == label]
    assert len(found) == 1
    op: dict[str, Any] = found[0]
    return op


def test_an_exchange_counts_its_operation_status_parameters_and_properties() -> None:
    tap = _tap()
    tap.owner = ("AP-TASK-001",)
    sent = b'{"input": "hi"}'
    tap.saw("POST", f"{BASE}/ap/v1/agent/tasks", 200, ["content-type"], sent, b'{"task_id": "t", "artifacts": []}')
    tap.owner, tap.phase = ("AP-SCHEMA-005",), "schema"
    tap.saw("GET", f"{BASE}/ap/v1/agent/tasks?current_page=2", 422, [], None, b'{"message": "no"}')
    tap.saw("GET", f"{BASE}/ap/v1/agent/tasks/abc", None)  # sent, no answer
    report = tap.report(load("agent-protocol"))

    create = _op(report, "POST /ap/v1/agent/tasks")
    assert (create["exercised"], create["requests"], create["requirements"]) == (True, 1, {"AP-TASK-001": 1})
    ok = next(s for s in create["statuses"] if s["status"] == "200")
    assert (ok["seen"], ok["validated"], ok["requirements"]) == (1, 0, {"AP-TASK-001": 1})
    assert {p["name"]: p["sent"] for p in create["request_properties"]}["input"] == 1
    answered = {p["name"]: p["seen"] for p in create["response_properties"] if p["status"] == "200"}
    assert answered["task_id"] == 1 and answered["artifacts"] == 1 and answered["input"] == 0

    listing = _op(report, "GET /ap/v1/agent/tasks")
    params = {p["name"]: p["sent"] for p in listing["parameters"]}
    assert params == {"current_page": 1, "page_size": 0}
    undocumented = next(s for s in listing["statuses"] if s["status"] == "422")
    fallback = next(s for s in listing["statuses"] if s["status"] == "default")
    assert undocumented["documented"] is False and undocumented["validated"] == 1
    assert fallback["seen"] == 1  # the document's default stands for every status it does not list

    read = _op(report, "GET /ap/v1/agent/tasks/{task_id}")
    assert read["requests"] == 1 and all(s["seen"] == 0 for s in read["statuses"])
    assert {p["name"]: p["sent"] for p in read["parameters"]} == {"task_id": 1}
    assert not _op(report, "GET /ap/v1/agent/tasks/{task_id}/steps")["exercised"]
    assert report["totals"]["operations"] == {"exercised": 3, "documented": 9}


def test_a_run_reports_what_its_own_requirements_exercised(tmp_path: Path) -> None:
    """One scenario alone: only the operations its exchanges went to are exercised, each through it;
    the coverage is in results.json under the digest and in both pages."""
    result = run(RunOptions(protocol="agent-protocol", only=("AP-TASK-001",), phases=("scenario",)))
    exercised = {o["operation"]: o["requirements"] for o in result.coverage["operations"] if o["exercised"]}
    # the preflight's one question, then the check's own create
    assert exercised == {"POST /ap/v1/agent/tasks": {"AP-TASK-001": 1}, "GET /ap/v1/agent/tasks": {"preflight": 1}}
    write_reports(result, tmp_path)
    assert "## Coverage of the document" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "<h2 id='coverage'>" in (tmp_path / "report.html").read_text(encoding="utf-8")
    results = tmp_path / "results.json"
    assert json.loads(results.read_text(encoding="utf-8"))["coverage"] == result.coverage
    assert check_files(tmp_path).problems == []
    results.write_text(results.read_text(encoding="utf-8").replace('"requests": 1', '"requests": 9', 1))
    assert check_files(tmp_path).problems  # an edited count breaks the seal like any other byte
