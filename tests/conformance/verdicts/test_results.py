"""The results model on its own: how verdicts add up to a tally and an exit code."""

from __future__ import annotations

import pytest

from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import RequirementResult, RunResult, Status


def req(rid: str, level: Level = Level.MUST) -> Requirement:
    return Requirement(rid, level, "a statement", "doc#/ref", "agent-protocol")


def run_of(*results: RequirementResult, fatal: str | None = None) -> RunResult:
    return RunResult("agent-protocol", "t", "0", 0, Level.SHOULD, "now", results=list(results), fatal=fatal)


def test_every_must_passed_exits_0_whatever_the_shoulds() -> None:
    result = run_of(
        RequirementResult(req("X-1"), Status.PASSED), RequirementResult(req("X-2", Level.SHOULD), Status.FAILED)
    )
    assert result.must_passed and result.exit_code == 0


@pytest.mark.parametrize("status", [Status.FAILED, Status.SKIPPED, Status.ERROR, Status.BLOCKED])
def test_a_must_that_did_not_pass_fails_the_run(status: Status) -> None:
    result = run_of(RequirementResult(req("X-1"), Status.PASSED), RequirementResult(req("X-2"), status))
    assert not result.must_passed and result.exit_code == 1


def test_an_unusable_target_is_exit_2_and_an_empty_selection_never_passes() -> None:
    assert run_of(RequirementResult(req("X-1"), Status.PASSED), fatal="unreachable").exit_code == 2
    assert run_of().exit_code == 1


def test_without_musts_the_selection_itself_gates() -> None:
    assert run_of(RequirementResult(req("X-1", Level.SHOULD), Status.PASSED)).exit_code == 0
    assert run_of(RequirementResult(req("X-1", Level.SHOULD), Status.FAILED)).exit_code == 1


def test_an_expected_failure_and_what_it_blocks_do_not_fail_the_run_but_a_stale_entry_does() -> None:
    expected = RequirementResult(req("X-1"), Status.FAILED, baseline="expected")
    blocked = RequirementResult(req("X-2"), Status.BLOCKED, blocked_by="X-1")
    assert run_of(expected, blocked).exit_code == 0
    stale = RequirementResult(req("X-3", Level.SHOULD), Status.PASSED, baseline="stale")
    assert run_of(expected, blocked, stale).exit_code == 1
    assert stale.verdict == "stale" and expected.verdict == "expected failure"


def test_the_tally_counts_every_status_per_level() -> None:
    result = run_of(
        RequirementResult(req("X-1"), Status.PASSED),
        RequirementResult(req("X-2"), Status.BLOCKED),
        RequirementResult(req("X-3", Level.MAY), Status.SKIPPED),
    )
    tally = result.tally()
    assert tally["must"] == {"passed": 1, "failed": 0, "skipped": 0, "error": 0, "blocked": 1}
    assert tally["may"]["skipped"] == 1 and sum(tally["should"].values()) == 0
    assert result.to_dict()["summary"] == tally


def test_failing_names_what_fails_the_run_and_nothing_else() -> None:
    results = [
        RequirementResult(req("X-1"), Status.FAILED, baseline="expected"),
        RequirementResult(req("X-2"), Status.BLOCKED, blocked_by="X-1"),  # waits on the known bug
        RequirementResult(req("X-3"), Status.BLOCKED, blocked_by="X-4"),
        RequirementResult(req("X-4"), Status.FAILED),
        RequirementResult(req("X-5"), Status.SKIPPED),
        RequirementResult(req("X-6"), Status.ERROR),
        RequirementResult(req("X-7"), Status.PASSED),
        RequirementResult(req("X-8", Level.SHOULD), Status.FAILED),  # a SHOULD gates nothing beside MUSTs
    ]
    assert [r.requirement.id for r in run_of(*results).failing] == ["X-3", "X-4", "X-5", "X-6"]


def test_a_run_read_back_from_its_record_is_the_run() -> None:
    from conformance.verdicts.results import Exchange, Finding

    exchange = Exchange("POST", "http://t/ap/v1/agent/tasks", {"a": "b"}, '{"input": "x"}', 500, {}, "oops")
    finding = Finding("X-1|POST /ap/v1/agent/tasks|ST101:500", "X-1", "POST /ap/v1/agent/tasks", "ST101:500", "boom")
    finding.evidence.append(exchange)
    results = [
        RequirementResult(req("X-1"), Status.FAILED, "boom", [exchange], 0.25, 7, findings=[finding]),
        RequirementResult(req("X-2", Level.SHOULD), Status.BLOCKED, "blocked by X-1", blocked_by="X-1"),
        RequirementResult(req("X-3"), Status.PASSED, baseline="stale", baseline_reason="vendor issue 12"),
    ]
    run = run_of(*results)
    run.meta, run.stats, run.stopped = {"hash_seed": "0", "target_name": "My Server"}, {"cases": 7}, "budget"
    record = run.to_dict()
    again = RunResult.from_dict(record)
    assert again.to_dict() == record
    assert (again.meta, again.failing[0].findings[0].evidence[0].status) == (run.meta, 500)
    assert again.exit_code == run.exit_code == 1
