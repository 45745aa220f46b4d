"""The one results model every report writer is fed from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from .requirements import Level, Requirement


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    """Not verified against this target; the message says why. Never counts as passed."""
    ERROR = "error"
    """The check could not reach a verdict (target unusable, suite bug); counts as not passed."""


@dataclass(slots=True)
class Exchange:
    """One request and its response (or the transport error), as evidence."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str | None
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str | None = None
    error: str | None = None
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class RequirementResult:
    requirement: Requirement
    status: Status
    message: str = ""
    evidence: list[Exchange] = field(default_factory=list)
    duration_s: float = 0.0
    cases: int = 0
    """Generated cases behind a schema-phase verdict."""

    def to_dict(self) -> dict[str, Any]:
        r = self.requirement
        return {
            "id": r.id,
            "level": r.level.value,
            "statement": r.statement,
            "ref": r.ref,
            "phase": r.phase,
            "status": self.status.value,
            "message": self.message,
            "duration_s": round(self.duration_s, 3),
            "cases": self.cases,
            "evidence": [e.to_dict() for e in self.evidence],
        }


@dataclass(slots=True)
class RunResult:
    protocol: str
    target: str
    suite_version: str
    seed: int
    level: Level
    started_at: str
    finished_at: str = ""
    duration_s: float = 0.0
    results: list[RequirementResult] = field(default_factory=list)
    fatal: str | None = None
    """Set when the target was unreachable or unusable: the run is a usage/target error (exit 2)."""
    stats: dict[str, Any] = field(default_factory=dict)

    def tally(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for level in Level:
            counts = {s.value: 0 for s in Status}
            for res in self.results:
                if res.requirement.level is level:
                    counts[res.status.value] += 1
            out[level.value] = counts
        return out

    @property
    def must_passed(self) -> bool:
        """Every MUST passed. A selection with no MUST (``--only`` a SHOULD) gates on what it ran;
        an empty one never passes."""
        musts = [r for r in self.results if r.requirement.level is Level.MUST]
        gating = musts or self.results
        return self.fatal is None and bool(gating) and all(r.status is Status.PASSED for r in gating)

    @property
    def exit_code(self) -> int:
        if self.fatal is not None:
            return 2
        return 0 if self.must_passed else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "target": self.target,
            "suite_version": self.suite_version,
            "seed": self.seed,
            "level": self.level.value,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": round(self.duration_s, 3),
            "fatal": self.fatal,
            "exit_code": self.exit_code,
            "summary": self.tally(),
            "stats": self.stats,
            "requirements": [r.to_dict() for r in self.results],
        }
