"""The reference mock of sgr-agent-core: ``models`` (agents, their plans), ``store``, ``handlers``
(the operations and their SSE streams, a ``Handlers`` class) and ``faults``, declared in one
descriptor."""

from ...descriptor import declare
from . import hostile
from .faults import FAULTS as CATALOGUE
from .faults import Switches
from .fixtures import plan
from .handlers import SgrAgentCore
from .stubs import read

FAULTS = (*CATALOGUE, *hostile.FAULTS)

MOCK = declare("sgr-agent-core", handlers=SgrAgentCore, faults=FAULTS, switches=Switches, fixtures=plan, stubs=read)

__all__ = ["FAULTS", "MOCK"]
