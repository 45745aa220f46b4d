"""Distinct failures: grouped by kind and operation, counted, keyed stably, with a curl line."""

from __future__ import annotations

import re

from conformance.check.hostile import NON_OBJECT_BODIES
from conformance.protocols.agent_protocol.requirements import INVALID_BODIES
from conformance.selfcheck.catalogue import run_fault
from conformance.verdicts.findings import FindingSet, digest, operation_of
from conformance.verdicts.results import Exchange, Status
from mockserver import catalogue
from specs.documents import load


def test_an_exchange_is_named_by_the_document_operation_it_went_to() -> None:
    spec = load("agent-protocol")
    base = "http://127.0.0.1:9"
    assert operation_of(spec, base, "GET", f"{base}/ap/v1/agent/tasks?page_size=2") == "GET /ap/v1/agent/tasks"
    step = f"{base}/ap/v1/agent/tasks/abc/steps/def"
    assert operation_of(spec, base, "get", step) == "GET /ap/v1/agent/tasks/{task_id}/steps/{step_id}"
    assert operation_of(spec, base, "DELETE", f"{base}/nowhere") == "DELETE /nowhere"
    synapse = load("synapse-agent")
    assert operation_of(synapse, f"{base}/repo/v1", "POST", f"{base}/repo/v1/agent/session").startswith("POST /agent")


def test_the_digest_ignores_ids_quoted_values_and_numbers() -> None:
    a = "task 'a96ac511-a07f-4b9c-81c6-6ba0a2976b12': expected 3 items, got 2"
    b = "task 'fb55b9dc-3099-404d-8cb3-086d162ad766': expected 4 items, got 1"
    assert digest(a) == digest(b) != digest("task has no task_id")


def test_a_finding_set_counts_repeats_and_orders_by_frequency() -> None:
    found = FindingSet()
    ex = Exchange("GET", "http://h/x", {}, None, 500)
    for kind in ("ST101:500", "ST101:500", "ST102"):
        found.add("R-1", "GET /x", kind, kind, [ex])
    ordered = found.ordered()
    assert [(f.key, f.count) for f in ordered] == [("R-1|GET /x|ST101:500", 2), ("R-1|GET /x|ST102", 1)]


def test_the_schema_phase_reports_every_distinct_failure_and_explores_past_the_first() -> None:
    result = run_fault(catalogue()["ap-page-huge-size-crashes"], exact=False)
    res = next(r for r in result.results if r.requirement.id == "AP-SCHEMA-001")
    assert res.status is Status.FAILED
    operations = {f.operation for f in res.findings}
    # the fault crashes every list operation: each is its own finding, not only the first one met
    assert operations == {
        "GET /ap/v1/agent/tasks",
        "GET /ap/v1/agent/tasks/{task_id}/steps",
        "GET /ap/v1/agent/tasks/{task_id}/artifacts",
    }
    # past the first failing case, the same operation kept being explored
    assert any(f.count > 1 for f in res.findings)
    for f in res.findings:
        assert re.fullmatch(r"AP-SCHEMA-001\|GET /ap/v1/agent/tasks[^|]*\|ST101:500", f.key)
        assert f.deciding is not None and f.deciding.status == 500
        assert f.deciding.curl.startswith("curl -sS -i -X GET ") and "page_size=" in f.deciding.curl
    assert f"{len(res.findings)} distinct failure(s)" in res.message


def test_a_scenario_reports_every_distinct_failure_it_meets() -> None:
    result = run_fault(catalogue()["ap-create-accepts-invalid"], exact=False)
    res = next(r for r in result.results if r.requirement.id == "AP-ERR-004")
    assert res.status is Status.FAILED
    # each invalid body the create accepts is its own finding, not only the first one sent: the
    # document's invalid bodies, the non-object ones, and the task list they grew
    sent = len(INVALID_BODIES) + len(NON_OBJECT_BODIES)
    assert len(res.findings) == len({f.key for f in res.findings}) == sent + 1
    assert res.message.startswith(f"{sent + 1} distinct failures: (1) createAgentTask with input as a number")
    assert "after the refused bodies" in res.findings[-1].message
    for f in res.findings[:-1]:
        assert f.key.startswith("AP-ERR-004|POST /ap/v1/agent/tasks|scenario:")
        assert f.deciding is not None and f.deciding.status == 200 and f.deciding.curl.startswith("curl ")
