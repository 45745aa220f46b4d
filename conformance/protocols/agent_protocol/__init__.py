"""agent-protocol, the suite's side, declared in one descriptor (``SUITE``): ``requirements`` (requirements
and scenario checks), ``model`` (the model-based phase and the requirements it decides),
``passive`` (what the proxy judges from live traffic)."""

from ...run.descriptor import declare
from .model import MODEL
from .passive import Passive
from .requirements import SCHEMA_EXPECTED_STATUSES, registry

SUITE = declare(
    "agent-protocol",
    registry=registry,
    model=MODEL,
    passive=Passive,
    schema_from_traffic=("ensure_resource_availability",),
    expected_statuses=SCHEMA_EXPECTED_STATUSES,
)

__all__ = ["SUITE"]
