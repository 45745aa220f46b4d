"""The suite proves itself: run it against the mock with each named fault and check it notices.

A fault is caught when the requirements reported failed are exactly those it declares it breaks
(the ones whose own subject it breaks; those that could not proceed because of it are reported
blocked, not failed), and the run's exit code is 1 whenever one of those is a MUST. Every
requirement of the protocol runs, so a failure the fault does not declare is seen too.
A passing control (a fault-like variant the document allows, declaring no requirement) is caught
when nothing fails and the run exits 0. A fault that does otherwise than real servers where the
document is silent declares the practice requirements it ``advises`` on: they must be reported
advice, never failed (and advice on any other is a miss too).
``python -m conformance selfcheck`` runs the whole catalogue (or one protocol's) and writes
``catalogue.md`` and ``catalogue.json``.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.engine.parallel import hash_seed_pinned, usable_cores
from conformance.engine.runner import EMBEDDED_TOKENS, run
from conformance.run.options import PHASE_NAMES, RunOptions
from conformance.run.targets import DeclaredFault as Fault
from conformance.run.targets import embedded
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RunResult, Status
from specs.documents import load

MAX_EXAMPLES = 5
"""Generated cases per operation of the self-check's runs: a fault's, a control's, the clean mock's."""


def fault_options(
    fault: Fault, base_url: str, *, seed: int = 0, timeout: float = 8.0, exact: bool = True
) -> RunOptions:
    """Every requirement of the fault's protocol, so a failure it does not declare shows; with
    ``exact=False`` only the declared ones and their phases (seconds instead of a whole run)."""
    from conformance.run.suites import suite

    exact = exact or not fault.breaks  # a control must pass everything
    declared = (*fault.breaks, *fault.advises)
    wanted = {c.requirement.phase for c in suite(fault.protocol).registry if exact or c.requirement.id in declared}
    phases = tuple(phase for phase in PHASE_NAMES if phase in wanted)
    return RunOptions(
        protocol=fault.protocol,
        base_url=base_url,
        token=EMBEDDED_TOKENS[0],
        second_token=EMBEDDED_TOKENS[1],
        seed=seed,
        max_examples=MAX_EXAMPLES,
        timeout=timeout,
        only=() if exact else declared,
        phases=phases,
        # a whole run against a hanging fault waits out every stalled exchange
        budget_s=900.0 if exact else 240.0,
    )


def run_fault(fault: Fault, *, seed: int = 0, timeout: float = 8.0, exact: bool = True) -> RunResult:
    base_path = load(fault.protocol).info.base_path
    with embedded().serve(fault.protocol, faults=(fault.name,)) as server:
        return run(fault_options(fault, server.url + base_path, seed=seed, timeout=timeout, exact=exact))


@dataclass(frozen=True, slots=True)
class Outcome:
    fault: str
    protocol: str
    breaks: tuple[str, ...]
    missed: tuple[str, ...]
    """Requirements the fault breaks that the run did not report failed, with their status."""
    exit_code: int
    seconds: float
    unexpected: tuple[str, ...] = ()
    """Requirements reported failed (or advice) that the fault does not declare, with the message."""
    blocked: tuple[str, ...] = ()
    """Requirements reported blocked (by one the fault broke), sorted: what else its verdicts were."""
    advises: tuple[str, ...] = ()
    """Practice requirements the fault must be reported advice on."""

    @property
    def caught(self) -> bool:
        """Exactly the declared requirements failed."""
        return not self.missed and not self.unexpected

    def to_dict(self) -> dict[str, Any]:
        return {
            "fault": self.fault,
            "protocol": self.protocol,
            "breaks": list(self.breaks),
            "advises": list(self.advises),
            "caught": self.caught,
            "missed": list(self.missed),
            "unexpected": list(self.unexpected),
            "blocked": list(self.blocked),
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
        }


def judge(fault: Fault, result: RunResult, seconds: float) -> Outcome:
    statuses = {r.requirement.id: r for r in result.results}
    missed = [
        f"{rid} ({statuses[rid].status.value if rid in statuses else 'not run'})"
        for rid, want in [*((b, Status.FAILED) for b in fault.breaks), *((a, Status.ADVICE) for a in fault.advises)]
        if rid not in statuses or statuses[rid].status is not want
    ]
    must = any(rid in statuses and statuses[rid].requirement.level is Level.MUST for rid in fault.breaks)
    if must and result.exit_code != 1:
        missed.append(f"exit code {result.exit_code}, expected 1")
    if not fault.breaks and result.exit_code != 0:
        missed.append(f"exit code {result.exit_code}, expected 0 (a passing control)")
    unexpected = tuple(
        f"{r.requirement.id} ({r.status.value}: {r.message[:160]})"
        for r in result.results
        if (r.status is Status.FAILED and r.requirement.id not in fault.breaks)
        or (r.status is Status.ADVICE and r.requirement.id not in fault.advises)
    )
    blocked = tuple(sorted(r.requirement.id for r in result.results if r.status is Status.BLOCKED))
    return Outcome(
        fault.name,
        fault.protocol,
        fault.breaks,
        tuple(missed),
        result.exit_code,
        seconds,
        unexpected,
        blocked,
        fault.advises,
    )


def check_fault(fault: Fault, exact: bool = True) -> Outcome:
    """Hanging faults get a short client timeout so their runs stay short; the rest a roomy one,
    so a loaded machine cannot turn a slow answer into a false catch."""
    started = time.monotonic()
    result = run_fault(fault, timeout=2.0 if fault.hangs else 8.0, exact=exact)
    return judge(fault, result, time.monotonic() - started)


def check_named(name: str) -> Outcome:
    """``check_fault`` by the fault's name (what a worker process is handed)."""
    return check_fault(next(f for f in embedded().faults() if f.name == name))


