"""The reference mock of agent-protocol: ``models`` (tasks, plans, steps, artifacts), ``store``,
``handlers`` (the operations, a ``Handlers`` class) and ``faults`` (the named faults, typed
switches), declared in one descriptor."""

from ...descriptor import declare
from . import hostile
from .faults import FAULTS as CATALOGUE
from .faults import Switches
from .fixtures import plan
from .handlers import AgentProtocol
from .stubs import read

FAULTS = (*CATALOGUE, *hostile.FAULTS)

MOCK = declare("agent-protocol", handlers=AgentProtocol, faults=FAULTS, switches=Switches, fixtures=plan, stubs=read)

__all__ = ["FAULTS", "MOCK"]
