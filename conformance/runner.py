"""Runs one protocol's requirements against a target and returns the results model.

Order: a preflight (is anything speaking HTTP there?), the property-based schema phase, the
model-based phase (conformance/model/), then each scenario check with its own bounded client.
Nothing passes by default: a check passes only by returning after the target answered as required.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from specs.documents import Spec, load
from specs.schemas import SchemaSet

from . import __version__
from .baseline import judge
from .context import Blocked, CheckFailed, Context, NotVerified, RunOptions
from .events import (
    Emitter,
    EventHandler,
    Fatal,
    PhaseFinished,
    PhaseStarted,
    RequirementFinished,
    RequirementStarted,
    RunFinished,
    RunStarted,
)
from .findings import scenario_findings, summary
from .http import Client, Limits, TargetError
from .ledger import Ledger
from .model.engine import run_model_phase
from .requirements import Check
from .results import RequirementResult, RunResult, Status
from .schema_phase import run_schema_phase
from .suites import ProtocolSuite, suite
from .targets import embedded
from .watchdog import BUDGET, RunStopped, Watchdog

EMBEDDED_TOKENS = ("alice-token", "bob-token")


@contextmanager
def target(options: RunOptions) -> Iterator[RunOptions]:
    """The given base URL, or the embedded reference mock on a free loopback port."""
    if options.base_url:
        yield options
        return
    info = load(options.protocol).info
    with embedded().serve(options.protocol, seed=options.seed) as server:
        yield replace(
            options,
            base_url=server.url + info.base_path,
            token=options.token or EMBEDDED_TOKENS[0],
            second_token=options.second_token or EMBEDDED_TOKENS[1],
        )


def selected(protocol_suite: ProtocolSuite, options: RunOptions) -> list[Check]:
    checks = [c for c in protocol_suite.registry if options.level.includes(c.requirement.level)]
    if options.only:
        checks = [c for c in checks if c.requirement.id.startswith(options.only)]
    if options.skip:
        checks = [c for c in checks if not c.requirement.id.startswith(options.skip)]
    phases = set(options.phases)
    return [c for c in checks if c.requirement.phase in phases]


def model_sequences(max_examples: int) -> int:
    """Sequences of the model-based phase: half of ``--max-examples``, at least 5. Each sequence is
    a few dozen calls, so the default run (10) costs what the self-check's runs (5) cost, which
    are the runs shown to catch every fault of the catalogue."""
    return max(5, max_examples // 2)


def _auth(options: RunOptions, needs_auth: bool) -> dict[str, str]:
    return {"Authorization": f"Bearer {options.token}"} if options.token and needs_auth else {}


def preflight(options: RunOptions, limits: Limits, spec: Spec | None = None, token: str | None = None) -> str | None:
    """None when something answers HTTP at the base URL and, given the document, does not answer
    404 to every documented parameterless GET (a wrong --base-url or --protocol), else why not."""
    client = Client(options.base_url, limits, headers={"Authorization": f"Bearer {token}"} if token else None)
    try:
        client.get("/")
        answers = []
        for path in _probes(spec) if spec is not None else ():
            try:
                status = client.get(path).status
            except TargetError:
                return None  # inconclusive: the requirements meet the misbehaviour themselves
            if status != 404:
                return None
            answers.append(f"GET {path} -> 404")
    except TargetError as exc:
        return f"target unreachable or not speaking HTTP: {exc}"
    finally:
        client.close()
    if not answers:
        return None
    assert spec is not None
    hint = ""
    if spec.info.base_path and not options.base_url.rstrip("/").endswith(spec.info.base_path):
        hint = f"; {spec.info.id}'s base URL ends in {spec.info.base_path}"
    return (
        f"the target does not speak {spec.info.id} at {options.base_url}: every documented operation probed "
        f"answered 404 ({', '.join(answers)}); wrong --base-url or --protocol?{hint}"
    )


def _probes(spec: Spec, most: int = 3) -> list[str]:
    """Documented GETs that need no parameter: any server of the protocol answers them with
    something other than 404."""
    return [
        op.path
        for op in spec.operations()
        if op.method == "get"
        and "{" not in op.path
        and not any(spec.resolve(p).get("required") for p in op.definition.get("parameters", []))
    ][:most]


def run_check(check: Check, ctx: Context) -> RequirementResult:
    assert check.run is not None
    started = time.monotonic()
    status, message = Status.PASSED, "passed"
    blocked_by = None
    try:
        check.run(ctx)
    except Blocked as exc:
        if exc.by == check.requirement.id:  # its own step: the root failure
            status, message = Status.FAILED, str(exc)
        else:
            status, message, blocked_by = Status.BLOCKED, f"blocked by {exc.by}: {exc}", exc.by
    except CheckFailed as exc:
        status, message = Status.FAILED, str(exc)
    except NotVerified as exc:
        status, message = Status.SKIPPED, f"not verified: {exc}"
    except TargetError as exc:
        status, message = Status.FAILED, f"the target misbehaved: {exc}"
    except Exception as exc:  # a suite bug must be visible, never a pass
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        status = Status.ERROR
        message = f"suite error: {type(exc).__name__}: {exc} (at {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})"
    finally:
        ctx.close()
    log = ctx.exchanges()
    evidence = log[-3:] if status is not Status.PASSED else log[-1:]
    rid = check.requirement.id
    # the failures its parts recorded (ctx.part), a part blocked by its own step, then the one that
    # ended the check: one finding each
    own = [(str(b), made) for b, made in ctx.blocks if b.by == rid]
    others = [b for b, _ in ctx.blocks if b.by != rid]
    failures = [*ctx.failures, *own, *([(message, list(evidence))] if status is Status.FAILED else [])]
    findings = scenario_findings(ctx.spec, ctx.base_url, rid, failures)
    if ctx.failures or own:  # a part failed: the requirement fails, whatever ended the check after it
        rest = "" if status in (Status.PASSED, Status.FAILED) else f"; then {message}"
        rest += f"; a part was blocked by {others[0].by}" if others else ""
        status, message, blocked_by = Status.FAILED, summary(findings) + rest, None
        evidence = findings[0].evidence
    elif others and status is Status.PASSED:  # what could be judged held; a part could not be
        status, message, blocked_by = Status.BLOCKED, f"blocked by {others[0].by}: {others[0]}", others[0].by
    if status is not Status.FAILED:
        findings = []
    return RequirementResult(
        check.requirement,
        status,
        message,
        list(evidence),
        time.monotonic() - started,
        findings=findings,
        blocked_by=blocked_by,
    )


def run_metadata(spec: Spec, options: RunOptions) -> dict[str, Any]:
    """What a reader needs to reproduce the run, and which implementation it judged."""
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
        "target_name": options.target_name,
        "target_version": options.target_version,
    }


def _phases(
    opts: RunOptions,
    spec: Spec,
    protocol_suite: ProtocolSuite,
    checks: list[Check],
    limits: Limits,
    result: RunResult,
    ledger: Ledger,
    watchdog: Watchdog,
    emit: Emitter,
    memo: dict[str, object],
    started: float,
) -> None:
    """Preflight, the property-based phase, the model-based phase, the scenarios; each verdict
    goes to the ledger."""
    emit(RunStarted(opts.protocol, result.target, opts.seed, opts.level.value, tuple(c.requirement.id for c in checks)))
    emit(PhaseStarted("preflight"))
    phase_started = time.monotonic()
    problem = preflight(opts, limits, spec, opts.token if protocol_suite.needs_auth else None)
    if problem:
        result.fatal = problem
        emit(Fatal(problem))
    emit(PhaseFinished("preflight", time.monotonic() - phase_started))
    if problem:
        ledger.close("not run", "the preflight found the target unusable")
        return
    schemas = SchemaSet(spec.raw)
    schema_reqs = [c.requirement for c in checks if c.requirement.phase == "schema"]
    if schema_reqs:
        emit(PhaseStarted("schema", tuple(r.id for r in schema_reqs)))
        phase_started = time.monotonic()
        for n, req in enumerate(schema_reqs, 1):
            emit(RequirementStarted(req, n, len(schema_reqs)))
        known: Mapping[str, tuple[str, ...]] = {}
        if protocol_suite.known_path_values is not None:
            setup = Context(spec, schemas, opts, limits, memo)
            try:
                known = protocol_suite.known_path_values(setup)
            finally:
                setup.close()
        results, stats = run_schema_phase(
            spec,
            opts.base_url,
            schema_reqs,
            seed=opts.seed,
            max_examples=opts.max_examples,
            timeout=opts.timeout,
            budget_s=opts.budget_s / 2,
            headers=_auth(opts, protocol_suite.needs_auth),
            skip_body_checks_for=protocol_suite.streaming_operations,
            stream_media_types=protocol_suite.stream_media_types,
            expected_statuses=protocol_suite.schema_expected_statuses,
            emit=emit,
            watchdog=watchdog,
            max_body_bytes=limits.max_body_bytes,
            known_path_values=known,
        )
        result.stats.update(stats)
        for n, res in enumerate(results, 1):
            judge(res, opts.expected_failures)
            ledger.record(res)
            emit(RequirementFinished(res, n, len(results)))
        emit(PhaseFinished("schema", time.monotonic() - phase_started))
    watchdog.check()
    model_reqs = [c.requirement for c in checks if c.requirement.phase == "model"]
    if model_reqs and protocol_suite.model is not None:
        emit(PhaseStarted("model", tuple(r.id for r in model_reqs)))
        phase_started = time.monotonic()
        for n, req in enumerate(model_reqs, 1):
            emit(RequirementStarted(req, n, len(model_reqs)))
        model_client = Client(opts.base_url, limits, headers=_auth(opts, protocol_suite.needs_auth))
        try:
            results, stats = run_model_phase(
                protocol_suite.model,
                model_reqs,
                model_client,
                spec=spec,
                seed_value=opts.seed,
                examples=model_sequences(opts.max_examples),
                budget_s=max(opts.budget_s - (time.monotonic() - started), 0.0) / 2,
            )
        finally:
            model_client.close()
        result.stats.update(stats)
        for n, res in enumerate(results, 1):
            judge(res, opts.expected_failures)
            ledger.record(res)
            emit(RequirementFinished(res, n, len(results)))
        emit(PhaseFinished("model", time.monotonic() - phase_started))
    scenarios = [c for c in checks if c.requirement.phase == "scenario"]
    if scenarios:
        emit(PhaseStarted("scenario", tuple(c.requirement.id for c in scenarios)))
        phase_started = time.monotonic()
    for n, check in enumerate(scenarios, 1):
        watchdog.check()
        emit(RequirementStarted(check.requirement, n, len(scenarios)))
        res = run_check(check, Context(spec, schemas, opts, limits, memo))
        judge(res, opts.expected_failures)
        ledger.record(res)
        emit(RequirementFinished(res, n, len(scenarios)))
    if scenarios:
        emit(PhaseFinished("scenario", time.monotonic() - phase_started))


def run(options: RunOptions, handlers: Iterable[EventHandler] = (), memo: dict[str, object] | None = None) -> RunResult:
    """Run the selected requirements, telling ``handlers`` each step (see ``events``). ``memo``
    keeps the checks' shared setup across runs against the same target (the pytest plugin runs
    one requirement at a time)."""
    started = time.monotonic()  # the budget covers the whole run, loading the suite included
    emit = Emitter(handlers)
    protocol_suite = suite(options.protocol)
    spec = load(options.protocol, options.profile)
    result = RunResult(
        protocol=options.protocol,
        target=options.base_url or "embedded reference mock",
        suite_version=__version__,
        seed=options.seed,
        level=options.level,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    limits = Limits(timeout=options.timeout, stream_seconds=max(3 * options.timeout, 10.0))
    checks = selected(protocol_suite, options)
    result.meta = run_metadata(spec, options)
    ledger = Ledger(checks)
    with Watchdog() as watchdog:
        try:
            with watchdog.deadline(options.budget_s, "run's time budget", started), target(options) as opts:
                result.base_url = opts.base_url
                if not options.base_url:
                    result.target = f"embedded reference mock ({opts.base_url})"
                memo = {} if memo is None else memo
                _phases(opts, spec, protocol_suite, checks, limits, result, ledger, watchdog, emit, memo, started)
        except RunStopped as stop:
            result.stopped = stop.kind
            ledger.close(stop.kind, f"{stop.reason} before this requirement was decided")
    result.results = ledger.results()
    if result.stopped is None and any(r.message.startswith(f"not verified ({BUDGET})") for r in result.results):
        result.stopped = BUDGET  # a phase's share of the budget ran out: the run did not decide everything
    result.duration_s = time.monotonic() - started
    result.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    emit(RunFinished(result))
    return result
