"""How the preflight tells a server of the protocol from a server of another one: answers only
servers of this protocol give (a documented list, a documented error body), asked of the target
before any requirement runs. A protocol declares them in its suite descriptor (``signatures``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Signature:
    what: str
    """The answer looked for, as a reader of the preflight's message understands it."""
    method: str
    path: str
    """Relative to the base URL; ``{unknown}`` stands for a name no server holds."""
    holds: Callable[[int, Any], bool]
    """Whether an answer (its status, its JSON body or None) is this one."""
    json: Any = None
    """The request's JSON body, if any."""
    authenticated: bool = False
    """Sent with the run's token (a protocol whose every operation needs one)."""


UNKNOWN = "conformance-preflight-7f3a9c"
"""What ``{unknown}`` becomes: a name no server holds."""


def has(body: Any, **members: type | tuple[type, ...]) -> bool:
    """``body`` is a JSON object whose named members have these types (a bool is no int here)."""
    if not isinstance(body, dict):
        return False
    for name, kind in members.items():
        value = body.get(name)
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
            return False
    return True


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
