"""The reference mock of synapse-agent: ``models`` (sessions, jobs), ``store`` (with its signed page
cursors), ``handlers`` (the operations, a ``Handlers`` class) and ``faults``, declared in one
descriptor."""

from ...descriptor import declare
from . import hostile
from .faults import FAULTS as CATALOGUE
from .faults import Switches
from .fixtures import plan
from .handlers import SynapseAgent
from .stubs import read

FAULTS = (*CATALOGUE, *hostile.FAULTS)

MOCK = declare("synapse-agent", handlers=SynapseAgent, faults=FAULTS, switches=Switches, fixtures=plan, stubs=read)

__all__ = ["FAULTS", "MOCK"]
