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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from specs.documents import Spec

from ...check.guard import STOPPED_ANSWERING
from ...check.http import Client, TargetError
from ...check.model import Call, Found, Model, OutOfTime, Session, ShrinkSpent, TargetLost, Unshrunk, Violation
from ...run.exampledb import keeping
from ...run.shards import chunk_seed
from ...verdicts.findings import FindingSet, digest, operation_of, reproducing
from ...verdicts.requirements import Requirement
from ...verdicts.results import Blocked, CheckFailed, Exchange, Finding, NotVerified, RequirementResult, Status
from ..draws import seed_only

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
class ModelTally:
    """What the phase found and counted, by requirement and for the phase: the facts its verdicts
    are decided from. Each range of sequences (a unit, run/shards.py) looks for every requirement
    afresh; the tallies of the ranges, run here or by other shards, add up (``absorb``)."""

    compared: dict[str, int]
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Requirement id -> the first range's failure: message, evidence and findings (each range's,
    by key, counted in)."""
    unverifiable: dict[str, dict[str, str]] = field(default_factory=dict)
    """Requirement id -> why a comparison could not be made and, when known, the requirement whose
    failure removed it (``why``, ``by``: ``check.model.Unjudged``)."""
    judged: dict[str, list[str]] = field(default_factory=dict)
    """Requirement id -> the facts its comparisons judged (``Session.judged``): a requirement passes
    on these, never on a count of comparisons that judged no item of the run."""
    facts: dict[str, list[str]] = field(default_factory=dict)
    """Requirement id -> the facts its statement holds (``Model.facts``), where it names several."""
    prevented: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    """Requirement id -> fact ("" for every one) -> why a comparison of it could not be made and the
    requirement whose failure removed it: a fact never judged that this names keeps the
    requirement from passing."""
    runs: int = 0
    sequences: int = 0
    requests: int = 0
    seconds: float = 0.0
    stopped: str = ""
    out_of_time: bool = False
    """The budget cut the phase short: what it had not failed yet is not verified, never passed."""
    fatal: str = ""
    lost: str = ""
    """The run's stall guard found the target stopped answering during the phase (why): what the
    phase had not failed yet is not verified, never passed."""
    first_failure: int | None = None
    """Sequences begun up to the first failure (shrinking's replays not counted): what an example
    database that replays a failure first makes small."""

    @classmethod
    def empty(cls, requirement_ids: Iterable[str]) -> ModelTally:
        ids = list(requirement_ids)
        return cls(dict.fromkeys(ids, 0), judged={rid: [] for rid in ids})

    def to_dict(self) -> dict[str, Any]:
        return {
            "compared": self.compared,
            "found": self.found,
            "unverifiable": self.unverifiable,
            "judged": self.judged,
            "facts": self.facts,
            "prevented": self.prevented,
            "runs": self.runs,
            "sequences": self.sequences,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "out_of_time": self.out_of_time,
            "fatal": self.fatal,
            "lost": self.lost,
            "first_failure": self.first_failure,
        }

    def absorb(self, data: dict[str, Any]) -> None:
        """Add a later range's tally (or another shard's, as ``to_dict`` wrote it)."""
        for rid, n in data["compared"].items():
            self.compared[rid] = self.compared.get(rid, 0) + n
        for rid, failure in data["found"].items():
            mine = self.found.setdefault(rid, {**failure, "findings": []})
            found = FindingSet()
            for f in [*mine["findings"], *failure["findings"]]:
                found.absorb(Finding.from_dict(f, rid))
            mine["findings"] = [f.to_dict() for f in found.seen()]
        for rid, why in data["unverifiable"].items():
            # a tally written before facts were judged named the reason alone
            self.unverifiable.setdefault(rid, why if isinstance(why, dict) else {"why": why, "by": ""})
        # one written before facts were judged counted comparisons only: those judged the requirement
        judged = data.get("judged") or {rid: [rid] for rid, n in data["compared"].items() if n}
        for rid, facts in judged.items():
            held = self.judged.setdefault(rid, [])
            held += [f for f in facts if f not in held]
        for rid, facts in data.get("facts", {}).items():
            self.facts.setdefault(rid, list(facts))
        for rid, reasons in data.get("prevented", {}).items():
            for fact, why in reasons.items():
                self.prevented.setdefault(rid, {}).setdefault(fact, why)
        self.runs += data["runs"]
        self.sequences += data["sequences"]
        self.requests += data["requests"]
        self.seconds = max(self.seconds, data["seconds"])  # shards run side by side
        self.stopped = self.stopped or data["stopped"]
        self.out_of_time = self.out_of_time or data["out_of_time"]
        self.fatal = self.fatal or data["fatal"]
        self.lost = self.lost or data.get("lost", "")
        if self.first_failure is None:
            self.first_failure = data["first_failure"]

    def stats(self) -> dict[str, Any]:
        return {
            "model_runs": self.runs,
            "model_sequences": self.sequences,
            "model_requests": self.requests,
            "model_seconds": round(self.seconds, 2),
            "model_stopped": self.lost or self.stopped or self.fatal,
            "model_first_failure": self.first_failure,
        }


OUTSIDE = (CheckFailed, NotVerified, Blocked)
"""Verdicts a step or ``prepare`` may raise outside any requirement (``Response.json`` on a body
that is not JSON): the phase's requirements take them as the target misbehaving."""


