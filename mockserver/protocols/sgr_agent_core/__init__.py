"""The reference mock of sgr-agent-core: ``models`` (agents, plans, messages), ``store``,
``handlers`` (the operations and streams, bound by ``mount``) and ``faults`` (named, typed switches)."""

from .faults import FAULTS
from .fixtures import plan
from .handlers import mount

__all__ = ["FAULTS", "mount", "plan"]
