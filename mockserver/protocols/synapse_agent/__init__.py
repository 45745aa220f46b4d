"""The reference mock of synapse-agent: ``models`` (sessions, jobs, traces), ``store`` (with its
signed page cursors), ``handlers`` (the operations, bound by ``mount``) and ``faults``."""

from .faults import FAULTS
from .fixtures import plan
from .handlers import mount

__all__ = ["FAULTS", "mount", "plan"]
