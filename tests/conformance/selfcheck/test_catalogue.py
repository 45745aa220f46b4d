"""The broken-server catalogue: the suite must catch every named fault of the mock, and every
registered requirement must be broken by at least one fault (a generic schema requirement no
server could fail against a document is not registered for it: see conformance/run/applicability.py).
The verdicts of each fault's run beyond its declared failures (the exit code, what was blocked) are
compared with the ones recorded on seed 0 (snapshots/selfcheck-seed0.json), so a change that moves
any of them, a restructuring meant to change nothing above all, shows."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.commands import main
from conformance.engine.runner import run
from conformance.run.options import RunOptions
from conformance.run.suites import suite
from conformance.selfcheck.catalogue import MAX_EXAMPLES, judge, render_catalogue
from conformance.verdicts.requirements import Authority
from conformance.verdicts.results import Status
from mockserver import catalogue
from specs.documents import PROTOCOLS
from tests.faultruns import CLEAN, FaultRuns, reads

FAULTS = catalogue()


@pytest.mark.slow
@pytest.mark.parametrize("pid", sorted(PROTOCOLS))
def test_the_unmodified_mock_passes_every_requirement(pid: str) -> None:
    """No false alarms: the reference passes everything its suite registers (default profile)."""
    result = run(RunOptions(protocol=pid, seed=0, max_examples=10))
    assert {r.requirement.id: r.message for r in result.results if r.status is not Status.PASSED} == {}
    assert {r.requirement.id for r in result.results} == {c.requirement.id for c in suite(pid).registry}
    assert result.exit_code == 0


SMALL = (1, 2, 3, 4, 5)
"""At the self-check's setting (``MAX_EXAMPLES``) the session's clean run of a protocol
(``clean.<pid>``, made ahead for the proxy's and the diff's tests) is the run."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pid", "max_examples"),
    [
        pytest.param(pid, n, marks=pytest.mark.fault_runs(CLEAN + pid)) if n == MAX_EXAMPLES else (pid, n)
        for n in SMALL
        for pid in sorted(PROTOCOLS)
    ],
)
def test_the_unmodified_mock_is_green_at_every_small_setting(
    pid: str, max_examples: int, request: pytest.FixtureRequest
) -> None:
    """No false red at a fast smoke setting: what needs a case to reach a live resource gets one
    whatever the setting (NS-SCHEMA-005 once saw only 404s at --max-examples 2)."""
    if max_examples == MAX_EXAMPLES:  # one run feeds every assertion about it
        fault_runs: FaultRuns = request.getfixturevalue("fault_runs")
        result = fault_runs.get(CLEAN + pid).result
    else:
        result = run(RunOptions(protocol=pid, seed=0, max_examples=max_examples))
    assert (result.seed, result.meta["max_examples"]) == (0, max_examples)
    assert {r.requirement.id: r.message for r in result.results if r.status is not Status.PASSED} == {}
    assert result.exit_code == 0


def test_each_protocol_has_at_least_ten_faults_named_for_it() -> None:
    for pid, info in PROTOCOLS.items():
        mine = [f for f in FAULTS.values() if f.protocol == pid]
        assert len(mine) >= 10, pid
        assert all(f.name.startswith(info.prefix.lower() + "-") and f.description for f in mine)
        assert len([f for f in mine if not f.control]) >= 10, pid


@pytest.mark.parametrize("pid", sorted(PROTOCOLS))
def test_every_requirement_is_broken_by_some_fault(pid: str) -> None:
    """A document requirement is broken (failed) by some fault, a practice one advised on (advice):
    never the other way round, since a practice requirement never fails and the document's always can."""
    checks = {c.requirement.id: c.requirement for c in suite(pid).registry}
    document = {rid for rid, r in checks.items() if r.authority is Authority.DOCUMENT}
    practice = set(checks) - document
    broken = {rid for f in FAULTS.values() if f.protocol == pid for rid in f.breaks}
    advised = {rid for f in FAULTS.values() if f.protocol == pid for rid in f.advises}
    assert broken <= document, "faults break requirements that are not the document's (or do not exist)"
    assert advised <= practice, "faults advise on requirements that are not practice (or do not exist)"
    assert document - broken == set(), "document requirements no fault breaks"
    assert practice - advised == set(), "practice requirements no fault advises on"


def test_a_fault_that_only_advises_is_a_passing_control() -> None:
    """Advice never fails a run: a fault whose only effect is on practice is a control."""
    assert all(f.control for f in FAULTS.values() if f.advises and not f.breaks)


SNAPSHOT = Path(__file__).parents[1] / "snapshots" / "selfcheck-seed0.json"
UPDATE = "CONFORMANCE_SNAPSHOT_UPDATE"