def _outside(exc: BaseException | None, depth: int = 0) -> BaseException | None:
    """The verdict raised outside a requirement (or the target's failure) behind a failure that did
    not reproduce, if one: Hypothesis' Flaky errors group what each run raised (``exceptions``) or
    were raised while handling it (``__context__``)."""
    if exc is None or depth > 8:
        return None
    if isinstance(exc, (TargetError, *OUTSIDE)):
        return exc
    for inner in (*getattr(exc, "exceptions", ()), exc.__cause__, exc.__context__):
        found = _outside(inner, depth + 1)
        if found is not None:
            return found
    return None


def _settings(examples: int, steps: int, database: Any) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        # one seed, one verdict: nothing carried over from earlier runs, unless --example-db asks
        database=database,
        phases=(Phase.explicit, *((Phase.reuse,) if database is not None else ()), Phase.generate, Phase.shrink),
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
    ranges: list[tuple[int, int]],
    budget_s: float,
    step_factor: int = 1,
    database: Any = None,
    shrinks: int | None = None,
) -> tuple[list[RequirementResult], ModelTally]:
    """The phase over ``ranges`` of sequences ((first, count) each: this shard's units, or all of
    them), every range looking for every requirement, its own seed drawn from ``seed_value`` and
    its first sequence (``shards.chunk_seed``); a failure shrunk for at most ``shrinks`` sequences
    (``shrink_budget``; None: as long as Hypothesis shrinks). Returns the verdicts and the tally
    behind them."""
    started = time.monotonic()
    session = Session(client, requirements, started + budget_s, model.facts)
    tally = ModelTally.empty(r.id for r in requirements)
    tally.facts = {rid: list(facts) for rid, facts in model.facts.items() if len(facts) > 1}
    try:
        session.begin_example()
        session.ledger = model.prepare(session)
    except TargetLost as exc:
        tally.fatal = f"could not read what the target holds before the run: {exc.error}"
    except (TargetError, Violation, *OUTSIDE) as exc:
        # a verdict raised outside any requirement (an answer that is not JSON, say) decides the
        # phase's requirements with its message, never a traceback
        tally.fatal = f"could not read what the target holds before the run: {exc}"
    except OutOfTime:
        tally.stopped = f"time budget of {budget_s:g} s for the model phase ran out"
        tally.out_of_time = True
    for first, count in ranges:
        if tally.fatal or tally.out_of_time:
            break
        tally.absorb(
            _run_range(
                model, session, spec, chunk_seed(seed_value, first), count, step_factor, database, first == 0, shrinks
            )
        )
        tally.stopped = tally.stopped.replace("{budget}", f"{budget_s:g}")
        if tally.stopped and not tally.out_of_time:
            break  # the target misbehaved, or a failure named nothing: the phase is not trusted further
    if client.guard is not None and client.guard.lost:
        tally.lost = client.guard.lost  # what stopped the phase was the target, gone: not a verdict on it
    tally.seconds = time.monotonic() - started
    tally.sequences, tally.requests = session.examples, session.requests
    tally.first_failure = session.first_failure
    return model_verdicts(requirements, tally), tally


