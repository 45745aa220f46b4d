"""An error answer's body in its protocol's shape: a JSON object whose members have the types the
document gives (``{"message": string}`` for Agent Protocol, ``{"detail": string}`` for SGR Agent
Core, a Status ``{code: integer, message: string}`` for NeuroSan). One rule, ``errors.shape``,
parametrised by the members; the scenario checks, the proxy's judges and replay call it."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ..shown import shown
from .base import Facts, Seen, is_json, judgment

SHAPE = "errors.shape"
_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "object": dict, "array": list}


def described(members: Mapping[str, str]) -> str:
    """``{"message": string}``: the shape as a message names it."""
    return "{" + ", ".join(f'"{name}": {kind}' for name, kind in members.items()) + "}"


def shaped(body: Any, members: Mapping[str, str], nonempty: Collection[str] = ()) -> bool:
    """Whether ``body`` is an object whose ``members`` have their types (an integer is no boolean),
    those in ``nonempty`` not empty."""
    if not isinstance(body, dict):
        return False
    for name, kind in members.items():
        value = body.get(name)
        if not isinstance(value, _TYPES[kind]) or isinstance(value, bool):
            return False
        if name in nonempty and not value:
            return False
    return True


@judgment(SHAPE)
def error_shape(seen: Seen, facts: Facts) -> list[str]:
    """Facts: ``members`` (name to JSON type), ``nonempty`` (members that must not be empty)."""
    members, nonempty = dict(facts["members"]), list(facts.get("nonempty") or ())
    body = seen.json()
    if is_json(body) and shaped(body, members, nonempty):
        return []
    quoted = shown(body) if is_json(body) else shown(seen.body)
    empty = f" ({', '.join(nonempty)} not empty)" if nonempty else ""
    return [f"body {quoted} is not {described(members)}{empty}"]
