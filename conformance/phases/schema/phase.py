"""The property-based phase as a phase of the run: schemathesis driven from the plan's document
(``engine.py``), deciding its requirements together."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...check.context import Context
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
        opts, protocol_suite = plan.options, plan.suite
        known: Mapping[str, tuple[str, ...]] = {}
        if protocol_suite.known_path_values is not None:
            setup = Context(plan.spec, plan.schemas, opts, plan.limits, state.memo)
            try:
                known = protocol_suite.known_path_values(setup)
            finally:
                setup.close()
        results, stats = run_schema_phase(
            plan.spec,
            opts.base_url,
            list(requirements),
            seed=opts.seed,
            max_examples=opts.max_examples,
            timeout=opts.timeout,
            budget_s=opts.budget_s / 2,
            headers=plan.auth_headers,
            skip_body_checks_for=protocol_suite.streaming_operations,
            stream_media_types=protocol_suite.stream_media_types,
            expected_statuses=protocol_suite.schema_expected_statuses,
            emit=state.emit,
            watchdog=state.watchdog,
            max_body_bytes=plan.limits.max_body_bytes,
            known_path_values=known,
        )
        state.result.stats.update(stats)
        return results