def _run_range(
    model: Model,
    session: Session,
    spec: Spec,
    seed_value: int,
    count: int,
    step_factor: int,
    database: Any,
    targeted: bool = False,
    shrinks: int | None = None,
) -> dict[str, Any]:
    """One range of sequences, looking for every requirement: the tally of it alone. The first
    range (``targeted``) runs the model's fixed sequences first (``Model.targeted``)."""
    session.active = set(session.requirements)
    session.found = {}
    compared_before = dict(session.compared)
    part = ModelTally.empty(session.requirements)
    for facts in session.judged.values():
        facts.clear()  # each range judges afresh; the tallies' union is the run's
    if targeted:
        _run_targeted(model, session, part)
    runs = 0
    while session.active and not part.stopped:
        # Hypothesis digests each machine's source to key its example database; for a class made
        # at run time inspect parses this whole module to learn it has no source, 27 % of a model
        # run's CPU. A module name with no file makes that lookup fail at once.
        machine = type(model.machine.__name__, (model.machine,), {"session": session, "__module__": _RUNTIME})
        # each run after a violation draws the first run's sequences again, the found requirement
        # muted: what it draws for the others is what a server without that fault gets, so a fact a
        # fault breaks is searched for alike whatever else the server breaks
        seed(seed_value)(machine)
        runs += 1
        session.failing, session.shrink_budget = None, shrinks
        try:
            db = database if runs == 1 else keeping(database)  # a muted requirement's saved failure stays
            with seed_only():  # sequences drawn from the seed, not from what the process imported
                run_state_machine_as_test(machine, settings=_settings(count, model.steps * step_factor, db))
            break  # no violation of any requirement still looked for
        except (Violation, Unshrunk, ShrinkSpent) as exc:
            session.active.discard(exc.rid)
        except Flaky as exc:
            # the final replay did not fail again (the live state moved on): the smallest failing
            # sequence seen is still evidence; mute what it found and go on
            fresh = [rid for rid in session.found if rid in session.active]
            if not fresh:
                misbehaved = _outside(exc)
                part.stopped = (
                    f"the target misbehaved: {misbehaved}"
                    if misbehaved
                    else "a failure did not reproduce and named no requirement"
                )
                break
            session.active.difference_update(fresh)
        except (OutOfTime, TargetLost, TargetError, *OUTSIDE) as exc:
            _stop(part, session, exc)
            break
    session.failing = session.shrink_budget = None  # the fixed sequences of a later range are not shrunk
    part.runs = runs
    part.compared = {rid: n - compared_before.get(rid, 0) for rid, n in session.compared.items()}
    part.unverifiable = {rid: {"why": u.why, "by": u.by} for rid, u in session.unverifiable.items()}
    part.judged = {rid: sorted(facts) for rid, facts in session.judged.items()}
    part.prevented = {
        rid: {fact: {"why": u.why, "by": u.by} for fact, u in reasons.items()}
        for rid, reasons in session.prevented.items()
    }
    base_url = session.client.base_url
    for rid, found in session.found.items():
        evidence = [found.calls[n].exchange for n in shown(found.calls)]
        message = (
            f"{found.message}\nminimal sequence ({len(found.calls)} calls, against a target that "
            f"also holds what earlier sequences created):\n{describe_sequence(found.calls)}"
        )
        part.found[rid] = {
            "message": message,
            "evidence": [e.to_dict() for e in evidence],
            "findings": [_finding(spec, base_url, rid, found).to_dict()],
        }
    out = part.to_dict()
    out["seconds"] = 0.0  # the phase times itself whole
    return out


