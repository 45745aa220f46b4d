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


class FailureEvidence:
    """``-v``: each failed requirement's distinct failures as they are decided, with the exchange
    that decided each and the curl line that replays it."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write

    def handle(self, event: Event) -> None:
        if not isinstance(event, RequirementFinished) or event.result.status is not Status.FAILED:
            return
        res = event.result
        self.write(f"{res.requirement.id} failed: {len(res.findings)} distinct failure(s)")
        for finding in res.findings:
            self.write(f"  [{finding.count}x] {finding.key}")
            self.write(f"    {finding.message[:500]}")
            deciding = finding.deciding
            if deciding is not None:
                answer = f"HTTP {deciding.status}" if deciding.status is not None else f"no answer: {deciding.error}"
                self.write(f"    {deciding.method} {deciding.url} -> {answer}")
                if deciding.response_body:
                    self.write(f"    {deciding.response_body[:300]}")
                self.write(f"    {deciding.curl[:2000]}")
