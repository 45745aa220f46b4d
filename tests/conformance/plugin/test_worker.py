"""The plugin's per-process share of a run: the target is started once and the setup memo shared."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import conformance.engine.runner
from conformance.plugin.session import _Worker, merge
from conformance.run.options import RunOptions
from conformance.verdicts.results import Status


def test_a_worker_starts_each_target_once_and_shares_its_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    starts: list[str] = []
    real = conformance.engine.runner.target

    @contextmanager
    def counting(options: RunOptions) -> Iterator[RunOptions]:
        if not options.base_url:  # only then does target() start an embedded mock
            starts.append(options.protocol)
        with real(options) as started:
            yield started

    monkeypatch.setattr(conformance.engine.runner, "target", counting)
    worker = _Worker({"agent-protocol": RunOptions(protocol="agent-protocol", phases=("scenario",))})
    try:
        first = worker.decide("agent-protocol", "AP-TASK-001", "scenario")
        second = worker.decide("agent-protocol", "AP-TASK-002", "scenario")
    finally:
        worker.close()
    assert starts == ["agent-protocol"]  # one embedded mock for both requirements
    assert first.target == second.target  # the same target answered both
    assert [r.requirement.id for r in first.results] == ["AP-TASK-001"]
    assert [r.requirement.id for r in second.results] == ["AP-TASK-002"]
    assert first.results[0].status is Status.PASSED and second.results[0].status is Status.PASSED


def test_merge_rebuilds_results_in_registry_order_and_keeps_a_fatal_target() -> None:
    plans = {"agent-protocol": RunOptions(protocol="agent-protocol")}
    worker = _Worker({"agent-protocol": RunOptions(protocol="agent-protocol", phases=("scenario",))})
    try:
        runs = [worker.decide("agent-protocol", rid, "scenario") for rid in ("AP-TASK-002", "AP-TASK-001")]
    finally:
        worker.close()
    records = [{"protocol": "agent-protocol", "target": r.target, "result": r.results[0].to_dict()} for r in runs]
    [merged] = merge(records, plans).values()
    assert [r.requirement.id for r in merged.results] == ["AP-TASK-001", "AP-TASK-002"]
    assert [r.to_dict() for r in merged.results] == [runs[1].results[0].to_dict(), runs[0].results[0].to_dict()]
    assert merged.exit_code == 0
    records.append({"protocol": "agent-protocol", "target": "t", "fatal": "target unreachable"})
    assert merge(records, plans)["agent-protocol"].exit_code == 2
