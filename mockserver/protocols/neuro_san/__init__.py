"""The reference mock of neuro-san (stateless, so no store): ``models`` (the agent networks),
``handlers`` (the operations and the chat stream, bound by ``mount``) and ``faults``."""

from .faults import FAULTS
from .handlers import mount

__all__ = ["FAULTS", "mount"]
