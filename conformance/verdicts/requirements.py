"""Requirements are data: a stable id, an RFC 2119 level, one statement and where the spec says it.

Every check the suite makes is registered against exactly one requirement, so results roll up
into a compliance report by id and by level.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from specs.documents import Spec


class Authority(StrEnum):
    """What a requirement stands on. ``document``: the protocol's document (its OpenAPI document or
    that document's prose) fixes it, or HTTP itself does for every document; a target that breaks
    it fails. ``practice``: what real servers and clients are observed to do where the document is
    silent (UPSTREAM-FACTS): a target that does otherwise gets advice, never a failure."""

    DOCUMENT = "document"
    PRACTICE = "practice"


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
    depends_on_state: str = ""
    """Why its verdict against a real server can change between runs with the same seed (what the
    server held before the run, how long its work takes); empty when the seed decides it. Reported,
    so a reader knows which verdicts a second run may move (against the embedded mock, which
    starts empty every run, none do)."""
    from_traffic: bool = False
    """The validation proxy decides it from live traffic too (the protocol's passive judge, or the
    document judge for a generic schema requirement); else only ``conformance run`` can."""
    authority: Authority = Authority.DOCUMENT
    """``practice``: ``ref`` quotes observed behaviour, and a target that does otherwise gets advice."""


CheckFn = Callable[[Any], None]
"""A scenario check: it takes the check kit's ``Context`` (``check/context.py``, a layer above this
vocabulary, so it is not named here) and passes by returning."""
F = TypeVar("F", bound=CheckFn)


@dataclass(frozen=True, slots=True)
class Check:
    requirement: Requirement
    run: CheckFn | None
    """None for schema-phase requirements, decided by the schemathesis engine's events."""


class Registry:
    """The checks of one protocol, in declaration order; an id is used once. That ids are unique
    across protocols too is checked where the suites meet (``suites.unique_ids``)."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self._checks: dict[str, Check] = {}

    def add(self, requirement: Requirement, run: CheckFn | None) -> None:
        if requirement.id in self._checks:
            raise ValueError(f"duplicate requirement id {requirement.id}")
        self._checks[requirement.id] = Check(requirement, run)

    def requirement(
        self,
        rid: str,
        level: Level,
        statement: str,
        ref: str,
        depends_on_state: str = "",
        *,
        from_traffic: bool = False,
        authority: Authority = Authority.DOCUMENT,
    ) -> Callable[[F], F]:
        """Decorator: ``@suite.requirement("AP-TASK-001", Level.MUST, "...", ref="...")``; a rule
        that stands on practice, not the document, says ``authority=Authority.PRACTICE``."""

        def register(run: F) -> F:
            requirement = Requirement(
                rid,
                level,
                statement,
                ref,
                self.protocol,
                depends_on_state=depends_on_state,
                from_traffic=from_traffic,
                authority=authority,
            )
            self.add(requirement, run)
            return run

        return register

    def __iter__(self) -> Iterator[Check]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)

    def get(self, rid: str) -> Check:
        return self._checks[rid]


def operation_ref(document: str, path: str, method: str, tail: str = "") -> str:
    """A reference to one operation of a document (JSON pointer escaping): ``operation_ref(
    "x/openapi.yaml", "/a/{id}", "get")`` is ``x/openapi.yaml#/paths/~1a~1{id}/get``."""
    return f"{document}#/paths/{path.replace('~', '~0').replace('/', '~1')}/{method}{tail}"


_REF_OPERATION = re.compile(r"#/paths/([^/\s]+)/(get|put|post|delete|patch|head|options)\b")


def operations_of(requirement: Requirement, spec: Spec) -> list[str]:
    """The document operations a requirement is about: every one for a schema-phase requirement;
    for a scenario, those its reference points at or its statement names (``POST /ap/v1/...``),
    in document order. Empty when it names none (a shape shared by several operations)."""
    ops = list(spec.operations())
    if requirement.phase == "schema":
        return [op.label for op in ops]
    named = set()
    for escaped, method in _REF_OPERATION.findall(requirement.ref):
        named.add(f"{method.upper()} {escaped.replace('~1', '/').replace('~0', '~')}")
    text = requirement.statement
    for op in ops:
        for label in {op.label, op.label.replace(spec.info.base_path, "", 1)}:
            if re.search(re.escape(label) + r"(?![\w/{-])", text):
                named.add(op.label)
    return [op.label for op in ops if op.label in named]


def describe(requirement: Requirement, spec: Spec) -> dict[str, Any]:
    """One requirement as data (``requirements --format json``), for tools and documentation."""
    return {
        "id": requirement.id,
        "protocol": requirement.protocol,
        "level": requirement.level.value,
        "authority": requirement.authority.value,
        "statement": requirement.statement,
        "reference": requirement.ref,
        "operations": operations_of(requirement, spec),
        "phase": requirement.phase,
        "depends_on_state": requirement.depends_on_state or None,
    }
