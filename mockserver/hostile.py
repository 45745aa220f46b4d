"""How the mock takes hostile request bodies, one mechanism for every protocol: by default it
refuses a JSON body that is not what the document gives (a ``null`` included) and a string with
a lone surrogate (``"\\ud800"``, which no UTF-8 text holds). The hostile faults change that for one
operation, each as a real server does: ``request.json() or {}`` (a ``null`` or ``[]`` body is an
empty request, and acts), lone surrogates stored as they came (and every later answer that holds
one fails to encode: 500), or, the passing control, each replaced by U+FFFD."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .jsonio import dumps


class Surrogates(Enum):
    REFUSED = "refused"
    """A 4xx, as the mock does: not Unicode text."""
    KEPT = "kept"
    """Stored as they came; answers holding one fail with 500 (a strict UTF-8 encoder)."""
    REPLACED = "replaced"
    """Each replaced by U+FFFD, as a lenient decoder does: the passing control."""


@dataclass(frozen=True, slots=True)
class Hostile:
    """One operation's way with hostile bodies; ``REFUSES``, the mock's, in normal runs."""

    falsy_as: Mapping[str, Any] | None = None
    """A body that parses to a falsy JSON value (null, [], "", 0, false) is taken as this object
    (``request.json() or {}``, and the defaults a server fills in); None: refused as the mock does."""
    surrogates: Surrogates = Surrogates.REFUSED
    echoed: bool = False
    """The operation's streamed answer echoes the text: with ``KEPT``, a body holding a lone
    surrogate fails with 500 before the stream starts (its first event cannot be encoded)."""


REFUSES = Hostile()

_LONE = re.compile("[\ud800-\udfff]")


def replaced(value: Any) -> Any:
    """Every lone surrogate of every string of ``value`` (keys included) as U+FFFD."""
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replaced(k): replaced(v) for k, v in value.items()}
    return [replaced(v) for v in value] if isinstance(value, list) else value


_LONE_ESCAPE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
"""A lone surrogate as the mock writes it, an escape not part of a pair (orjson refuses a lone
surrogate and the fallback, json.dumps, escapes it, and escapes astral characters as pairs)."""


def holds_surrogate(value: Any) -> bool:
    """Whether a JSON answer holds a lone surrogate: what a strict UTF-8 encoder cannot write."""
    return _LONE_ESCAPE.search(dumps(value)) is not None
