"""Conformance suite for AI-agent HTTP APIs: spec-driven property tests plus protocol requirements."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from specs.program import __version__

if TYPE_CHECKING:
    from specs.documents import PROTOCOLS, SpecError, load

    from .check.context import CheckFailed, Context, NotVerified
    from .run.options import RunOptions
    from .verdicts.requirements import Level, Registry, Requirement
    from .verdicts.results import RequirementResult, RunResult, Status

# Imported on first use, not with the package: ``python -m conformance`` re-executes itself once
# (launch.py) and must not pay the suite's imports (httpx, schemathesis, ...) twice.
_EXPORTS = {
    "CheckFailed": "check.context",
    "Context": "check.context",
    "NotVerified": "check.context",
    "RunOptions": "run.options",
    "Level": "verdicts.requirements",
    "Registry": "verdicts.requirements",
    "Requirement": "verdicts.requirements",
    "RequirementResult": "verdicts.results",
    "RunResult": "verdicts.results",
    "Status": "verdicts.results",
    "PROTOCOLS": "specs.documents",
    "SpecError": "specs.documents",
    "load": "specs.documents",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = _EXPORTS[name]
        return getattr(import_module(module if module.startswith("specs.") else f".{module}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROTOCOLS",
    "CheckFailed",
    "Context",
    "Level",
    "NotVerified",
    "Registry",
    "Requirement",
    "RequirementResult",
    "RunOptions",
    "RunResult",
    "SpecError",
    "Status",
    "__version__",
    "load",
]
