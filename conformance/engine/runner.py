"""Runs one protocol's requirements against a target and returns the results model.

``run`` builds the plan (``plan.py``: the document loaded once, the suite built from it, the
requirements selected and grouped by phase), starts the target, and runs the phases
(``phases/``): the preflight, the property-based phase, the model-based phase, the scenarios.
Every verdict goes to the ledger; a stopped run leaves what it had not decided not verified.
Nothing passes by default: a check passes only by returning after the target answered as required.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

from conformance import __version__
from conformance.check.credentials import Credentials, redact_result
from conformance.check.guard import STOPPED_ANSWERING, Routes, StallGuard
from conformance.phases import PHASES, Phase, RunState, TargetUnusable
from conformance.run.budget import Budget
from conformance.run.events import (
    Emitter,
    EventHandler,
    Fatal,
    PhaseFinished,
    PhaseStarted,
    RequirementFinished,
    RunFinished,
    RunStarted,
)
from conformance.run.exampledb import namespace, open_database
from conformance.run.ledger import Ledger
from conformance.run.options import RunOptions
from conformance.run.plan import RunPlan, plan
from conformance.run.targets import embedded
from conformance.run.watchdog import BUDGET, RunStopped, Watchdog
from conformance.verdicts.baseline import judge
from conformance.verdicts.results import RequirementResult, RunResult, Status, settle, unblock
from conformance.verdicts.sets import RequirementSet, unscore
from specs import heap
from specs.documents import protocol

EMBEDDED_TOKENS = ("alice-token", "bob-token")


@contextmanager
def target(options: RunOptions) -> Iterator[RunOptions]:
    """The given base URL, or the embedded reference mock on a free loopback port."""
    if options.base_url:
        yield options
        return
    with embedded().serve(options.protocol, seed=options.seed) as server:
        yield replace(
            options,
            base_url=server.url + protocol(options.protocol).base_path,
            token=options.token or EMBEDDED_TOKENS[0],
            second_token=options.second_token or EMBEDDED_TOKENS[1],
        )


def run_metadata(the_plan: RunPlan) -> dict[str, Any]:
    """What a reader needs to reproduce the run, and which implementation it judged."""
    spec, options = the_plan.spec, the_plan.options
    return {
        "spec": {
            "document": spec.info.document,
            "profile": spec.profile,
            "sha256": spec.digest,
            "openapi": spec.version,
        },
        # the CLI pins it to 0 unless set (see launch.entry); "random" when this process never was
        "hash_seed": os.environ.get("PYTHONHASHSEED", "random"),
        "max_examples": options.max_examples,
        "budget_s": options.budget_s,
        "phases": list(options.phases),
        "only": list(options.only),
        "skip": list(options.skip),
        "requirement_set": options.requirement_set or None,
        "timeout": options.timeout,
        "target_name": options.target_name,
        "target_version": options.target_version,
        "depth": options.depth,
        "model_sequences": options.sequences,
        "model_step_factor": options.model_step_factor,
        "example_db": options.example_db.describe() if options.example_db else None,
        **({"shard": str(options.shard)} if not options.shard.whole else {}),
    }


def campaign(the_plan: RunPlan) -> dict[str, Any]:
    """What every shard of one campaign must share, so that their merge is one run's verdicts:
    the suite, the document, the seeds and every option that changes what is tested or how it is
    judged (``conformance merge`` names the first that differs)."""
    spec, options = the_plan.spec, the_plan.options
    return {
        "suite_version": __version__,
        "protocol": options.protocol,
        "profile": spec.profile,
        "document_sha256": spec.digest,
        "seed": options.seed,
        "hash_seed": os.environ.get("PYTHONHASHSEED", "random"),
        "shards": options.shard.count,
        "level": options.level.value,
        "phases": list(options.phases),
        "only": list(options.only),
        "skip": list(options.skip),
        "requirement_set": options.requirement_set or None,
        "depth": options.depth,
        "max_examples": options.max_examples,
        "model_sequences": options.sequences,
        "model_step_factor": options.model_step_factor,
        "timeout": options.timeout,
        "budget_s": options.budget_s,
        "target_name": options.target_name,
        "target_version": options.target_version,
        "expected_failures": [asdict(e) for e in options.expected_failures],
    }


def run_phases(the_plan: RunPlan, state: RunState, phases: Iterable[Phase] = PHASES) -> None:
    """Each phase in turn: a gate always, the others when they decide a selected requirement.
    ``RunStopped`` passes through (the caller closes the ledger with why)."""
    emit, options = state.emit, the_plan.options
    # no token given to the run reaches a result: evidence names each by its variable (${TOKEN})
    credentials = Credentials.of(options.token, options.second_token)
    emit(_started(the_plan, state.result))
    for phase in phases:
        state.watchdog.check()  # a stopped run starts no further phase
        requirements = phase.requirements(the_plan)
        if not requirements and not phase.gate:
            continue
        emit(PhaseStarted(phase.name, tuple(r.id for r in requirements)))
        # the exchanges from here on exercise the document for these (the scenarios name each check's own)
        # (a phase deciding none, the preflight, is named instead)
        state.guard.tap.owner = tuple(r.id for r in requirements) or (phase.name,)
        state.guard.tap.phase = phase.name
        started = time.monotonic()
        try:
            for n, res in enumerate(phase.run(the_plan, state), 1):
                frame(res, the_plan.frozen)
                unblock(settle(redact_result(res, credentials)), state.ledger.verdicts())
                unscore(res, the_plan.frozen)
                judge(res, options.expected_failures)
                state.ledger.record(res)
                emit(RequirementFinished(res, n, len(requirements)))
        except TargetUnusable as unusable:
            state.result.fatal = credentials.redact(unusable.reason)
            emit(Fatal(state.result.fatal))
            emit(PhaseFinished(phase.name, time.monotonic() - started))
            state.ledger.close("not run", f"the {phase.name} found the target unusable")
            return
        emit(PhaseFinished(phase.name, time.monotonic() - started))


def run(
    options: RunOptions,
    handlers: Iterable[EventHandler] = (),
    memo: dict[str, object] | None = None,
    *,
    phases: Iterable[Phase] = PHASES,
) -> RunResult:
    """Run the selected requirements, telling ``handlers`` each step (see ``events``). ``memo``
    keeps the checks' shared setup across runs against the same target (the pytest plugin runs
    one requirement at a time); ``phases`` are the steps run, in order (``phases.PHASES``)."""
    budget = Budget(options.budget_s)  # the whole run, loading the suite included
    emit = Emitter(handlers)
    the_plan = plan(options)
    heap.settle()  # what the plan compiled lives as long as the run: no collection walks it
    result = _new_result(the_plan)
    ledger = Ledger(the_plan.checks, the_plan.elsewhere)
    with Watchdog() as watchdog:
        try:
            with (
                watchdog.deadline(budget.seconds, "run's time budget", budget.started),
                target(options) as opts,
            ):
                result.base_url = opts.base_url
                if not options.base_url:
                    result.target = f"embedded reference mock ({opts.base_url})"
                guard = StallGuard(
                    Routes(the_plan.spec, opts.base_url), lambda why: watchdog.stop(STOPPED_ANSWERING, why)
                )
                state = RunState(result, ledger, watchdog, emit, budget, guard, {} if memo is None else memo)
                state.database = example_database(the_plan)
                try:
                    run_phases(the_plan.at(opts), state, phases)
                    watchdog.check()  # the last phase's check may have found the target lost
                finally:
                    if guard.counts:
                        result.stats["stalled_routes"] = guard.summary()
                    if guard.lost:
                        result.stats["stopped_answering"] = guard.lost
                    result.coverage = guard.tap.report(the_plan.spec)
                    if not options.shard.whole:
                        result.shard = {
                            "shard": str(options.shard),
                            "campaign": campaign(the_plan),
                            "units": [u.name for u in the_plan.units],
                            "tallies": state.tallies,
                        }
        except RunStopped as stop:
            result.stopped = stop.kind
            ledger.close(stop.kind, f"{stop.reason} before this requirement was decided")
    if result.stopped is None and any(r.message.startswith(f"not verified ({BUDGET})") for r in ledger.results()):
        result.stopped = BUDGET  # a phase's share of the budget ran out: the run did not decide everything
    return _finish(result, ledger, budget.started, emit, the_plan.frozen)


def frame(result: RequirementResult, frozen: RequirementSet | None) -> RequirementResult:
    """A verdict judged at the level and authority the scored set froze (``--requirements``)."""
    if frozen is not None:
        result.requirement = frozen.frozen(result.requirement)
    return result


def example_database(the_plan: RunPlan) -> Any:
    """The run's Hypothesis example database (``--example-db``), its keys under this suite
    version's and document's namespace; None when none is asked for."""
    options, spec = the_plan.options, the_plan.spec
    if options.example_db is None:
        return None
    prefix = namespace(__version__, options.protocol, spec.profile, spec.digest)
    return open_database(options.example_db, prefix)


def not_run(options: RunOptions, handlers: Iterable[EventHandler], kind: str, reason: str) -> RunResult:
    """The result of a protocol that a stopped run never reached (``--protocol all`` after an
    interrupt): every selected requirement not verified, saying why, and nothing sent; handlers
    see it start and finish, so its reports are written like any other's."""
    return salvage(options, handlers, (), kind, reason)


