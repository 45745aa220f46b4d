"""synapse-agent, the suite's side, declared in one descriptor (``SUITE``): ``requirements`` (requirements
and scenario checks), ``model`` (the model-based phase and the requirements it decides),
``passive`` (what the proxy judges from live traffic)."""

from ...run.descriptor import declare
from .model import MODEL
from .passive import Passive
from .requirements import registry

SUITE = declare("synapse-agent", registry=registry, model=MODEL, passive=Passive)

__all__ = ["SUITE"]
