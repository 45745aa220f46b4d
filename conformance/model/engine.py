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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from specs.documents import Spec

from ..findings import digest, operation_of
from ..http import Client, Response, TargetError
from ..requirements import Requirement
from ..results import Exchange, Finding, RequirementResult, Status
from ..streams import Frame, FrameError, ndjson_frames, sse_events
from .oracle import Window

_RUNTIME = "conformance.model.<run>"
"""The module a run's machine class claims: none by that name exists, so it has no source file."""

MAX_EVIDENCE_CALLS = 25
"""Calls of the minimal sequence quoted in a verdict (and kept as evidence)."""


class Violation(Exception):
    """The target broke a model requirement; raised inside the state machine so Hypothesis shrinks."""

    def __init__(self, rid: str, message: str) -> None:
        super().__init__(f"{rid}: {message}")
        self.rid = rid
        self.message = message


class OutOfTime(BaseException):
    """The phase's time budget ran out: a BaseException, so Hypothesis neither catches nor shrinks it."""


@dataclass(slots=True)
class Call:
    exchange: Exchange
    window: Window


@dataclass(slots=True)
class Streamed:
    """A streamed answer as it arrived: each event's data (or line's object) in order, the JSON
    objects among them, and why reading stopped early (empty when the server ended the stream)."""

    status: int
    headers: dict[str, str]
    content_type: str
    events: list[str] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    body: bytes = b""
    """The whole answer when it was not a 200 stream (an error Status, say)."""


@dataclass(slots=True)
class Found:
    message: str
    calls: list[Call]


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


class Session:
    """One model run against one target: the bounded client, the run-wide ledger, the verdicts.

    ``check(rid, ok, message)`` is the one verb of a model: it counts a comparison for ``rid``
    and, when the comparison fails and ``rid`` is still being looked for, raises ``Violation``."""

    def __init__(self, client: Client, requirements: list[Requirement], deadline: float) -> None:
        self.client = client
        self.requirements = {r.id: r for r in requirements}
        self.active = set(self.requirements)
        self.deadline = deadline
        self.ledger: Any = None
        """The model's run-wide expectations; each protocol's model decides its shape."""
        self.compared: dict[str, int] = dict.fromkeys(self.requirements, 0)
        self.found: dict[str, Found] = {}
        self.unverifiable: dict[str, str] = {}
        """Requirement id -> why a comparison could not be made (another requirement's subject)."""
        self.calls: list[Call] = []
        self.examples = 0
        self.requests = 0

    def begin_example(self) -> None:
        self.calls = []
        self.client.log.clear()
        self.examples += 1

    def request(self, method: str, path: str, **kwargs: Any) -> Response:
        if time.monotonic() > self.deadline:
            raise OutOfTime
        start = time.time()
        self.requests += 1
        try:
            response = self.client.request(method, path, **kwargs)
        finally:
            exchange = self.client.log[-1] if self.client.log else None
            if exchange is not None:
                self.calls.append(Call(exchange, Window(start, time.time())))
        return response

    def sse(self, path: str, body: Any) -> Streamed:
        """POST and read a server-sent-event answer to its end (bounded by the client's stream
        budget); how it ended is part of the answer, never raised."""
        return self._stream(path, body, sse_events)

    def ndjson(self, path: str, body: Any, *, read_stream: bool = True, **kwargs: Any) -> Streamed:
        """POST and read a stream of JSON objects, one or more per line, as ``sse`` does.
        ``read_stream=False`` reads only an error answer: a 200 is closed unread (a call that
        wants the error a server should have sent need not wait out a stream it opened instead)."""
        return self._stream(path, body, ndjson_frames if read_stream else None, **kwargs)

    def _stream(
        self, path: str, body: Any, reader: Callable[[Iterable[bytes], int], Iterator[Frame]] | None, **kwargs: Any
    ) -> Streamed:
        if time.monotonic() > self.deadline:
            raise OutOfTime
        start = time.time()
        self.requests += 1
        out = Streamed(0, {}, "")
        try:
            with self.client.stream("POST", path, **({"json": body} if body is not None else {}), **kwargs) as stream:
                out.status, out.headers, out.content_type = stream.status, dict(stream.headers), stream.content_type
                if stream.status != 200:
                    out.body = stream.read()
                elif reader is not None:  # else a 200 is closed unread
                    for frame in reader(stream.chunks(), self.client.limits.max_frames):
                        out.events.append(frame.raw)
                        if isinstance(frame.value, dict):
                            out.chunks.append(frame.value)
        except (TargetError, FrameError) as exc:
            out.error = str(exc)
        finally:
            if self.client.log:
                self.calls.append(Call(self.client.log[-1], Window(start, time.time())))
        return out

    def window(self) -> Window:
        """The wall-clock bounds of the latest call."""
        return self.calls[-1].window

    def check(self, rid: str, ok: object, message: str | Callable[[], str]) -> None:
        if rid not in self.requirements:
            return  # not selected in this run
        self.compared[rid] += 1
        if ok:
            return
        if rid not in self.active:
            return  # already reported; muted so the run can look for the others
        text = message() if callable(message) else message
        self.found[rid] = Found(text, list(self.calls))  # the final (shrunk) replay overwrites
        raise Violation(rid, text)

    def cannot_compare(self, rid: str, why: str) -> None:
        """A comparison another requirement's failure prevents: noted, never counted as passed."""
        self.unverifiable.setdefault(rid, why)


class ModelMachine(RuleBasedStateMachine):
    """Base of every protocol's model: a fresh call log per example, the run's session shared."""

    session: ClassVar[Session]

    def __init__(self) -> None:
        super().__init__()
        self.session.begin_example()


@dataclass(frozen=True, slots=True)
class Model:
    """What a protocol's model module hands the engine."""

    machine: type[ModelMachine]
    prepare: Callable[[Session], Any]
    """Reads what the target holds before the run and returns the initial ledger."""
    steps: int = 8
    """Calls per sequence (Hypothesis' stateful_step_count)."""


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
