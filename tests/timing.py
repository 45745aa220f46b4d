"""Time bounds in the tests, scaled by a measured calibration of the machine's load.

A test that proves something ends in bounded time (a run against a stalled target, a stop, a
proxy's added delay) states its bound as it holds on the 2-core machine, quiet. Other test
workers, the processes making fault runs ahead, another session: on a busier machine the same
work takes longer, and a fixed bound turns load into failures (three serial sessions side by side,
load 25: a default run against stalled streams took longer than its 90 s). So a bound is checked
against its stated seconds times the machine's **slowdown**: how much longer than its own CPU time
a fixed piece of CPU-bound Python (the kind of work a run does) takes in wall time, measured in
this thread when the clock starts and, when the bound is passed, again when it is checked (the
larger counts: load that came during the work). On a quiet machine it is 1 (never less), so a
bound is exactly what the test states; what a bound catches (a run that waits a timeout per
sequence instead of two) takes longer by the same factor under the same load, so it is caught
at any load.

A product's own timer (a 6 s budget, a 10 s timeout) is wall time whatever the load: a bound
that holds such a wait as well as work says so (``plus=``), and only the work is scaled. A wait for
a condition has a ``Deadline``, measured only if it runs out; a subprocess's kill timeout is
``scaled`` when it is set.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

SAMPLE_CPU_S = 0.03
"""CPU seconds of the reference work a measurement runs (wall time ~0.03 s on a quiet machine)."""
MAX_SLOWDOWN = 20.0
"""A cap: past it a bound means little, and a test's own timeout (pytest-timeout) ends it anyway."""


def _work(rounds: int) -> int:
    total = 0
    for i in range(rounds):
        total = (total + i * i) % 1_000_003
    return total


def slowdown() -> float:
    """Now, wall seconds per CPU second of this thread for a fixed CPU-bound loop, at least 1
    (time.thread_time: what this thread ran, not what the process's other threads did)."""
    wall, cpu = time.monotonic(), time.thread_time()
    spent = 0.0
    while spent < SAMPLE_CPU_S:
        _work(20_000)
        spent = time.thread_time() - cpu
    return min(MAX_SLOWDOWN, max(1.0, (time.monotonic() - wall) / spent))


def scaled(seconds: float, *, plus: float = 0.0) -> float:
    """A deadline's length: ``seconds`` of work at the machine's slowdown now, plus ``plus`` of a
    product timer's wall time."""
    return plus + seconds * slowdown()


@dataclass
class Clock:
    """Started when made (``Clock()``), after measuring the slowdown; ``stop`` keeps the elapsed time."""

    at_start: float = field(init=False)
    started: float = field(init=False)
    stopped: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.at_start = slowdown()
        self.started = time.monotonic()

    def stop(self) -> Clock:
        self.stopped = time.monotonic()
        return self

    @property
    def elapsed(self) -> float:
        return (self.stopped if self.stopped is not None else time.monotonic()) - self.started

    def within(self, seconds: float, *, plus: float = 0.0, cap: float | None = None) -> bool:
        """Whether the elapsed time is under ``plus`` + ``seconds`` times the slowdown (the one at
        the start, or the one measured now when that is not enough), and under ``cap``: what the
        bound tells apart (a run that was not stopped, a wait of the whole timeout) takes that long
        at any load, so no slowdown stretches the bound past it."""
        return self._judged(seconds, plus, cap)[0]

    def assert_within(self, seconds: float, what: str = "it", *, plus: float = 0.0, cap: float | None = None) -> None:
        held, elapsed, now = self._judged(seconds, plus, cap)
        if held:
            return
        measured = f"{self.at_start:.1f} at the start" + (f", {now:.1f} at the check" if now is not None else "")
        capped = f", at most {cap:g} s" if cap is not None else ""
        raise AssertionError(
            f"{what} took {elapsed:.1f} s: over its bound of {plus:g} + {seconds:g} s at the machine's"
            f" slowdown ({measured}){capped}"
        )

    def _judged(self, seconds: float, plus: float, cap: float | None) -> tuple[bool, float, float | None]:
        """Whether the bound held, the elapsed time judged (taken before any measurement), and the
        slowdown measured at the check (None: not needed)."""
        elapsed = self.elapsed
        if cap is not None and elapsed >= cap:
            return False, elapsed, None
        if elapsed < plus + seconds * self.at_start:
            return True, elapsed, None
        now = slowdown()
        return elapsed < plus + seconds * max(self.at_start, now), elapsed, now


class Deadline:
    """The failsafe of a wait for a condition: ``seconds`` on a quiet machine. Nothing is measured
    while they last (the condition mostly comes well within them); when they run out, the slowdown
    is measured once and the wait goes on to ``seconds`` times it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.length = seconds
        self._measured = False

    @property
    def waited(self) -> float:
        return time.monotonic() - self.started

    def passed(self) -> bool:
        if self.waited < self.length:
            return False
        if not self._measured:
            self._measured = True
            self.length = self.seconds * slowdown()
        return self.waited >= self.length
