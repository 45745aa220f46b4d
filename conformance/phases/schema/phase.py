"""The property-based phase as a phase of the run: schemathesis driven from the plan's document
(``engine.py``), deciding its requirements together."""

from __future__ import annotations

from collections.abc import Iterable

from ...run.events import RequirementStarted
from ...run.plan import RunPlan
from ...verdicts.requirements import Requirement
from ...verdicts.results import RequirementResult
from ..base import RunState
from .engine import run_schema_phase


class SchemaPhase:
    name = "schema"
    gate = False

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        return plan.requirements(self.name)

    def run(self, plan: RunPlan, state: RunState) -> Iterable[RequirementResult]:
        requirements = self.requirements(plan)
        for n, req in enumerate(requirements, 1):
            state.emit(RequirementStarted(req, n, len(requirements)))
        results, tally = run_schema_phase(plan, state)
        state.result.stats.update(tally.stats())
        state.tallies[self.name] = tally.to_dict()
        return results
