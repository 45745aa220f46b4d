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
