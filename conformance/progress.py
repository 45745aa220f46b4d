"""The plain progress lines the CLI prints to stderr while a run works: one event handler."""

from __future__ import annotations

from collections.abc import Callable

from .events import Event, Fatal, PhaseStarted, RequirementFinished, RunStarted, StageStarted
from .results import Status


class ProgressLines:
    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.protocol = ""

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.protocol = event.protocol
        elif isinstance(event, Fatal):
            self.write(f"error: {event.reason}")
        elif isinstance(event, PhaseStarted) and event.phase == "schema":
            self.write(f"{self.protocol}: property-based phase ({len(event.requirements)} requirements)")
        elif isinstance(event, PhaseStarted) and event.phase == "model":
            self.write(f"{self.protocol}: model-based phase ({len(event.requirements)} requirements)")
        elif isinstance(event, StageStarted):
            self.write(f"  schema phase: {event.stage}")
        elif isinstance(event, RequirementFinished) and event.result.requirement.phase in ("model", "scenario"):
            res = event.result
            self.write(
                f"[{event.index}/{event.total}] {res.requirement.id} {res.verdict}"
                + (f": {res.message}" if res.status is not Status.PASSED else "")
                + (f" (baseline: {res.baseline_reason})" if res.baseline else "")
            )
