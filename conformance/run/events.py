"""Typed events a run emits while it works, and the handler protocol outputs implement.

The runner tells handlers what happens as it happens (the console, the JSON-lines stream, a
dashboard, interrupt handling); the reports are written from the final ``RunResult``, which
``RunFinished`` carries. Events are immutable and cheap: they carry the objects the run already
made, never copies.

Order of one run::

    RunStarted
      PhaseStarted(preflight) PhaseFinished(preflight)     # Fatal in between if the target is unusable
      PhaseStarted(schema)
        RequirementStarted x N                             # decided together, by the generated cases
        StageStarted(examples|coverage|fuzzing|stateful)  CaseFinished ...
        RequirementFinished x N
      PhaseFinished(schema)
      PhaseStarted(model)
        RequirementStarted x K                             # decided together, by the model's sequences
        RequirementFinished x K
      PhaseFinished(model)
      PhaseStarted(scenario)
        (RequirementStarted RequirementFinished) x M
      PhaseFinished(scenario)
    RunFinished
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..verdicts.requirements import Requirement
from ..verdicts.results import RequirementResult, RunResult


@dataclass(frozen=True, slots=True)
class RunStarted:
    protocol: str
    target: str
    seed: int
    level: str
    requirements: tuple[str, ...]
    """Ids of the selected requirements, in report order."""


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    phase: str
    """``preflight``, ``schema``, ``model`` or ``scenario``."""
    requirements: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StageStarted:
    """A stage of the property-based phase (schemathesis's own phases)."""

    phase: str
    stage: str


@dataclass(frozen=True, slots=True)
class RequirementStarted:
    requirement: Requirement
    index: int
    """1-based position within its phase."""
    total: int


@dataclass(frozen=True, slots=True)
class CaseFinished:
    """One generated case of the property-based phase and what the requirements' checks said."""

    stage: str
    operation: str
    """The operation's label, e.g. ``POST /ap/v1/agent/tasks``."""
    outcome: str
    """``passed``, ``failed`` (a check failed) or ``error`` (a check could not decide)."""
    checked: tuple[str, ...]
    """Requirement ids whose checks ran on this case."""
    failed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RequirementFinished:
    result: RequirementResult
    index: int
    total: int


@dataclass(frozen=True, slots=True)
class Fatal:
    """The target cannot be tested at all (the run ends with exit code 2)."""

    reason: str


@dataclass(frozen=True, slots=True)
class PhaseFinished:
    phase: str
    duration_s: float


@dataclass(frozen=True, slots=True)
class RunFinished:
    result: RunResult


Event = (
    RunStarted
    | PhaseStarted
    | StageStarted
    | RequirementStarted
    | CaseFinished
    | RequirementFinished
    | Fatal
    | PhaseFinished
    | RunFinished
)


class EventHandler(Protocol):
    def handle(self, event: Event) -> None: ...


class Emitter:
    """Hands every event to every handler, in order. A handler's exception propagates: an output
    that breaks must be seen, and an interrupt must stop the run."""

    def __init__(self, handlers: Iterable[EventHandler] = ()) -> None:
        self.handlers = list(handlers)

    def __call__(self, event: Event) -> None:
        for handler in self.handlers:
            handler.handle(event)


class Recorder:
    """Keeps every event; for tests and for outputs that need the whole run."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)
