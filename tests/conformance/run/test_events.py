"""The events a run emits: their order, what they carry, and the progress lines made from them."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from conformance.cli.progress import ProgressLines
from conformance.engine.runner import run
from conformance.run.events import (
    CaseFinished,
    Emitter,
    Event,
    Fatal,
    PhaseFinished,
    PhaseStarted,
    Recorder,
    RequirementFinished,
    RequirementStarted,
    RunFinished,
    RunStarted,
    StageStarted,
)
from conformance.run.options import RunOptions
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts.results import Status
from mockserver import EmbeddedServer, MockConfig, catalogue
from specs.documents import load
from tests.hostile import closed_port_url


def recorded(options: RunOptions) -> tuple[list[Event], Recorder]:
    recorder = Recorder()
    result = run(options, [recorder])
    final = recorder.events[-1]
    assert isinstance(final, RunFinished) and final.result is result
    return recorder.events, recorder


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_scenario_run_emits_one_started_and_finished_per_requirement() -> None:
    events, _ = recorded(
        RunOptions(protocol="agent-protocol", only=("AP-TASK-001", "AP-TASK-002"), phases=("scenario",))
    )
    assert kinds(events) == [
        "RunStarted",
        "PhaseStarted",
        "PhaseFinished",
        "PhaseStarted",
        "RequirementStarted",
        "RequirementFinished",
        "RequirementStarted",
        "RequirementFinished",
        "PhaseFinished",
        "RunFinished",
    ]
    started = events[0]
    assert isinstance(started, RunStarted)
    assert started.protocol == "agent-protocol" and started.requirements == ("AP-TASK-001", "AP-TASK-002")
    assert started.target.startswith("embedded reference mock (http://127.0.0.1:")
    assert [(e.phase) for e in events if isinstance(e, PhaseStarted)] == ["preflight", "scenario"]
    finished = [e for e in events if isinstance(e, RequirementFinished)]
    assert [(f.result.requirement.id, f.result.status, f.index, f.total) for f in finished] == [
        ("AP-TASK-001", Status.PASSED, 1, 2),
        ("AP-TASK-002", Status.PASSED, 2, 2),
    ]
    run_finished = events[-1]
    assert isinstance(run_finished, RunFinished)
    assert [r for r in run_finished.result.results] == [f.result for f in finished]


def test_schema_phase_reports_each_case_and_its_failure() -> None:
    fault = catalogue()["ns-unknown-agent-crashes"]
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as server:
        options = fault_options(
            fault, server.url + load(fault.protocol).info.base_path, seed=0, timeout=5.0, exact=False
        )
        events, _ = recorded(options)
    assert kinds(events)[:4] == ["RunStarted", "PhaseStarted", "PhaseFinished", "PhaseStarted"]
    schema = events.index(next(e for e in events if isinstance(e, PhaseStarted) and e.phase == "schema"))
    schema_end = events.index(next(e for e in events if isinstance(e, PhaseFinished) and e.phase == "schema"))
    inside = events[schema + 1 : schema_end]
    assert isinstance(inside[0], RequirementStarted) and inside[0].requirement.id == "NS-SCHEMA-001"
    assert isinstance(inside[-1], RequirementFinished) and inside[-1].result.status is Status.FAILED
    cases = [e for e in inside if isinstance(e, CaseFinished)]
    stages = {e.stage for e in inside if isinstance(e, StageStarted)}
    assert cases and {c.stage for c in cases} <= stages
    assert all(c.checked == ("NS-SCHEMA-001",) for c in cases)
    failing = [c for c in cases if c.outcome == "failed"]
    assert failing and all(c.failed == ("NS-SCHEMA-001",) for c in failing)
    assert {c.operation for c in failing} == {
        f"{verb} /api/v1/{{agent_name}}/{op}"
        for verb, op in (("GET", "connectivity"), ("GET", "function"), ("POST", "streaming_chat"))
    }
    assert any(c.outcome == "passed" for c in cases)  # a known agent's name does not crash
    # the verdict counts exactly the cases the events reported
    assert inside[-1].result.cases == len(cases)


def test_unusable_target_emits_fatal_and_still_finishes() -> None:
    events, _ = recorded(RunOptions(protocol="agent-protocol", base_url=closed_port_url(), timeout=1.0))
    assert kinds(events) == ["RunStarted", "PhaseStarted", "Fatal", "PhaseFinished", "RunFinished"]
    fatal = events[2]
    assert isinstance(fatal, Fatal) and "unreachable" in fatal.reason
    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.exit_code == 2


def test_progress_lines_name_each_phase_and_count_what_passed() -> None:
    lines: list[str] = []
    run(
        RunOptions(protocol="agent-protocol", only=("AP-TASK-001", "AP-SCHEMA-001"), max_examples=2),
        [ProgressLines(lines.append)],
    )
    assert lines[0] == "agent-protocol: property-based phase (1 requirement)"
    assert "agent-protocol: schema phase: examples" in lines and "agent-protocol: schema phase: stateful" in lines
    assert re.fullmatch(
        r"agent-protocol: property-based phase done in \d+\.\d s: 1 passed; \d+ cases, 0 failing", lines[-3]
    )
    assert lines[-2] == "agent-protocol: scenarios phase (1 requirement)"
    assert re.fullmatch(r"agent-protocol: scenarios phase done in \d+\.\d s: 1 passed", lines[-1])
    assert all(line.startswith("agent-protocol: ") for line in lines)  # passes counted, not listed


def test_progress_line_for_an_unusable_target() -> None:
    lines: list[str] = []
    handler = ProgressLines(lines.append)
    events, _ = recorded(RunOptions(protocol="agent-protocol", base_url=closed_port_url(), timeout=1.0))
    for event in events:
        handler.handle(event)
    assert isinstance(events[2], Fatal)
    assert lines == []  # not progress: the CLI prints the one error line (tests/conformance/cli/test_exit_2.py)


class Boom(Exception):
    pass


class Breaks:
    def handle(self, event: Event) -> None:
        raise Boom(type(event).__name__)


def test_a_failing_handler_stops_the_run_visibly() -> None:
    seen = Recorder()
    with pytest.raises(Boom, match="RunStarted"):
        run(RunOptions(protocol="agent-protocol", only=("AP-TASK-001",), phases=("scenario",)), [seen, Breaks()])
    assert kinds(seen.events) == ["RunStarted"]  # handlers see events in order; the failure is not swallowed


def test_emitter_hands_each_event_to_every_handler_in_order() -> None:
    a, b = Recorder(), Recorder()
    emit = Emitter([a, b])
    events: Iterator[Event] = iter([PhaseStarted("schema"), PhaseFinished("schema", 0.5)])
    for event in events:
        emit(event)
    assert a.events == b.events == [PhaseStarted("schema"), PhaseFinished("schema", 0.5)]
