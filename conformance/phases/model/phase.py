"""The model-based phase as a phase of the run: the protocol's state machine (``engine.py``
and ``protocols/<id>/model.py``), deciding its requirements together."""

from __future__ import annotations

from collections.abc import Iterable

from ...check.http import Client
from ...run.events import RequirementStarted
from ...run.plan import RunPlan
from ...verdicts.requirements import Requirement
from ...verdicts.results import RequirementResult
from ..base import RunState
from .engine import run_model_phase


def model_sequences(max_examples: int) -> int:
    """Sequences of the model-based phase: half of ``--max-examples``, at least 5. Each sequence is
    a few dozen calls, so the default run (10) costs what the self-check's runs (5) cost, which
    are the runs shown to catch every fault of the catalogue."""
    return max(5, max_examples // 2)


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
        client = Client(opts.base_url, plan.limits, headers=plan.auth_headers)
        try:
            results, stats = run_model_phase(
                model,
                list(requirements),
                client,
                spec=plan.spec,
                seed_value=opts.seed,
                examples=model_sequences(opts.max_examples),
                budget_s=state.budget.model_based(),
            )
        finally:
            client.close()
        state.result.stats.update(stats)
        return results
