"""Frozen requirement sets: the bar a certificate names for good.

A release of the kit freezes, per protocol, the requirements it judges: each one's id, RFC 2119
level and authority, in ``sets/<protocol>/<release>.json`` (named ``<protocol>/<release>``, e.g.
``agent-protocol/2026.12``). ``run --requirements SET`` scores exactly that set, at the levels and
authorities it froze; a requirement the kit added since still runs and is reported ``not scored``,
saying why, and never decides the exit code. A set never changes once released
(``tests/conformance/verdicts/test_requirement_sets.py`` holds each one's manifest).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from .requirements import Authority, Check, Level, Requirement
from .results import RequirementResult, Status

SETS = Path(__file__).with_name("sets")
"""Where the released sets are kept: one folder per protocol, one JSON file per release."""


class SetError(Exception):
    """An unknown set, or one the kit cannot score (a requirement it no longer has)."""


@dataclass(frozen=True, slots=True)
class Frozen:
    """One requirement as a set froze it."""

    level: Level
    authority: Authority


@dataclass(frozen=True, slots=True)
class RequirementSet:
    name: str
    """``<protocol>/<release>``."""
    protocol: str
    release: str
    suite_version: str
    """The kit's version that released it."""
    requirements: Mapping[str, Frozen]

    def __contains__(self, rid: object) -> bool:
        return rid in self.requirements

    def manifest(self) -> dict[str, Any]:
        """The set as its file holds it (and as ``requirements --sets --format json`` lists it)."""
        return {
            "name": self.name,
            "protocol": self.protocol,
            "release": self.release,
            "suite_version": self.suite_version,
            "requirements": [
                {"id": rid, "level": f.level.value, "authority": f.authority.value}
                for rid, f in self.requirements.items()
            ],
        }

    def frozen(self, requirement: Requirement) -> Requirement:
        """The requirement at the level and authority the set froze (itself when the set lacks it)."""
        f = self.requirements.get(requirement.id)
        if f is None or (f.level, f.authority) == (requirement.level, requirement.authority):
            return requirement
        return replace(requirement, level=f.level, authority=f.authority)

    def missing(self, registry: Iterable[str]) -> list[str]:
        """The set's requirements the kit no longer has: it cannot score the set."""
        have = set(registry)
        return [rid for rid in self.requirements if rid not in have]

    @property
    def reason(self) -> str:
        return f"added after {self.name}"


def freeze(name: str, suite_version: str, requirements: Iterable[Requirement]) -> RequirementSet:
    """A new set of today's ``requirements`` (``scripts/freeze_requirement_set.py`` writes it)."""
    protocol, _, release = name.partition("/")
    return RequirementSet(
        name, protocol, release, suite_version, {r.id: Frozen(r.level, r.authority) for r in requirements}
    )


def parse(data: Mapping[str, Any]) -> RequirementSet:
    entries = {str(e["id"]): Frozen(Level(e["level"]), Authority(e["authority"])) for e in data["requirements"]}
    return RequirementSet(
        str(data["name"]), str(data["protocol"]), str(data["release"]), str(data["suite_version"]), entries
    )


def dump(rset: RequirementSet) -> str:
    """The set's file: one requirement a line, so a review reads it as a list."""
    manifest = rset.manifest()
    rows = ",\n".join("  " + json.dumps(e) for e in manifest.pop("requirements"))
    head = json.dumps(manifest, indent=1)[:-2]
    return f'{head},\n "requirements": [\n{rows}\n ]\n}}\n'


@cache
def released() -> dict[str, RequirementSet]:
    """Every set this kit carries, by name, oldest release first within a protocol."""
    found: dict[str, RequirementSet] = {}
    for path in sorted(SETS.glob("*/*.json")):
        rset = parse(json.loads(path.read_text(encoding="utf-8")))
        found[rset.name] = rset
    return found


def of(protocol: str) -> list[RequirementSet]:
    return [s for s in released().values() if s.protocol == protocol]


def named(name: str, protocol: str) -> RequirementSet:
    """The set ``name`` (``<protocol>/<release>``, or the release alone) of ``protocol``, or
    SetError saying which sets there are."""
    full = name if "/" in name else f"{protocol}/{name}"
    owner = full.partition("/")[0]
    if owner != protocol:
        raise SetError(
            f"--requirements {name} is a set of {owner}, not of {protocol} "
            "(give the release alone, e.g. --requirements 2026.12, to name each protocol's set of it)"
        )
    rset = released().get(full)
    if rset is None:
        known = ", ".join(s.name for s in of(protocol)) or "none"
        raise SetError(f"no requirement set {full} (released: {known}; list them with: requirements --sets)")
    return rset


def framed(checks: Iterable[Check], rset: RequirementSet | None) -> list[Check]:
    """The checks with the set's levels and authorities (every check when no set is named)."""
    if rset is None:
        return list(checks)
    return [replace(c, requirement=rset.frozen(c.requirement)) for c in checks]


def unscore(result: RequirementResult, rset: RequirementSet | None) -> RequirementResult:
    """A verdict on a requirement outside the set: reported ``not scored``, keeping what it got
    (``outcome``) and its findings, so it is seen and never counted."""
    if rset is None or result.requirement.id in rset or result.status is Status.NOT_SCORED:
        return result
    result.outcome = result.status
    result.status = Status.NOT_SCORED
    result.message = f"not scored ({rset.reason}): {result.outcome.value}" + (
        f": {result.message}" if result.message else ""
    )
    return result
