"""synapse-agent's suite side: its requirements, its model of sessions and chat jobs, its judge of traffic."""

from ...run.descriptor import declare
from . import hostile  # noqa: F401  # registers the HOSTILE requirements, after requirements: they run last
from .model import MODEL
from .passive import Passive
from .requirements import SIGNATURES, registry

SUITE = declare("synapse-agent", registry=registry, model=MODEL, passive=Passive, signatures=SIGNATURES)

__all__ = ["SUITE"]
