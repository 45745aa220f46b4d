"""The reference mock of agent-protocol: ``models`` (tasks, plans, steps, artifacts), ``store``,
``handlers`` (the operations, bound by ``mount``) and ``faults`` (the named faults, typed switches)."""

from .faults import FAULTS
from .fixtures import plan
from .handlers import mount

__all__ = ["FAULTS", "mount", "plan"]
