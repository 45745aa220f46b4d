"""Conformance suite for AI-agent HTTP APIs: spec-driven property tests plus protocol requirements."""

__version__ = "0.1.0"

from .context import CheckFailed, Context, NotVerified, RunOptions
from .requirements import Level, Registry, Requirement
from .results import RequirementResult, RunResult, Status
from .specs import PROTOCOLS, SpecError, load

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
