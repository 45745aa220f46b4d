"""Requirements are data: a stable id, an RFC 2119 level, one statement and where the spec says it.

Every check the suite makes is registered against exactly one requirement, so results roll up
into a compliance report by id and by level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .context import Context


class Level(StrEnum):
    MUST = "must"
    SHOULD = "should"
    MAY = "may"

    @property
    def rank(self) -> int:
        return {"must": 0, "should": 1, "may": 2}[self.value]

    def includes(self, other: Level) -> bool:
        """``--level should`` runs MUST and SHOULD requirements."""
        return other.rank <= self.rank


@dataclass(frozen=True, slots=True)
class Requirement:
    id: str
    level: Level
    statement: str
    ref: str
    """Where the document or seed says it, e.g. ``openapi.json#/paths/~1ap~1v1~1agent~1tasks/post``."""
    protocol: str
    phase: str = "scenario"
    """``schema`` requirements are decided by the property-based phase, ``scenario`` ones by a check."""


CheckFn = Callable[["Context"], None]


@dataclass(frozen=True, slots=True)
class Check:
    requirement: Requirement
    run: CheckFn | None
    """None for schema-phase requirements, decided by the schemathesis engine's events."""


class Registry:
    """The checks of one protocol, in declaration order; ids are unique across all protocols."""

    _all_ids: set[str] = set()

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self._checks: dict[str, Check] = {}

    def add(self, requirement: Requirement, run: CheckFn | None) -> None:
        if requirement.id in Registry._all_ids:
            raise ValueError(f"duplicate requirement id {requirement.id}")
        Registry._all_ids.add(requirement.id)
        self._checks[requirement.id] = Check(requirement, run)

    def requirement(self, rid: str, level: Level, statement: str, ref: str) -> Callable[[CheckFn], CheckFn]:
        """Decorator: ``@suite.requirement("AP-TASK-001", Level.MUST, "...", ref="...")``."""

        def register(run: CheckFn) -> CheckFn:
            self.add(Requirement(rid, level, statement, ref, self.protocol), run)
            return run

        return register

    def __iter__(self) -> Iterator[Check]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)

    def get(self, rid: str) -> Check:
        return self._checks[rid]
