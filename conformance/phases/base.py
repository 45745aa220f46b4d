"""What every phase of a run shares: the calling convention and the run's state."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..check.guard import StallGuard
from ..run.budget import Budget
from ..run.events import Event
from ..run.ledger import Ledger
from ..run.plan import RunPlan
from ..run.watchdog import Watchdog
from ..verdicts.requirements import Requirement
from ..verdicts.results import RequirementResult, RunResult


class TargetUnusable(Exception):
    """A gate phase found nothing to test: the run ends, its requirements not run (exit code 2)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class RunState:
    """What the phases of one run share besides the plan."""

    result: RunResult
    """The run's results model; phases add their stats (``result.stats``)."""
    ledger: Ledger
    watchdog: Watchdog
    emit: Callable[[Event], None]
    budget: Budget
    """The run's time budget (the runner's): each phase that bounds itself takes its share here."""
    guard: StallGuard = field(default_factory=StallGuard)
    """The run's stall guard (check/guard.py): every phase's clients tell it how each exchange
    ended and ask it before sending; the runner stops the run when it finds the target lost."""
    memo: dict[str, object] = field(default_factory=dict)
    """The checks' shared setup (kept across runs against one target by the pytest plugin)."""
    database: Any = None
    """The Hypothesis example database (``--example-db``, run/exampledb.py), or None: keep nothing."""
    tallies: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What each phase that decides requirements together counted (its ``to_dict``), for a shard's
    report: ``conformance merge`` decides the campaign's verdicts from all of them."""


class Phase(Protocol):
    """One step of a run. The runner emits ``PhaseStarted``/``PhaseFinished`` around it, and for
    each result it yields applies the baseline, records it in the ledger and emits
    ``RequirementFinished``; the phase emits ``RequirementStarted`` (and its own progress events)
    as it takes its requirements up. It stops the run by letting ``RunStopped`` through, or, if it
    is a gate, by raising ``TargetUnusable``."""

    @property
    def name(self) -> str: ...

    @property
    def gate(self) -> bool:
        """Runs whatever is selected, and may end the run (the preflight); a phase that is not a
        gate is skipped when it decides none of the selected requirements."""
        ...

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        """The selected requirements it decides, in report order."""
        ...

    def run(self, plan: RunPlan, state: RunState) -> Iterable[RequirementResult]: ...
