"""Conformance suite for AI-agent HTTP APIs: spec-driven property tests plus protocol requirements."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from specs.program import __version__

if TYPE_CHECKING:
    from specs.documents import PROTOCOLS, SpecError, load

    from .context import CheckFailed, Context, NotVerified, RunOptions
    from .requirements import Level, Registry, Requirement
    from .results import RequirementResult, RunResult, Status

# Imported on first use, not with the package: ``python -m conformance`` re-executes itself once
# (launch.py) and must not pay the suite's imports (httpx, schemathesis, ...) twice.
_EXPORTS = {
    "CheckFailed": "context",
    "Context": "context",
    "NotVerified": "context",
    "RunOptions": "context",
    "Level": "requirements",
    "Registry": "requirements",
    "Requirement": "requirements",
    "RequirementResult": "results",
    "RunResult": "results",
    "Status": "results",
    "PROTOCOLS": "specs.documents",
    "SpecError": "specs.documents",
    "load": "specs.documents",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = _EXPORTS[name]
        return getattr(import_module(module if "." in module else f".{module}", __name__), name)
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
