"""Faults together: the suite's verdicts must compose as a real server's faults do.

The self-check proves each fault of the mock's catalogue alone; a real server breaks several things
at once. Here the mock serves two to four faults of one protocol together, and the verdicts must
be what each fault's are alone: every requirement a fault breaks is still reported failed (advice
for one it advises on), no other requirement fails, and a requirement is reported blocked only
where one of the faults removes the observation it needs, which is what the fault's own run shows
(the requirements it leaves blocked alone, recorded by the self-check on seed 0). A fault's
requirement may be blocked instead of failed when another fault of the combination removes its
observation.

Which faults combine is a declared rule, not a list (``combinable``), read from what each fault
declares: the operations it changes, what it breaks, whether it is a control that only rewrites the
wire. Faults that could undo or hide each other in the mock are not combined: the composition
would then test the mock, not the suite.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from conformance.engine.parallel import hash_seed_pinned
from conformance.engine.runner import run
from conformance.run.targets import DeclaredFault as Fault
from conformance.run.targets import embedded
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RunResult, Status
from specs.documents import load

SIZES = (2, 3, 4)
"""How many faults a combination holds."""


@dataclass(frozen=True, slots=True)
class Combined:
    """Several faults as one declared fault (what ``selfcheck.fault_options`` plans a run from):
    the union of what they break and advise on."""

    parts: tuple[Fault, ...]
    name: str = field(init=False)
    protocol: str = field(init=False)
    breaks: tuple[str, ...] = field(init=False)
    advises: tuple[str, ...] = field(init=False)
    description: str = field(init=False)
    hangs: bool = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # a frozen dataclass's derived fields
        set_(self, "name", "+".join(f.name for f in self.parts))
        set_(self, "protocol", self.parts[0].protocol)
        set_(self, "breaks", tuple(dict.fromkeys(r for f in self.parts for r in f.breaks)))
        set_(self, "advises", tuple(dict.fromkeys(r for f in self.parts for r in f.advises)))
        set_(self, "description", "; ".join(f.description for f in self.parts))
        set_(self, "hangs", any(f.hangs for f in self.parts))


def operations(fault: Fault) -> frozenset[str]:
    """The operations whose answers ``fault`` changes, as it declares them (the mock's ``Fault.operations``:
    its ``operation`` and ``touches``); a factory's fault that declares none has none."""
    declared = getattr(fault, "operations", None)
    if declared is not None:
        return frozenset(declared)
    operation = getattr(fault, "operation", None)
    return frozenset((operation,) if operation else ())


def combinable(a: Fault, b: Fault) -> bool:
    """The declared rule: one protocol; neither hangs (a stalled exchange costs the run its timeout:
    the catalogue's own check covers those); no operation in common (two edits of one answer, or
    two behaviours of one handler, can undo or hide each other); no requirement broken by both (two
    breaks of one fact: the first one found hides the other); and a control only when it changes how
    answers are written, not which are given (a fair refusal, another fair choice, removes what a
    fault changes: the control is another server, not one more fault)."""

    def behavioural_control(fault: Fault) -> bool:
        return bool(getattr(fault, "control", False)) and not getattr(fault, "representation_only", False)

    return (
        a.name != b.name
        and a.protocol == b.protocol
        and not (a.hangs or b.hangs)
        and not (operations(a) & operations(b))
        and not set(a.breaks) & set(b.breaks)
        and not (behavioural_control(a) or behavioural_control(b))
    )


def draw(faults: Iterable[Fault], count: int, seed: int, sizes: Sequence[int] = SIZES) -> list[tuple[Fault, ...]]:
    """``count`` distinct combinations of pairwise combinable faults (each of a size from ``sizes``,
    at least one fault that breaks something: controls alone are the catalogue's check), drawn from
    ``seed`` alone, so a seed names the same combinations on every machine."""
    pool = sorted(faults, key=lambda f: f.name)
    rnd = random.Random(f"composition/{seed}")
    found: dict[frozenset[str], tuple[Fault, ...]] = {}
    for _ in range(count * 50):  # bounded: a small catalogue has few combinations
        if len(found) == count:
            break
        size = rnd.choice(list(sizes))
        picked: list[Fault] = []
        for fault in rnd.sample(pool, len(pool)):
            if all(combinable(fault, other) for other in picked):
                picked.append(fault)
                if len(picked) == size:
                    break
        key = frozenset(f.name for f in picked)
        if len(picked) == size and any(f.breaks for f in picked) and key not in found:
            found[key] = tuple(sorted(picked, key=lambda f: f.name))
    return list(found.values())


