"""What a judgment sees (``Seen``), the registry of judgments by name, and ``judge``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

Facts = Mapping[str, Any]
"""What the run knew when it judged (JSON values): stored with a finding, given back on replay."""
Judgment = Callable[["Seen", Facts], list[str]]
"""A rule: the problems ``Seen`` shows given the facts (empty: it holds)."""

JUDGMENTS: dict[str, Judgment] = {}
"""Every judgment by its stable name (``pages.numbers``): a finding names it, a replay finds it."""
_NOT_JSON = object()


class UnknownJudgment(KeyError):
    """A finding names a judgment this kit does not have (another version's): replay compares."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One exchange as a judgment reads it: the request's method and URL, the whole answer."""

    method: str
    url: str
    status: int | None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def params(self) -> dict[str, str]:
        """The query's values (the last of a repeated name)."""
        return dict(parse_qsl(urlsplit(self.url).query, keep_blank_values=True))

    def param(self, name: str) -> str | None:
        return self.params().get(name)

    def json(self) -> Any:
        """The body's JSON, or ``NOT_JSON`` (see ``is_json``)."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return _NOT_JSON


def is_json(value: Any) -> bool:
    return value is not _NOT_JSON


def judgment(name: str) -> Callable[[Judgment], Judgment]:
    """Register ``name``'s rule (a name is never reused for another rule: findings store it)."""

    def register(rule: Judgment) -> Judgment:
        if name in JUDGMENTS:
            raise ValueError(f"judgment {name!r} is registered twice")
        JUDGMENTS[name] = rule
        return rule

    return register


def judge(name: str, seen: Seen, facts: Facts) -> list[str]:
    """The problems ``seen`` shows by judgment ``name`` (empty: it holds)."""
    rule = JUDGMENTS.get(name)
    if rule is None:
        raise UnknownJudgment(name)
    return rule(seen, facts)


def renamed(facts: Any, names: Mapping[str, str]) -> Any:
    """``facts`` with each recorded value ``names`` maps replaced by today's (the id the recorded
    run made, as today's run made it): a replay's facts."""
    if isinstance(facts, str):
        return names.get(facts, facts)
    if isinstance(facts, list):
        return [renamed(v, names) for v in facts]
    if isinstance(facts, dict):  # keys too: ``lists.holds`` keys what it made by id
        return {names.get(k, k): renamed(v, names) for k, v in facts.items()}
    return facts
