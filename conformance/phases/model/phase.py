"""The model-based phase as a phase of the run: the protocol's state machine (``engine.py``
and ``protocols/<id>/model.py``), deciding its requirements together."""

from __future__ import annotations

from collections.abc import Iterable

from ...check.http import Client
from ...run.events import RequirementStarted
from ...run.plan import RunPlan
from ...run.shards import chunk_of
from ...verdicts.requirements import Requirement
from ...verdicts.results import RequirementResult
from ..base import RunState
from .engine import run_model_phase, shrink_budget


class ModelPhase:
    name = "model"
    gate = False

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        """None without a model: its requirements then stay not run."""
        return plan.requirements(self.name) if plan.suite.model is not None else ()

    def run(self, plan: RunPlan, state: RunState) -> Iterable[RequirementResult]:
        requirements = self.requirements(plan)
        model = plan.suite.model
        assert model is not None
        for n, req in enumerate(requirements, 1):
            state.emit(RequirementStarted(req, n, len(requirements)))
        opts = plan.options
        client = Client(opts.base_url, plan.limits, headers=plan.auth_headers, guard=state.guard)
        try:
            results, tally = run_model_phase(
                model,
                list(requirements),
                client,
                spec=plan.spec,
                seed_value=opts.seed,
                ranges=[chunk_of(u) for u in plan.units if u.phase == self.name],
                budget_s=state.budget.model_based(),
                step_factor=opts.model_step_factor,
                database=state.database,
                shrinks=shrink_budget(opts.sequences),
            )
        finally:
            client.close()
        state.result.stats.update(tally.stats())
        state.tallies[self.name] = tally.to_dict()
        return results
