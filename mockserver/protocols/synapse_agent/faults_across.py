"""Synapse's faults of facts across calls (issue 34, class 7): what one call of a paged list says
of the next."""

from __future__ import annotations

from ...faults import Fault, fault_maker

_fault = fault_maker("synapse-agent")

ACROSS: tuple[Fault, ...] = (
    _fault(
        "syn-list-token-offset",
        (),
        "control: listAgentSessions hands out upstream Synapse's nextPageToken, <limit>a<offset> counted from the "
        "newest session: paging is exact while the list stands still, and a session created between two pages "
        "shows the last one served again (tests/conformance/test_other_writers.py writes so)",
        control=True,
        operation="listAgentSessions",
    ),
)
