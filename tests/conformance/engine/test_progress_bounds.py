"""Every wait for a server's progress has one bound, from the run's options, and a progress that
never comes fails the requirement that waits for it, once: the run ends well inside its budget and
the other requirements are decided (issue 34, class 9)."""

from __future__ import annotations

import time

import pytest

from conformance.check.guard import STALLED_WAIT_S, StallGuard
from conformance.check.waiting import progress_bound, wait_for
from conformance.engine.runner import run
from conformance.run.options import RunOptions
from conformance.run.plan import limits_for
from conformance.run.targets import embedded
from conformance.verdicts.results import Status
from mockserver import catalogue
from specs.documents import load
from tests.timing import Clock

# --- the one bound -------------------------------------------------------------------------------


def test_the_bound_comes_from_the_timeout_and_the_budget() -> None:
    assert progress_bound(10, 600) == 30  # three timeouts
    assert progress_bound(1, 600) == 10  # never less than a real agent's answer takes
    assert progress_bound(10, 80) == 10  # never more than an eighth of the budget
    assert progress_bound(5, 8) == 5  # nor less than one timeout
    # the client's stream budget is the same bound: a stream's end is a wait for progress too
    assert limits_for(RunOptions(protocol="neuro-san", timeout=4, budget_s=600)).stream_seconds == 12


def test_a_wait_that_ran_out_is_not_paid_again() -> None:
    guard = StallGuard()
    polls: list[float] = []

    def poll() -> int:
        polls.append(time.monotonic())
        return len(polls)

    first = wait_for(poll, lambda n: False, what="a job", bound=1.5, guard=guard, first=0.01, most=0.05)
    assert not first.done and first.seconds == 1.5 and not first.shortened
    assert polls[-1] - polls[0] <= 1.5  # the last poll is never past the bound
    again = wait_for(poll, lambda n: False, what="a job", bound=1.5, guard=guard, first=0.01, most=0.05)
    assert again.seconds == min(1.5, STALLED_WAIT_S) and "ran out the run's 1.5 s bound" in again.shortened
    # another progress is not shortened, and progress that comes ends the wait at once
    other = wait_for(poll, lambda n: n % 2 == 0, what="a research", bound=1.5, guard=guard, first=0.01)
    assert other.done and other.seconds == 1.5 and other.polls <= 2


# --- a progress that never comes, against the mock -------------------------------------------------

TIMEOUT_S = 1.0
BUDGET_S = 160.0
"""Its progress bound is min(max(3 x 1 s, 10 s), 160 s / 8) = 10 s; the run must end within half of it."""

STALLS = [
    # (protocol, fault, the requirement that waits, the phases it waits in)
    ("synapse-agent", "syn-job-never-finishes", "SYN-JOB-002", ("model", "scenario")),
    ("sgr-agent-core", "sgr-state-stuck", "SGR-AGENT-003", ("model", "scenario")),
    ("sgr-agent-core", "sgr-stall-mid-stream", "SGR-STREAM-007", ("model", "scenario")),
    ("neuro-san", "ns-stream-stall", "NS-STREAM-001", ("model", "scenario")),
]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("protocol", "fault", "waiting", "phases"), STALLS, ids=[s[1] for s in STALLS])
def test_a_progress_that_never_comes_fails_its_requirement_and_the_run_ends(
    protocol: str, fault: str, waiting: str, phases: tuple[str, ...]
) -> None:
    """The waiting requirement is failed, not an error or not verified: the document (or the
    requirement's statement) says the progress comes, and the run waited the bound its options
    give; every other requirement is passed, failed by the fault as its catalogue entry says, or
    blocked by one of those (what needs the progress that never came); nothing is left to the
    budget."""
    declared = catalogue()[fault]
    with embedded().serve(protocol, faults=(fault,)) as server:
        options = RunOptions(
            protocol=protocol,
            base_url=server.url + load(protocol).info.base_path,
            token="alice-token",
            second_token="bob-token",
            timeout=TIMEOUT_S,
            budget_s=BUDGET_S,
            max_examples=3,
            phases=phases,
        )
        clock = Clock()
        result = run(options)
        clock.stop()
    assert result.fatal is None and result.stopped is None, (result.fatal, result.stopped)
    # half the budget on a quiet machine; never the budget itself (a wall-clock cut, whatever the load)
    clock.assert_within(BUDGET_S / 2, "the run", cap=BUDGET_S)
    verdicts = {r.requirement.id: r for r in result.results}
    assert verdicts[waiting].status is Status.FAILED, verdicts[waiting].message
    for r in result.results:
        if r.status is Status.PASSED or (r.status is Status.FAILED and r.requirement.id in declared.breaks):
            continue
        if r.status is Status.BLOCKED:
            assert r.blocked_by in declared.breaks, (r.requirement.id, r.message)
            continue
        # a model requirement that needed a whole stream says so; nothing else is undecided
        assert r.status is Status.NOT_VERIFIED and r.requirement.phase == "model", (r.requirement.id, r.message)
        assert "(budget)" not in r.message, r.message
