"""What the run has decided so far: every selected requirement starts "not verified (not run)" and
only a check (or the property-based phase) that finished moves it. When the run is stopped, what
is still open says why: ``interrupted`` or ``budget``. Nothing unfinished can read passed."""

from __future__ import annotations

from collections.abc import Iterable

from ..verdicts.requirements import Check
from ..verdicts.results import RequirementResult, Status, unblock


class Ledger:
    def __init__(self, checks: Iterable[Check], elsewhere: Iterable[str] = ()) -> None:
        self._entries: dict[str, RequirementResult] = {
            c.requirement.id: RequirementResult(c.requirement, Status.NOT_VERIFIED, "not verified (not run)")
            for c in checks
        }
        self._decided: set[str] = set()
        self._elsewhere = tuple(elsewhere)
        """Requirements of the campaign another shard decides: a check blocked by one stays blocked
        here (undecided), and ``conformance merge`` settles it with every shard's verdicts."""

    def record(self, result: RequirementResult) -> None:
        self._entries[result.requirement.id] = result
        self._decided.add(result.requirement.id)

    def decided(self, rid: str) -> bool:
        return rid in self._decided

    def verdicts(self) -> dict[str, Status | None]:
        """Every selected requirement's status so far, None while undecided."""
        verdicts: dict[str, Status | None] = dict.fromkeys(self._elsewhere)
        verdicts.update({rid: e.status if rid in self._decided else None for rid, e in self._entries.items()})
        return verdicts

    def settle_blocks(self) -> None:
        """Once the run is over: no check stays blocked by a requirement that passed after it or
        was not in the run (``results.unblock``)."""
        verdicts = self.verdicts()
        for entry in self._entries.values():
            unblock(entry, verdicts)

    def close(self, kind: str, reason: str, status: Status = Status.NOT_VERIFIED) -> None:
        """Every requirement not decided yet is not verified (or ``status``), with why the run stopped."""
        word = "not verified" if status is Status.NOT_VERIFIED else status.value
        for rid, entry in self._entries.items():
            if rid not in self._decided:
                entry.status = status
                entry.message = f"{word} ({kind}): {reason}"

    def results(self) -> list[RequirementResult]:
        """In selection order."""
        return list(self._entries.values())
