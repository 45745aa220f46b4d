"""Drives a protocol's model against a live target and turns what it finds into verdicts.

A model is a Hypothesis ``RuleBasedStateMachine``: rules are writes and reads, and after every
step it compares every route that shows what the step touched with what the model predicts.
Hypothesis gives reproducible sequences from ``--seed`` and shrinks a failing one to a minimal
sequence of calls for free, which is the evidence.

Against a live server the state outlives each example: Hypothesis replays and shrinks sequences
while the server keeps everything earlier examples created. So a model keeps its expectations in a
run-wide ``ledger`` (everything created in the run, plus what the server held before), and lists
are compared with all of it, never only with the current example.

A violation stops the state machine; the requirement is then reported failed with the shrunk
sequence, and the machine runs again with that requirement muted, to look for failures of the
others (bounded by the requirements left and the time budget).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from specs.documents import Spec

from ...check.http import Client, TargetError
from ...check.model import Call, Found, Model, OutOfTime, Session, Violation
from ...verdicts.findings import digest, operation_of
from ...verdicts.requirements import Requirement
from ...verdicts.results import Exchange, Finding, RequirementResult, Status

_RUNTIME = "conformance.phases.model.<run>"
"""The module a run's machine class claims: none by that name exists, so it has no source file."""

MAX_EVIDENCE_CALLS = 25
"""Calls of the minimal sequence quoted in a verdict (and kept as evidence)."""


WRITES = {"POST", "PUT", "PATCH", "DELETE"}
TAIL_CALLS = 4
"""Calls quoted in full before the failing one; the reads before them that only verified earlier
steps are summed up, so the writes that made the state and the read that showed it stay in view."""


def shown(calls: list[Call]) -> list[int]:
    """Indexes of the calls a verdict quotes: every write, and the last few reads."""
    picked = [n for n, c in enumerate(calls) if c.exchange.method in WRITES or n >= len(calls) - TAIL_CALLS]
    return (
        picked[: MAX_EVIDENCE_CALLS - TAIL_CALLS] + picked[-TAIL_CALLS:] if len(picked) > MAX_EVIDENCE_CALLS else picked
    )


def describe_sequence(calls: list[Call]) -> str:
    lines, previous = [], -1
    for n in shown(calls):
        if n > previous + 1:
            lines.append(f"  ... {n - previous - 1} read(s) verifying the steps before")
        e = calls[n].exchange
        answer = f"HTTP {e.status}" if e.status is not None else f"no answer ({e.error})"
        lines.append(f"  {n + 1}. {e.method} {e.url} -> {answer}\n     {e.curl}")
        previous = n
    return "\n".join(lines)


@dataclass(slots=True)
class PhaseStats:
    runs: int = 0
    examples: int = 0
    calls: int = 0
    seconds: float = 0.0
    stopped: str = ""
    out_of_time: bool = False
    """The budget cut the phase short: what it had not failed yet is not verified, never passed."""
    notes: list[str] = field(default_factory=list)


def _settings(examples: int, steps: int) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,  # one seed, one verdict: nothing carried over from earlier runs
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


