"""The runner's loop over phases, with stand-in phases: what the ledger, the events and the exit
code say when a phase decides, stops the run, or finds the target unusable. The target is a
closed loopback port the stand-ins never contact."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from conformance.engine.runner import not_run, run
from conformance.phases import PHASES, RunState, TargetUnusable
from conformance.run.events import Fatal, PhaseStarted, Recorder, RequirementFinished, RunFinished, RunStarted
from conformance.run.options import RunOptions
from conformance.run.plan import RunPlan
from conformance.run.watchdog import INTERRUPTED, RunStopped
from conformance.verdicts.requirements import Requirement
from conformance.verdicts.results import RequirementResult, Status
from tests.hostile import closed_port_url
from tests.timing import Clock

OPTIONS = RunOptions(protocol="agent-protocol", only=("AP-TASK-", "AP-SCHEMA-001"), phases=("schema", "scenario"))


class Stand:
    """A phase deciding the requirements of ``decides`` as ``body`` says."""

    def __init__(
        self, name: str, decides: str, body: Callable[[tuple[Requirement, ...]], Iterator[RequirementResult]]
    ) -> None:
        self.name, self.decides, self.body, self.gate = name, decides, body, False

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        return plan.requirements(self.decides)

    def run(self, plan: RunPlan, state: RunState) -> Iterator[RequirementResult]:
        return self.body(self.requirements(plan))


def passes(requirements: tuple[Requirement, ...]) -> Iterator[RequirementResult]:
    for req in requirements:
        yield RequirementResult(req, Status.PASSED, "passed")


def options() -> RunOptions:
    return replace(OPTIONS, base_url=closed_port_url())


def test_the_real_phases_run_in_order_with_the_preflight_as_the_gate() -> None:
    assert [(p.name, p.gate) for p in PHASES] == [
        ("preflight", True),
        ("schema", False),
        ("model", False),
        ("scenario", False),
    ]


def test_each_phase_decides_its_share_and_a_phase_with_nothing_selected_is_skipped() -> None:
    recorder = Recorder()
    result = run(
        options(),
        [recorder],
        phases=[
            Stand("schema", "schema", passes),
            Stand("model", "model", passes),
            Stand("scenario", "scenario", passes),
        ],
    )
    assert [r.requirement.id for r in result.results] == ["AP-TASK-001", "AP-TASK-002", "AP-TASK-003", "AP-SCHEMA-001"]
    assert all(r.status is Status.PASSED for r in result.results) and result.exit_code == 0
    started = [e.phase for e in recorder.events if isinstance(e, PhaseStarted)]
    assert started == ["schema", "scenario"]  # nothing of the model phase was selected
    finished = [
        (e.result.requirement.id, e.index, e.total) for e in recorder.events if isinstance(e, RequirementFinished)
    ]
    assert finished == [("AP-SCHEMA-001", 1, 1), ("AP-TASK-001", 1, 3), ("AP-TASK-002", 2, 3), ("AP-TASK-003", 3, 3)]
    assert isinstance(recorder.events[0], RunStarted) and isinstance(recorder.events[-1], RunFinished)


def test_a_phase_that_stops_the_run_leaves_everything_undecided_not_verified() -> None:
    def one_then_stop(requirements: tuple[Requirement, ...]) -> Iterator[RequirementResult]:
        yield RequirementResult(requirements[0], Status.PASSED, "passed")
        raise RunStopped(INTERRUPTED, "interrupted by SIGINT")

    never: list[str] = []

    def not_reached(requirements: tuple[Requirement, ...]) -> Iterator[RequirementResult]:
        never.append("ran")
        yield from ()

    result = run(
        options(), phases=[Stand("scenario", "scenario", one_then_stop), Stand("schema", "schema", not_reached)]
    )
    by_id = {r.requirement.id: r for r in result.results}
    assert by_id["AP-TASK-001"].status is Status.PASSED
    for rid in ("AP-TASK-002", "AP-SCHEMA-001"):
        assert by_id[rid].status is Status.NOT_VERIFIED
        assert (
            by_id[rid].message
            == "not verified (interrupted): interrupted by SIGINT before this requirement was decided"
        )
    assert not never and result.stopped == INTERRUPTED and result.exit_code == 130


def test_the_run_budget_stops_a_phase_that_outlives_it() -> None:
    def hangs(requirements: tuple[Requirement, ...]) -> Iterator[RequirementResult]:
        time.sleep(30)  # the watchdog's signal ends the sleep
        yield from ()

    clock = Clock()
    result = run(replace(options(), budget_s=0.5), phases=[Stand("scenario", "scenario", hangs)])
    clock.assert_within(9.5, "the run", plus=0.5, cap=25)  # the phase alone would take 30 s
    assert result.stopped == "budget" and result.exit_code == 1
    assert all(
        r.message.startswith("not verified (budget): the run's time budget of 0.5 s ran out") for r in result.results
    )


def test_a_gate_that_finds_the_target_unusable_ends_the_run_before_any_requirement() -> None:
    class Gate:
        name, gate = "preflight", True

        def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
            return ()

        def run(self, plan: RunPlan, state: RunState) -> Iterator[RequirementResult]:
            raise TargetUnusable("target unreachable or not speaking HTTP: refused")

    recorder = Recorder()
    result = run(options(), [recorder], phases=[Gate(), Stand("scenario", "scenario", passes)])
    assert result.fatal == "target unreachable or not speaking HTTP: refused" and result.exit_code == 2
    assert {r.message for r in result.results} == {"not verified (not run): the preflight found the target unusable"}
    kinds = [type(e).__name__ for e in recorder.events]
    assert kinds == ["RunStarted", "PhaseStarted", "Fatal", "PhaseFinished", "RunFinished"]
    assert isinstance(recorder.events[2], Fatal)


def test_the_real_preflight_refuses_a_closed_port() -> None:
    result = run(options())
    assert result.fatal is not None and result.fatal.startswith("target unreachable or not speaking HTTP")
    assert result.exit_code == 2 and all(r.message.startswith("not verified (not run)") for r in result.results)


def test_a_protocol_the_stopped_run_never_reached_reports_every_requirement_not_verified() -> None:
    recorder = Recorder()
    options = replace(OPTIONS, base_url=closed_port_url())
    result = not_run(options, [recorder], INTERRUPTED, "the run was interrupted during neuro-san")
    assert [type(e) for e in recorder.events] == [RunStarted, RunFinished]  # no phase, nothing sent
    assert (result.stopped, result.exit_code) == (INTERRUPTED, 130)
    assert result.results and all(
        r.status is Status.NOT_VERIFIED
        and r.message == "not verified (interrupted): the run was interrupted during neuro-san"
        for r in result.results
    )
    assert {r.requirement.id for r in result.results} == set(recorder.events[0].requirements)  # type: ignore[union-attr]


def test_a_check_is_never_left_blocked_by_a_requirement_that_passed() -> None:
    """AP-TASK-002 blocked by AP-TASK-001, which passed: not verified, saying so; blocked by
    AP-SCHEMA-001, which failed in this run (decided before it or after it), it stays blocked."""

    def blocked_by(owner: str) -> Callable[[tuple[Requirement, ...]], Iterator[RequirementResult]]:
        def decide(requirements: tuple[Requirement, ...]) -> Iterator[RequirementResult]:
            for req in requirements:
                if req.id == "AP-TASK-002":
                    yield RequirementResult(req, Status.BLOCKED, f"blocked by {owner}: it broke", blocked_by=owner)
                else:
                    yield RequirementResult(req, Status.FAILED if req.id == "AP-SCHEMA-001" else Status.PASSED, "x")

        return decide

    for owner, status in (("AP-TASK-001", Status.NOT_VERIFIED), ("AP-SCHEMA-001", Status.BLOCKED)):
        result = run(
            options(), phases=[Stand("schema", "schema", passes), Stand("scenario", "scenario", blocked_by(owner))]
        )
        if owner == "AP-SCHEMA-001":  # its verdict comes from a later phase here
            result = run(
                options(),
                phases=[Stand("scenario", "scenario", blocked_by(owner)), Stand("schema", "schema", blocked_by(owner))],
            )
        checked = next(r for r in result.results if r.requirement.id == "AP-TASK-002")
        assert checked.status is status, checked.message
        assert (checked.blocked_by is None) == (status is Status.NOT_VERIFIED)
