"""Fixtures: put the mock in a known state, at start (``--fixtures FILE``) or through the admin API.

A fixtures document maps protocol ids to what to create, each through the protocol's own store so
that what is loaded behaves exactly as if clients had created it::

    agent-protocol:
      tasks:
        - task_id: 11111111-1111-4111-8111-111111111111   # optional: ids are made up otherwise
          input: write a haiku
          additional_input: {}
          steps: 2                     # execute this many steps (or a list of {input: ...})
          artifacts:
            - {file_name: notes.txt, relative_path: docs, content: "text"}   # or content_base64
    sgr-agent-core:
      agents:
        - {model: sgr_agent, messages: [{role: user, content: "research owls"}], state: completed}
    synapse-agent:
      sessions:
        - owner: alice                 # one of the configured users (--token)
          agentAccessLevel: PUBLICLY_ACCESSIBLE
          history: [{requestText: "hello"}]   # responseText defaults to the mock agent's answer

Each protocol that keeps state reads its part in its own ``fixtures.py`` (its descriptor's
``fixtures``: check the part, spend the budget, answer the function that creates it); NeuroSan keeps no state (its
networks are built in), so it has no fixtures. The whole document is checked before anything is
stored: a bad one is refused with the reason and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .api import ProtocolApi
from .errors import ApiError

MAX_OBJECTS = 10_000
"""Most objects (tasks, steps, artifacts, agents, sessions, interactions) one document may create."""


class FixtureError(ValueError):
    """The document cannot be loaded; the message names the place and the problem."""


@dataclass
class Allowance:
    left: int = MAX_OBJECTS
    planned: list[Callable[[], Any]] = field(default_factory=list)

    def spend(self, where: str, count: int = 1) -> None:
        self.left -= count
        if self.left < 0:
            raise FixtureError(f"{where}: a fixtures document may create at most {MAX_OBJECTS} objects")


def checked(where: str, item: Any, allowed: set[str], required: frozenset[str] | set[str] = frozenset()) -> Any:
    if not isinstance(item, Mapping):
        raise FixtureError(f"{where}: expected a mapping, got {type(item).__name__}")
    unknown = sorted(set(item) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        raise FixtureError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; known: {known}")
    missing = sorted(required - set(item))
    if missing:
        raise FixtureError(f"{where}: missing {', '.join(missing)}")
    return item


def items_of(where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FixtureError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def text_of(where: str, value: Any, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise FixtureError(f"{where}: expected text, got {type(value).__name__}")
    return value


def new_id(where: str, value: Any, taken: Any, seen: set[str]) -> str | None:
    if value is None:
        return None
    value = text_of(where, value)
    if not value or value in taken or value in seen:
        raise FixtureError(f"{where}: id {value!r} is empty or already in use")
    seen.add(value)
    return str(value)


def rekey(table: dict[str, Any], item: Any, attribute: str, given: str | None) -> None:
    """Move a just-created item of a store's ``table`` to the id its fixture gives (``new_id``);
    with none given it keeps the id the store made."""
    if given is None:
        return
    del table[getattr(item, attribute)]
    setattr(item, attribute, given)
    table[given] = item


Planner = Callable[[ProtocolApi, Any, Allowance], Callable[[], dict[str, Any]]]


def load(apis: Mapping[str, ProtocolApi], document: Any, planners: Mapping[str, Planner | None]) -> dict[str, Any]:
    """Check the whole document, then create everything; answers the ids created, per protocol
    (``planners``: each served protocol's fixtures reader, None for one that keeps no state)."""
    if not isinstance(document, Mapping):
        raise FixtureError("a fixtures document maps protocol ids to what to create")
    budget = Allowance()
    plans = []
    for pid, data in document.items():
        if pid not in apis:
            raise FixtureError(f"{pid}: not served here; served: {', '.join(sorted(apis))}")
        planner = planners.get(pid)
        if planner is None:
            raise FixtureError(f"{pid}: keeps no state, so it has no fixtures")
        plans.append((pid, planner(apis[pid], data, budget)))
    try:
        return {pid: apply() for pid, apply in plans}
    except ApiError as exc:  # a store limit (507): what was created so far stays, and is reported
        raise FixtureError(f"a store refused the fixtures: {exc.message}") from None


def load_file_text(text: str, name: str) -> Any:
    """A fixtures or chaos file's content (YAML, which JSON is a subset of)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FixtureError(f"{name}: not valid YAML or JSON: {exc}") from None