def run_model_phase(
    model: Model,
    requirements: list[Requirement],
    client: Client,
    *,
    spec: Spec,
    seed_value: int,
    examples: int,
    budget_s: float,
) -> tuple[list[RequirementResult], dict[str, Any]]:
    started = time.monotonic()
    session = Session(client, requirements, started + budget_s)
    stats = PhaseStats()
    fatal = ""
    try:
        session.begin_example()
        session.ledger = model.prepare(session)
    except (TargetError, Violation) as exc:
        fatal = f"could not read what the target holds before the run: {exc}"
    except OutOfTime:
        stats.stopped = f"time budget of {budget_s:g} s for the model phase ran out"
        stats.out_of_time = True
    while not fatal and not stats.out_of_time and session.active:
        # Hypothesis digests each machine's source to key its example database (none here); for a
        # class made at run time inspect parses this whole module to learn it has no source, 27 %
        # of a model run's CPU. A module name with no file makes that lookup fail at once.
        machine = type(model.machine.__name__, (model.machine,), {"session": session, "__module__": _RUNTIME})
        seed(seed_value + stats.runs)(machine)
        stats.runs += 1
        try:
            run_state_machine_as_test(machine, settings=_settings(examples, model.steps))
            break  # no violation of any requirement still looked for
        except Violation as exc:
            session.active.discard(exc.rid)
        except Flaky:
            # the final replay did not fail again (the live state moved on): the smallest failing
            # sequence seen is still evidence; mute what it found and go on
            fresh = [rid for rid in session.found if rid in session.active]
            if not fresh:
                stats.stopped = "a failure did not reproduce and named no requirement"
                break
            session.active.difference_update(fresh)
        except OutOfTime:
            stats.stopped = f"time budget of {budget_s:g} s for the model phase ran out"
            stats.out_of_time = True
            session.active.difference_update(session.found)
            break
        except TargetError as exc:
            stats.stopped = f"the target misbehaved: {exc}"
            break
    stats.seconds = time.monotonic() - started
    stats.examples = session.examples
    return _verdicts(session, requirements, stats, fatal, spec, client.base_url), {
        "model_runs": stats.runs,
        "model_sequences": stats.examples,
        "model_requests": session.requests,
        "model_seconds": round(stats.seconds, 2),
        "model_stopped": stats.stopped or fatal,
    }


def _finding(spec: Spec, base_url: str, rid: str, found: Found, evidence: list[Exchange]) -> Finding:
    """One distinct failure per requirement (the machine stops at the first), keyed like a scenario's:
    the operation of the read that showed it, and a digest of the message without its ids."""
    last = evidence[-1] if evidence else None
    operation = operation_of(spec, base_url, last.method, last.url) if last else "(no request)"
    kind = f"model:{digest(found.message)}"
    return Finding(f"{rid}|{operation}|{kind}", rid, operation, kind, found.message, 1, evidence)


def _verdicts(
    session: Session, requirements: list[Requirement], stats: PhaseStats, fatal: str, spec: Spec, base_url: str
) -> list[RequirementResult]:
    results = []
    for req in requirements:
        finding = session.found.get(req.id)
        compared = session.compared[req.id]
        if finding is not None:
            message = (
                f"{finding.message}\nminimal sequence ({len(finding.calls)} calls, against a target that "
                f"also holds what earlier sequences created):\n{describe_sequence(finding.calls)}"
            )
            evidence = [finding.calls[n].exchange for n in shown(finding.calls)]
            results.append(
                RequirementResult(
                    req,
                    Status.FAILED,
                    message,
                    evidence,
                    stats.seconds,
                    compared,
                    findings=[_finding(spec, base_url, req.id, finding, evidence)],
                )
            )
        elif stats.out_of_time and not fatal:
            message = f"not verified (budget): the {stats.stopped} after {compared} comparisons held"
            results.append(RequirementResult(req, Status.SKIPPED, message, [], stats.seconds, compared))
        elif fatal or stats.stopped:
            # a phase cut short decided nothing it had not failed yet, whatever it compared first
            message = fatal or f"{stats.stopped}, after {compared} comparisons held"
            results.append(RequirementResult(req, Status.ERROR, message, [], stats.seconds, compared))
        elif compared == 0:
            why = session.unverifiable.get(req.id, "no sequence reached a comparison of this requirement")
            results.append(RequirementResult(req, Status.SKIPPED, f"not verified: {why}", [], stats.seconds, 0))
        else:
            note = f"; not compared where {session.unverifiable[req.id]}" if req.id in session.unverifiable else ""
            message = f"{compared} comparisons over {stats.examples} sequences held{note}"
            results.append(RequirementResult(req, Status.PASSED, message, [], stats.seconds, compared))
    return results