def salvage(
    options: RunOptions,
    handlers: Iterable[EventHandler],
    decided: Iterable[RequirementResult],
    kind: str,
    reason: str,
    *,
    announced: bool = False,
    status: Status = Status.NOT_VERIFIED,
) -> RunResult:
    """The result of a run that ended without one (its worker process stopped or died: see
    ``parallel``): what it ``decided`` keeps its verdict, the rest is not verified (or ``status``)
    saying why. Handlers see it start, unless it was ``announced`` already, and finish."""
    started = time.monotonic()
    emit = Emitter(handlers)
    the_plan = plan(options)
    result = _new_result(the_plan)
    result.stopped = kind
    ledger = Ledger(the_plan.checks)
    for res in decided:
        ledger.record(res)
    ledger.close(kind, reason, status)
    if not announced:
        emit(_started(the_plan, result))
    return _finish(result, ledger, started, emit, the_plan.frozen)


def _new_result(the_plan: RunPlan) -> RunResult:
    options = the_plan.options
    result = RunResult(
        protocol=options.protocol,
        target=options.base_url or "embedded reference mock",
        suite_version=__version__,
        seed=options.seed,
        level=options.level,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    result.meta = run_metadata(the_plan)
    return result


def _started(the_plan: RunPlan, result: RunResult) -> RunStarted:
    options = the_plan.options
    return RunStarted(
        options.protocol,
        result.target,
        options.seed,
        options.level.value,
        tuple(c.requirement.id for c in the_plan.checks),
    )


def _finish(
    result: RunResult, ledger: Ledger, started: float, emit: Emitter, frozen: RequirementSet | None = None
) -> RunResult:
    ledger.settle_blocks()
    result.results = [unscore(r, frozen) for r in ledger.results()]
    result.duration_s = time.monotonic() - started
    result.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    emit(RunFinished(result))
    return result