def snapshot(fault: str, verdicts: dict[str, Any]) -> dict[str, Any] | None:
    """The verdicts recorded for ``fault`` (seed 0) beyond the declared failures: the exit code and
    which requirements were blocked. With ``CONFORMANCE_SNAPSHOT_UPDATE=1`` the ones seen are
    recorded instead (one file, locked: workers of a parallel session write it in turn); a fault
    not recorded yet fails, so the file cannot fall behind the catalogue."""
    SNAPSHOT.parent.mkdir(exist_ok=True)
    with SNAPSHOT.open("a+", encoding="utf-8") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        file.seek(0)
        recorded: dict[str, Any] = json.loads(file.read() or "{}")
        if os.environ.get(UPDATE) == "1":
            recorded[fault] = verdicts
            file.seek(0)
            file.truncate()
            file.write(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
    return recorded.get(fault)


@pytest.mark.slow  # a whole run per fault
@pytest.mark.timeout(900)  # a hanging fault's whole run is bounded by its budget (selfcheck.fault_options)
@pytest.mark.parametrize("name", [reads(n, n) for n in sorted(FAULTS)])
def test_exactly_the_declared_requirements_fail(name: str, fault_runs: FaultRuns) -> None:
    """The whole protocol runs against the fault: every requirement it declares fails, and no
    other does (what only could not proceed because of it is blocked, not failed). The run is the
    session's one for the fault (tests/faultruns.py), the one its other tests read too."""
    made = fault_runs.get(name)
    outcome = judge(FAULTS[name], made.result, made.seconds)
    assert not outcome.missed, f"{name} missed: {', '.join(outcome.missed)}"
    assert not outcome.unexpected, f"{name} also failed: {', '.join(outcome.unexpected)}"
    recorded = snapshot(name, {"exit_code": outcome.exit_code, "blocked": list(outcome.blocked)})
    assert recorded == {"exit_code": outcome.exit_code, "blocked": list(outcome.blocked)}, (
        f"{name}: the verdicts moved from the recorded ones ({SNAPSHOT.name}); if the change means it, "
        f"record them again with {UPDATE}=1"
    )


@pytest.mark.slow  # a selfcheck run through the CLI
def test_selfcheck_command_writes_the_catalogue(tmp_path: Path) -> None:
    code = main(
        ["selfcheck", "--fault", "ap-task-missing-id", "--fault", "sgr-missing-done", "--report-dir", str(tmp_path)]
    )
    assert code == 0
    data = json.loads((tmp_path / "catalogue.json").read_text())
    assert data["faults"] == 2 and data["caught"] == 2
    table = (tmp_path / "catalogue.md").read_text()
    assert "| **all** | 2 | 2 |" in table and "`sgr-missing-done`" in table


def test_a_missed_fault_is_reported_as_missed() -> None:
    from conformance.selfcheck.catalogue import Outcome

    text = render_catalogue([Outcome("x-fault", "agent-protocol", ("AP-X-1",), ("AP-X-1 (passed)",), 0, 1.0)])
    assert "**missed**: AP-X-1 (passed)" in text and "| **all** | 1 | 0 |" in text


def test_a_failure_the_fault_does_not_declare_is_not_a_catch() -> None:
    from conformance.selfcheck.catalogue import Outcome

    outcome = Outcome("x-fault", "agent-protocol", ("AP-X-1",), (), 1, 1.0, ("AP-Y-2 (expected 200, got 201)",))
    assert not outcome.caught
    text = render_catalogue([outcome])
    assert "**also failed**: AP-Y-2 (expected 200, got 201)" in text and "| **all** | 1 | 0 |" in text


def test_a_passing_control_is_caught_only_when_nothing_fails() -> None:
    from types import SimpleNamespace

    from conformance.selfcheck.catalogue import judge
    from mockserver.faults import Fault

    control = Fault("x-fair", "agent-protocol", (), "a variant the document allows", control=True)
    clean = SimpleNamespace(results=[], exit_code=0)
    assert judge(control, clean, 1.0).caught  # type: ignore[arg-type]
    failed = SimpleNamespace(
        results=[SimpleNamespace(requirement=SimpleNamespace(id="AP-X-1"), status=Status.FAILED, message="boom")],
        exit_code=1,
    )
    outcome = judge(control, failed, 1.0)  # type: ignore[arg-type]
    assert not outcome.caught and outcome.unexpected == ("AP-X-1 (failed: boom)",)
    assert outcome.missed == ("exit code 1, expected 0 (a passing control)",)
    assert "nothing (a passing control)" in render_catalogue([outcome])
    with pytest.raises(ValueError, match="a control breaks nothing"):
        Fault("x-bad", "agent-protocol", ("AP-X-1",), "declares a break", control=True)
    with pytest.raises(ValueError, match="any other fault breaks something"):
        Fault("x-empty", "agent-protocol", (), "breaks nothing, yet no control")