@dataclass(frozen=True, slots=True)
class Composed:
    """One combination's run, judged."""

    faults: tuple[str, ...]
    protocol: str
    problems: tuple[str, ...]
    """What did not compose: a requirement a fault breaks not reported failed, another reported
    failed, a requirement blocked that no fault of the combination removes the observation of."""
    blocked: tuple[str, ...]
    exit_code: int
    seconds: float

    @property
    def composed(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "faults": list(self.faults),
            "protocol": self.protocol,
            "composed": self.composed,
            "problems": list(self.problems),
            "blocked": list(self.blocked),
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
        }


def judge(parts: Sequence[Fault], result: RunResult, alone: Mapping[str, Collection[str]], seconds: float) -> Composed:
    """The combination's verdicts against each fault's alone. ``alone``: by fault name, the
    requirements its run alone leaves blocked (the self-check's record on seed 0)."""
    statuses = {r.requirement.id: r for r in result.results}
    removed = {f.name: set(alone.get(f.name, ())) for f in parts}
    every = set().union(*removed.values())
    problems: list[str] = []
    for fault in parts:
        others = [g for g in parts if g is not fault]
        blocks = set().union(*(removed[g.name] for g in others))
        broken = {rid for g in others for rid in g.breaks}
        removes = any(removed[g.name] for g in others)
        wanted = [*((rid, Status.FAILED) for rid in fault.breaks), *((rid, Status.ADVICE) for rid in fault.advises)]
        for rid, want in wanted:
            got = statuses.get(rid)
            if got is not None and got.status is want:
                continue
            # another fault removed what it judges: it blocks this requirement alone, or this one is
            # blocked by what another breaks, or left undecided beside a fault that removes observations
            if got is not None and (
                (got.status is Status.BLOCKED and (rid in blocks or got.blocked_by in broken))
                or (got.status is Status.NOT_VERIFIED and (rid in blocks or removes))
            ):
                continue
            state = got.status.value if got is not None else "not run"
            problems.append(
                f"{fault.name}: {rid} {state}, {want.value} alone" + (f" ({got.message[:160]})" if got else "")
            )
    declared = {rid for f in parts for rid in f.breaks}
    advised = {rid for f in parts for rid in f.advises}
    for r in result.results:
        rid = r.requirement.id
        if r.status is Status.FAILED and rid not in declared:
            problems.append(f"{rid} failed, which no fault of the combination breaks ({r.message[:160]})")
        elif r.status is Status.ADVICE and rid not in advised:
            problems.append(f"{rid} advice, which no fault of the combination advises on ({r.message[:160]})")
        elif r.status is Status.BLOCKED and rid not in every:
            problems.append(f"{rid} blocked, though no fault of the combination blocks it alone ({r.message[:160]})")
    failed_must = any(r.status is Status.FAILED and r.requirement.level is Level.MUST for r in result.results)
    if failed_must and result.exit_code != 1:
        problems.append(f"exit code {result.exit_code}, expected 1 (a MUST failed)")
    blocked = tuple(sorted(r.requirement.id for r in result.results if r.status is Status.BLOCKED))
    return Composed(
        tuple(f.name for f in parts), parts[0].protocol, tuple(problems), blocked, result.exit_code, seconds
    )


def run_combination(parts: Sequence[Fault], *, seed: int = 0, exact: bool = False) -> RunResult:
    """The mock with every fault of ``parts`` at once; with ``exact=False`` (the default) only the
    requirements the faults declare, and their phases, run: what proves that each is still
    reported, and that nothing among them fails or is blocked beyond what the faults do alone."""
    fault = Combined(tuple(parts))
    base_path = load(fault.protocol).info.base_path
    with embedded().serve(fault.protocol, faults=tuple(f.name for f in parts)) as server:
        return run(fault_options(fault, server.url + base_path, seed=seed, exact=exact))


def check_combination(parts: Sequence[Fault], alone: Mapping[str, Collection[str]], exact: bool = False) -> Composed:
    started = time.monotonic()
    result = run_combination(parts, exact=exact)
    return judge(parts, result, alone, time.monotonic() - started)


def check_named(names: Sequence[str], alone: Mapping[str, Collection[str]], exact: bool = False) -> Composed:
    """``check_combination`` by the faults' names (what a worker process is handed)."""
    by_name = {f.name: f for f in embedded().faults()}
    return check_combination([by_name[n] for n in names], alone, exact)


@contextmanager
def combination_pool(
    combinations: Iterable[Sequence[str]], alone: Mapping[str, Collection[str]], workers: int
) -> Iterator[list[Future[Composed]]]:
    """Each combination checked in one of ``workers`` fresh processes (PYTHONHASHSEED pinned as the
    self-check's are), in the order given."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    with hash_seed_pinned():
        futures = [pool.submit(check_named, tuple(names), dict(alone)) for names in combinations]
    try:
        yield futures
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
