"""sgr-agent-core's suite side: its requirements, its model of agents and their streams, its judge of traffic."""

from ...run.descriptor import declare
from . import hostile  # noqa: F401  # registers the HOSTILE requirements, after requirements: they run last
from .model import MODEL
from .passive import Passive
from .requirements import SCHEMA_EXPECTED_STATUSES, SIGNATURES, registry

SUITE = declare(
    "sgr-agent-core",
    registry=registry,
    model=MODEL,
    passive=Passive,
    schema_from_traffic=("use_after_free",),
    expected_statuses=SCHEMA_EXPECTED_STATUSES,
    signatures=SIGNATURES,
)

__all__ = ["SUITE"]
