"""The reference mock of neuro-san (stateless, so no store and no fixtures): ``models`` (the agent
networks), ``handlers`` (the operations and the chat stream, a ``Handlers`` class), ``faults`` and
``stubs`` (stubbed networks), declared in one descriptor."""

from ...descriptor import declare
from . import hostile
from .faults import FAULTS as CATALOGUE
from .faults import Switches
from .handlers import NeuroSan
from .stubs import read

FAULTS = (*CATALOGUE, *hostile.FAULTS)

MOCK = declare("neuro-san", handlers=NeuroSan, faults=FAULTS, switches=Switches, stubs=read)

__all__ = ["FAULTS", "MOCK"]
