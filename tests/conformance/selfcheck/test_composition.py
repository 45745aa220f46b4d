"""Faults together (conformance/selfcheck/composition.py): the mock with two to four catalogue faults at once
gives each fault's verdicts, nothing else failed, and "blocked" only where a fault removed what a
requirement judges. A small seeded sample runs here; the full set (100 combinations a protocol) is
``python bench/composition.py`` (its figure: docs/development.md)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.selfcheck.composition import Combined, check_combination, combinable, draw, judge, run_combination
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import Status
from mockserver import catalogue
from mockserver.faults import Fault
from mockserver.wire import CONTROLS
from specs.documents import PROTOCOLS

FAULTS = catalogue()
SNAPSHOT = Path(__file__).parents[1] / "snapshots" / "selfcheck-seed0.json"
ALONE: dict[str, list[str]] = {name: entry["blocked"] for name, entry in json.loads(SNAPSHOT.read_text()).items()}

SAMPLE_SEED = 0
"""The draw of the sample run here (two combinations a protocol)."""


def _fault(name: str, breaks: tuple[str, ...] = ("AP-X-1",), **how: Any) -> Fault:
    return Fault(name, "agent-protocol", breaks, "a test fault", **how)


def test_faults_over_one_operation_do_not_combine() -> None:
    upload = _fault("a", operation="uploadAgentTaskArtifacts")
    assert not combinable(upload, _fault("b", ("AP-X-2",), operation="uploadAgentTaskArtifacts"))
    assert not combinable(upload, _fault("c", ("AP-X-2",), touches=("uploadAgentTaskArtifacts",)))
    assert combinable(upload, _fault("d", ("AP-X-2",), operation="downloadAgentTaskArtifact"))
    assert combinable(_fault("e"), _fault("f", ("AP-X-2",)))  # neither names one


def test_faults_breaking_one_requirement_or_hanging_do_not_combine() -> None:
    assert not combinable(_fault("a"), _fault("b"))
    assert not combinable(_fault("a"), _fault("b", ("AP-X-2",), hangs=True))
    assert not combinable(_fault("a"), Fault("b", "neuro-san", ("NS-X-1",), "another protocol's"))


def test_a_control_combines_only_when_it_rewrites_the_wire() -> None:
    refusal = Fault("fair", "agent-protocol", (), "a fair refusal", control=True)
    wire = Fault("w", "agent-protocol", (), "a wire control", control=True, wire=CONTROLS[0][2])
    assert not combinable(_fault("a"), refusal)
    assert combinable(_fault("a"), wire)


def test_the_draw_is_the_seeds_and_every_combination_is_combinable() -> None:
    mine = [f for f in FAULTS.values() if f.protocol == "agent-protocol"]
    drawn = draw(mine, 30, 7)
    assert drawn == draw(mine, 30, 7) and drawn != draw(mine, 30, 8)
    assert len({frozenset(f.name for f in c) for c in drawn}) == 30
    for combination in drawn:
        assert 2 <= len(combination) <= 4 and any(f.breaks for f in combination)
        assert all(combinable(a, b) for a in combination for b in combination if a is not b)


def _result(*verdicts: tuple[str, Status, str | None], exit_code: int = 1) -> Any:
    results = [
        SimpleNamespace(
            requirement=SimpleNamespace(id=rid, level=Level.MUST), status=status, blocked_by=by, message="m"
        )
        for rid, status, by in verdicts
    ]
    return SimpleNamespace(results=results, exit_code=exit_code)


def test_a_requirement_another_fault_removes_may_be_blocked_and_nothing_else() -> None:
    a = _fault("a", ("AP-X-1",))
    b = _fault("b", ("AP-X-2",))
    alone = {"a": ["AP-X-2", "AP-X-3"], "b": []}
    held = judge(
        [a, b],
        _result(
            ("AP-X-1", Status.FAILED, None), ("AP-X-2", Status.BLOCKED, "AP-X-1"), ("AP-X-3", Status.BLOCKED, "AP-X-1")
        ),
        alone,
        1.0,
    )
    assert held.composed and held.blocked == ("AP-X-2", "AP-X-3")
    broke = judge(
        [a, b],
        _result(
            ("AP-X-1", Status.BLOCKED, "AP-Z"), ("AP-X-2", Status.FAILED, None), ("AP-X-4", Status.BLOCKED, "AP-X-2")
        ),
        alone,
        1.0,
    )
    # blocked by what no other fault breaks, and blocked where no fault blocks alone
    assert any(p.startswith("a: AP-X-1 blocked, failed alone") for p in broke.problems)
    assert any(p.startswith("AP-X-4 blocked, though no fault") for p in broke.problems)


def test_a_failure_no_fault_declares_and_a_missed_break_are_problems() -> None:
    a, b = _fault("a", ("AP-X-1",)), _fault("b", ("AP-X-2",))
    outcome = judge(
        [a, b],
        _result(("AP-X-1", Status.FAILED, None), ("AP-X-2", Status.PASSED, None), ("AP-Y", Status.FAILED, None)),
        {},
        1.0,
    )
    assert outcome.problems[0].startswith("b: AP-X-2 passed, failed alone")
    assert outcome.problems[1].startswith("AP-Y failed, which no fault of the combination breaks")
    assert Combined((a, b)).breaks == ("AP-X-1", "AP-X-2") and Combined((a, b)).name == "a+b"


def test_the_issues_upload_answer_and_download_faults_compose() -> None:
    """Issue 34's instance: an upload answered with an empty relative_path and a download of a
    non-Latin-1 name answering 500: the download requirement fails (it was reported blocked)."""
    parts = [FAULTS["ap-upload-relative-path-dropped"], FAULTS["ap-download-non-latin1-500"]]
    outcome = check_combination(parts, ALONE)
    assert outcome.composed, outcome.problems
    assert outcome.blocked == ()


def test_a_model_requirement_whose_items_another_fault_removed_is_blocked_by_it() -> None:
    """Issue 34: beside ``ap-task-missing-id`` the model has no task to follow, so AP-MODEL-003,
    which ``ap-step-list-omits-latest`` breaks, judged none of its facts (the task list was walked
    with nothing of the run in it): blocked by AP-TASK-001, no longer passed."""
    parts = [FAULTS["ap-step-list-omits-latest"], FAULTS["ap-task-missing-id"]]
    result = run_combination(parts)
    outcome = judge(parts, result, ALONE, 0.0)
    assert outcome.composed, outcome.problems
    [lists] = [r for r in result.results if r.requirement.id == "AP-MODEL-003"]
    assert lists.status is Status.BLOCKED and lists.blocked_by == "AP-TASK-001", lists.message


@pytest.mark.slow  # Synapse's chat jobs: seconds
def test_a_model_fact_another_fault_removed_keeps_its_requirement_from_passing() -> None:
    """The bench's instance: beside syn-session-read-lag an update of a session just created
    answers 404, so SYN-MODEL-001's update fact (a new etag each update), which syn-etag-unchanged
    breaks, is never judged though every read of the session held: blocked by SYN-SESS-002, no
    longer passed on the facts it could judge."""
    parts = [FAULTS[n] for n in ("syn-etag-unchanged", "syn-list-shows-others", "syn-session-read-lag")]
    result = run_combination(parts)
    outcome = judge(parts, result, ALONE, 0.0)
    assert outcome.composed, outcome.problems
    [same] = [r for r in result.results if r.requirement.id == "SYN-MODEL-001"]
    assert same.status is Status.BLOCKED and same.blocked_by == "SYN-SESS-002", same.message


@pytest.mark.slow  # the whole protocol against two faults: every model requirement runs
def test_a_model_requirement_passes_on_facts_it_judged_and_is_blocked_where_none_was_observed() -> None:
    """Issue 34's second instance: a sessions list whose nextPageToken names the page just served
    never ends, so SYN-MODEL-002 judged none of its facts: blocked by SYN-PAGE-001. The passing
    control is the same run: the model requirements whose facts were observed pass, and the one the
    other fault breaks fails."""
    parts = [FAULTS["syn-page-token-repeats"], FAULTS["syn-modified-on-not-updated"]]
    result = run_combination(parts, exact=True)
    outcome = judge(parts, result, ALONE, 0.0)
    assert outcome.composed, outcome.problems
    verdicts = {r.requirement.id: r for r in result.results}
    listed = verdicts["SYN-MODEL-002"]
    assert listed.status is Status.BLOCKED and listed.blocked_by == "SYN-PAGE-001", listed.message
    assert verdicts["SYN-MODEL-001"].status is Status.FAILED
    for rid in ("SYN-MODEL-003", "SYN-MODEL-004", "SYN-MODEL-005"):
        assert verdicts[rid].status is Status.PASSED and verdicts[rid].cases > 0, verdicts[rid].message


@pytest.mark.slow  # two runs a protocol, only their faults' declared requirements: seconds each
@pytest.mark.parametrize("pid", sorted(PROTOCOLS))
def test_a_seeded_sample_of_combinations_composes(pid: str) -> None:
    for parts in draw([f for f in FAULTS.values() if f.protocol == pid], 2, SAMPLE_SEED):
        outcome = check_combination(parts, ALONE)
        assert outcome.composed, f"{' + '.join(outcome.faults)}: {'; '.join(outcome.problems)}"


@pytest.mark.slow  # the property-based phase's chat streams: seconds
@pytest.mark.parametrize("other", ["sgr-accepts-invalid-body", "sgr-stream-false-crashes"])
def test_a_stream_idle_after_its_end_event_is_ended_not_stalled(other: str) -> None:
    """Issue 34, class 4: beside the wire control that leaves the connection open and idle after
    data: [DONE], the property-based phase read each chat stream until it closed, counted it a
    stall, and the stall guard stopped sending to the route, so the other fault's requirement was
    never reached. The stream ended at its end event: the other fault's verdicts stand as alone."""
    parts = [FAULTS["sgr-wire-sse-idle-after-done"], FAULTS[other]]
    outcome = check_combination(parts, ALONE)
    assert outcome.composed, outcome.problems