def shrink_budget(sequences: int) -> int:
    """Sequences Hypothesis may replay to shrink one failure of a run whose options draw
    ``sequences`` (the whole run's, so a shard shrinks as the single run does): twice as many, at
    least 10. Each replay pays the target's latency for every call (a Synapse chat
    job's), and against a target holding many objects every step walks long lists; the shrinker's
    first passes, deleting whole steps, make most of its progress. The smallest failing sequence
    seen when the budget is spent is the evidence."""
    return max(10, 2 * sequences)


def _run_targeted(model: Model, session: Session, part: ModelTally) -> None:
    """The model's fixed sequences, each on a fresh machine; a violation mutes its requirement as a
    generated one does (its sequence, already short, is the evidence)."""
    machine = type(model.machine.__name__, (model.machine,), {"session": session, "__module__": _RUNTIME})
    for sequence in model.targeted:
        # a violation ends the sequence where it was met: the sequence runs again, that requirement
        # muted, so what it was built to reach further on is reached whatever else the server breaks
        while session.active:
            try:
                sequence(machine())
                break
            except (Violation, Unshrunk) as exc:  # Unshrunk: broken in a sequence whose stream stalled
                session.active.discard(exc.rid)
            except (OutOfTime, TargetLost, TargetError, *OUTSIDE) as exc:
                _stop(part, session, exc)
                return


def _stop(part: ModelTally, session: Session, exc: BaseException) -> None:
    """The range cannot go on: out of time (what it found so far stands) or the target misbehaved."""
    if isinstance(exc, OutOfTime):
        part.stopped = "time budget of {budget} s for the model phase ran out"
        part.out_of_time = True
        session.active.difference_update(session.found)
    else:
        part.stopped = f"the target misbehaved: {exc.error if isinstance(exc, TargetLost) else exc}"


def _finding(spec: Spec, base_url: str, rid: str, found: Found) -> Finding:
    """One distinct failure per requirement (the machine stops at the first), keyed like a scenario's:
    the operation of the read that showed it, and a digest of the message without its ids; its
    evidence is the calls of the run (the minimal sequence's, and the earlier sequences' that made
    what it judged) that the failing read depends on."""
    calls = [c.exchange for c in (found.history or found.calls)]
    last = calls[-1] if calls else None
    operation = operation_of(spec, base_url, last.method, last.url) if last else "(no request)"
    kind = f"model:{digest(found.message)}"
    finding = Finding(f"{rid}|{operation}|{kind}", rid, operation, kind, found.message, 1)
    finding = reproducing(finding, calls, also=found.also)
    finding.unsure = finding.unsure or found.unsure
    return finding


def model_verdicts(requirements: Iterable[Requirement], tally: ModelTally) -> list[RequirementResult]:
    """Each requirement's verdict from what the phase (or all the shards' phases) found and counted."""
    results = []
    fatal, stopped, seconds = tally.fatal, tally.stopped, tally.seconds
    for req in requirements:
        failure = tally.found.get(req.id)
        compared = tally.compared.get(req.id, 0)
        if failure is not None:
            findings = [Finding.from_dict(f, req.id) for f in failure["findings"]]
            evidence = [Exchange.from_dict(e) for e in failure["evidence"]]
            results.append(
                RequirementResult(
                    req, Status.FAILED, failure["message"], evidence, seconds, compared, findings=findings
                )
            )
        elif tally.lost:
            message = f"not verified ({STOPPED_ANSWERING}): {tally.lost}, after {compared} comparisons held"
            results.append(RequirementResult(req, Status.NOT_VERIFIED, message, [], seconds, compared))
        elif tally.out_of_time and not fatal:
            message = f"not verified (budget): the {stopped} after {compared} comparisons held"
            results.append(RequirementResult(req, Status.NOT_VERIFIED, message, [], seconds, compared))
        elif fatal or stopped:
            # a phase cut short decided nothing it had not failed yet, whatever it compared first
            message = fatal or f"{stopped}, after {compared} comparisons held"
            results.append(RequirementResult(req, Status.ERROR, message, [], seconds, compared))
        elif not tally.judged.get(req.id):
            results.append(_unjudged(req, tally, seconds))
        elif (removed := _removed(req, tally, seconds)) is not None:
            results.append(removed)
        else:
            results.append(_passed(req, tally, seconds))
    return results


