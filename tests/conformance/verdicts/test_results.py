"""The results model on its own: how verdicts add up to a tally and an exit code."""

from __future__ import annotations

import pytest

from conformance.verdicts.requirements import Authority, Level, Requirement
from conformance.verdicts.results import RequirementResult, RunResult, Status, settle, unblock


def req(rid: str, level: Level = Level.MUST, authority: Authority = Authority.DOCUMENT) -> Requirement:
    return Requirement(rid, level, "a statement", "doc#/ref", "agent-protocol", authority=authority)


def practice(rid: str, level: Level = Level.MUST) -> Requirement:
    return req(rid, level, Authority.PRACTICE)


def run_of(*results: RequirementResult, fatal: str | None = None) -> RunResult:
    return RunResult("agent-protocol", "t", "0", 0, Level.SHOULD, "now", results=list(results), fatal=fatal)


def test_every_must_passed_exits_0_whatever_the_shoulds() -> None:
    result = run_of(
        RequirementResult(req("X-1"), Status.PASSED), RequirementResult(req("X-2", Level.SHOULD), Status.FAILED)
    )
    assert result.must_passed and result.exit_code == 0


@pytest.mark.parametrize("status", [Status.FAILED, Status.NOT_VERIFIED, Status.ERROR, Status.BLOCKED])
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
        RequirementResult(req("X-3", Level.MAY), Status.NOT_VERIFIED),
    )
    tally = result.tally()
    assert tally["must"] == {"passed": 1, "failed": 0, "not verified": 0, "error": 0, "blocked": 1}
    assert tally["may"]["not verified"] == 1 and sum(tally["should"].values()) == 0
    assert result.to_dict()["summary"] == tally


def test_failing_names_what_fails_the_run_and_nothing_else() -> None:
    results = [
        RequirementResult(req("X-1"), Status.FAILED, baseline="expected"),
        RequirementResult(req("X-2"), Status.BLOCKED, blocked_by="X-1"),  # waits on the known bug
        RequirementResult(req("X-3"), Status.BLOCKED, blocked_by="X-4"),
        RequirementResult(req("X-4"), Status.FAILED),
        RequirementResult(req("X-5"), Status.NOT_VERIFIED),
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


# -- authority: practice is advice, shown apart, never failing a run -------------------------------


def test_a_practice_requirement_not_followed_is_advice_and_the_document_still_fails() -> None:
    advice = settle(RequirementResult(practice("X-1"), Status.FAILED, "no Content-Disposition"))
    failure = settle(RequirementResult(req("X-2"), Status.FAILED, "boom"))
    assert (advice.status, failure.status) == (Status.ADVICE, Status.FAILED)
    assert settle(RequirementResult(practice("X-3"), Status.NOT_VERIFIED)).status is Status.NOT_VERIFIED


def test_advice_never_fails_a_run_nor_counts_in_a_level_tally() -> None:
    result = run_of(
        RequirementResult(req("X-1"), Status.PASSED),
        RequirementResult(practice("X-2"), Status.ADVICE),
        RequirementResult(practice("X-3", Level.SHOULD), Status.PASSED),
    )
    assert result.exit_code == 0
    assert sum(sum(c.values()) for c in result.tally().values()) == 1
    assert (result.advice_tally()["advice"], result.advice_tally()["passed"]) == (1, 1)
    record = result.to_dict()
    assert record["advice"]["advice"] == 1 and "advice" not in record["summary"]["must"]
    assert [r["authority"] for r in record["requirements"]] == ["document", "practice", "practice"]
    assert RunResult.from_dict(record).to_dict() == record


def test_a_selection_of_practice_alone_passes_unless_it_errs() -> None:
    assert run_of(RequirementResult(practice("X-1"), Status.ADVICE)).exit_code == 0
    assert run_of(RequirementResult(practice("X-1"), Status.ERROR)).exit_code == 1


# -- blocked_by names only a requirement that did not pass in this run -----------------------------


def blocked(by: str) -> RequirementResult:
    return RequirementResult(req("X-9"), Status.BLOCKED, f"blocked by {by}: {by}'s step failed: 500", blocked_by=by)


@pytest.mark.parametrize(
    "owner", [Status.FAILED, Status.BLOCKED, Status.NOT_VERIFIED, Status.ERROR, Status.ADVICE, None]
)
def test_blocked_by_a_requirement_that_did_not_pass_stays_blocked(owner: Status | None) -> None:
    assert unblock(blocked("X-1"), {"X-1": owner, "X-9": None}).status is Status.BLOCKED


def test_blocked_by_a_requirement_that_passed_or_is_not_run_is_not_verified_saying_so() -> None:
    passed = unblock(blocked("X-1"), {"X-1": Status.PASSED, "X-9": None})
    assert (passed.status, passed.blocked_by) == (Status.NOT_VERIFIED, None)
    assert passed.message == "not verified: a step X-1 owns failed here (X-1, though it passed its own check): " + (
        "X-1's step failed: 500"
    )
    absent = unblock(blocked("X-1"), {"X-9": None})
    assert absent.status is Status.NOT_VERIFIED and "which is not in this run" in absent.message
