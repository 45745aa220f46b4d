"""What passive checks record about one exchange: each requirement it exercised, held or broken."""

from __future__ import annotations


class Verdict:
    """Per exchange: requirement id -> None (exercised and held) or the first reason it broke."""

    def __init__(self) -> None:
        self.results: dict[str, str | None] = {}

    def ok(self, rid: str) -> None:
        self.results.setdefault(rid, None)

    def fail(self, rid: str, reason: str) -> None:
        if self.results.get(rid) is None:
            self.results[rid] = reason

    def check(self, rid: str, condition: object, reason: str) -> bool:
        """Exercised: held when ``condition`` is true, else broken with ``reason``."""
        if condition:
            self.ok(rid)
        else:
            self.fail(rid, reason)
        return bool(condition)

    @property
    def violations(self) -> dict[str, str]:
        return {rid: reason for rid, reason in self.results.items() if reason is not None}