def _unjudged(req: Requirement, tally: ModelTally, seconds: float) -> RequirementResult:
    """A requirement none of whose facts a comparison judged: blocked by the requirement whose
    failure removed the observation, as the scenario phase reports a missing one (``results.unblock``
    makes it not verified if that one passed), else not verified; never passed, however many
    comparisons held on nothing the run made."""
    compared = tally.compared.get(req.id, 0)
    unjudged = tally.unverifiable.get(req.id, {})
    why = unjudged.get("why") or "no sequence reached a comparison of this requirement"
    held = f" ({compared} comparisons held, none on an item of the run)" if compared else ""
    by = unjudged.get("by", "")
    if by:
        message = f"blocked by {by}: {why}{held}"
        return RequirementResult(req, Status.BLOCKED, message, [], seconds, compared, blocked_by=by)
    return RequirementResult(req, Status.NOT_VERIFIED, f"not verified: {why}{held}", [], seconds, compared)


def _removed(req: Requirement, tally: ModelTally, seconds: float) -> RequirementResult | None:
    """A requirement some of whose facts were judged and held, and another never judged because a
    comparison of it was prevented (another requirement's failure removed what it needed): not
    passed, as a scenario check that could not see one of its items; blocked by the requirement
    that removed it, else not verified. None when every fact was judged, or the ones left were
    only never reached (the draws: the message of a pass names them)."""
    reasons = tally.prevented.get(req.id, {})
    missing = [f for f in tally.facts.get(req.id, []) if f not in tally.judged.get(req.id, [])]
    stopped = [(f, why) for f in missing if (why := reasons.get(f) or reasons.get("")) is not None]
    if not stopped:
        return None
    fact, why = stopped[0]
    compared = tally.compared.get(req.id, 0)
    held = f" ({compared} comparisons of {', '.join(tally.judged[req.id])} held)"
    by = why.get("by", "")
    text = f"{fact} was never judged: {why['why']}{held}"
    if by:
        return RequirementResult(req, Status.BLOCKED, f"blocked by {by}: {text}", [], seconds, compared, blocked_by=by)
    return RequirementResult(req, Status.NOT_VERIFIED, f"not verified: {text}", [], seconds, compared)


def _passed(req: Requirement, tally: ModelTally, seconds: float) -> RequirementResult:
    """Passed on the facts judged; the message names those no comparison reached, and why."""
    compared = tally.compared.get(req.id, 0)
    judged = tally.judged.get(req.id, [])
    message = f"{compared} comparisons over {tally.sequences} sequences held"
    facts = tally.facts.get(req.id, [])
    missing = [f for f in facts if f not in judged]
    if facts:
        message += f", judging {', '.join(f for f in facts if f in judged)}"
    unjudged = tally.unverifiable.get(req.id)
    if missing:
        message += f"; not judged: {', '.join(missing)}" + (f" ({unjudged['why']})" if unjudged else "")
    elif unjudged:
        message += f"; not compared where {unjudged['why']}"
    return RequirementResult(req, Status.PASSED, message, [], seconds, compared)
