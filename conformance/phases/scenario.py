"""The scenario phase: each selected requirement's own check, one at a time, each with its own
bounded clients (a ``Context``)."""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator

from ..check.context import Blocked, CheckFailed, Context, Journal, NotVerified
from ..check.http import TargetError
from ..run.events import RequirementStarted
from ..run.plan import RunPlan
from ..verdicts.findings import scenario_findings, summary
from ..verdicts.requirements import Check, Requirement
from ..verdicts.results import Exchange, RequirementResult, Status
from .base import RunState


class ScenarioPhase:
    name = "scenario"
    gate = False

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        return plan.requirements(self.name)

    def run(self, plan: RunPlan, state: RunState) -> Iterator[RequirementResult]:
        checks = plan.phase(self.name)
        journal = Journal()  # every check's calls, for the reproductions of the later ones
        for n, check in enumerate(checks, 1):
            state.watchdog.check()  # a stopped run starts no further check
            state.emit(RequirementStarted(check.requirement, n, len(checks)))
            state.guard.tap.owner = (check.requirement.id,)  # its exchanges exercise the document for it
            ctx = Context(plan.spec, plan.schemas, plan.options, plan.limits, state.memo, state.guard, journal)
            yield run_check(check, ctx)


def run_check(check: Check, ctx: Context) -> RequirementResult:
    assert check.run is not None
    started = time.monotonic()
    status, message = Status.PASSED, "passed"
    blocked_by = None
    shown: tuple[Exchange, ...] = ()  # the answers the verdict that ended the check names
    try:
        check.run(ctx)
    except Blocked as exc:
        shown = exc.shown_by
        if exc.by == check.requirement.id:  # its own step: the root failure
            status, message = Status.FAILED, str(exc)
        else:
            status, message, blocked_by = Status.BLOCKED, f"blocked by {exc.by}: {exc}", exc.by
    except CheckFailed as exc:
        status, message, shown = Status.FAILED, str(exc), exc.shown_by
    except NotVerified as exc:
        status, message = Status.NOT_VERIFIED, f"not verified: {exc}"
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
    ended = ctx.exchanges()[: ctx.deciding(message, len(log), shown) + 1]  # up to the one it judged
    failures = [*ctx.failures, *own, *([(message, ended)] if status is Status.FAILED else [])]
    journal = ctx.journal
    findings = scenario_findings(
        ctx.spec,
        ctx.base_url,
        rid,
        failures,
        ctx.probes,
        journal.calls,
        journal.failed,
        ctx.statuses,
        ctx.shown,
        ctx.judgments,
    )
    ctx.record(failures)
    if ctx.failures or own:  # a part failed: the requirement fails, whatever ended the check after it
        rest = "" if status in (Status.PASSED, Status.FAILED) else f"; then {message}"
        rest += f"; a part was blocked by {others[0].by}" if others else ""
        status, message, blocked_by = Status.FAILED, summary(findings) + rest, None
        evidence = findings[0].evidence[-3:]
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
