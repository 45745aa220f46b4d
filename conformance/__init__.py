"""Conformance suite for AI-agent HTTP APIs: spec-driven property tests plus protocol requirements."""

__version__ = "0.1.0"

from .context import CheckFailed, Context, NotVerified, RunOptions  # noqa: E402
from .requirements import Level, Registry, Requirement  # noqa: E402
from .results import RequirementResult, RunResult, Status  # noqa: E402
from .specs import PROTOCOLS, SpecError, load  # noqa: E402

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
