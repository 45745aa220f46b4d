"""Each protocol's hostile faults and their passing control, declared by one maker (``mockserver/hostile.py``
says how the mock takes hostile bodies)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .faults import Fault
from .hostile import Hostile, Surrogates


def hostile_faults(
    make: Callable[..., Fault],
    prefix: str,
    *,
    null_body: tuple[str, str, tuple[str, ...], str],
    falsy_as: Mapping[str, Any] | None = None,
    echoed: bool = False,
    surrogate: tuple[str, str, tuple[str, ...], str, tuple[str, ...]],
) -> tuple[Fault, ...]:
    """A protocol's hostile faults and their control, named ``<prefix>-...``: ``null_body`` (name,
    operation, requirements broken, what it does) takes a falsy body as ``{}`` (or as ``falsy_as``);
    ``surrogate`` (name, operation, requirements broken, what it does, operations whose answers then fail) keeps lone
    surrogates; ``<prefix>-lone-surrogate-replaced``, the control, replaces them by U+FFFD; ``echoed``: the
    operation's stream echoes the text, so the kept surrogate fails it (``Hostile.echoed``)."""
    name, operation, breaks, description = null_body
    keep, where, broken, what, shows = surrogate
    return (
        make(f"{prefix}-{name}", breaks, description, operation=operation, hostile=Hostile(falsy_as=falsy_as or {})),
        make(
            f"{prefix}-{keep}",
            broken,
            what,
            operation=where,
            touches=shows,
            hostile=Hostile(surrogates=Surrogates.KEPT, echoed=echoed),
        ),
        make(
            f"{prefix}-lone-surrogate-replaced",
            (),
            "control: a lone surrogate in a JSON string is replaced by U+FFFD and the request accepted, "
            "as a lenient decoder does",
            control=True,
            operation=where,
            hostile=Hostile(surrogates=Surrogates.REPLACED),
        ),
    )
