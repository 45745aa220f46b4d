"""Every wait for a server's progress, under one bound: a job's result, an agent's research, a
stream's end (``Limits.stream_seconds``, which the client enforces on streams).

The bound is derived from the run's options alone (``progress_bound``): three request timeouts,
at least ``PROGRESS_FLOOR_S`` (a real agent's answer takes seconds), never more than
``1 / PROGRESS_BUDGET_SHARE`` of ``--budget``, so no wait can hold the run near its budget. A wait
that runs out its bound is a failure of the requirement that waits (the caller says which); the
run's stall guard remembers it (``StallGuard.waited_out``), so the next wait on the same progress
lasts a second, not the bound again: a job that never finishes costs the run one bound, not one
per check and model sequence that starts a job.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from .guard import StallGuard

PROGRESS_TIMEOUTS = 3
"""Request timeouts a wait for progress may take."""
PROGRESS_FLOOR_S = 10.0
"""The least a wait for progress may take, however short ``--timeout`` is."""
PROGRESS_BUDGET_SHARE = 8
"""A wait for progress takes at most this share of ``--budget`` (an eighth)."""
FIRST_POLL_S = 0.05
"""The first pause between polls: short, so a short-lived running state is still seen."""
MOST_POLL_S = 1.0
"""The longest pause between polls (synapseclient polls every second)."""

T = TypeVar("T")


def progress_bound(timeout: float, budget_s: float) -> float:
    """The longest any wait for a server's progress lasts, from ``--timeout`` and ``--budget``."""
    return min(max(PROGRESS_TIMEOUTS * timeout, PROGRESS_FLOOR_S), max(budget_s / PROGRESS_BUDGET_SHARE, timeout))


@dataclass(frozen=True, slots=True)
class Waited(Generic[T]):
    last: T
    """The last poll's answer."""
    done: bool
    """Whether the progress came (``done(last)``) within the wait."""
    polls: int
    seconds: float
    """How long this wait was allowed (the bound, or less after an earlier wait ran out)."""
    bound: float
    what: str

    @property
    def shortened(self) -> str:
        """Why the wait was shorter than the bound, as a clause of a failure's message ("" if it was not)."""
        if self.seconds >= self.bound:
            return ""
        return f"; an earlier wait for {self.what} ran out the run's {self.bound:g} s bound, so this one was short"


def wait_for(
    poll: Callable[[], T],
    done: Callable[[T], bool],
    *,
    what: str,
    bound: float,
    guard: StallGuard | None,
    first: float = FIRST_POLL_S,
    most: float = MOST_POLL_S,
) -> Waited[T]:
    """Poll until ``done`` says the progress came or the wait's bound runs out (``bound``, or a
    second once a wait on ``what`` ran out in this run). The pause between polls grows from
    ``first`` to ``most``; the last poll is never later than the bound."""
    seconds = guard.patience(what, bound) if guard is not None else bound
    deadline = time.monotonic() + seconds
    delay, polls = first, 0
    while True:
        last = poll()
        polls += 1
        if done(last):
            return Waited(last, True, polls, seconds, bound, what)
        if time.monotonic() + delay > deadline:
            if guard is not None:
                guard.waited_out(what)
            return Waited(last, False, polls, seconds, bound, what)
        time.sleep(delay)
        delay = min(delay * 1.5, most)
