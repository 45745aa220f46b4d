"""agent-protocol's suite side: its requirements, its model of tasks, steps and artifacts, its judge of traffic."""

from ...run.descriptor import declare
from . import hostile  # noqa: F401  # registers AP-HOSTILE-*, after requirements: it runs last
from .model import MODEL
from .passive import Passive
from .requirements import SCHEMA_EXPECTED_STATUSES, SIGNATURES, registry

SUITE = declare(
    "agent-protocol",
    registry=registry,
    model=MODEL,
    passive=Passive,
    schema_from_traffic=("ensure_resource_availability",),
    expected_statuses=SCHEMA_EXPECTED_STATUSES,
    signatures=SIGNATURES,
)

__all__ = ["SUITE"]