def default_workers() -> int:
    """One worker per core, at most four: a fault's run is one process's worth of work (its mock
    and its client share one interpreter lock), so the catalogue scales with processes."""
    return max(1, min(4, usable_cores()))


@contextmanager
def fault_pool(names: Iterable[str], workers: int) -> Iterator[dict[str, Future[Outcome]]]:
    """Each named fault checked in one of ``workers`` fresh processes, in the order given; the
    futures by name. The workers get PYTHONHASHSEED 0 unless it is set, as ``conformance``
    itself runs (cli.entry), so the catalogue gives the verdicts the command gives."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    # processes are spawned while submitting (one per submit until ``workers``): env set till then
    with hash_seed_pinned():
        futures = {name: pool.submit(check_named, name) for name in names}
    try:
        yield futures
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_catalogue(
    faults: Iterable[Fault], progress: Callable[[str], None] = lambda _: None, workers: int = 1
) -> list[Outcome]:
    outcomes = []
    faults = list(faults)

    def report(fault: Fault, outcome: Outcome) -> None:
        problems = [*(f"missed {m}" for m in outcome.missed), *(f"also failed {u}" for u in outcome.unexpected)]
        progress(f"{fault.name}: {'caught' if outcome.caught else '; '.join(problems)}")
        outcomes.append(outcome)

    if workers <= 1:
        for fault in faults:
            report(fault, check_fault(fault))
        return outcomes
    with fault_pool([f.name for f in faults], workers) as futures:
        for fault in faults:
            report(fault, futures[fault.name].result())
    return outcomes


def render_catalogue(outcomes: list[Outcome]) -> str:
    lines = ["| protocol | faults | caught |", "|---|---|---|"]
    for protocol in sorted({o.protocol for o in outcomes}):
        mine = [o for o in outcomes if o.protocol == protocol]
        lines.append(f"| {protocol} | {len(mine)} | {sum(o.caught for o in mine)} |")
    total = sum(o.caught for o in outcomes)
    lines.append(f"| **all** | {len(outcomes)} | {total} |")
    lines += ["", "| fault | breaks | result |", "|---|---|---|"]
    for o in outcomes:
        verdict = (
            "caught"
            if o.caught
            else "; ".join(
                [
                    *(["**missed**: " + ", ".join(o.missed)] if o.missed else []),
                    *(["**also failed**: " + ", ".join(o.unexpected)] if o.unexpected else []),
                ]
            )
        )
        breaks = ", ".join(o.breaks) or "nothing (a passing control)"
        if o.advises:
            breaks += f"; advice on {', '.join(o.advises)}"
        lines.append(f"| `{o.fault}` | {breaks} | {verdict} |")
    return "\n".join(lines) + "\n"


def write_catalogue(outcomes: list[Outcome], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "catalogue.md").write_text("# Broken-server catalogue\n\n" + render_catalogue(outcomes), "utf-8")
    payload = {
        "faults": len(outcomes),
        "caught": sum(o.caught for o in outcomes),
        "outcomes": [o.to_dict() for o in outcomes],
    }
    (directory / "catalogue.json").write_text(json.dumps(payload, indent=2) + "\n", "utf-8")
